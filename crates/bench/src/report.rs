//! Markdown reports (fit for a pull-request comment) and raw CSV, plus writing them to files.
//!
//! Pure formatting of results computed elsewhere: nothing here runs a process or computes a
//! statistic. Numbers in Markdown are rounded for reading; the CSV files keep full precision.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};

use crate::abba::{Plan, Record};
use crate::compare::{ALPHA, Comparison, Metric};
use crate::growth::Growth;
use crate::host::Host;
use crate::policy::ArmResult;
use crate::runner::CommandSpec;

/// The legend printed under every comparison table.
pub const SIGN_NOTE: &str =
    "Δ = (A − B) / B per pair, in %; − = A lower (better: every metric is lower-is-better).";

/// Creates `dir` and its parents.
///
/// # Errors
///
/// When the directory cannot be created; the message names it.
pub fn create_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("--out-dir {}", dir.display()))
}

/// Writes `contents` to `path`.
///
/// # Errors
///
/// When the file cannot be written; the message names it.
pub fn write(path: &Path, contents: &str) -> Result<()> {
    std::fs::write(path, contents).with_context(|| format!("cannot write {}", path.display()))
}

/// `x` with four significant digits (plain decimal notation down to 1e-4).
pub fn sig(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let magnitude = x.abs().log10().floor() as i32;
    if magnitude < -4 {
        return format!("{x:.3e}");
    }
    let decimals = (3 - magnitude).clamp(0, 8) as usize;
    format!("{x:.decimals$}")
}

fn opt(x: Option<f64>, f: impl Fn(f64) -> String) -> String {
    x.map_or_else(|| "n/a".to_owned(), f)
}

fn pct(x: f64) -> String {
    format!("{x:+.2} %")
}

fn pp(x: f64) -> String {
    format!("{x:+.2} pp")
}

/// Inline-code span for Markdown (backticks in `s` are replaced, so the span cannot break).
fn code(s: &str) -> String {
    format!("`{}`", s.replace('`', "'"))
}

/// What the `abba` report states before its tables.
#[derive(Debug)]
pub struct AbbaHeader<'a> {
    /// Label and command of arm A, then arm B.
    pub arms: [(&'a str, &'a CommandSpec); 2],
    /// Pairs and warm-ups.
    pub plan: &'a Plan,
    /// The machine.
    pub host: &'a Host,
    /// The comparisons, primary metric first.
    pub comparisons: &'a [Comparison],
}

/// The Markdown report of `ballast-bench abba`.
pub fn abba_markdown(h: &AbbaHeader<'_>) -> String {
    let [(label_a, a), (label_b, b)] = h.arms;
    let mut md = format!(
        "## ballast-bench abba: {} vs {}\n\n",
        code(label_a),
        code(label_b)
    );
    md.push_str("| side | command (with its extra environment) |\n|---|---|\n");
    for (side, label, spec) in [("A", label_a, a), ("B", label_b, b)] {
        let _ = writeln!(
            md,
            "| {side} ({}) | {} |",
            code(label),
            code(&spec.display())
        );
    }
    md.push('\n');
    md.push_str(&plan_lines(h.plan, h.host, ""));
    if let Some(primary) = h.comparisons.first() {
        md.push_str(&headline(primary));
    }
    md.push_str(&summary_table(h.comparisons));
    for c in h.comparisons {
        md.push_str(&metric_section(c, "###"));
    }
    md
}

fn plan_lines(plan: &Plan, host: &Host, scope: &str) -> String {
    format!(
        "- pairs{scope}: {} in ABBA order (odd pairs run A then B, even pairs B then A), after \
         {} discarded warm-up run(s) of each side\n- host: {host}\n\n",
        plan.pairs, plan.warmup
    )
}

/// The paired-t interval of a comparison as `[lo %, hi %]`, or `n/a` without one.
fn ci(c: &Comparison) -> String {
    c.diff.t.map_or_else(
        || "n/a".to_owned(),
        |t| format!("[{}, {}]", pct(t.lo), pct(t.hi)),
    )
}

fn headline(c: &Comparison) -> String {
    format!(
        "**{}: {}**: mean Δ {}, 95 % CI {}, exact Wilcoxon p = {}\n\n",
        c.metric.name(),
        c.diff.verdict,
        opt(c.diff.mean, pct),
        ci(c),
        sig(c.diff.wilcoxon.p_value),
    )
}

/// One row per metric: means, mean Δ, CI, Wilcoxon p and verdict; followed by [`SIGN_NOTE`].
pub fn summary_table(comparisons: &[Comparison]) -> String {
    let mut md = String::from(
        "| metric | mean A | mean B | mean Δ | 95 % CI of mean Δ | median Δ | Wilcoxon p | verdict |\n\
         |---|---:|---:|---:|---:|---:|---:|---|\n",
    );
    for c in comparisons {
        let _ = writeln!(
            md,
            "| {} ({}) | {} | {} | {} | {} | {} | {} | **{}** |",
            c.metric.name(),
            c.metric.unit(),
            opt(c.mean_a, sig),
            opt(c.mean_b, sig),
            opt(c.diff.mean, pct),
            ci(c),
            opt(c.diff.median, pct),
            sig(c.diff.wilcoxon.p_value),
            c.diff.verdict,
        );
    }
    let _ = writeln!(md, "\n{SIGN_NOTE}\n");
    md
}

/// The detailed table of one metric under a heading of level `heading` (e.g. `###`).
pub fn metric_section(c: &Comparison, heading: &str) -> String {
    let d = &c.diff;
    let w = &d.wilcoxon;
    let unit = c.metric.unit();
    let mut md = format!(
        "{heading} {} ({unit}): {}\n\n| statistic | value |\n|---|---|\n",
        c.metric.name(),
        d.verdict
    );
    let mut row = |k: &str, v: String| {
        let _ = writeln!(md, "| {k} | {v} |");
    };
    row(
        "mean A / mean B",
        format!("{} / {} {unit}", opt(c.mean_a, sig), opt(c.mean_b, sig)),
    );
    row(
        "jitter (CV) A / B",
        format!(
            "{} / {}",
            opt(c.cv_a, |x| format!("{x:.2} %")),
            opt(c.cv_b, |x| format!("{x:.2} %"))
        ),
    );
    row("pairs analysed", d.n.to_string());
    if c.excluded > 0 {
        row("pairs excluded (B = 0, A ≠ 0)", c.excluded.to_string());
    }
    row(
        "mean Δ ± SD",
        match d.t {
            Some(t) => format!("{} ± {:.2} %", pct(t.mean), t.sd),
            None => opt(d.mean, pct),
        },
    );
    row("median Δ", opt(d.median, pct));
    row(
        &format!("{:.0} % CI of mean Δ (paired t)", (1.0 - ALPHA) * 100.0),
        d.t.map_or_else(
            || "n/a (fewer than 2 pairs)".to_owned(),
            |t| {
                let stat =
                    t.t.map_or_else(|| "SD = 0".to_owned(), |v| format!("t = {v:.3}"));
                format!("[{}, {}], {stat}, df = {}", pct(t.lo), pct(t.hi), t.df)
            },
        ),
    );
    row(
        "Wilcoxon signed-rank (exact, two-sided)",
        format!(
            "p = {}, W+ = {}, W− = {}, non-zero Δ = {}",
            sig(w.p_value),
            w.w_plus,
            w.w_minus,
            w.n_nonzero
        ),
    );
    row("drift of Δ over the run (OLS)", opt(d.drift_pp, pp));
    row("Δ shift, 2nd half − 1st half", opt(d.half_shift_pp, pp));
    row("verdict", format!("**{}**", d.verdict));
    md.push('\n');
    md
}

/// Extra CSV columns a caller attaches to each [`Record`].
pub trait ExtraColumns {
    /// Header cells, each preceded by a comma (empty for none).
    const HEADER: &'static str;
    /// Row cells, each preceded by a comma (empty for none).
    fn cells(&self) -> String;
}

impl ExtraColumns for () {
    const HEADER: &'static str = "";
    fn cells(&self) -> String {
        String::new()
    }
}

/// The measured runs as CSV, one row per run in execution order.
pub fn pairs_csv<T: ExtraColumns>(records: &[Record<T>]) -> String {
    let mut csv = format!(
        "pair,order,side,seq,wall_s,user_s,sys_s,minflt,maxrss_bytes{}\n",
        T::HEADER
    );
    for r in records {
        let s = &r.sample;
        let _ = writeln!(
            csv,
            "{},{},{},{},{},{},{},{},{}{}",
            r.pair,
            r.order,
            r.side,
            r.seq,
            s.wall_s,
            s.user_s,
            s.sys_s,
            s.minflt,
            s.maxrss_bytes,
            r.extra.cells()
        );
    }
    csv
}

/// The Markdown report of `ballast-bench growth`.
pub fn growth_markdown(g: &Growth, host: &Host) -> String {
    let mut md = format!(
        "## ballast-bench growth: peak RSS against n\n\n- command: {}\n- {} run(s) per point, \
         median reported\n- host: {host}\n\n| n | peak RSS (MiB) | wall (s) |\n|---:|---:|---:|\n",
        code(&g.template),
        g.repeat,
    );
    for p in &g.points {
        let _ = writeln!(md, "| {} | {} | {} |", p.n, sig(p.rss_mib), sig(p.wall_s));
    }
    let _ = writeln!(
        md,
        "\nOLS fit peak = a + b·n: slope b = {} MiB per unit of n, intercept a = {} MiB, \
         R² = {:.4}",
        sig(g.fit.slope),
        sig(g.fit.intercept),
        g.fit.r_squared
    );
    md
}

/// Every run of a growth sweep as CSV: `n,run,wall_s,user_s,sys_s,minflt,maxrss_bytes`.
pub fn growth_csv(g: &Growth) -> String {
    let mut csv = String::from("n,run,wall_s,user_s,sys_s,minflt,maxrss_bytes\n");
    for p in &g.points {
        for (i, s) in p.runs.iter().enumerate() {
            let _ = writeln!(
                csv,
                "{},{},{},{},{},{},{}",
                p.n,
                i + 1,
                s.wall_s,
                s.user_s,
                s.sys_s,
                s.minflt,
                s.maxrss_bytes
            );
        }
    }
    csv
}

/// What the `policy` report states before the arms.
#[derive(Debug)]
pub struct PolicyHeader<'a> {
    /// The `cli` binary.
    pub cli: &'a Path,
    /// Arguments passed after `prove -o FILE`.
    pub prove_args: &'a [String],
    /// Pairs and warm-ups per arm.
    pub plan: &'a Plan,
    /// The machine.
    pub host: &'a Host,
}

/// The combined Markdown report of `ballast-bench policy`.
pub fn policy_markdown(h: &PolicyHeader<'_>, arms: &[ArmResult]) -> String {
    let mut md = format!(
        "## ballast-bench policy: jemalloc settings for {}\n\n- command: {}\n\
         - every run starts without `_RJEM_MALLOC_CONF` and `MALLOC_CONF`; an arm sets only \
         `_RJEM_MALLOC_CONF`\n",
        code("cli prove"),
        code(&format!(
            "{} prove -o FILE {}",
            h.cli.display(),
            shell_words::join(h.prove_args)
        )),
    );
    md.push_str(&plan_lines(h.plan, h.host, " per arm"));
    md.push_str("| arm |");
    for metric in Metric::ALL {
        let _ = write!(md, " {} |", metric.name());
    }
    md.push_str(" proofs identical |\n|---|");
    md.push_str(&"---|".repeat(Metric::ALL.len() + 1));
    md.push('\n');
    for arm in arms {
        let _ = write!(md, "| {} |", arm.arm.name());
        for metric in Metric::ALL {
            let cell = arm
                .comparisons
                .iter()
                .find(|c| c.metric == metric)
                .map_or_else(String::new, |c| {
                    format!("{} ({})", c.diff.verdict, opt(c.diff.mean, pct))
                });
            let _ = write!(md, " {cell} |");
        }
        let identical = if distinct(&arm.digests).len() == 1 {
            "yes"
        } else {
            "**no**"
        };
        let _ = writeln!(md, " {identical} |");
    }
    let _ = writeln!(md, "\n{SIGN_NOTE}\n");
    for arm in arms {
        let _ = write!(
            md,
            "### Arm {}: {}\n\n- A: {}\n- B: {}\n- CSV: `{}`\n\n",
            code(arm.arm.name()),
            arm.arm.title(),
            arm.arm.describe(crate::abba::Side::A),
            arm.arm.describe(crate::abba::Side::B),
            arm.arm.csv_name(),
        );
        md.push_str(&summary_table(&arm.comparisons));
        for c in &arm.comparisons {
            md.push_str(&metric_section(c, "####"));
        }
        md.push_str(&digest_lines(&arm.digests));
    }
    let all: Vec<String> = arms.iter().flat_map(|a| a.digests.clone()).collect();
    md.push_str("### Proof bytes across all arms\n\n");
    md.push_str(&digest_lines(&all));
    md
}

/// Each distinct digest with how often it occurred.
fn distinct(digests: &[String]) -> BTreeMap<&str, usize> {
    let mut counts = BTreeMap::new();
    for d in digests {
        *counts.entry(d.as_str()).or_insert(0) += 1;
    }
    counts
}

fn digest_lines(digests: &[String]) -> String {
    let counts = distinct(digests);
    let mut md = format!(
        "Proofs written (warm-ups included): {}; byte-identical: **{}**. Distinct SHA-256:\n\n",
        digests.len(),
        if counts.len() == 1 { "yes" } else { "no" }
    );
    for (digest, n) in counts {
        let _ = writeln!(md, "- `{digest}` × {n}");
    }
    md.push('\n');
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abba::{Order, Side};
    use crate::compare::compare;
    use crate::runner::Sample;

    fn sample(wall_s: f64) -> Sample {
        Sample {
            wall_s,
            user_s: 0.5,
            sys_s: 0.0,
            minflt: 1000,
            maxrss_bytes: 3 << 20,
        }
    }

    #[test]
    fn significant_digits() {
        assert_eq!(sig(1.23456), "1.235");
        assert_eq!(sig(0.0123456), "0.01235");
        assert_eq!(sig(123456.0), "123456");
        assert_eq!(sig(0.0), "0");
        assert_eq!(sig(0.00001234), "1.234e-5");
        assert_eq!(sig(-2.5), "-2.500");
    }

    #[test]
    fn csv_has_one_row_per_run() {
        let records: Vec<Record<()>> = [(1, Side::A), (1, Side::B), (2, Side::B), (2, Side::A)]
            .iter()
            .enumerate()
            .map(|(i, &(pair, side))| Record {
                pair,
                order: Order::of_pair(pair),
                side,
                seq: i + 3,
                sample: sample(0.25),
                extra: (),
            })
            .collect();
        let csv = pairs_csv(&records);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 5);
        assert_eq!(
            lines[0],
            "pair,order,side,seq,wall_s,user_s,sys_s,minflt,maxrss_bytes"
        );
        assert_eq!(lines[3], "2,BA,B,5,0.25,0.5,0,1000,3145728");
    }

    #[test]
    fn metric_section_handles_missing_values() {
        let c = compare(Metric::Wall, &[sample(1.0)], &[sample(2.0)]);
        let md = metric_section(&c, "###");
        assert!(md.contains("n/a (fewer than 2 pairs)"), "{md}");
        assert!(md.contains("**INCONCLUSIVE**"), "{md}");
        let table = summary_table(&[c]);
        assert!(
            table.contains("| wall (s) | 1.000 | 2.000 | -50.00 % | n/a |"),
            "{table}"
        );
        assert!(table.contains("− = A lower"));
    }

    #[test]
    fn digests_are_counted() {
        let d = vec!["aa".to_owned(), "bb".to_owned(), "aa".to_owned()];
        let md = digest_lines(&d);
        assert!(
            md.contains("byte-identical: **no**") && md.contains("`aa` × 2"),
            "{md}"
        );
        assert!(digest_lines(&d[..1]).contains("byte-identical: **yes**"));
    }
}
