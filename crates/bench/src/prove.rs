//! ballast's `cli prove` as a measured command: every run writes its own proof and report,
//! whose SHA-256 and `peak_heap_bytes` join the kernel's accounting.
//!
//! Every run starts with a clean allocator environment (`_RJEM_MALLOC_CONF` and `MALLOC_CONF`
//! removed) plus whatever the caller sets, so an inherited variable cannot skew an arm. This
//! module does not parse the `cli`'s flags; it only adds `-o FILE --report FILE` after `prove`.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use sha2::{Digest, Sha256};

use crate::model::Sample;
use crate::runner::{self, CommandSpec};

/// Variables removed from every run's environment before the caller's are set.
pub const CLEARED_VARS: [&str; 2] = ["_RJEM_MALLOC_CONF", "MALLOC_CONF"];

/// `cli prove ARGS` with an environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProveCommand {
    /// The `cli` binary.
    pub cli: PathBuf,
    /// Arguments after `prove -o FILE --report FILE`.
    pub args: Vec<String>,
    /// Variables set for every run.
    pub env_set: Vec<(String, String)>,
}

/// What one run left behind besides its accounting.
#[derive(Debug, Clone, PartialEq)]
pub struct ProveRun {
    /// The accounting, with `peak_heap_bytes` from the report.
    pub sample: Sample,
    /// Lowercase hex SHA-256 of the proof.
    pub proof_sha256: String,
}

impl ProveCommand {
    /// The command line of a run writing `proof` and `report`.
    pub fn spec(&self, proof: &Path, report: &Path) -> CommandSpec {
        // A bare file name would be looked up in PATH; `./cli` is the file the user named.
        let program = if self.cli.components().count() == 1 {
            Path::new(".").join(&self.cli)
        } else {
            self.cli.clone()
        };
        let mut args = vec!["prove".to_owned(), "-o".to_owned()];
        args.push(proof.display().to_string());
        args.extend(["--report".to_owned(), report.display().to_string()]);
        args.extend(self.args.iter().cloned());
        CommandSpec {
            program: program.display().to_string(),
            args,
            env_remove: CLEARED_VARS.map(str::to_owned).to_vec(),
            env_set: self.env_set.clone(),
        }
    }

    /// How the report shows the command.
    pub fn display(&self) -> String {
        self.spec(Path::new("FILE"), Path::new("REPORT")).display()
    }

    /// Runs once, writing `<dir>/<name>.proof` and `<dir>/<name>.json`; removes both afterwards
    /// unless `keep`.
    ///
    /// # Errors
    /// A failed run, a missing proof, or files that cannot be removed.
    pub fn run(&self, dir: &Path, name: &str, keep: bool) -> Result<ProveRun> {
        let proof = dir.join(format!("{name}.proof"));
        let report = dir.join(format!("{name}.json"));
        // A stale file must not pass for this run's output.
        for path in [&proof, &report] {
            remove_if_present(path)?;
        }
        let mut sample = runner::run(&self.spec(&proof, &report))?;
        let proof_sha256 = sha256_file(&proof)
            .with_context(|| format!("cli did not write its proof {}", proof.display()))?;
        // A report without `peak_heap_bytes` (a build from before the figure) leaves it unknown.
        sample.peak_heap_bytes = peak_heap_bytes(&report);
        if !keep {
            for path in [&proof, &report] {
                remove_if_present(path)?;
            }
        }
        Ok(ProveRun {
            sample,
            proof_sha256,
        })
    }
}

/// Removes `path` unless it does not exist.
fn remove_if_present(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => {
            Err(e).with_context(|| format!("cannot remove {}", path.display()))
        }
        _ => Ok(()),
    }
}

/// `peak_heap_bytes` of a `cli prove --report` file; `None` when the file or the key is
/// missing (a build from before the figure existed, or another command).
pub fn peak_heap_bytes(report: &Path) -> Option<u64> {
    let text = std::fs::read(report).ok()?;
    let json: serde_json::Value = serde_json::from_slice(&text).ok()?;
    json.get("peak_heap_bytes")?.as_u64()
}

/// Lowercase hex SHA-256 of the file at `path`.
pub fn sha256_file(path: &Path) -> io::Result<String> {
    let mut hasher = Sha256::new();
    io::copy(&mut File::open(path)?, &mut hasher)?;
    Ok(hex::encode(hasher.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command() -> ProveCommand {
        ProveCommand {
            cli: "target/release/cli".into(),
            args: vec!["--segments".into(), "4".into()],
            env_set: vec![("_RJEM_MALLOC_CONF".into(), "x".into())],
        }
    }

    #[test]
    fn runs_write_their_own_files_in_a_clean_allocator_environment() {
        let spec = command().spec(Path::new("p.bin"), Path::new("r.json"));
        assert_eq!(spec.program, "target/release/cli");
        assert_eq!(
            spec.args,
            [
                "prove",
                "-o",
                "p.bin",
                "--report",
                "r.json",
                "--segments",
                "4"
            ]
        );
        assert_eq!(spec.env_remove, CLEARED_VARS);
        assert_eq!(spec.env_set, [("_RJEM_MALLOC_CONF".into(), "x".into())]);
        let bare = ProveCommand {
            cli: "cli".into(),
            ..command()
        };
        assert_eq!(bare.spec(Path::new("p"), Path::new("r")).program, "./cli");
    }

    #[test]
    fn sha256_of_a_file_and_the_reports_heap() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("abc");
        std::fs::write(&path, b"abc").unwrap();
        // FIPS 180-2, appendix B.1.
        assert_eq!(
            sha256_file(&path).unwrap(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let report = dir.path().join("r.json");
        std::fs::write(&report, br#"{"peak_heap_bytes": 1234, "x": 1}"#).unwrap();
        assert_eq!(peak_heap_bytes(&report), Some(1234));
        std::fs::write(&report, br#"{"x": 1}"#).unwrap();
        assert_eq!(peak_heap_bytes(&report), None);
        assert_eq!(peak_heap_bytes(&dir.path().join("missing")), None);
    }
}
