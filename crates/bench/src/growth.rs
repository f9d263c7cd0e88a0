//! The `growth` subcommand: peak memory (and wall time) of a command across a sweep of sizes n,
//! with a least-squares line peak = a + b·n.
//!
//! Each run is a fresh process; the median of `--repeat` runs stands for a point. The fit is only
//! a linear summary: it says nothing about whether growth is truly linear beyond what R² shows.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;

use crate::host::Host;
use crate::runner::{self, CommandSpec, Sample};
use crate::stats::{self, LinearFit};
use crate::{report, svg};

/// The placeholder replaced by each point in the command template.
const PLACEHOLDER: &str = "{n}";

/// Arguments of `ballast-bench growth`.
#[derive(Debug, Args)]
pub struct GrowthArgs {
    /// Command template, split like a shell would (quotes, backslashes); every occurrence of the
    /// placeholder (n in curly braces, as in the value name) is replaced by the point in every
    /// word after splitting.
    // Help text cannot show the placeholder itself: clap turns it into a line break there.
    #[arg(long, value_name = "TEMPLATE_WITH_{n}")]
    pub cmd: String,
    /// Values of n, comma-separated (at least two distinct).
    #[arg(long, value_name = "N,N,...", value_delimiter = ',', required = true)]
    pub points: Vec<u64>,
    /// Runs per point; the median is reported and fitted.
    #[arg(long, value_name = "R", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub repeat: u32,
    /// Directory for `growth.md`, `growth.csv` and `growth.svg` (created if missing; the plot is
    /// only written here).
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
}

/// One point of the sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// The value substituted for `{n}`.
    pub n: u64,
    /// Every run at this point, in execution order.
    pub runs: Vec<Sample>,
    /// Median peak RSS in MiB.
    pub rss_mib: f64,
    /// Median wall time in seconds.
    pub wall_s: f64,
}

/// A finished sweep.
#[derive(Debug, Clone, PartialEq)]
pub struct Growth {
    /// The command template as given.
    pub template: String,
    /// Runs per point.
    pub repeat: u32,
    /// The points in the order given.
    pub points: Vec<Point>,
    /// Peak RSS (MiB) against n.
    pub fit: LinearFit,
}

/// The template's words with `{n}` replaced by `n`.
fn instantiate(words: &[String], n: u64) -> Option<CommandSpec> {
    let n = n.to_string();
    CommandSpec::from_words(words.iter().map(|w| w.replace(PLACEHOLDER, &n)).collect())
}

/// Checks the template and the points before anything runs; returns the template's words.
fn validate(args: &GrowthArgs) -> Result<Vec<String>> {
    let words = shell_words::split(&args.cmd).with_context(|| format!("--cmd {:?}", args.cmd))?;
    if words.is_empty() {
        bail!("--cmd: empty command");
    }
    if !words.iter().any(|w| w.contains(PLACEHOLDER)) {
        bail!(
            "--cmd {:?}: the template must contain {PLACEHOLDER}",
            args.cmd
        );
    }
    let mut distinct = args.points.clone();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.len() < 2 {
        bail!("--points: need at least two distinct values of n to fit a line");
    }
    Ok(words)
}

/// Runs `ballast-bench growth` and returns the Markdown report (also written to `--out-dir`).
///
/// # Errors
///
/// A bad template or point list, a failing run, or an output file that cannot be written.
pub fn run(args: &GrowthArgs) -> Result<String> {
    let words = validate(args)?;
    if let Some(dir) = &args.out_dir {
        report::create_dir(dir)?;
    }
    let mut points = Vec::with_capacity(args.points.len());
    for (i, &n) in args.points.iter().enumerate() {
        let spec = instantiate(&words, n).context("--cmd: empty command")?;
        let mut runs = Vec::new();
        for r in 1..=args.repeat {
            let sample = runner::run(&spec)
                .with_context(|| format!("growth: n = {n}, run {r}/{}", args.repeat))?;
            runs.push(sample);
        }
        let median = |f: fn(&Sample) -> f64| {
            stats::median(&runs.iter().map(f).collect::<Vec<_>>()).unwrap_or(f64::NAN)
        };
        let rss_mib = median(|s| s.maxrss_bytes as f64 / (1024.0 * 1024.0));
        let wall_s = median(|s| s.wall_s);
        eprintln!(
            "growth: point {}/{} n = {n}: peak {rss_mib:.1} MiB, wall {wall_s:.3} s",
            i + 1,
            args.points.len()
        );
        points.push(Point {
            n,
            runs,
            rss_mib,
            wall_s,
        });
    }
    let x: Vec<f64> = points.iter().map(|p| p.n as f64).collect();
    let y: Vec<f64> = points.iter().map(|p| p.rss_mib).collect();
    let fit = stats::ols(&x, &y).context("--points: need at least two distinct values of n")?;
    let growth = Growth {
        template: args.cmd.clone(),
        repeat: args.repeat,
        points,
        fit,
    };
    let markdown = report::growth_markdown(&growth, &Host::describe());
    if let Some(dir) = &args.out_dir {
        report::write(&dir.join("growth.md"), &markdown)?;
        report::write(&dir.join("growth.csv"), &report::growth_csv(&growth))?;
        let title = format!(
            "Peak RSS against n (fit {} + {}·n MiB, R² = {:.4})",
            report::sig(fit.intercept),
            report::sig(fit.slope),
            fit.r_squared
        );
        let plot = svg::Plot {
            title: &title,
            x_label: "n",
            y_label: "peak RSS (MiB)",
            points: &x.iter().copied().zip(y.iter().copied()).collect::<Vec<_>>(),
            line: Some((fit.intercept, fit.slope)),
        };
        report::write(&dir.join("growth.svg"), &plot.render())?;
    }
    Ok(markdown)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(cmd: &str, points: &[u64]) -> GrowthArgs {
        GrowthArgs {
            cmd: cmd.into(),
            points: points.to_vec(),
            repeat: 1,
            out_dir: None,
        }
    }

    #[test]
    fn template_must_contain_placeholder() {
        let err = validate(&args("sleep 1", &[1, 2])).unwrap_err();
        assert!(format!("{err:#}").contains("must contain {n}"));
        let err = validate(&args("", &[1, 2])).unwrap_err();
        assert_eq!(format!("{err:#}"), "--cmd: empty command");
    }

    #[test]
    fn points_must_be_distinct() {
        let err = validate(&args("echo {n}", &[4, 4, 4])).unwrap_err();
        assert!(format!("{err:#}").starts_with("--points:"));
        assert!(validate(&args("echo {n}", &[4, 4, 8])).is_ok());
    }

    #[test]
    fn placeholder_is_substituted_in_every_word() {
        let words = shell_words::split("sh -c 'head -c {n}000 /dev/zero' x{n}").unwrap();
        let spec = instantiate(&words, 42).unwrap();
        assert_eq!(spec.args, ["-c", "head -c 42000 /dev/zero", "x42"]);
    }
}
