//! ABBA experiments: the run order, the experiment loop, the arms, and the `abba` subcommand.
//!
//! Warm-up runs of each arm come first and are discarded; then odd pairs run A then B and even
//! pairs B then A, so a linear drift of the machine (heat, caches, a neighbour) lands on both arms
//! equally. An arm is any command, or ballast's `cli prove` (whose proof is hashed and whose
//! report gives the peak heap): `policy` and `compare` are ABBA experiments of prove arms. This
//! module decides what runs when and records it; the statistics live in `paired` and the
//! formatting in `report`.

use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;

use crate::host::Host;
use crate::model::{Abba, ArmInfo, Metric, Order, Plan, Record, Sample, Side};
use crate::paired;
use crate::prove::ProveCommand;
use crate::report;
use crate::runner::{self, CommandSpec};

/// The most pairs `--pairs` accepts (`abba`, `policy` and `compare`).
///
/// The exact Wilcoxon test costs O(m³) time and O(m²) memory for m non-zero differences (see
/// [`stats::wilcoxon_signed_rank`](crate::stats::wilcoxon_signed_rank)); at 500 that is well under
/// a second per metric and 2 MiB, and more pairs than that are hours of measurement that a
/// benchmark comparison never needs.
pub const MAX_PAIRS: u32 = 500;

/// The measured runs of `pairs` pairs, in execution order: `(pair, side)` with pairs from 1.
pub fn schedule(pairs: usize) -> Vec<(usize, Side)> {
    (1..=pairs)
        .flat_map(|pair| Order::of_pair(pair).sides().map(|side| (pair, side)))
        .collect()
}

/// Identifies one run while it is being started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunTag {
    /// Position in execution order, from 1, warm-ups included.
    pub seq: usize,
    /// The pair, from 1; `None` for a warm-up run.
    pub pair: Option<usize>,
    /// The arm.
    pub side: Side,
}

impl fmt::Display for RunTag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.pair {
            Some(pair) => write!(f, "run {} (pair {pair}, arm {})", self.seq, self.side),
            None => write!(f, "run {} (warm-up, arm {})", self.seq, self.side),
        }
    }
}

/// Runs the warm-ups and the pairs of `plan`, calling `run_one` for each run (it returns the
/// accounting and, for a prove arm, the proof's digest), and returns the measured runs in
/// execution order. Progress goes to stderr, one line per pair.
///
/// # Errors
///
/// The first error of `run_one`, with the run it belongs to as context.
pub fn run_experiment(
    plan: &Plan,
    mut run_one: impl FnMut(&RunTag) -> Result<(Sample, Option<String>)>,
) -> Result<Vec<Record>> {
    let mut seq = 0;
    let mut next = |pair: Option<usize>, side: Side| {
        seq += 1;
        let tag = RunTag { seq, pair, side };
        run_one(&tag)
            .with_context(|| format!("{}: {tag}", plan.name))
            .map(|got| (tag, got))
    };
    for i in 1..=plan.warmup {
        for side in [Side::A, Side::B] {
            next(None, side)?;
        }
        eprintln!("{}: warm-up {i}/{} done", plan.name, plan.warmup);
    }
    let mut records = Vec::with_capacity(2 * plan.pairs);
    for (pair, side) in schedule(plan.pairs) {
        let (tag, (sample, proof_sha256)) = next(Some(pair), side)?;
        records.push(Record {
            pair,
            order: Order::of_pair(pair),
            side,
            seq: tag.seq,
            sample,
            proof_sha256,
        });
        if let [first, second] = &records[records.len().saturating_sub(2)..]
            && first.pair == pair
            && second.pair == pair
        {
            let (a, b) = if first.side == Side::A {
                (first, second)
            } else {
                (second, first)
            };
            eprintln!(
                "{}: pair {pair}/{} ({}) wall A {:.3} s, B {:.3} s",
                plan.name,
                plan.pairs,
                Order::of_pair(pair),
                a.sample.wall_s,
                b.sample.wall_s,
            );
        }
    }
    Ok(records)
}

/// The samples of arm A and arm B, each in pair order, so that index i is pair i + 1.
pub fn split_sides(records: &[Record]) -> (Vec<Sample>, Vec<Sample>) {
    let mut sorted: Vec<&Record> = records.iter().collect();
    sorted.sort_by_key(|r| r.pair);
    let side = |s: Side| {
        sorted
            .iter()
            .filter(|r| r.side == s)
            .map(|r| r.sample)
            .collect()
    };
    (side(Side::A), side(Side::B))
}

/// What an arm runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arm {
    /// Any command.
    Command(CommandSpec),
    /// ballast's `cli prove`, writing a proof (hashed) and a report (its peak heap).
    Prove(ProveCommand),
}

impl Arm {
    /// The command line as reports show it.
    pub fn display(&self) -> String {
        match self {
            Arm::Command(spec) => spec.display(),
            Arm::Prove(prove) => prove.display(),
        }
    }
}

/// Where prove arms write their files: `dir/<prefix>-<seq>-<side>.{proof,json}`, kept or
/// removed after each run.
#[derive(Debug, Clone, Copy)]
pub struct Files<'a> {
    /// The directory.
    pub dir: &'a Path,
    /// The file names' prefix.
    pub prefix: &'a str,
    /// Whether to keep them.
    pub keep: bool,
}

/// Runs the ABBA experiment `plan` of the two labelled arms (A first) and compares every
/// metric the runs report, `primary` first.
///
/// # Errors
///
/// The first run that fails, with the run it belongs to.
pub fn measure(
    plan: &Plan,
    arms: [(&str, &Arm); 2],
    primary: Metric,
    files: Files<'_>,
) -> Result<Abba> {
    let mut proof_digests = Vec::new();
    let records = run_experiment(plan, |tag| {
        let arm = match tag.side {
            Side::A => arms[0].1,
            Side::B => arms[1].1,
        };
        match arm {
            Arm::Command(spec) => Ok((runner::run(spec)?, None)),
            Arm::Prove(prove) => {
                let name = format!("{}-{:03}-{}", files.prefix, tag.seq, tag.side);
                let run = prove.run(files.dir, &name, files.keep)?;
                proof_digests.push(run.proof_sha256.clone());
                Ok((run.sample, Some(run.proof_sha256)))
            }
        }
    })?;
    let (a, b) = split_sides(&records);
    Ok(Abba {
        arms: arms.map(|(label, arm)| ArmInfo {
            label: label.to_owned(),
            command: arm.display(),
        }),
        plan: plan.clone(),
        host: Host::describe(),
        comparisons: paired::compare_all(primary, &a, &b),
        records,
        proof_digests,
    })
}

/// Arguments of `ballast-bench abba`.
#[derive(Debug, Args)]
pub struct AbbaArgs {
    /// Command of arm A (the candidate), split like a shell would (quotes, backslashes; no
    /// expansion or pipes: use `sh -c '…'` for those).
    #[arg(long = "a", value_name = "CMD")]
    pub a: String,
    /// Command of arm B (the baseline), split the same way.
    #[arg(long = "b", value_name = "CMD")]
    pub b: String,
    /// Number of measured A/B pairs, at most 500 (the exact Wilcoxon test's cap; 6 or more for it
    /// to be able to reach p < 0.05).
    #[arg(
        long,
        value_name = "N",
        value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_PAIRS))
    )]
    pub pairs: u32,
    /// Discarded warm-up runs per arm before the pairs.
    #[arg(long, value_name = "K", default_value_t = 1)]
    pub warmup: u32,
    /// Environment variable set for arm A only (repeatable).
    #[arg(long = "env-a", value_name = "K=V", value_parser = parse_env)]
    pub env_a: Vec<(String, String)>,
    /// Environment variable set for arm B only (repeatable).
    #[arg(long = "env-b", value_name = "K=V", value_parser = parse_env)]
    pub env_b: Vec<(String, String)>,
    /// Directory for `report.md` and `pairs.csv` (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
    /// Also write the results as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Name of arm A in the report.
    #[arg(long, value_name = "NAME", default_value = "A")]
    pub label_a: String,
    /// Name of arm B in the report.
    #[arg(long, value_name = "NAME", default_value = "B")]
    pub label_b: String,
    /// Metric whose verdict heads the report.
    #[arg(long, value_name = "METRIC", value_enum, default_value_t = Metric::Wall)]
    pub metric_primary: Metric,
}

/// Parses a `K=V` environment assignment.
pub fn parse_env(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() && !k.contains('\0') && !v.contains('\0') => {
            Ok((k.to_owned(), v.to_owned()))
        }
        _ => Err(format!("expected K=V with a non-empty K, got {s:?}")),
    }
}

/// Splits the command line given to `flag` into a spec with extra environment `env`.
pub fn command_from_flag(flag: &str, line: &str, env: &[(String, String)]) -> Result<CommandSpec> {
    let words = shell_words::split(line).with_context(|| format!("{flag} {line:?}"))?;
    let Some(mut spec) = CommandSpec::from_words(words) else {
        bail!("{flag}: empty command");
    };
    spec.env_set = env.to_vec();
    Ok(spec)
}

/// Runs `ballast-bench abba` and returns the Markdown report (also written to `--out-dir`,
/// and the results to `--json`).
///
/// # Errors
///
/// Bad commands, a run that fails, or an output file that cannot be written.
pub fn run(args: &AbbaArgs) -> Result<String> {
    let a = Arm::Command(command_from_flag("--a", &args.a, &args.env_a)?);
    let b = Arm::Command(command_from_flag("--b", &args.b, &args.env_b)?);
    report::check_outputs(args.out_dir.as_deref(), args.json.as_deref())?;
    let plan = Plan {
        name: "abba".to_owned(),
        pairs: args.pairs as usize,
        warmup: args.warmup as usize,
    };
    let files = Files {
        dir: Path::new("."),
        prefix: "abba",
        keep: false,
    };
    let abba = measure(
        &plan,
        [(&args.label_a, &a), (&args.label_b, &b)],
        args.metric_primary,
        files,
    )?;
    let markdown = report::abba_markdown(&abba);
    if let Some(dir) = &args.out_dir {
        report::write(&dir.join("report.md"), &markdown)?;
        report::write(&dir.join("pairs.csv"), &report::pairs_csv(&abba.records))?;
    }
    report::write_json(args.json.as_deref(), &abba)?;
    Ok(markdown)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_is_abba() {
        let sides: Vec<Side> = schedule(4).into_iter().map(|(_, s)| s).collect();
        use Side::{A, B};
        assert_eq!(sides, [A, B, B, A, A, B, B, A]);
        let pairs: Vec<usize> = schedule(3).into_iter().map(|(p, _)| p).collect();
        assert_eq!(pairs, [1, 1, 2, 2, 3, 3]);
        assert!(schedule(0).is_empty());
    }

    #[test]
    fn experiment_order_and_split() {
        let plan = Plan {
            name: "t".into(),
            pairs: 3,
            warmup: 2,
        };
        let mut seen = Vec::new();
        let records = run_experiment(&plan, |tag| {
            seen.push((tag.pair, tag.side));
            let wall_s = tag.seq as f64;
            let sample = Sample {
                wall_s,
                user_s: 0.0,
                sys_s: 0.0,
                minflt: 0,
                maxrss_bytes: 0,
                peak_heap_bytes: None,
            };
            Ok((sample, Some(tag.seq.to_string())))
        })
        .unwrap();
        use Side::{A, B};
        assert_eq!(&seen[..4], [(None, A), (None, B), (None, A), (None, B)]);
        assert_eq!(records.len(), 6);
        assert_eq!(records[2].order, Order::BA);
        assert_eq!(records[2].side, B);
        assert_eq!(records[0].seq, 5);
        assert_eq!(records[0].proof_sha256.as_deref(), Some("5"));
        let (a, b) = split_sides(&records);
        let walls = |v: Vec<Sample>| v.iter().map(|s| s.wall_s).collect::<Vec<_>>();
        assert_eq!(walls(a), [5.0, 8.0, 9.0]);
        assert_eq!(walls(b), [6.0, 7.0, 10.0]);
    }

    #[test]
    fn errors_name_the_run() {
        let plan = Plan {
            name: "abba".into(),
            pairs: 2,
            warmup: 0,
        };
        let err = run_experiment(&plan, |tag| -> Result<(Sample, Option<String>)> {
            bail!("boom at {}", tag.seq)
        })
        .unwrap_err();
        assert_eq!(format!("{err:#}"), "abba: run 1 (pair 1, arm A): boom at 1");
    }

    #[test]
    fn env_and_command_parsing() {
        assert_eq!(parse_env("K=a=b"), Ok(("K".into(), "a=b".into())));
        assert_eq!(parse_env("K="), Ok(("K".into(), String::new())));
        assert!(parse_env("=v").is_err() && parse_env("novalue").is_err());
        let err = command_from_flag("--a", "  ", &[]).unwrap_err();
        assert_eq!(format!("{err:#}"), "--a: empty command");
        let err = command_from_flag("--b", "sh -c 'x", &[]).unwrap_err();
        assert!(
            format!("{err:#}").contains("missing closing quote"),
            "{err:#}"
        );
    }
}
