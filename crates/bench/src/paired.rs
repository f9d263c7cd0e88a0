//! Paired comparison of two arms on one metric: relative differences, both tests, diagnostics,
//! the noise floor and the verdict.
//!
//! The difference of pair i is dᵢ = (Aᵢ − Bᵢ) / Bᵢ × 100 %, so a negative d means A is lower,
//! which for every metric here (time, faults, memory) is better. This module only analyses numbers
//! it is given; running and ordering the pairs is `abba`'s job, formatting is `report`'s.

use crate::model::{Comparison, DiffSummary, Metric, Sample, Verdict};
use crate::stats::{self, TInterval, Wilcoxon};

/// Significance level of both tests, and 1 − the confidence level of the interval.
pub const ALPHA: f64 = 0.05;

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

/// The tests' verdict, or [`Verdict::WithinNoise`] when they agree on a mean difference no
/// larger than the noise floor (the larger jitter of the two arms, as criterion's noise
/// threshold).
fn with_noise_floor(tests: Verdict, mean: Option<f64>, floor: Option<f64>) -> Verdict {
    match (tests, mean, floor) {
        (Verdict::RealImprovement | Verdict::RealRegression, Some(mean), Some(floor))
            if mean.abs() <= floor =>
        {
            Verdict::WithinNoise
        }
        _ => tests,
    }
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

/// Compares `metric` over paired samples (`a[i]` and `b[i]` belong to pair i); `None` when a
/// run did not report the metric.
pub fn compare(metric: Metric, a: &[Sample], b: &[Sample]) -> Option<Comparison> {
    let values = |s: &[Sample]| s.iter().map(|s| metric.of(s)).collect::<Option<Vec<f64>>>();
    let (a, b) = (values(a)?, values(b)?);
    let (d, excluded) = relative_differences(&a, &b);
    let (cv_a, cv_b) = (
        stats::coefficient_of_variation(&a),
        stats::coefficient_of_variation(&b),
    );
    let noise_floor_pct = match (cv_a, cv_b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, y) => x.or(y),
    };
    let diff = summarize(&d);
    Some(Comparison {
        metric,
        mean_a: stats::mean(&a),
        mean_b: stats::mean(&b),
        cv_a,
        cv_b,
        noise_floor_pct,
        excluded,
        verdict: with_noise_floor(diff.verdict, diff.mean, noise_floor_pct),
        diff,
    })
}

/// Every metric the runs report compared between A and B, `primary` first.
pub fn compare_all(primary: Metric, a: &[Sample], b: &[Sample]) -> Vec<Comparison> {
    std::iter::once(primary)
        .chain(Metric::ALL.into_iter().filter(|&m| m != primary))
        .filter_map(|m| compare(m, a, b))
        .collect()
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
                peak_heap_bytes: None,
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
        let ab = compare(Metric::Wall, &a, &b).unwrap();
        let ba = compare(Metric::Wall, &b, &a).unwrap();
        assert_eq!(ab.diff.verdict, Verdict::RealImprovement);
        assert_eq!(ba.diff.verdict, Verdict::RealRegression);
        assert_eq!(ab.diff.wilcoxon.p_value, ba.diff.wilcoxon.p_value);
        assert_eq!(ab.mean_a, ba.mean_b);
        // maxrss and minflt are identical in both arms.
        let same = compare(Metric::Maxrss, &a, &b).unwrap();
        assert_eq!(same.diff.verdict, Verdict::Inconclusive);
        assert_eq!(same.diff.wilcoxon.p_value, 1.0);
    }

    #[test]
    fn identical_samples_are_inconclusive() {
        let a = wall(&[1.0, 1.5, 0.7, 2.0, 1.1, 0.9]);
        let c = compare(Metric::Wall, &a, &a).unwrap();
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
    fn a_significant_difference_inside_the_jitter_is_within_noise() {
        // B alternates ±3 % around 1.0 (CV ≈ 3 %); A is B less 1 % in every pair: both tests
        // are significant, but 1 % is inside the jitter.
        let b: Vec<f64> = (0..10)
            .map(|i| if i % 2 == 0 { 1.03 } else { 0.97 })
            .collect();
        let a: Vec<f64> = b.iter().map(|x| x * 0.99).collect();
        let c = compare(Metric::Wall, &wall(&a), &wall(&b)).unwrap();
        assert_eq!(c.diff.verdict, Verdict::RealImprovement);
        assert!(c.noise_floor_pct.unwrap() > 2.9, "{:?}", c.noise_floor_pct);
        assert_eq!(c.verdict, Verdict::WithinNoise);
        // 10 % lower is beyond it.
        let a: Vec<f64> = b.iter().map(|x| x * 0.9).collect();
        let c = compare(Metric::Wall, &wall(&a), &wall(&b)).unwrap();
        assert_eq!(c.verdict, Verdict::RealImprovement);
    }

    #[test]
    fn metrics_a_run_does_not_report_are_left_out() {
        let a = wall(&[1.0, 1.1]);
        assert_eq!(compare(Metric::Heap, &a, &a), None);
        let metrics: Vec<Metric> = compare_all(Metric::Sys, &a, &a)
            .iter()
            .map(|c| c.metric)
            .collect();
        assert_eq!(
            metrics,
            [
                Metric::Sys,
                Metric::Wall,
                Metric::User,
                Metric::Minflt,
                Metric::Maxrss
            ]
        );
        let with_heap: Vec<Sample> = a
            .iter()
            .map(|s| Sample {
                peak_heap_bytes: Some(5 << 20),
                ..*s
            })
            .collect();
        let heap = compare(Metric::Heap, &with_heap, &with_heap).unwrap();
        assert_eq!(heap.mean_a, Some(5.0));
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
