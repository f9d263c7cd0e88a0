//! The `policy` subcommand: ABBA experiments on jemalloc settings of ballast's `cli prove`.
//!
//! The `cli` binary compiles in the never-purge policy (`dirty_decay_ms:-1,muzzy_decay_ms:-1`);
//! `_RJEM_MALLOC_CONF` in the environment overrides it. Every run gets a clean environment for
//! the allocator (`_RJEM_MALLOC_CONF` and `MALLOC_CONF` removed) plus whatever its arm sets, writes
//! its own proof file, and the proof's SHA-256 is recorded so the report can say whether the
//! allocator changed any proof byte. Without `--keep-proofs` the proofs go to a fresh private
//! temporary directory that every path out of [`run`], success or error, removes. This module does
//! not parse the `cli`'s output or flags.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use sha2::{Digest, Sha256};
use tempfile::TempDir;

use crate::abba::{self, MAX_PAIRS, Plan, Record, Side};
use crate::compare::{Comparison, Metric};
use crate::host::Host;
use crate::report::{self, ExtraColumns, PolicyHeader};
use crate::runner::{self, CommandSpec};

/// jemalloc's own defaults, spelled out so that they override the compiled-in policy.
const DEFAULTS: &str = "dirty_decay_ms:10000,muzzy_decay_ms:0";
/// The variable the `cli`'s prefixed jemalloc reads.
const CONF_VAR: &str = "_RJEM_MALLOC_CONF";
/// Variables removed from every child's environment before an arm sets its own.
const CLEARED_VARS: [&str; 2] = [CONF_VAR, "MALLOC_CONF"];
/// Prefix of the temporary proof directory's name (the rest is random).
const TEMP_PREFIX: &str = "ballast-bench-policy-";

/// One allocator experiment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Arm {
    /// A = compiled-in never-purge, B = jemalloc defaults.
    Main,
    /// A = defaults + `background_thread:true`, B = defaults.
    BackgroundThread,
    /// A = defaults + `oversize_threshold:0`, B = defaults.
    OversizeThreshold,
}

impl Arm {
    /// The name used on the command line and in file names.
    pub fn name(self) -> &'static str {
        match self {
            Arm::Main => "main",
            Arm::BackgroundThread => "background-thread",
            Arm::OversizeThreshold => "oversize-threshold",
        }
    }

    /// A one-line description for the report heading.
    pub fn title(self) -> &'static str {
        match self {
            Arm::Main => "compiled-in never-purge vs jemalloc defaults",
            Arm::BackgroundThread => "`background_thread:true` over the defaults",
            Arm::OversizeThreshold => "`oversize_threshold:0` over the defaults",
        }
    }

    /// The `_RJEM_MALLOC_CONF` of `side`; `None` means unset (the compiled-in policy).
    pub fn conf(self, side: Side) -> Option<String> {
        match (self, side) {
            (Arm::Main, Side::A) => None,
            (_, Side::B) => Some(DEFAULTS.to_owned()),
            (Arm::BackgroundThread, Side::A) => Some(format!("{DEFAULTS},background_thread:true")),
            (Arm::OversizeThreshold, Side::A) => Some(format!("{DEFAULTS},oversize_threshold:0")),
        }
    }

    /// How `side` is configured, in words.
    pub fn describe(self, side: Side) -> String {
        match self.conf(side) {
            None => format!("no `{CONF_VAR}` (compiled-in `dirty_decay_ms:-1,muzzy_decay_ms:-1`)"),
            Some(conf) => format!("`{CONF_VAR}={conf}`"),
        }
    }

    /// The file name of this arm's CSV.
    pub fn csv_name(self) -> String {
        format!("policy-{}.csv", self.name())
    }
}

/// Arguments of `ballast-bench policy`.
#[derive(Debug, Args)]
pub struct PolicyArgs {
    /// Path of ballast's `cli` binary (e.g. `target/release/cli`).
    #[arg(long, value_name = "PATH")]
    pub cli: PathBuf,
    /// Measured A/B pairs per arm, at most 500 (the exact Wilcoxon test's cap).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 10,
        value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_PAIRS))
    )]
    pub pairs: u32,
    /// Discarded warm-up runs per side, per arm.
    #[arg(long, value_name = "K", default_value_t = 1)]
    pub warmup: u32,
    /// Experiments to run, comma-separated.
    #[arg(
        long,
        value_name = "ARM,...",
        value_enum,
        value_delimiter = ',',
        default_value = "main,background-thread,oversize-threshold"
    )]
    pub arms: Vec<Arm>,
    /// Directory for `policy.md` and `policy-<arm>.csv` (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
    /// Keep every proof file instead of deleting it once hashed: in `--out-dir`'s `proofs/`
    /// subdirectory, or else in a new temporary directory whose path is printed on stderr.
    #[arg(long)]
    pub keep_proofs: bool,
    /// Arguments passed verbatim after `prove -o FILE` (after `--`).
    #[arg(last = true, value_name = "PROVE_ARGS")]
    pub prove_args: Vec<String>,
}

/// The SHA-256 of a run's proof, the extra CSV column of policy runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProofDigest(pub String);

impl ExtraColumns for ProofDigest {
    const HEADER: &'static str = ",proof_sha256";
    fn cells(&self) -> String {
        format!(",{}", self.0)
    }
}

/// The outcome of one arm.
#[derive(Debug, Clone)]
pub struct ArmResult {
    /// Which experiment.
    pub arm: Arm,
    /// Every metric compared, in [`Metric::ALL`] order.
    pub comparisons: Vec<Comparison>,
    /// SHA-256 of every proof written in this arm, warm-ups included.
    pub digests: Vec<String>,
}

/// Lowercase hex SHA-256 of the file at `path`.
fn sha256_file(path: &Path) -> io::Result<String> {
    let mut hasher = Sha256::new();
    io::copy(&mut File::open(path)?, &mut hasher)?;
    Ok(format!("{:x}", hasher.finalize()))
}

/// The command of one run: `cli prove -o PROOF PROVE_ARGS…` with the arm's allocator setting.
fn prove_command(args: &PolicyArgs, arm: Arm, side: Side, proof: &Path) -> CommandSpec {
    let mut words = vec![
        "prove".to_owned(),
        "-o".to_owned(),
        proof.display().to_string(),
    ];
    words.extend(args.prove_args.iter().cloned());
    // A bare file name would be looked up in PATH; `./cli` is the file the user named.
    let program = if args.cli.components().count() == 1 {
        Path::new(".").join(&args.cli)
    } else {
        args.cli.clone()
    };
    CommandSpec {
        program: program.display().to_string(),
        args: words,
        env_remove: CLEARED_VARS.map(str::to_owned).to_vec(),
        env_set: arm
            .conf(side)
            .map(|c| (CONF_VAR.to_owned(), c))
            .into_iter()
            .collect(),
    }
}

/// Runs one arm as an ABBA experiment, hashing each proof as it is written.
fn run_arm(args: &PolicyArgs, arm: Arm, plan: &Plan, proof_dir: &Path) -> Result<ArmResult> {
    let plan = Plan {
        name: format!("{} {}", plan.name, arm.name()),
        ..plan.clone()
    };
    let mut digests = Vec::new();
    let records: Vec<Record<ProofDigest>> = abba::run_experiment(&plan, |tag| {
        let proof = proof_dir.join(format!("{}-{:03}-{}.proof", arm.name(), tag.seq, tag.side));
        // A stale file must not pass for this run's output.
        match std::fs::remove_file(&proof) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                return Err(e).with_context(|| format!("cannot remove {}", proof.display()));
            }
            _ => {}
        }
        let sample = runner::run(&prove_command(args, arm, tag.side, &proof))?;
        let digest = sha256_file(&proof)
            .with_context(|| format!("cli did not write its proof {}", proof.display()))?;
        if !args.keep_proofs {
            std::fs::remove_file(&proof)
                .with_context(|| format!("cannot remove {}", proof.display()))?;
        }
        digests.push(digest.clone());
        Ok((sample, ProofDigest(digest)))
    })?;
    let (a, b) = abba::split_sides(&records);
    // No metric heads the policy report: with wall first, the order is `Metric::ALL`'s.
    let comparisons = abba::compare_all(Metric::Wall, &a, &b);
    if let Some(dir) = &args.out_dir {
        report::write(&dir.join(arm.csv_name()), &report::pairs_csv(&records))?;
    }
    Ok(ArmResult {
        arm,
        comparisons,
        digests,
    })
}

/// Where the proofs of one `policy` invocation are written.
#[derive(Debug)]
enum ProofDir {
    /// `--out-dir/proofs`, chosen by the user with `--keep-proofs`; it may already exist.
    Kept(PathBuf),
    /// A fresh directory with a random name under the system's temporary directory, removed
    /// when dropped unless it is kept by [`ProofDir::finish`].
    Temporary(TempDir),
}

impl ProofDir {
    /// The directory for `args`: `--out-dir/proofs` when the proofs are kept and there is an
    /// output directory, otherwise a new temporary one.
    fn create(args: &PolicyArgs) -> Result<Self> {
        match &args.out_dir {
            Some(dir) if args.keep_proofs => {
                let proofs = dir.join("proofs");
                std::fs::create_dir_all(&proofs)
                    .with_context(|| format!("cannot create {}", proofs.display()))?;
                Ok(Self::Kept(proofs))
            }
            _ => TempDir::with_prefix(TEMP_PREFIX)
                .map(Self::Temporary)
                .context("cannot create a temporary directory for the proofs"),
        }
    }

    fn path(&self) -> &Path {
        match self {
            Self::Kept(path) => path,
            Self::Temporary(dir) => dir.path(),
        }
    }

    /// After a successful experiment: says where kept proofs are, or removes the temporary
    /// directory.
    fn finish(self, keep_proofs: bool) -> Result<()> {
        match self {
            Self::Kept(path) => eprintln!("policy: proofs kept in {}", path.display()),
            Self::Temporary(dir) if keep_proofs => {
                eprintln!("policy: proofs kept in {}", dir.keep().display());
            }
            Self::Temporary(dir) => {
                let path = dir.path().to_owned();
                dir.close()
                    .with_context(|| format!("cannot remove {}", path.display()))?;
            }
        }
        Ok(())
    }
}

/// Runs `ballast-bench policy` and returns the Markdown report (also written to `--out-dir`).
///
/// # Errors
///
/// A missing `cli`, a failing run, a missing proof, or an output file or directory that cannot be
/// written.
pub fn run(args: &PolicyArgs) -> Result<String> {
    if !args.cli.is_file() {
        bail!("--cli {}: not a file", args.cli.display());
    }
    let mut arms: Vec<Arm> = Vec::new();
    for &arm in &args.arms {
        if !arms.contains(&arm) {
            arms.push(arm);
        }
    }
    if arms.is_empty() {
        bail!("--arms: no arm selected");
    }
    let plan = Plan {
        name: "policy".to_owned(),
        pairs: args.pairs as usize,
        warmup: args.warmup as usize,
    };
    if let Some(dir) = &args.out_dir {
        report::create_dir(dir)?;
    }
    let proof_dir = ProofDir::create(args)?;

    // An error returns here and drops a temporary `proof_dir`, which removes it with its files.
    let results = arms
        .into_iter()
        .map(|arm| run_arm(args, arm, &plan, proof_dir.path()))
        .collect::<Result<Vec<_>>>()?;
    proof_dir.finish(args.keep_proofs)?;
    let markdown = report::policy_markdown(
        &PolicyHeader {
            cli: &args.cli,
            prove_args: &args.prove_args,
            plan: &plan,
            host: &Host::describe(),
        },
        &results,
    );
    if let Some(dir) = &args.out_dir {
        report::write(&dir.join("policy.md"), &markdown)?;
    }
    Ok(markdown)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args() -> PolicyArgs {
        PolicyArgs {
            cli: "target/release/cli".into(),
            pairs: 2,
            warmup: 0,
            arms: vec![Arm::Main],
            out_dir: None,
            keep_proofs: false,
            prove_args: vec!["--segments".into(), "4".into()],
        }
    }

    #[test]
    fn arms_set_only_their_conf() {
        let p = Path::new("p.bin");
        let a = prove_command(&args(), Arm::Main, Side::A, p);
        assert_eq!(a.program, "target/release/cli");
        assert_eq!(a.args, ["prove", "-o", "p.bin", "--segments", "4"]);
        assert_eq!(a.env_remove, ["_RJEM_MALLOC_CONF", "MALLOC_CONF"]);
        assert!(a.env_set.is_empty());
        let b = prove_command(&args(), Arm::Main, Side::B, p);
        assert_eq!(b.env_set, [(CONF_VAR.to_owned(), DEFAULTS.to_owned())]);
        let bg = prove_command(&args(), Arm::BackgroundThread, Side::A, p);
        assert_eq!(
            bg.env_set[0].1,
            "dirty_decay_ms:10000,muzzy_decay_ms:0,background_thread:true"
        );
        let os = Arm::OversizeThreshold.conf(Side::A).unwrap();
        assert_eq!(
            os,
            "dirty_decay_ms:10000,muzzy_decay_ms:0,oversize_threshold:0"
        );
        assert_eq!(
            Arm::OversizeThreshold.conf(Side::B).as_deref(),
            Some(DEFAULTS)
        );
    }

    #[test]
    fn bare_cli_name_is_a_path_not_a_path_lookup() {
        let mut a = args();
        a.cli = "cli".into();
        assert_eq!(
            prove_command(&a, Arm::Main, Side::A, Path::new("p")).program,
            "./cli"
        );
    }

    #[test]
    fn sha256_of_a_file() {
        let path = std::env::temp_dir().join(format!("ballast-bench-sha-{}", std::process::id()));
        std::fs::write(&path, b"abc").unwrap();
        let digest = sha256_file(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        // FIPS 180-2, appendix B.1.
        assert_eq!(
            digest,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn missing_cli_is_an_error() {
        let mut a = args();
        a.cli = "no-such-dir/cli".into();
        let err = run(&a).unwrap_err();
        assert_eq!(format!("{err:#}"), "--cli no-such-dir/cli: not a file");
    }
}
