//! Paired comparison of two arms on one metric: relative differences, both tests, diagnostics and
//! the verdict.
//!
//! The difference of pair i is dᵢ = (Aᵢ − Bᵢ) / Bᵢ × 100 %, so a negative d means A is lower,
//! which for every metric here (time, faults, memory) is better. This module only analyses numbers
//! it is given; running and ordering the pairs is `abba`'s job, formatting is `report`'s.

use std::fmt;

use crate::runner::Sample;
use crate::stats::{self, TInterval, Wilcoxon};

/// Significance level of both tests, and 1 − the confidence level of the interval.
pub const ALPHA: f64 = 0.05;

/// A measured quantity of one run; all are lower-is-better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
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
}

impl Metric {
    /// Every metric, in report order.
    pub const ALL: [Metric; 5] = [
        Metric::Wall,
        Metric::User,
        Metric::Sys,
        Metric::Minflt,
        Metric::Maxrss,
    ];

    /// The metric's value in `sample`, in the unit of [`Metric::unit`].
    pub fn of(self, sample: &Sample) -> f64 {
        match self {
            Metric::Wall => sample.wall_s,
            Metric::User => sample.user_s,
            Metric::Sys => sample.sys_s,
            Metric::Minflt => sample.minflt as f64,
            Metric::Maxrss => sample.maxrss_bytes as f64 / (1024.0 * 1024.0),
        }
    }

    /// Short name as used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Wall => "wall",
            Metric::User => "user",
            Metric::Sys => "sys",
            Metric::Minflt => "minflt",
            Metric::Maxrss => "maxrss",
        }
    }

    /// Unit of [`Metric::of`].
    pub fn unit(self) -> &'static str {
        match self {
            Metric::Wall | Metric::User | Metric::Sys => "s",
            Metric::Minflt => "faults",
            Metric::Maxrss => "MiB",
        }
    }
}

/// The conclusion drawn from both tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// A is lower: CI entirely below zero and Wilcoxon significant in the same direction.
    RealImprovement,
    /// A is higher: CI entirely above zero and Wilcoxon significant in the same direction.
    RealRegression,
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
            Verdict::Borderline => "BORDERLINE",
            Verdict::Inconclusive => "INCONCLUSIVE",
        })
    }
}

/// Everything computed from the paired differences d (in %).
#[derive(Debug, Clone, PartialEq)]
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
    /// The verdict.
    pub verdict: Verdict,
}

/// Analyses the differences `d`, in pair order.
pub fn summarize(d: &[f64]) -> DiffSummary {
    let n = d.len();
    let t = stats::paired_t_interval(d, 1.0 - ALPHA);
    let wilcoxon = stats::wilcoxon_signed_rank(d);
    let index: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let drift_pp = stats::ols(&index, d).map(|fit| fit.slope * (n - 1) as f64);
    let half = n / 2;
    let half_shift_pp = match (stats::mean(&d[..half]), stats::mean(&d[n - half..])) {
        (Some(first), Some(second)) => Some(second - first),
        _ => None,
    };
    DiffSummary {
        n,
        verdict: verdict(n, t.as_ref(), &wilcoxon),
        t,
        mean: stats::mean(d),
        median: stats::median(d),
        wilcoxon,
        drift_pp,
        half_shift_pp,
    }
}

/// Combines the paired-t interval and the Wilcoxon test into a verdict.
fn verdict(n: usize, t: Option<&TInterval>, w: &Wilcoxon) -> Verdict {
    if n < 2 {
        return Verdict::Inconclusive;
    }
    // Each test's answer: Some(true) = A lower, Some(false) = A higher, None = not significant.
    let by_t = t.and_then(|t| {
        if t.hi < 0.0 {
            Some(true)
        } else if t.lo > 0.0 {
            Some(false)
        } else {
            None
        }
    });
    let by_w = (w.p_value < ALPHA && w.w_plus != w.w_minus).then_some(w.w_minus > w.w_plus);
    match (by_t, by_w) {
        (Some(true), Some(true)) => Verdict::RealImprovement,
        (Some(false), Some(false)) => Verdict::RealRegression,
        (None, None) => Verdict::Inconclusive,
        _ => Verdict::Borderline,
    }
}

/// One metric compared between arm A and arm B over the same pairs.
#[derive(Debug, Clone, PartialEq)]
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
    /// Pairs left out because B was zero while A was not (the relative difference is undefined).
    pub excluded: usize,
    /// Analysis of the relative differences.
    pub diff: DiffSummary,
}

/// Relative differences (A − B)/B × 100 in pair order, and how many pairs had B = 0 ≠ A.
///
/// A pair with A = B = 0 counts as a zero difference.
pub fn relative_differences(a: &[f64], b: &[f64]) -> (Vec<f64>, usize) {
    let mut excluded = 0;
    let mut d = Vec::with_capacity(a.len());
    for (&x, &y) in a.iter().zip(b) {
        if y != 0.0 {
            d.push((x - y) / y * 100.0);
        } else if x == 0.0 {
            d.push(0.0);
        } else {
            excluded += 1;
        }
    }
    (d, excluded)
}

/// Compares `metric` over paired samples (`a[i]` and `b[i]` belong to pair i).
pub fn compare(metric: Metric, a: &[Sample], b: &[Sample]) -> Comparison {
    let a: Vec<f64> = a.iter().map(|s| metric.of(s)).collect();
    let b: Vec<f64> = b.iter().map(|s| metric.of(s)).collect();
    let (d, excluded) = relative_differences(&a, &b);
    Comparison {
        metric,
        mean_a: stats::mean(&a),
        mean_b: stats::mean(&b),
        cv_a: stats::coefficient_of_variation(&a),
        cv_b: stats::coefficient_of_variation(&b),
        excluded,
        diff: summarize(&d),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wall(values: &[f64]) -> Vec<Sample> {
        values
            .iter()
            .map(|&wall_s| Sample {
                wall_s,
                user_s: 0.0,
                sys_s: 0.0,
                minflt: 100,
                maxrss_bytes: 1 << 20,
            })
            .collect()
    }

    const D: [f64; 10] = [-3.1, -2.4, -4.0, -1.2, -2.9, 0.4, -3.6, -2.2, -1.9, -2.8];

    #[test]
    fn clear_improvement_and_its_mirror() {
        let s = summarize(&D);
        assert_eq!(s.verdict, Verdict::RealImprovement);
        let neg: Vec<f64> = D.iter().map(|x| -x).collect();
        let m = summarize(&neg);
        assert_eq!(m.verdict, Verdict::RealRegression);
        let (t, tm) = (s.t.unwrap(), m.t.unwrap());
        assert_eq!((t.lo, t.hi), (-tm.hi, -tm.lo));
        assert_eq!(s.wilcoxon.p_value, m.wilcoxon.p_value);
        assert_eq!(s.median.map(|x| -x), m.median);
    }

    #[test]
    fn swapping_arms_mirrors_the_verdict() {
        let a = wall(&[1.00, 1.02, 0.99, 1.01, 1.00, 0.98, 1.03, 1.00]);
        let b = wall(&[1.10, 1.11, 1.09, 1.12, 1.10, 1.08, 1.12, 1.11]);
        let ab = compare(Metric::Wall, &a, &b);
        let ba = compare(Metric::Wall, &b, &a);
        assert_eq!(ab.diff.verdict, Verdict::RealImprovement);
        assert_eq!(ba.diff.verdict, Verdict::RealRegression);
        assert_eq!(ab.diff.wilcoxon.p_value, ba.diff.wilcoxon.p_value);
        assert_eq!(ab.mean_a, ba.mean_b);
        // maxrss and minflt are identical in both arms.
        let same = compare(Metric::Maxrss, &a, &b);
        assert_eq!(same.diff.verdict, Verdict::Inconclusive);
        assert_eq!(same.diff.wilcoxon.p_value, 1.0);
    }

    #[test]
    fn identical_samples_are_inconclusive() {
        let a = wall(&[1.0, 1.5, 0.7, 2.0, 1.1, 0.9]);
        let c = compare(Metric::Wall, &a, &a);
        assert_eq!(c.diff.verdict, Verdict::Inconclusive);
        let t = c.diff.t.unwrap();
        assert_eq!((t.lo, t.hi, c.diff.wilcoxon.p_value), (0.0, 0.0, 1.0));
    }

    #[test]
    fn degenerate_inputs_do_not_panic() {
        let empty = summarize(&[]);
        assert_eq!(
            (empty.verdict, empty.t, empty.mean),
            (Verdict::Inconclusive, None, None)
        );
        let one = summarize(&[-50.0]);
        assert_eq!(
            (one.verdict, one.t, one.drift_pp),
            (Verdict::Inconclusive, None, None)
        );
        // Zero variance: the interval collapses onto the mean, which is below zero.
        let flat = summarize(&[-5.0; 8]);
        let t = flat.t.unwrap();
        assert_eq!((t.lo, t.hi), (-5.0, -5.0));
        assert_eq!(flat.verdict, Verdict::RealImprovement);
        // Too few pairs for Wilcoxon to reach 5 % (min p = 2/2^5) while t is significant.
        assert_eq!(
            summarize(&[-5.0, -5.1, -4.9, -5.0, -5.05]).verdict,
            Verdict::Borderline
        );
    }

    #[test]
    fn zero_denominators() {
        let (d, excluded) = relative_differences(&[0.0, 1.0, 3.0], &[0.0, 0.0, 2.0]);
        assert_eq!((d, excluded), (vec![0.0, 50.0], 1));
    }

    #[test]
    fn drift_and_half_shift() {
        let d: Vec<f64> = (0..9).map(|i| f64::from(i) * 0.5).collect();
        let s = summarize(&d);
        assert!((s.drift_pp.unwrap() - 4.0).abs() < 1e-12);
        // Second half 2.5..4.0 (mean 3.25) minus first half 0..1.5 (mean 0.75).
        assert!((s.half_shift_pp.unwrap() - 2.5).abs() < 1e-12);
    }
}
