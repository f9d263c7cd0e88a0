#![doc = include_str!("../README.md")]

use std::process::ExitCode;

use clap::error::ErrorKind;

/// Prints `err` for `program` and returns its exit code: help and version on stdout (0),
/// a missing subcommand's help on stdout (2), any other error as one line on stderr (2).
pub fn usage_error(program: &str, err: &clap::Error) -> ExitCode {
    match err.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = err.print();
            ExitCode::SUCCESS
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = err.print();
            ExitCode::from(2)
        }
        _ => {
            eprintln!("{program}: {}", usage_line(err));
            ExitCode::from(2)
        }
    }
}

/// The first line of clap's rendering of `err`, without its `error: ` prefix, and with the
/// next line when the first ends in a colon ("the following required arguments were not
/// provided:" names them there).
pub fn usage_line(err: &clap::Error) -> String {
    let rendered = err.to_string();
    let mut lines = rendered.lines().map(str::trim).filter(|l| !l.is_empty());
    let mut first = lines.next().unwrap_or_default().to_owned();
    if first.ends_with(':')
        && let Some(next) = lines.next()
    {
        first = format!("{first} {next}");
    }
    first.trim_start_matches("error: ").to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Arg, Command};

    fn command() -> Command {
        Command::new("x")
            .arg(
                Arg::new("n")
                    .long("n")
                    .value_parser(clap::value_parser!(u8)),
            )
            .arg(Arg::new("name").long("name").required(true))
    }

    #[test]
    fn errors_are_one_line_without_clap_prefix() {
        let err = command()
            .try_get_matches_from(["x", "--name", "a", "--n", "300"])
            .unwrap_err();
        let line = usage_line(&err);
        assert!(line.starts_with("invalid value '300' for '--n"), "{line}");
        assert!(!line.contains('\n'));
        let missing = command().try_get_matches_from(["x"]).unwrap_err();
        let line = usage_line(&missing);
        assert!(
            line.contains("were not provided:") && line.contains("--name"),
            "{line}"
        );
    }
}
