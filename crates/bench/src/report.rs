//! Markdown reports (fit for a pull-request comment), CSV and JSON of the results in `model`,
//! and writing them to files.
//!
//! Pure rendering of results computed elsewhere: nothing here runs a process or computes a
//! statistic; it reads `model` (and `stats`' result types, the host line and `paired`'s
//! significance level). Numbers in Markdown are
//! rounded for reading; CSV and JSON keep full precision.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::host::Host;
use crate::model::{Abba, Compare, Comparison, Growth, Policy, Record, Verdict};
use crate::paired::ALPHA;
use crate::stats::LinearFit;

/// The legend printed under every comparison table.
pub const SIGN_NOTE: &str = "Δ = (A − B) / B per pair, in %; − = A lower (better: every metric is \
     lower-is-better). WITHIN NOISE: both tests agree, but |mean Δ| is inside the noise floor \
     (the larger run-to-run jitter, CV, of the two arms).";

/// Creates `--out-dir` and checks that `--json`'s directory exists, before anything runs.
///
/// # Errors
///
/// A directory that cannot be created, or a `--json` path in a missing directory.
pub fn check_outputs(out_dir: Option<&Path>, json: Option<&Path>) -> Result<()> {
    if let Some(dir) = out_dir {
        std::fs::create_dir_all(dir).with_context(|| format!("--out-dir {}", dir.display()))?;
    }
    if let Some(path) = json {
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        if !parent.is_dir() || path.is_dir() {
            anyhow::bail!(
                "--json {}: not a file in an existing directory",
                path.display()
            );
        }
    }
    Ok(())
}

/// Writes `contents` to `path`.
///
/// # Errors
///
/// When the file cannot be written; the message names it.
pub fn write(path: &Path, contents: &str) -> Result<()> {
    std::fs::write(path, contents).with_context(|| format!("cannot write {}", path.display()))
}

/// Writes `value` as pretty JSON to `path`, if given.
///
/// # Errors
///
/// When the file cannot be written.
pub fn write_json<T: Serialize>(path: Option<&Path>, value: &T) -> Result<()> {
    let Some(path) = path else { return Ok(()) };
    let mut json = serde_json::to_string_pretty(value).context("cannot encode the results")?;
    json.push('\n');
    write(path, &json)
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

/// [`sig`] with a sign: `+1.036`, `-0.0357`.
fn signed(x: f64) -> String {
    if x > 0.0 {
        format!("+{}", sig(x))
    } else {
        sig(x)
    }
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

/// The Markdown report of `ballast-bench abba`.
pub fn abba_markdown(abba: &Abba) -> String {
    let [a, b] = &abba.arms;
    let mut md = format!(
        "## ballast-bench abba: {} vs {}\n\n",
        code(&a.label),
        code(&b.label)
    );
    md.push_str(&abba_body(abba, "###"));
    md
}

/// The arms, the plan, the headline, the summary table and one section per metric.
fn abba_body(abba: &Abba, heading: &str) -> String {
    let mut md = String::from("| side | command (with its extra environment) |\n|---|---|\n");
    for (side, arm) in ["A", "B"].iter().zip(&abba.arms) {
        let _ = writeln!(
            md,
            "| {side} ({}) | {} |",
            code(&arm.label),
            code(&arm.command)
        );
    }
    md.push('\n');
    md.push_str(&plan_lines(abba, ""));
    if let Some(primary) = abba.comparisons.first() {
        md.push_str(&headline(primary));
    }
    md.push_str(&summary_table(&abba.comparisons));
    for c in &abba.comparisons {
        md.push_str(&metric_section(c, heading));
    }
    if !abba.proof_digests.is_empty() {
        md.push_str(&digest_lines(&abba.proof_digests));
    }
    md
}

fn plan_lines(abba: &Abba, scope: &str) -> String {
    format!(
        "- pairs{scope}: {} in ABBA order (odd pairs run A then B, even pairs B then A), after \
         {} discarded warm-up run(s) of each side\n- host: {}\n\n",
        abba.plan.pairs, abba.plan.warmup, abba.host
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
        "**{}: {}**: mean Δ {}, 95 % CI {}, exact Wilcoxon p = {}, noise floor {}\n\n",
        c.metric.name(),
        c.verdict,
        opt(c.diff.mean, pct),
        ci(c),
        sig(c.diff.wilcoxon.p_value),
        opt(c.noise_floor_pct, |x| format!("{x:.2} %")),
    )
}

/// One row per metric: means, mean Δ, CI, Wilcoxon p and verdict; followed by [`SIGN_NOTE`].
pub fn summary_table(comparisons: &[Comparison]) -> String {
    let mut md = String::from(
        "| metric | mean A | mean B | mean Δ | 95 % CI of mean Δ | median Δ | Wilcoxon p | noise floor | verdict |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---|\n",
    );
    for c in comparisons {
        let _ = writeln!(
            md,
            "| {} ({}) | {} | {} | {} | {} | {} | {} | {} | **{}** |",
            c.metric.name(),
            c.metric.unit(),
            opt(c.mean_a, sig),
            opt(c.mean_b, sig),
            opt(c.diff.mean, pct),
            ci(c),
            opt(c.diff.median, pct),
            sig(c.diff.wilcoxon.p_value),
            opt(c.noise_floor_pct, |x| format!("{x:.2} %")),
            c.verdict,
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
        c.verdict
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
    row(
        "noise floor (larger CV)",
        opt(c.noise_floor_pct, |x| format!("{x:.2} %")),
    );
    row("tests' verdict", d.verdict.to_string());
    row("verdict", format!("**{}**", c.verdict));
    md.push('\n');
    md
}

/// The measured runs as CSV, one row per run in execution order.
pub fn pairs_csv(records: &[Record]) -> String {
    let mut csv = String::from(
        "pair,order,side,seq,wall_s,user_s,sys_s,minflt,maxrss_bytes,peak_heap_bytes,proof_sha256\n",
    );
    for r in records {
        let s = &r.sample;
        let _ = writeln!(
            csv,
            "{},{},{},{},{},{},{},{},{},{},{}",
            r.pair,
            r.order,
            r.side,
            r.seq,
            s.wall_s,
            s.user_s,
            s.sys_s,
            s.minflt,
            s.maxrss_bytes,
            s.peak_heap_bytes.map_or(String::new(), |h| h.to_string()),
            r.proof_sha256.as_deref().unwrap_or_default(),
        );
    }
    csv
}

/// `peak = a + b·n` with R².
fn fit_line(fit: &LinearFit, unit: &str) -> String {
    format!(
        "slope b = {} MiB per {unit}{}, intercept a = {} MiB, R² = {:.4}",
        sig(fit.slope),
        fit.slope_se
            .map_or(String::new(), |se| format!(" (± {} SE)", sig(se))),
        sig(fit.intercept),
        fit.r_squared
    )
}

/// The Markdown report of `ballast-bench growth`.
pub fn growth_markdown(g: &Growth, host: &Host) -> String {
    let heap = g.heap_fit.is_some();
    let mut md = format!(
        "## ballast-bench growth: peak memory against {}\n\n- command: {}\n- {} run(s) per point, \
         median reported\n- host: {host}\n\n| {} | peak RSS (MiB) |{} wall (s) |\n|---:|---:|{}---:|\n",
        g.unit,
        code(&g.command),
        g.repeat,
        g.unit,
        if heap { " peak heap (MiB) |" } else { "" },
        if heap { "---:|" } else { "" },
    );
    for p in &g.points {
        let heap_cell = p
            .heap_mib
            .map_or(String::new(), |h| format!(" {} |", sig(h)));
        let _ = writeln!(
            md,
            "| {} | {} |{heap_cell} {} |",
            p.n,
            sig(p.rss_mib),
            sig(p.wall_s)
        );
    }
    let _ = writeln!(
        md,
        "\nOLS fit peak = a + b·n: peak RSS {}",
        fit_line(&g.rss_fit, &g.unit)
    );
    if let Some(fit) = &g.heap_fit {
        let _ = writeln!(md, "; peak heap {}", fit_line(fit, &g.unit));
    }
    md
}

/// Every run of a growth sweep as CSV.
pub fn growth_csv(g: &Growth) -> String {
    let mut csv = String::from("n,run,wall_s,user_s,sys_s,minflt,maxrss_bytes,peak_heap_bytes\n");
    for p in &g.points {
        for (i, s) in p.runs.iter().enumerate() {
            let _ = writeln!(
                csv,
                "{},{},{},{},{},{},{},{}",
                p.n,
                i + 1,
                s.wall_s,
                s.user_s,
                s.sys_s,
                s.minflt,
                s.maxrss_bytes,
                s.peak_heap_bytes.map_or(String::new(), |h| h.to_string()),
            );
        }
    }
    csv
}

/// The combined Markdown report of `ballast-bench policy`.
pub fn policy_markdown(policy: &Policy) -> String {
    let mut md = format!(
        "## ballast-bench policy: jemalloc settings for {}\n\n- command: {}\n\
         - every run starts without `_RJEM_MALLOC_CONF` and `MALLOC_CONF`; an arm sets only \
         `_RJEM_MALLOC_CONF`\n",
        code("cli prove"),
        code(&policy.command),
    );
    let _ = write!(
        md,
        "- pairs per arm: {} in ABBA order (odd pairs run A then B, even pairs B then A), after \
         {} discarded warm-up run(s) of each side\n- host: {}\n\n",
        policy.plan.pairs, policy.plan.warmup, policy.host
    );
    let metrics: Vec<_> = policy
        .arms
        .first()
        .map(|a| a.abba.comparisons.iter().map(|c| c.metric).collect())
        .unwrap_or_default();
    md.push_str("| arm |");
    for metric in &metrics {
        let _ = write!(md, " {} |", metric.name());
    }
    md.push_str(" proofs identical |\n|---|");
    md.push_str(&"---|".repeat(metrics.len() + 1));
    md.push('\n');
    for arm in &policy.arms {
        let _ = write!(md, "| {} |", arm.name);
        for metric in &metrics {
            let cell = arm
                .abba
                .comparisons
                .iter()
                .find(|c| c.metric == *metric)
                .map_or_else(String::new, |c| {
                    format!("{} ({})", c.verdict, opt(c.diff.mean, pct))
                });
            let _ = write!(md, " {cell} |");
        }
        let identical = if distinct(&arm.abba.proof_digests).len() == 1 {
            "yes"
        } else {
            "**no**"
        };
        let _ = writeln!(md, " {identical} |");
    }
    let _ = writeln!(md, "\n{SIGN_NOTE}\n");
    for arm in &policy.arms {
        let _ = write!(
            md,
            "### Arm {}: {}\n\n- A: {}\n- B: {}\n- CSV: `policy-{}.csv`\n\n",
            code(&arm.name),
            arm.title,
            code(&arm.abba.arms[0].command),
            code(&arm.abba.arms[1].command),
            arm.name,
        );
        md.push_str(&summary_table(&arm.abba.comparisons));
        for c in &arm.abba.comparisons {
            md.push_str(&metric_section(c, "####"));
        }
        md.push_str(&digest_lines(&arm.abba.proof_digests));
    }
    let all: Vec<String> = policy
        .arms
        .iter()
        .flat_map(|a| a.abba.proof_digests.clone())
        .collect();
    md.push_str("### Proof bytes across all arms\n\n");
    md.push_str(&digest_lines(&all));
    md
}

/// The Markdown report of `ballast-bench compare`, in the shape of a pull-request comment:
/// the headline table (metric, base, head, Δ, Δ %, verdict), the memory growth table with each
/// side's fit and the regression warning, then the ABBA block.
pub fn compare_markdown(c: &Compare) -> String {
    let [base, head] = &c.builds;
    let name = |b: &crate::model::Build| match &b.commit {
        Some(commit) => format!(
            "{}{}",
            &commit[..commit.len().min(10)],
            if b.dirty {
                " + uncommitted changes"
            } else {
                ""
            }
        ),
        None => b.cli.clone(),
    };
    let mut md = format!(
        "## ballast-bench compare: {} (head) vs {} (base)\n\n- statement: {}\n- host: {}\n\n",
        code(&name(head)),
        code(&name(base)),
        code(&format!("cli prove {}", shell_words::join(&c.prove_args))),
        c.abba.host,
    );
    md.push_str("| metric | base | head | Δ | Δ % | verdict |\n|---|---:|---:|---:|---:|---|\n");
    for cmp in &c.abba.comparisons {
        // Arm A is head, arm B is base.
        let (Some(h), Some(b)) = (cmp.mean_a, cmp.mean_b) else {
            continue;
        };
        let unit = cmp.metric.unit();
        let _ = writeln!(
            md,
            "| {} | {} {unit} | {} {unit} | {} {unit} | {} | {}{} |",
            metric_title(cmp.metric),
            sig(b),
            sig(h),
            signed(h - b),
            opt(cmp.diff.mean, pct),
            verdict_mark(cmp.verdict),
            cmp.verdict,
        );
    }
    let _ = writeln!(
        md,
        "\n_Δ: head's mean − base's; Δ %: the mean of the paired differences (head − base) / base, \
         the ABBA block's mean Δ; the verdict is the ABBA block's._\n"
    );
    let _ = writeln!(
        md,
        "Proof bytes: **{}** across both sides ({} proofs).\n",
        if c.proofs_identical {
            "identical"
        } else {
            "DIFFERENT"
        },
        c.abba.proof_digests.len()
    );

    let [gb, gh] = &c.growth;
    let _ = writeln!(
        md,
        "### Memory growth\n\n_{} run(s) per point; the statement with `--segments n`_\n",
        gh.repeat
    );
    let heap = gb.heap_fit.is_some() && gh.heap_fit.is_some();
    md.push_str("| segments | base RSS (MiB) | head RSS (MiB) | Δ RSS |");
    if heap {
        md.push_str(" base heap (MiB) | head heap (MiB) | Δ heap |");
    }
    md.push_str("\n|---:|---:|---:|---:|");
    if heap {
        md.push_str("---:|---:|---:|");
    }
    md.push('\n');
    for (pb, ph) in gb.points.iter().zip(&gh.points) {
        let delta = |h: f64, b: f64| {
            let pct = if b == 0.0 {
                String::new()
            } else {
                format!(" ({:+.1} %)", (h - b) / b * 100.0)
            };
            format!("{} MiB{pct}", signed(h - b))
        };
        let _ = write!(
            md,
            "| {} | {} | {} | {} |",
            pb.n,
            sig(pb.rss_mib),
            sig(ph.rss_mib),
            delta(ph.rss_mib, pb.rss_mib)
        );
        if let (true, Some(b), Some(h)) = (heap, pb.heap_mib, ph.heap_mib) {
            let _ = write!(md, " {} | {} | {} |", sig(b), sig(h), delta(h, b));
        }
        md.push('\n');
    }
    md.push('\n');
    for s in &c.slopes {
        let rel = if s.base.slope == 0.0 {
            String::new()
        } else {
            format!(", Δ {:+.1} %", s.delta / s.base.slope.abs() * 100.0)
        };
        let _ = writeln!(
            md,
            "- {} growth rate: head {} MiB / segment (base {}{rel}); noise {}\n  - base: {}\n  \
             - head: {}",
            s.metric,
            sig(s.head.slope),
            sig(s.base.slope),
            s.noise.map_or_else(
                || "unknown (fewer than 3 points)".to_owned(),
                |n| format!("± {} MiB / segment (95 %, Student t)", sig(n))
            ),
            fit_line(&s.base, "segment"),
            fit_line(&s.head, "segment"),
        );
    }
    md.push('\n');
    for s in c.slopes.iter().filter(|s| s.regression) {
        let _ = writeln!(
            md,
            "⚠️ **Memory scaling regression** — {} growth rate increased by {} MiB per segment, \
             beyond the fits' noise\n",
            s.metric,
            sig(s.delta)
        );
    }
    md.push_str("### ABBA: head (A) against base (B)\n\n");
    md.push_str(&abba_body(&c.abba, "####"));
    md
}

fn metric_title(m: crate::model::Metric) -> &'static str {
    use crate::model::Metric;
    match m {
        Metric::Wall => "Prove time (wall)",
        Metric::User => "User CPU",
        Metric::Sys => "System CPU",
        Metric::Minflt => "Minor faults",
        Metric::Maxrss => "Peak RSS",
        Metric::Heap => "Peak heap",
    }
}

fn verdict_mark(v: Verdict) -> &'static str {
    match v {
        Verdict::RealImprovement => "✅ ",
        Verdict::RealRegression => "❌ ",
        Verdict::WithinNoise | Verdict::Inconclusive | Verdict::Borderline => "❔ ",
    }
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
    use crate::model::{Metric, Order, Sample, Side};
    use crate::paired::compare;

    fn sample(wall_s: f64) -> Sample {
        Sample {
            wall_s,
            user_s: 0.5,
            sys_s: 0.0,
            minflt: 1000,
            maxrss_bytes: 3 << 20,
            peak_heap_bytes: None,
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
        let records: Vec<Record> = [(1, Side::A), (1, Side::B), (2, Side::B), (2, Side::A)]
            .iter()
            .enumerate()
            .map(|(i, &(pair, side))| Record {
                pair,
                order: Order::of_pair(pair),
                side,
                seq: i + 3,
                sample: sample(0.25),
                proof_sha256: None,
            })
            .collect();
        let csv = pairs_csv(&records);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 5);
        assert_eq!(
            lines[0],
            "pair,order,side,seq,wall_s,user_s,sys_s,minflt,maxrss_bytes,peak_heap_bytes,proof_sha256"
        );
        assert_eq!(lines[3], "2,BA,B,5,0.25,0.5,0,1000,3145728,,");
    }

    #[test]
    fn metric_section_handles_missing_values() {
        let c = compare(Metric::Wall, &[sample(1.0)], &[sample(2.0)]).unwrap();
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
