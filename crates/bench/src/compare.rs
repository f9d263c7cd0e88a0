//! The `compare` subcommand: a change measured against a base revision by the harness itself.
//!
//! Each side's `cli` is built from its own git worktree into its own target directory, both
//! cached under `--cache-dir` (a commit's build is reused as is; the working tree is rebuilt by
//! cargo, incrementally), or given prebuilt (`--base-cli`, `--head-cli`). Then, on the same
//! statement: an ABBA experiment of head (A) against base (B) over every metric, peak heap
//! included; a growth sweep of both sides over `--segments`; the growth rates compared against
//! the fits' noise; and the proofs of both sides compared byte for byte.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use clap::Args;

use crate::abba::{self, Arm, Files, MAX_PAIRS};
use crate::growth;
use crate::model::{Build, Compare, Growth, Metric, Plan, SlopeCheck};
use crate::prove::ProveCommand;
use crate::report;
use crate::stats::{self, LinearFit};

/// Arguments of `ballast-bench compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The base revision (anything `git rev-parse` accepts: a branch, `HEAD~1`, a commit).
    #[arg(long, value_name = "REV", required_unless_present = "base_cli")]
    pub base: Option<String>,
    /// The head revision [default: the working tree, uncommitted changes included].
    #[arg(long, value_name = "REV", conflicts_with = "head_cli")]
    pub head: Option<String>,
    /// A prebuilt base `cli` instead of building `--base`.
    #[arg(long, value_name = "PATH", conflicts_with = "base")]
    pub base_cli: Option<PathBuf>,
    /// A prebuilt head `cli` instead of building `--head` or the working tree.
    #[arg(long, value_name = "PATH")]
    pub head_cli: Option<PathBuf>,
    /// The repository the revisions belong to.
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub repo: PathBuf,
    /// Where worktrees and target directories are cached between runs; by default
    /// `target/bench-compare` in the repository.
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Measured ABBA pairs, at most 500.
    #[arg(long, value_name = "N", default_value_t = 6,
          value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_PAIRS)))]
    pub pairs: u32,
    /// Discarded warm-up runs per side.
    #[arg(long, value_name = "K", default_value_t = 1)]
    pub warmup: u32,
    /// Segment counts of the growth sweep (at least two distinct; three or more to judge the
    /// growth rates against the fits' noise).
    #[arg(
        long,
        value_name = "N,N,...",
        value_delimiter = ',',
        default_value = "1,2,3,4"
    )]
    pub growth_points: Vec<u64>,
    /// Runs per growth point; the median is fitted.
    #[arg(long, value_name = "R", default_value_t = 1,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: u32,
    /// Directory for `compare.md`, `pairs.csv` and `growth-{base,head}.csv` (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
    /// Also write the results as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// The statement: `cli prove` arguments (after `--`), without `--segments` or `--steps`,
    /// which the growth sweep sets; the ABBA runs prove it as given (the cli's default
    /// segments).
    #[arg(last = true, value_name = "PROVE_ARGS")]
    pub prove_args: Vec<String>,
}

/// Runs `ballast-bench compare` and returns the Markdown report (also written to `--out-dir`,
/// and the results to `--json`).
///
/// # Errors
///
/// A revision that does not resolve, a build or run that fails, or outputs that cannot be
/// written.
pub fn run(args: &CompareArgs) -> Result<String> {
    for (flags, why) in [
        (
            &["--segments", "--steps"][..],
            "the growth sweep sets --segments",
        ),
        (
            &["-o", "--output", "--report"][..],
            "each run writes its own proof and report",
        ),
    ] {
        if let Some(flag) = args
            .prove_args
            .iter()
            .find(|a| flags.iter().any(|f| is_flag(a, f)))
        {
            bail!("PROVE_ARGS: {flag}: {why}; give the statement without it");
        }
    }
    growth::check_points(&args.growth_points).map_err(|e| {
        anyhow::anyhow!(
            "--growth-points{}",
            e.to_string().trim_start_matches("--points")
        )
    })?;
    report::check_outputs(args.out_dir.as_deref(), args.json.as_deref())?;
    // Only a side that is built needs the repository and the cache.
    let cache = || -> Result<PathBuf> {
        let dir = match &args.cache_dir {
            Some(dir) => dir.clone(),
            None => git_toplevel(&args.repo)?
                .join("target")
                .join("bench-compare"),
        };
        std::path::absolute(&dir).with_context(|| format!("--cache-dir {}", dir.display()))
    };
    let base = match (&args.base_cli, &args.base) {
        (Some(cli), _) => prebuilt("base", cli)?,
        (None, Some(rev)) => build("base", &args.repo, Some(rev), &cache()?)?,
        (None, None) => unreachable!("clap requires --base or --base-cli"),
    };
    let head = match &args.head_cli {
        Some(cli) => prebuilt("head", cli)?,
        None => build("head", &args.repo, args.head.as_deref(), &cache()?)?,
    };

    let scratch = tempfile::TempDir::with_prefix("ballast-bench-compare-")
        .context("cannot create a temporary directory for the proofs")?;
    // `cli prove` of the statement with a side's binary.
    let prove = |b: &Build| ProveCommand {
        cli: PathBuf::from(&b.cli),
        args: args.prove_args.clone(),
        env_set: Vec::new(),
    };
    let arm = |b: &Build| Arm::Prove(prove(b));
    let (head_arm, base_arm) = (arm(&head), arm(&base));
    let plan = Plan {
        name: "compare".to_owned(),
        pairs: args.pairs as usize,
        warmup: args.warmup as usize,
    };
    let files = Files {
        dir: scratch.path(),
        prefix: "compare",
        keep: false,
    };
    let abba = abba::measure(
        &plan,
        [("head", &head_arm), ("base", &base_arm)],
        Metric::Wall,
        files,
    )?;
    let sweep = |b: &Build| -> Result<Growth> {
        let prove = prove(b);
        let name = format!("growth-{}", b.label);
        let display = format!("{} --segments {{n}}", prove.display());
        growth::sweep(
            &name,
            &display,
            "segments",
            &args.growth_points,
            args.repeat,
            scratch.path(),
            |n, report| {
                let mut with_segments = prove.clone();
                with_segments
                    .args
                    .extend(["--segments".to_owned(), n.to_string()]);
                with_segments.spec(&scratch.path().join(format!("{name}.proof")), report)
            },
        )
    };
    let growth = [sweep(&base)?, sweep(&head)?];
    let mut slopes = vec![slope_check(
        "peak RSS",
        &growth[0].rss_fit,
        &growth[1].rss_fit,
    )];
    if let (Some(b), Some(h)) = (&growth[0].heap_fit, &growth[1].heap_fit) {
        slopes.insert(0, slope_check("peak heap", b, h));
    }
    let proofs_identical = {
        let mut d = abba.proof_digests.clone();
        d.sort();
        d.dedup();
        d.len() == 1
    };
    let result = Compare {
        builds: [base, head],
        prove_args: args.prove_args.clone(),
        abba,
        growth,
        slopes,
        proofs_identical,
    };
    let markdown = report::compare_markdown(&result);
    if let Some(dir) = &args.out_dir {
        report::write(&dir.join("compare.md"), &markdown)?;
        report::write(
            &dir.join("pairs.csv"),
            &report::pairs_csv(&result.abba.records),
        )?;
        for (side, g) in ["base", "head"].iter().zip(&result.growth) {
            let csv = report::growth_csv(g);
            report::write(&dir.join(format!("growth-{side}.csv")), &csv)?;
        }
    }
    report::write_json(args.json.as_deref(), &result)?;
    Ok(markdown)
}

/// `word` is `flag` or `flag=…`.
fn is_flag(word: &str, flag: &str) -> bool {
    word == flag
        || word
            .strip_prefix(flag)
            .is_some_and(|rest| rest.starts_with('='))
}

/// The smallest noise a growth-rate comparison allows, as a fraction of base's slope: fits
/// of near-deterministic figures (peak heap) have a standard error near zero, and a change of a
/// few bytes per segment is not a scaling regression.
pub const MIN_SLOPE_NOISE: f64 = 0.01;

/// Head's growth rate against base's: a regression when head's slope exceeds base's by more
/// than the fits' noise — the 95 % Student-t half-width of the slopes' difference (standard
/// error √(SE_base² + SE_head²), Welch–Satterthwaite degrees of freedom), and at least
/// [`MIN_SLOPE_NOISE`] of base's slope.
pub fn slope_check(metric: &str, base: &LinearFit, head: &LinearFit) -> SlopeCheck {
    let delta = head.slope - base.slope;
    let noise = match (base.slope_se, head.slope_se) {
        (Some(b), Some(h)) => {
            let se2 = b * b + h * h;
            let (df_b, df_h) = (base.n as f64 - 2.0, head.n as f64 - 2.0);
            let welch = se2 * se2 / (b.powi(4) / df_b + h.powi(4) / df_h);
            // With both errors zero the degrees of freedom are undefined; take the pooled ones.
            let df = if welch.is_finite() {
                welch.floor().max(1.0)
            } else {
                df_b + df_h
            };
            stats::t_quantile_95(df as usize)
                .map(|t| (t * se2.sqrt()).max(MIN_SLOPE_NOISE * base.slope.abs()))
        }
        _ => None,
    };
    SlopeCheck {
        metric: metric.to_owned(),
        base: *base,
        head: *head,
        delta,
        regression: noise.is_some_and(|n| delta > n),
        noise,
    }
}

/// A prebuilt binary.
fn prebuilt(label: &str, cli: &Path) -> Result<Build> {
    if !cli.is_file() {
        bail!("--{label}-cli {}: not a file", cli.display());
    }
    let cli =
        std::fs::canonicalize(cli).with_context(|| format!("--{label}-cli {}", cli.display()))?;
    Ok(Build {
        label: label.to_owned(),
        commit: None,
        dirty: false,
        cli: cli.display().to_string(),
    })
}

/// Builds `rev`'s `cli` (the working tree's for `None`) in its own worktree and target
/// directory under `cache`.
fn build(label: &str, repo: &Path, rev: Option<&str>, cache: &Path) -> Result<Build> {
    let top = git_toplevel(repo)?;
    let (source, target, commit, dirty) = match rev {
        Some(rev) => {
            let commit = git(
                &top,
                &["rev-parse", "--verify", &format!("{rev}^{{commit}}")],
            )
            .with_context(|| format!("--{label} {rev}: not a revision of {}", top.display()))?;
            let tree = cache.join("worktrees").join(&commit);
            let target = cache.join("target").join(&commit);
            let cli = target.join("release").join("cli");
            if cli.is_file() {
                eprintln!(
                    "compare: {label} {}: cached build {}",
                    short(&commit),
                    cli.display()
                );
                return Ok(Build {
                    label: label.to_owned(),
                    commit: Some(commit),
                    dirty: false,
                    cli: cli.display().to_string(),
                });
            }
            let path = tree.display().to_string();
            if !tree.join(".git").exists() {
                std::fs::create_dir_all(cache.join("worktrees"))
                    .with_context(|| format!("cannot create {}", cache.display()))?;
                git(
                    &top,
                    &["worktree", "add", "--detach", "--force", &path, &commit],
                )
                .with_context(|| format!("cannot add a worktree for {label} at {path}"))?;
            } else if git(&tree, &["rev-parse", "HEAD"])? != commit
                || !git(&tree, &["status", "--porcelain"])?.is_empty()
            {
                // Someone moved or edited the cached worktree: put it back.
                git(&tree, &["checkout", "--detach", "--force", &commit])
                    .with_context(|| format!("cannot reset the worktree {path} to {commit}"))?;
                git(&tree, &["clean", "-fdq"])?;
            }
            (tree, target, commit, false)
        }
        None => {
            let commit = git(&top, &["rev-parse", "HEAD"])?;
            let dirty = !git(&top, &["status", "--porcelain"])?.is_empty();
            (
                top.clone(),
                cache.join("target").join("working-tree"),
                commit,
                dirty,
            )
        }
    };
    eprintln!(
        "compare: building {label} {}{} in {}",
        short(&commit),
        if dirty { " + uncommitted changes" } else { "" },
        source.display()
    );
    // From the source tree, through rustup's proxy: its rust-toolchain.toml and cargo
    // configuration are the ones that apply, not the caller's.
    let status = Command::new("cargo")
        .current_dir(&source)
        .env_remove("RUSTUP_TOOLCHAIN")
        .env_remove("CARGO")
        .args([
            "build",
            "--release",
            "--locked",
            "-p",
            "cli",
            "--manifest-path",
        ])
        .arg(source.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", &target)
        .status()
        .context("cannot run cargo")?;
    if !status.success() {
        bail!(
            "building {label} ({}) failed: cargo {status}",
            short(&commit)
        );
    }
    let cli = target.join("release").join("cli");
    if !cli.is_file() {
        bail!("building {label} left no {}", cli.display());
    }
    Ok(Build {
        label: label.to_owned(),
        commit: Some(commit),
        dirty,
        cli: cli.display().to_string(),
    })
}

fn short(commit: &str) -> &str {
    &commit[..commit.len().min(10)]
}

/// The repository's top directory.
fn git_toplevel(repo: &Path) -> Result<PathBuf> {
    git(repo, &["rev-parse", "--show-toplevel"])
        .map(PathBuf::from)
        .with_context(|| format!("--repo {}: not a git repository", repo.display()))
}

/// `git -C dir ARGS`, its trimmed stdout.
fn git(dir: &Path, args: &[&str]) -> Result<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .context("cannot run git")?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = err
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        // git says what went wrong on a `fatal:` or `error:` line, after any progress.
        let reason = lines
            .iter()
            .find(|l| l.starts_with("fatal:") || l.starts_with("error:"))
            .or(lines.last())
            .copied()
            .unwrap_or("failed");
        bail!("git {}: {reason}", args.join(" "));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fit(slope: f64, slope_se: Option<f64>) -> LinearFit {
        LinearFit {
            intercept: 10.0,
            slope,
            r_squared: 0.99,
            slope_se,
            n: if slope_se.is_some() { 6 } else { 2 },
        }
    }

    #[test]
    fn a_faster_growth_rate_beyond_the_noise_is_a_regression() {
        let check = slope_check("peak heap", &fit(5.0, Some(0.1)), &fit(6.0, Some(0.1)));
        assert!(check.regression, "{check:?}");
        assert!((check.delta - 1.0).abs() < 1e-12);
        // Equal errors: Welch's df are the pooled 8; t(0.975, 8) = 2.306 times √0.02.
        assert!((check.noise.unwrap() - 2.306_004 * 0.02f64.sqrt()).abs() < 1e-5);
        // One exact fit: the other's 4 degrees of freedom, t = 2.776.
        let check = slope_check("x", &fit(5.0, Some(0.0)), &fit(6.0, Some(0.1)));
        assert!((check.noise.unwrap() - 2.776_445 * 0.1).abs() < 1e-5);
        // Two exact fits: at least 1 % of base's slope.
        let check = slope_check("x", &fit(5.0, Some(0.0)), &fit(5.04, Some(0.0)));
        assert!(!check.regression && (check.noise.unwrap() - 0.05).abs() < 1e-12);
        // Inside the noise.
        let check = slope_check("peak heap", &fit(5.0, Some(0.5)), &fit(6.0, Some(0.5)));
        assert!(!check.regression, "{check:?}");
        // Slower growth is never a regression.
        assert!(!slope_check("x", &fit(6.0, Some(0.0)), &fit(5.0, Some(0.0))).regression);
        // Two points leave no noise estimate: no verdict.
        let check = slope_check("x", &fit(5.0, None), &fit(9.0, None));
        assert!(!check.regression && check.noise.is_none());
    }

    #[test]
    fn segment_flags_are_recognised_in_both_spellings() {
        assert!(is_flag("--segments", "--segments"));
        assert!(is_flag("--segments=4", "--segments"));
        assert!(!is_flag("--segmentsx", "--segments"));
    }
}
