//! The `policy` subcommand: jemalloc settings of ballast's `cli prove` as ABBA experiments.
//!
//! The `cli` binary compiles in the never-purge policy (`dirty_decay_ms:-1,muzzy_decay_ms:-1`);
//! `_RJEM_MALLOC_CONF` in the environment overrides it. Each experiment is an ABBA run of two
//! prove arms (`abba::Arm::Prove`) that differ only in that variable; every run starts without
//! `_RJEM_MALLOC_CONF` and `MALLOC_CONF`, writes its own proof, whose SHA-256 shows whether the
//! allocator changed any proof byte, and its report, whose peak heap is compared with the rest.
//! Without `--keep-proofs` the proofs go to a fresh private temporary directory that every path
//! out of [`run`], success or error, removes.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use tempfile::TempDir;

use crate::abba::{self, Arm, Files, MAX_PAIRS};
use crate::host::Host;
use crate::model::{Metric, Plan, Policy, PolicyArm, Side};
use crate::prove::ProveCommand;
use crate::report;

/// jemalloc's own defaults, spelled out so that they override the compiled-in policy.
const DEFAULTS: &str = "dirty_decay_ms:10000,muzzy_decay_ms:0";
/// The variable the `cli`'s prefixed jemalloc reads.
const CONF_VAR: &str = "_RJEM_MALLOC_CONF";
/// Prefix of the temporary proof directory's name (the rest is random).
const TEMP_PREFIX: &str = "ballast-bench-policy-";

/// One allocator experiment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Experiment {
    /// A = compiled-in never-purge, B = jemalloc defaults.
    Main,
    /// A = defaults + `background_thread:true`, B = defaults.
    BackgroundThread,
    /// A = defaults + `oversize_threshold:0`, B = defaults.
    OversizeThreshold,
}

impl Experiment {
    /// The name used on the command line and in file names.
    pub fn name(self) -> &'static str {
        match self {
            Experiment::Main => "main",
            Experiment::BackgroundThread => "background-thread",
            Experiment::OversizeThreshold => "oversize-threshold",
        }
    }

    /// A one-line description for the report heading.
    pub fn title(self) -> &'static str {
        match self {
            Experiment::Main => "compiled-in never-purge vs jemalloc defaults",
            Experiment::BackgroundThread => "`background_thread:true` over the defaults",
            Experiment::OversizeThreshold => "`oversize_threshold:0` over the defaults",
        }
    }

    /// The `_RJEM_MALLOC_CONF` of `side`; `None` means unset (the compiled-in policy).
    pub fn conf(self, side: Side) -> Option<String> {
        match (self, side) {
            (Experiment::Main, Side::A) => None,
            (_, Side::B) => Some(DEFAULTS.to_owned()),
            (Experiment::BackgroundThread, Side::A) => {
                Some(format!("{DEFAULTS},background_thread:true"))
            }
            (Experiment::OversizeThreshold, Side::A) => {
                Some(format!("{DEFAULTS},oversize_threshold:0"))
            }
        }
    }

    /// The prove arm of `side`.
    fn arm(self, args: &PolicyArgs, side: Side) -> Arm {
        Arm::Prove(ProveCommand {
            cli: args.cli.clone(),
            args: args.prove_args.clone(),
            env_set: self
                .conf(side)
                .map(|c| (CONF_VAR.to_owned(), c))
                .into_iter()
                .collect(),
        })
    }

    /// The file name of this experiment's CSV.
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
    pub arms: Vec<Experiment>,
    /// Directory for `policy.md` and `policy-<arm>.csv` (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
    /// Also write the results as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Keep every proof file instead of deleting it once hashed: in `--out-dir`'s `proofs/`
    /// subdirectory, or else in a new temporary directory whose path is printed on stderr.
    #[arg(long)]
    pub keep_proofs: bool,
    /// Arguments passed verbatim after `prove -o FILE --report FILE` (after `--`).
    #[arg(last = true, value_name = "PROVE_ARGS")]
    pub prove_args: Vec<String>,
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

/// Runs `ballast-bench policy` and returns the Markdown report (also written to `--out-dir`,
/// and the results to `--json`).
///
/// # Errors
///
/// A missing `cli`, a failing run, a missing proof, or an output file or directory that cannot be
/// written.
pub fn run(args: &PolicyArgs) -> Result<String> {
    if !args.cli.is_file() {
        bail!("--cli {}: not a file", args.cli.display());
    }
    let mut experiments: Vec<Experiment> = Vec::new();
    for &e in &args.arms {
        if !experiments.contains(&e) {
            experiments.push(e);
        }
    }
    if experiments.is_empty() {
        bail!("--arms: no arm selected");
    }
    report::check_outputs(args.out_dir.as_deref(), args.json.as_deref())?;
    let proof_dir = ProofDir::create(args)?;

    // An error returns here and drops a temporary `proof_dir`, which removes it with its files.
    let mut arms = Vec::with_capacity(experiments.len());
    for e in experiments {
        let plan = Plan {
            name: format!("policy {}", e.name()),
            pairs: args.pairs as usize,
            warmup: args.warmup as usize,
        };
        let (a, b) = (e.arm(args, Side::A), e.arm(args, Side::B));
        let files = Files {
            dir: proof_dir.path(),
            prefix: e.name(),
            keep: args.keep_proofs,
        };
        let abba = abba::measure(&plan, [("A", &a), ("B", &b)], Metric::Wall, files)?;
        if let Some(dir) = &args.out_dir {
            report::write(&dir.join(e.csv_name()), &report::pairs_csv(&abba.records))?;
        }
        arms.push(PolicyArm {
            name: e.name().to_owned(),
            title: e.title().to_owned(),
            abba,
        });
    }
    proof_dir.finish(args.keep_proofs)?;
    let command = ProveCommand {
        cli: args.cli.clone(),
        args: args.prove_args.clone(),
        env_set: Vec::new(),
    };
    let policy = Policy {
        command: command.display(),
        plan: Plan {
            name: "policy".to_owned(),
            pairs: args.pairs as usize,
            warmup: args.warmup as usize,
        },
        host: Host::describe(),
        arms,
    };
    let markdown = report::policy_markdown(&policy);
    if let Some(dir) = &args.out_dir {
        report::write(&dir.join("policy.md"), &markdown)?;
    }
    report::write_json(args.json.as_deref(), &policy)?;
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
            arms: vec![Experiment::Main],
            out_dir: None,
            json: None,
            keep_proofs: false,
            prove_args: vec!["--segments".into(), "4".into()],
        }
    }

    fn env(arm: &Arm) -> Vec<(String, String)> {
        match arm {
            Arm::Prove(p) => p.env_set.clone(),
            Arm::Command(_) => panic!("policy arms prove"),
        }
    }

    #[test]
    fn arms_set_only_their_conf() {
        let a = Experiment::Main.arm(&args(), Side::A);
        assert!(env(&a).is_empty());
        let Arm::Prove(prove) = &a else { panic!() };
        assert_eq!(prove.args, ["--segments", "4"]);
        let b = Experiment::Main.arm(&args(), Side::B);
        assert_eq!(env(&b), [(CONF_VAR.to_owned(), DEFAULTS.to_owned())]);
        let bg = Experiment::BackgroundThread.arm(&args(), Side::A);
        assert_eq!(
            env(&bg)[0].1,
            "dirty_decay_ms:10000,muzzy_decay_ms:0,background_thread:true"
        );
        let os = Experiment::OversizeThreshold.conf(Side::A).unwrap();
        assert_eq!(
            os,
            "dirty_decay_ms:10000,muzzy_decay_ms:0,oversize_threshold:0"
        );
        assert_eq!(
            Experiment::OversizeThreshold.conf(Side::B).as_deref(),
            Some(DEFAULTS)
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
