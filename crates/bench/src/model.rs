//! The results of every subcommand as plain data: the runners (`abba`, `growth`, `policy`,
//! `compare`) produce them, the renderers read them — Markdown and CSV in `report`, JSON through
//! serde (`--json FILE`). Nothing here runs a process, computes a statistic or formats text.

use std::fmt;

use serde::Serialize;

use crate::host::Host;
use crate::stats::{LinearFit, TInterval, Wilcoxon};

/// What the kernel, the clock and (for `cli prove`) the prover's report say about one run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Sample {
    /// Seconds from just before spawn to the return of `wait4`.
    pub wall_s: f64,
    /// User CPU seconds (`ru_utime`).
    pub user_s: f64,
    /// System CPU seconds (`ru_stime`).
    pub sys_s: f64,
    /// Minor page faults (`ru_minflt`).
    pub minflt: u64,
    /// Peak resident set size in bytes (`ru_maxrss`, which Linux reports in KiB).
    pub maxrss_bytes: u64,
    /// The most bytes live in the allocator at once, from `cli prove --report`'s
    /// `peak_heap_bytes`; `None` for commands that do not report it.
    pub peak_heap_bytes: Option<u64>,
}

/// A measured quantity of one run; all are lower-is-better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    /// Wall-clock seconds around spawn and wait.
    Wall,
    /// User CPU seconds.
    User,
    /// System CPU seconds.
    Sys,
    /// Minor page faults.
    Minflt,
    /// Peak resident set size.
    Maxrss,
    /// Peak heap: the most bytes live in the allocator (only for `cli prove` runs).
    Heap,
}

impl Metric {
    /// Every metric, in report order.
    pub const ALL: [Metric; 6] = [
        Metric::Wall,
        Metric::User,
        Metric::Sys,
        Metric::Minflt,
        Metric::Maxrss,
        Metric::Heap,
    ];

    /// The metric's value in `sample`, in the unit of [`Metric::unit`]; `None` when the run did
    /// not report it.
    pub fn of(self, sample: &Sample) -> Option<f64> {
        let mib = |bytes: u64| bytes as f64 / (1024.0 * 1024.0);
        Some(match self {
            Metric::Wall => sample.wall_s,
            Metric::User => sample.user_s,
            Metric::Sys => sample.sys_s,
            Metric::Minflt => sample.minflt as f64,
            Metric::Maxrss => mib(sample.maxrss_bytes),
            Metric::Heap => mib(sample.peak_heap_bytes?),
        })
    }

    /// Short name as used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Wall => "wall",
            Metric::User => "user",
            Metric::Sys => "sys",
            Metric::Minflt => "minflt",
            Metric::Maxrss => "maxrss",
            Metric::Heap => "heap",
        }
    }

    /// Unit of [`Metric::of`].
    pub fn unit(self) -> &'static str {
        match self {
            Metric::Wall | Metric::User | Metric::Sys => "s",
            Metric::Minflt => "faults",
            Metric::Maxrss | Metric::Heap => "MiB",
        }
    }
}

/// The conclusion drawn from both tests and the noise floor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// A is lower: CI entirely below zero, Wilcoxon significant the same way, and the
    /// difference larger than the noise floor.
    RealImprovement,
    /// A is higher, by the same three tests.
    RealRegression,
    /// Both tests agree, but the difference is inside the arms' run-to-run jitter.
    WithinNoise,
    /// The two tests disagree.
    Borderline,
    /// Neither test finds a difference (or there is too little data).
    Inconclusive,
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::RealImprovement => "REAL IMPROVEMENT",
            Verdict::RealRegression => "REAL REGRESSION",
            Verdict::WithinNoise => "WITHIN NOISE",
            Verdict::Borderline => "BORDERLINE",
            Verdict::Inconclusive => "INCONCLUSIVE",
        })
    }
}

/// Everything computed from the paired differences d (in %).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiffSummary {
    /// Number of differences analysed.
    pub n: usize,
    /// Paired-t interval of the mean (with the mean and SD); `None` for n < 2.
    pub t: Option<TInterval>,
    /// Mean of d; `None` when n = 0.
    pub mean: Option<f64>,
    /// Median of d; `None` when n = 0.
    pub median: Option<f64>,
    /// Exact Wilcoxon signed-rank test on d.
    pub wilcoxon: Wilcoxon,
    /// Least-squares slope of d against pair index, times (n − 1): percentage points over the run.
    pub drift_pp: Option<f64>,
    /// Mean of the second half of d minus mean of the first half (the middle pair of an odd n is
    /// left out), in percentage points.
    pub half_shift_pp: Option<f64>,
    /// The verdict of the two tests alone (before the noise floor).
    pub verdict: Verdict,
}

/// One metric compared between arm A and arm B over the same pairs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// The metric.
    pub metric: Metric,
    /// Mean of A's values.
    pub mean_a: Option<f64>,
    /// Mean of B's values.
    pub mean_b: Option<f64>,
    /// A's coefficient of variation in % (jitter).
    pub cv_a: Option<f64>,
    /// B's coefficient of variation in % (jitter).
    pub cv_b: Option<f64>,
    /// The larger of the two jitters, in %: a mean difference no larger is within noise.
    pub noise_floor_pct: Option<f64>,
    /// Pairs left out because B was zero while A was not (the relative difference is undefined).
    pub excluded: usize,
    /// Analysis of the relative differences.
    pub diff: DiffSummary,
    /// The verdict: the tests' ([`DiffSummary::verdict`]), or [`Verdict::WithinNoise`] when
    /// they agree on a difference inside the noise floor.
    pub verdict: Verdict,
}

/// One of the two arms of an experiment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Side {
    /// The candidate (differences are A relative to B).
    A,
    /// The baseline.
    B,
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Side::A => "A",
            Side::B => "B",
        })
    }
}

/// The order of the two runs within a pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Order {
    /// A runs first.
    AB,
    /// B runs first.
    BA,
}

impl Order {
    /// The order of pair `pair` (counted from 1): odd pairs AB, even pairs BA.
    pub fn of_pair(pair: usize) -> Self {
        if pair % 2 == 1 { Order::AB } else { Order::BA }
    }

    /// The two sides in running order.
    pub fn sides(self) -> [Side; 2] {
        match self {
            Order::AB => [Side::A, Side::B],
            Order::BA => [Side::B, Side::A],
        }
    }
}

impl fmt::Display for Order {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Order::AB => "AB",
            Order::BA => "BA",
        })
    }
}

/// The size of an experiment and how its progress lines are labelled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Plan {
    /// Prefix of the progress lines on stderr.
    pub name: String,
    /// Number of measured pairs.
    pub pairs: usize,
    /// Discarded warm-up runs per arm (run A, B, A, B, …).
    pub warmup: usize,
}

/// One measured (not warm-up) run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Record {
    /// The pair, from 1.
    pub pair: usize,
    /// The pair's order.
    pub order: Order,
    /// The arm.
    pub side: Side,
    /// Position in execution order, from 1, warm-ups included.
    pub seq: usize,
    /// The accounting.
    pub sample: Sample,
    /// SHA-256 of the proof the run wrote, for `cli prove` arms.
    pub proof_sha256: Option<String>,
}

/// An arm as the report names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ArmInfo {
    /// The arm's label (`A`, `head`, …).
    pub label: String,
    /// Its command line, environment assignments first.
    pub command: String,
}

/// A finished ABBA experiment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Abba {
    /// Arm A, then arm B.
    pub arms: [ArmInfo; 2],
    /// Pairs and warm-ups.
    pub plan: Plan,
    /// The machine.
    pub host: Host,
    /// Every metric the runs report, the primary one first.
    pub comparisons: Vec<Comparison>,
    /// The measured runs, in execution order.
    pub records: Vec<Record>,
    /// SHA-256 of every proof written, warm-ups included, in execution order (empty for arms
    /// that write none).
    pub proof_digests: Vec<String>,
}

/// One point of a growth sweep.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GrowthPoint {
    /// The value of n.
    pub n: u64,
    /// Every run at this point, in execution order.
    pub runs: Vec<Sample>,
    /// Median peak RSS in MiB.
    pub rss_mib: f64,
    /// Median peak heap in MiB, when every run reported it.
    pub heap_mib: Option<f64>,
    /// Median wall time in seconds.
    pub wall_s: f64,
}

/// A finished growth sweep.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Growth {
    /// The command (template) swept.
    pub command: String,
    /// What n counts (`n`, `segments`).
    pub unit: String,
    /// Runs per point.
    pub repeat: u32,
    /// The points in the order given.
    pub points: Vec<GrowthPoint>,
    /// Peak RSS (MiB) against n.
    pub rss_fit: LinearFit,
    /// Peak heap (MiB) against n, when every run reported it.
    pub heap_fit: Option<LinearFit>,
}

/// One allocator experiment of `policy`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PolicyArm {
    /// Its name on the command line.
    pub name: String,
    /// What it compares, in words.
    pub title: String,
    /// The ABBA experiment of its two settings.
    pub abba: Abba,
}

/// A finished `policy` run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Policy {
    /// `cli prove` as run, with `-o FILE` for the proof.
    pub command: String,
    /// Pairs and warm-ups per arm.
    pub plan: Plan,
    /// The machine.
    pub host: Host,
    /// The experiments, in the order run.
    pub arms: Vec<PolicyArm>,
}

/// One side of `compare`: which build of `cli`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Build {
    /// `base` or `head`.
    pub label: String,
    /// The commit it was built from (`None` for a prebuilt binary).
    pub commit: Option<String>,
    /// Whether it was built from a working tree with uncommitted changes.
    pub dirty: bool,
    /// The binary.
    pub cli: String,
}

/// Whether head's memory grows faster per unit of work than base's.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SlopeCheck {
    /// `peak heap` or `peak RSS`.
    pub metric: String,
    /// Base's fit (MiB against n).
    pub base: LinearFit,
    /// Head's fit.
    pub head: LinearFit,
    /// Head's slope minus base's, in MiB per unit.
    pub delta: f64,
    /// The fits' noise: the 95 % Student-t half-width of the slopes' difference; `None` with
    /// fewer than three points, when the fits have no residual to estimate it from.
    pub noise: Option<f64>,
    /// `delta` beyond the noise: head's memory grows faster.
    pub regression: bool,
}

/// A finished `compare` run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Compare {
    /// The baseline, then the candidate.
    pub builds: [Build; 2],
    /// The statement's `cli prove` arguments.
    pub prove_args: Vec<String>,
    /// Head (A) against base (B) on the statement.
    pub abba: Abba,
    /// Base's growth sweep, then head's.
    pub growth: [Growth; 2],
    /// Heap and RSS growth rates compared.
    pub slopes: Vec<SlopeCheck>,
    /// Whether every proof of both sides has the same bytes.
    pub proofs_identical: bool,
}
