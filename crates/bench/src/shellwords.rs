//! Splits a command line into words the way a POSIX shell quotes, without running a shell.
//!
//! Supported: blanks separate words; `'…'` is literal; `"…"` is literal except that a backslash
//! escapes `"`, `\`, `$`, `` ` `` and a newline; outside quotes a backslash escapes any character
//! and backslash-newline is removed. Not supported, on purpose: expansion (`$VAR`, `~`, globs),
//! operators (`|`, `>`, `;`, `&&`) and comments — those characters are kept literally. Write
//! `sh -c '…'` when a pipeline is what you want to measure.

/// A command line that cannot be split into words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SplitError {
    /// A quote was opened and never closed.
    #[error("unterminated {kind} quote (opened at byte {at})")]
    UnterminatedQuote {
        /// `single` or `double`.
        kind: &'static str,
        /// Byte offset of the opening quote.
        at: usize,
    },
    /// The line ends with a backslash that escapes nothing.
    #[error("trailing backslash at the end of the command")]
    TrailingBackslash,
}

/// Splits `line` into words; an empty or all-blank line gives no words.
///
/// # Errors
///
/// [`SplitError`] for an unterminated quote or a trailing backslash.
pub fn split(line: &str) -> Result<Vec<String>, SplitError> {
    let mut words = Vec::new();
    let mut word = String::new();
    // True once the current word has started, so that `''` yields an empty word.
    let mut in_word = false;
    let mut chars = line.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some((_, '\'')) => break,
                        Some((_, ch)) => word.push(ch),
                        None => return Err(SplitError::UnterminatedQuote { kind: "single", at }),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some((_, '"')) => break,
                        Some((_, '\\')) => match chars.next() {
                            Some((_, '\n')) => {}
                            Some((_, ch @ ('"' | '\\' | '$' | '`'))) => word.push(ch),
                            Some((_, ch)) => {
                                word.push('\\');
                                word.push(ch);
                            }
                            None => {
                                return Err(SplitError::UnterminatedQuote { kind: "double", at });
                            }
                        },
                        Some((_, ch)) => word.push(ch),
                        None => return Err(SplitError::UnterminatedQuote { kind: "double", at }),
                    }
                }
            }
            '\\' => match chars.next() {
                Some((_, '\n')) => {}
                Some((_, ch)) => {
                    in_word = true;
                    word.push(ch);
                }
                None => return Err(SplitError::TrailingBackslash),
            },
            ch => {
                in_word = true;
                word.push(ch);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

/// Quotes `word` so that [`split`] (and a POSIX shell) read it back as one word.
pub fn quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%^".contains(c));
    if plain {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Joins words into one command line, quoting where needed.
pub fn join<S: AsRef<str>>(words: &[S]) -> String {
    words
        .iter()
        .map(|w| quote(w.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(line: &str) -> Vec<String> {
        split(line).unwrap()
    }

    #[test]
    fn splits_on_blanks() {
        assert_eq!(ok("  sleep   0.05\t"), ["sleep", "0.05"]);
        assert!(ok("").is_empty());
        assert!(ok(" \t\n ").is_empty());
    }

    #[test]
    fn quotes_and_escapes() {
        assert_eq!(
            ok("sh -c 'head -c 5 | cat'"),
            ["sh", "-c", "head -c 5 | cat"]
        );
        assert_eq!(ok(r#"echo "a \"b\" \$x \n""#), ["echo", r#"a "b" $x \n"#]);
        assert_eq!(ok(r"a\ b c\\d"), ["a b", r"c\d"]);
        assert_eq!(ok("x'y'\"z\" '' \"\""), ["xyz", "", ""]);
        assert_eq!(ok("a\\\nb"), ["ab"]);
        assert_eq!(ok("'it'\\''s'"), ["it's"]);
    }

    #[test]
    fn bad_quoting_is_an_error() {
        assert_eq!(
            split("sh -c 'true"),
            Err(SplitError::UnterminatedQuote {
                kind: "single",
                at: 6
            })
        );
        assert_eq!(
            split(r#"echo "abc"#),
            Err(SplitError::UnterminatedQuote {
                kind: "double",
                at: 5
            })
        );
        assert_eq!(split("echo \\"), Err(SplitError::TrailingBackslash));
    }

    #[test]
    fn join_round_trips() {
        let words = ["sh", "-c", "echo 'hi' | cat", "", "a\"b", "K=V", "$HOME"];
        assert_eq!(split(&join(&words)).unwrap(), words);
        assert_eq!(join(&["prove", "-o", "p.bin"]), "prove -o p.bin");
    }
}
