//! Growth sweeps: peak memory (and wall time) of a command across sizes n, with least-squares
//! lines peak = a + b·n for peak RSS and, where the command reports it, peak heap; and the
//! `growth` subcommand.
//!
//! Each run is a fresh process; the median of `--repeat` runs stands for a point. The fit is only
//! a linear summary: it says nothing about whether growth is truly linear beyond what R² shows.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use clap::Args;

use crate::model::{Growth, GrowthPoint, Sample};
use crate::runner::{self, CommandSpec};
use crate::stats;
use crate::{prove, report, svg};

/// The placeholder replaced by each point in the command template.
const PLACEHOLDER: &str = "{n}";
/// The placeholder replaced by a fresh report path; the command's `peak_heap_bytes` there is
/// its peak heap (as `cli prove --report` writes it).
const REPORT_PLACEHOLDER: &str = "{report}";

/// Arguments of `ballast-bench growth`.
#[derive(Debug, Args)]
pub struct GrowthArgs {
    /// Command template, split like a shell would (quotes, backslashes); every occurrence of the
    /// placeholder (n in curly braces, as in the value name) is replaced by the point in every
    /// word after splitting, and every `{report}` by a fresh file for the command to write JSON
    /// with `peak_heap_bytes` to (`cli prove --report {report}`), which is then fitted too.
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
    /// Also write the results as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

/// The template's words with `{n}` replaced by `n` and `{report}` by `report`.
fn instantiate(words: &[String], n: u64, report: &Path) -> Option<CommandSpec> {
    let (n, report) = (n.to_string(), report.display().to_string());
    let words = words.iter().map(|w| {
        w.replace(PLACEHOLDER, &n)
            .replace(REPORT_PLACEHOLDER, &report)
    });
    CommandSpec::from_words(words.collect())
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
    check_points(&args.points)?;
    Ok(words)
}

/// At least two distinct points, to fit a line.
pub fn check_points(points: &[u64]) -> Result<()> {
    let mut distinct = points.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.len() < 2 {
        bail!("--points: need at least two distinct values of n to fit a line");
    }
    Ok(())
}

/// Sweeps `points`, `repeat` runs each, the command of point n being `command_for(n, report)`
/// (`report`: a fresh path the command may write its `peak_heap_bytes` to, in `dir`). `name`
/// prefixes the progress lines; `command` and `unit` (what n counts) label the result.
///
/// # Errors
///
/// A failing run, or fewer than two distinct points.
pub fn sweep(
    name: &str,
    command: &str,
    unit: &str,
    points: &[u64],
    repeat: u32,
    dir: &Path,
    command_for: impl Fn(u64, &Path) -> CommandSpec,
) -> Result<Growth> {
    let mut swept = Vec::with_capacity(points.len());
    for (i, &n) in points.iter().enumerate() {
        let mut runs = Vec::new();
        for r in 1..=repeat {
            let report = dir.join(format!("{name}-{n}-{r}.json"));
            let _ = std::fs::remove_file(&report);
            let mut sample = runner::run(&command_for(n, &report))
                .with_context(|| format!("{name}: {unit} = {n}, run {r}/{repeat}"))?;
            sample.peak_heap_bytes = prove::peak_heap_bytes(&report);
            let _ = std::fs::remove_file(&report);
            runs.push(sample);
        }
        let median = |f: fn(&Sample) -> f64| {
            stats::median(&runs.iter().map(f).collect::<Vec<_>>()).unwrap_or(f64::NAN)
        };
        let mib = |bytes: u64| bytes as f64 / (1024.0 * 1024.0);
        let heaps: Option<Vec<f64>> = runs.iter().map(|s| s.peak_heap_bytes.map(mib)).collect();
        let point = GrowthPoint {
            n,
            rss_mib: median(|s| s.maxrss_bytes as f64 / (1024.0 * 1024.0)),
            heap_mib: heaps.and_then(|h| stats::median(&h)),
            wall_s: median(|s| s.wall_s),
            runs,
        };
        eprintln!(
            "{name}: point {}/{} {unit} = {n}: peak RSS {:.1} MiB{}, wall {:.3} s",
            i + 1,
            points.len(),
            point.rss_mib,
            point
                .heap_mib
                .map_or(String::new(), |h| format!(", peak heap {h:.1} MiB")),
            point.wall_s
        );
        swept.push(point);
    }
    let x: Vec<f64> = swept.iter().map(|p| p.n as f64).collect();
    let rss: Vec<f64> = swept.iter().map(|p| p.rss_mib).collect();
    let heap: Option<Vec<f64>> = swept.iter().map(|p| p.heap_mib).collect();
    let rss_fit = stats::ols(&x, &rss).context("--points: need at least two distinct values")?;
    Ok(Growth {
        command: command.to_owned(),
        unit: unit.to_owned(),
        repeat,
        heap_fit: heap.and_then(|h| stats::ols(&x, &h)),
        rss_fit,
        points: swept,
    })
}

/// Runs `ballast-bench growth` and returns the Markdown report (also written to `--out-dir`,
/// and the results to `--json`).
///
/// # Errors
///
/// A bad template or point list, a failing run, or an output file that cannot be written.
pub fn run(args: &GrowthArgs) -> Result<String> {
    let words = validate(args)?;
    report::check_outputs(args.out_dir.as_deref(), args.json.as_deref())?;
    let scratch = tempfile::TempDir::with_prefix("ballast-bench-growth-")
        .context("cannot create a temporary directory for the reports")?;
    let growth = sweep(
        "growth",
        &args.cmd,
        "n",
        &args.points,
        args.repeat,
        scratch.path(),
        |n, report| instantiate(&words, n, report).expect("validated: the template has words"),
    )?;
    let markdown = report::growth_markdown(&growth, &crate::host::Host::describe());
    if let Some(dir) = &args.out_dir {
        report::write(&dir.join("growth.md"), &markdown)?;
        report::write(&dir.join("growth.csv"), &report::growth_csv(&growth))?;
        report::write(&dir.join("growth.svg"), &svg_plot(&growth))?;
    }
    report::write_json(args.json.as_deref(), &growth)?;
    Ok(markdown)
}

/// The sweep's peak RSS against n with its fitted line, as SVG.
fn svg_plot(growth: &Growth) -> String {
    let fit = growth.rss_fit;
    let title = format!(
        "Peak RSS against n (fit {} + {}·n MiB, R² = {:.4})",
        report::sig(fit.intercept),
        report::sig(fit.slope),
        fit.r_squared
    );
    let points: Vec<(f64, f64)> = growth
        .points
        .iter()
        .map(|p| (p.n as f64, p.rss_mib))
        .collect();
    svg::Plot {
        title: &title,
        x_label: "n",
        y_label: "peak RSS (MiB)",
        points: &points,
        line: Some((fit.intercept, fit.slope)),
    }
    .render()
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
            json: None,
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
        let words =
            shell_words::split("sh -c 'head -c {n}000 /dev/zero' x{n} --report {report}").unwrap();
        let spec = instantiate(&words, 42, Path::new("out/r.json")).unwrap();
        assert_eq!(
            spec.args,
            [
                "-c",
                "head -c 42000 /dev/zero",
                "x42",
                "--report",
                "out/r.json"
            ]
        );
    }
}
