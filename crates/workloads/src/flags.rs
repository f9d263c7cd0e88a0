//! What a workload takes on the command line: its flags, and its statement read from their
//! values as given. `cli` builds its statement flags from these and knows no workload.

use std::collections::BTreeMap;
use std::fmt::Display;
use std::str::FromStr;

use ballast_stark::ParamsError;
use thiserror::Error;

use crate::Describe;

/// A flag `--name VALUE` that shapes a statement.
#[derive(Debug)]
pub struct Flag {
    /// Its name, without the dashes: `"log-rows"`.
    pub name: &'static str,
    /// What its value is, in the help: `"HEX"`.
    pub value_name: &'static str,
    /// What it sets, in the help: lower case, as it follows the workload's name there.
    pub help: &'static str,
}

/// The flags every workload takes.
pub const SHARED_FLAGS: [Flag; 2] = [
    Flag {
        name: "log-rows",
        value_name: "K",
        help: "log2 of the rows per segment [default: the workload's]",
    },
    Flag {
        name: "segments",
        value_name: "M",
        help: "Segments, proven one after another (continuations) [default: the workload's]",
    },
];

/// A workload that can be stated from flags.
pub trait FromFlags: Describe {
    /// What it proves, its flags and their defaults: a paragraph of `cli prove --help`.
    const ABOUT: &'static str;
    /// Its own flags, besides [`SHARED_FLAGS`].
    const FLAGS: &'static [Flag];

    /// The statement the flags describe; only its own and the shared flags are given.
    ///
    /// # Errors
    /// A value that does not parse, or a statement out of range, naming the flag.
    fn from_flags(flags: &FlagValues) -> Result<Self, FlagError>;
}

/// A flag that does not describe a statement, in one line that names it.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("{0}")]
pub struct FlagError(pub String);

impl FlagError {
    /// "invalid --`flag`: `why`".
    pub fn invalid(flag: &str, why: impl Display) -> Self {
        Self(format!("invalid --{flag}: {why}"))
    }

    /// A workload's own limit, named by the flag that sets the field
    /// ([`ParamsError::OutOfRange`]'s `log_rows` is `--log-rows`).
    pub fn of_params(err: &ParamsError) -> Self {
        match err {
            ParamsError::OutOfRange { name, .. } => Self::invalid(&name.replace('_', "-"), err),
            _ => Self(format!("invalid statement: {err}")),
        }
    }
}

/// A 32-byte digest written as 64 hexadecimal digits.
///
/// # Errors
/// Anything else, quoted.
pub fn parse_digest(value: &str) -> Result<[u8; 32], String> {
    let mut digest = [0u8; 32];
    hex::decode_to_slice(value, &mut digest)
        .map_err(|_| format!("expected 64 hexadecimal digits, got {value:?}"))?;
    Ok(digest)
}

/// The statement flags given on a command line, by name, as written.
#[derive(Debug, Default)]
pub struct FlagValues {
    given: BTreeMap<String, String>,
}

impl FlagValues {
    /// Records `--name value`.
    pub fn insert(&mut self, name: impl Into<String>, value: impl Into<String>) {
        self.given.insert(name.into(), value.into());
    }

    /// The names of the flags given.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.given.keys().map(String::as_str)
    }

    /// Whether `--name` was given.
    pub fn has(&self, name: &str) -> bool {
        self.given.contains_key(name)
    }

    /// The value of `--name`, read by `parse`, if it was given.
    ///
    /// # Errors
    /// What `parse` says, naming the flag.
    pub fn get<T>(
        &self,
        name: &str,
        parse: impl FnOnce(&str) -> Result<T, String>,
    ) -> Result<Option<T>, FlagError> {
        self.given
            .get(name)
            .map(|value| parse(value).map_err(|why| FlagError::invalid(name, why)))
            .transpose()
    }

    /// The value of `--name` as a number, if it was given.
    ///
    /// # Errors
    /// A value that is not one, naming the flag.
    pub fn number<T: FromStr>(&self, name: &str) -> Result<Option<T>, FlagError>
    where
        T::Err: Display,
    {
        self.get(name, |value| {
            value
                .parse()
                .map_err(|err| format!("{value:?} is not a number ({err})"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_are_64_hex_digits() {
        let hex = "00ff".repeat(16);
        let digest = parse_digest(&hex).unwrap();
        assert_eq!((digest[0], digest[1], digest[31]), (0x00, 0xff, 0xff));
        assert!(parse_digest(&hex[..62]).is_err());
        assert!(parse_digest(&"zz".repeat(32)).is_err());
        assert!(parse_digest(&"é".repeat(32)).is_err());
        assert!(
            parse_digest(&"+0".repeat(32)).is_err(),
            "from_str_radix alone accepts '+'"
        );
    }

    #[test]
    fn values_are_read_and_their_errors_name_the_flag() {
        let mut flags = FlagValues::default();
        flags.insert("segments", "3");
        flags.insert("log-rows", "x");
        assert_eq!(flags.number::<usize>("segments"), Ok(Some(3)));
        assert_eq!(flags.number::<usize>("steps"), Ok(None));
        let err = flags.number::<usize>("log-rows").unwrap_err().to_string();
        assert!(
            err.starts_with("invalid --log-rows: \"x\" is not a number"),
            "{err}"
        );
        assert!(flags.has("segments") && !flags.has("steps"));
        assert_eq!(flags.names().collect::<Vec<_>>(), ["log-rows", "segments"]);
        let range = ParamsError::OutOfRange {
            name: "log_rows",
            value: 40,
            min: 1,
            max: 28,
        };
        assert!(
            FlagError::of_params(&range)
                .0
                .starts_with("invalid --log-rows: ")
        );
    }
}
