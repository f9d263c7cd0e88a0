//! Runs one command as a fresh child process and reads the kernel's accounting for it.
//!
//! Wall time is measured around spawn and `wait4`; user and system time, minor faults and peak
//! resident set size come from the `rusage` that `wait4` returns for that child (and any children
//! it waited for). Linux carries the harness's resident size at spawn into the child's
//! `ru_maxrss`, so a child's peak RSS includes up to this harness's own (small) RSS. The child's
//! stdin and stdout are `/dev/null`; the tail of its stderr is kept for error messages. A run that
//! exits non-zero is an error, not a sample. This module does not repeat, order or compare runs.

use std::collections::VecDeque;
use std::io::{self, Read};
use std::process::{Child, Command, Stdio};
use std::thread::{self, JoinHandle};
use std::time::Instant;

use crate::model::Sample;

/// How many bytes of a failing child's stderr are quoted in the error.
const STDERR_TAIL_BYTES: usize = 2048;

/// One command to run: program, arguments and changes to the inherited environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandSpec {
    /// Program name (looked up in `PATH`) or path.
    pub program: String,
    /// Arguments after the program.
    pub args: Vec<String>,
    /// Variables removed from the inherited environment (applied before `env_set`).
    pub env_remove: Vec<String>,
    /// Variables set in the child's environment.
    pub env_set: Vec<(String, String)>,
}

impl CommandSpec {
    /// A spec from already-split words; `None` when there are no words.
    pub fn from_words(words: Vec<String>) -> Option<Self> {
        let mut words = words.into_iter();
        let program = words.next()?;
        Some(Self {
            program,
            args: words.collect(),
            env_remove: Vec::new(),
            env_set: Vec::new(),
        })
    }

    /// The command line as a shell would read it, environment assignments first.
    pub fn display(&self) -> String {
        let env = self
            .env_set
            .iter()
            .map(|(k, v)| format!("{k}={}", shell_words::quote(v)));
        let words = std::iter::once(&self.program)
            .chain(&self.args)
            .map(|w| shell_words::quote(w).into_owned());
        env.chain(words).collect::<Vec<_>>().join(" ")
    }
}

/// A run that did not produce a sample.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The process could not be started (missing program, permissions, …).
    #[error("cannot spawn `{program}`")]
    Spawn {
        /// The program that was asked for.
        program: String,
        /// The operating system's reason.
        #[source]
        source: io::Error,
    },
    /// `wait4` failed.
    #[error("waiting for `{command}` failed")]
    Wait {
        /// The command line.
        command: String,
        /// The operating system's reason.
        #[source]
        source: io::Error,
    },
    /// The process exited non-zero or was killed. The message is one line unless the process
    /// wrote to stderr, whose tail then follows on the next lines.
    #[error("`{command}` {status}{}", tail_lines(.stderr_tail.as_deref()))]
    Failed {
        /// The command line.
        command: String,
        /// "exited with status N" or "was killed by signal N".
        status: String,
        /// The last bytes the process wrote to stderr, trailing whitespace trimmed; `None` when
        /// it wrote nothing but whitespace.
        stderr_tail: Option<String>,
    },
}

/// The part of a [`RunError::Failed`] message after the status: nothing without a tail.
fn tail_lines(stderr_tail: Option<&str>) -> String {
    stderr_tail.map_or_else(String::new, |tail| format!("; stderr tail:\n{tail}"))
}

/// Runs `spec` to completion and returns its accounting.
///
/// # Errors
///
/// [`RunError`] when the process cannot be spawned or waited for, or exits unsuccessfully.
pub fn run(spec: &CommandSpec) -> Result<Sample, RunError> {
    let mut command = Command::new(&spec.program);
    command
        .args(&spec.args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for key in &spec.env_remove {
        command.env_remove(key);
    }
    for (key, value) in &spec.env_set {
        command.env(key, value);
    }

    let start = Instant::now();
    let mut child = command.spawn().map_err(|source| RunError::Spawn {
        program: spec.program.clone(),
        source,
    })?;
    let stderr = collect_stderr_tail(&mut child);
    let waited = wait4(&child);
    let wall_s = start.elapsed().as_secs_f64();
    let stderr_tail = stderr
        .and_then(|h| h.join().ok())
        .map(|bytes| String::from_utf8_lossy(&bytes).trim_end().to_owned())
        .filter(|tail| !tail.is_empty());
    let (status, usage) = waited.map_err(|source| RunError::Wait {
        command: spec.display(),
        source,
    })?;

    if !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
        let status = if libc::WIFSIGNALED(status) {
            format!("was killed by signal {}", libc::WTERMSIG(status))
        } else {
            format!("exited with status {}", libc::WEXITSTATUS(status))
        };
        return Err(RunError::Failed {
            command: spec.display(),
            status,
            stderr_tail,
        });
    }
    Ok(Sample {
        wall_s,
        user_s: seconds(usage.ru_utime),
        sys_s: seconds(usage.ru_stime),
        minflt: u64::try_from(usage.ru_minflt).unwrap_or(0),
        maxrss_bytes: u64::try_from(usage.ru_maxrss).unwrap_or(0) * 1024,
        peak_heap_bytes: None,
    })
}

/// Reads the child's stderr on a thread, keeping only the last [`STDERR_TAIL_BYTES`].
fn collect_stderr_tail(child: &mut Child) -> Option<JoinHandle<Vec<u8>>> {
    let mut pipe = child.stderr.take()?;
    Some(thread::spawn(move || {
        let mut tail = VecDeque::with_capacity(STDERR_TAIL_BYTES);
        let mut buf = [0u8; 8192];
        while let Ok(n) = pipe.read(&mut buf) {
            if n == 0 {
                break;
            }
            tail.extend(&buf[..n]);
            let excess = tail.len().saturating_sub(STDERR_TAIL_BYTES);
            tail.drain(..excess);
        }
        tail.into()
    }))
}

/// Reaps `child` with `wait4`, returning its wait status and resource usage.
fn wait4(child: &Child) -> io::Result<(libc::c_int, libc::rusage)> {
    let pid = libc::pid_t::try_from(child.id()).map_err(io::Error::other)?;
    let mut status: libc::c_int = 0;
    // SAFETY: `rusage` is a plain C struct of integers, for which all-zero bytes are valid.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `status` and `usage` are valid, writable and live across the call; `pid` is our
        // own unreaped child, which nothing else waits for (`Child::wait` is never called on it).
        let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if reaped == pid {
            return Ok((status, usage));
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// A `timeval` in seconds.
fn seconds(tv: libc::timeval) -> f64 {
    tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(line: &str) -> CommandSpec {
        CommandSpec::from_words(shell_words::split(line).unwrap()).unwrap()
    }

    #[test]
    fn successful_run_reports_accounting() {
        let sample = run(&spec("sh -c 'head -c 3000000 /dev/zero | cat > /dev/null'")).unwrap();
        assert!(sample.wall_s > 0.0);
        assert!(sample.minflt > 0);
        assert!(sample.maxrss_bytes >= 1024);
    }

    #[test]
    fn failure_carries_status_and_stderr_tail() {
        let err = run(&spec("sh -c 'echo broken >&2; exit 3'")).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.ends_with("exited with status 3; stderr tail:\nbroken"),
            "{msg}"
        );
    }

    #[test]
    fn failure_without_stderr_is_one_line() {
        let killed = run(&spec("sh -c 'kill -9 $$'")).unwrap_err().to_string();
        assert!(killed.ends_with("` was killed by signal 9"), "{killed}");
        assert!(!killed.contains('\n'), "{killed}");
        // Whitespace alone is no tail either.
        let quiet = run(&spec("sh -c 'echo >&2; exit 5'"))
            .unwrap_err()
            .to_string();
        assert_eq!(quiet, "`sh -c 'echo >&2; exit 5'` exited with status 5");
    }

    #[test]
    fn missing_program_is_a_spawn_error() {
        let err = run(&spec("ballast-bench-no-such-program")).unwrap_err();
        assert!(matches!(err, RunError::Spawn { .. }), "{err:?}");
    }

    #[test]
    fn environment_is_edited() {
        let mut s = spec("sh -c 'test -z \"$HOME\" && test \"$X\" = \"a b\"'");
        s.env_remove.push("HOME".into());
        s.env_set.push(("X".into(), "a b".into()));
        run(&s).unwrap();
        assert_eq!(
            s.display(),
            "X='a b' sh -c 'test -z \"$HOME\" && test \"$X\" = \"a b\"'"
        );
        assert_eq!(CommandSpec::from_words(Vec::new()), None);
    }
}
