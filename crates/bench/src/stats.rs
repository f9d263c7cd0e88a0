//! Statistics for paired benchmark data: descriptive statistics, the paired-t confidence interval,
//! the exact Wilcoxon signed-rank test and an ordinary least-squares line.
//!
//! Everything here is a pure function of its input slices and returns `None` (never panics) when the
//! data cannot support the statistic. It knows nothing about processes, metrics or verdicts.

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

/// Arithmetic mean; `None` for an empty slice.
pub fn mean(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    Some(xs.iter().sum::<f64>() / xs.len() as f64)
}

/// Sample standard deviation (denominator n − 1); `None` for fewer than two values.
pub fn sample_sd(xs: &[f64]) -> Option<f64> {
    if xs.len() < 2 {
        return None;
    }
    let m = mean(xs)?;
    let ss: f64 = xs.iter().map(|x| (x - m) * (x - m)).sum();
    Some((ss / (xs.len() - 1) as f64).sqrt())
}

/// Median (mean of the two middle values for an even count); `None` for an empty slice.
pub fn median(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let mut sorted = xs.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    Some(if sorted.len().is_multiple_of(2) {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    } else {
        sorted[mid]
    })
}

/// Coefficient of variation in percent (SD / mean × 100); `None` for n < 2 or a zero mean.
pub fn coefficient_of_variation(xs: &[f64]) -> Option<f64> {
    let m = mean(xs)?;
    let sd = sample_sd(xs)?;
    (m != 0.0).then(|| sd / m.abs() * 100.0)
}

/// A two-sided Student-t confidence interval for the mean of paired differences.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TInterval {
    /// Mean of the differences.
    pub mean: f64,
    /// Sample standard deviation of the differences.
    pub sd: f64,
    /// Degrees of freedom, n − 1.
    pub df: usize,
    /// The t statistic mean / (sd / √n); `None` when sd is zero.
    pub t: Option<f64>,
    /// Lower bound of the interval.
    pub lo: f64,
    /// Upper bound of the interval.
    pub hi: f64,
}

/// Paired-t interval at confidence `level` (e.g. 0.95) for the mean of `d`; `None` for n < 2.
///
/// With zero variance the interval collapses to the mean.
pub fn paired_t_interval(d: &[f64], level: f64) -> Option<TInterval> {
    let n = d.len();
    if n < 2 || !(0.0..1.0).contains(&level) {
        return None;
    }
    let mean = mean(d)?;
    let sd = sample_sd(d)?;
    let df = n - 1;
    let dist = StudentsT::new(0.0, 1.0, df as f64).ok()?;
    let q = dist.inverse_cdf(0.5 + level / 2.0);
    let se = sd / (n as f64).sqrt();
    Some(TInterval {
        mean,
        sd,
        df,
        t: (se > 0.0).then(|| mean / se),
        lo: mean - q * se,
        hi: mean + q * se,
    })
}

/// Ranks of `xs` from 1, ties given the mean of the positions they span (mid-ranks), doubled so
/// that every rank is an integer: a value alone at position k gets 2k.
pub fn doubled_mid_ranks(xs: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..xs.len()).collect();
    order.sort_by(|&i, &j| xs[i].total_cmp(&xs[j]));
    let mut ranks = vec![0; xs.len()];
    let mut start = 0;
    while start < order.len() {
        let mut end = start;
        while end + 1 < order.len() && xs[order[end + 1]] == xs[order[start]] {
            end += 1;
        }
        // Positions start+1 ..= end+1; their mean doubled is (start+1) + (end+1).
        let doubled = start + end + 2;
        for &i in &order[start..=end] {
            ranks[i] = doubled;
        }
        start = end + 1;
    }
    ranks
}

/// Result of the Wilcoxon signed-rank test on paired differences.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Wilcoxon {
    /// Number of non-zero differences that were ranked.
    pub n_nonzero: usize,
    /// Sum of the (mid-)ranks of the positive differences.
    pub w_plus: f64,
    /// Sum of the (mid-)ranks of the negative differences.
    pub w_minus: f64,
    /// Exact two-sided p-value; 1 when no difference is non-zero.
    pub p_value: f64,
}

/// Exact two-sided Wilcoxon signed-rank test of "the differences are symmetric about zero".
///
/// Zeros are dropped, tied magnitudes get mid-ranks, and the null distribution of W+ is computed
/// exactly by dynamic programming over the doubled (integer) ranks: under the null each rank is
/// positive with probability ½ independently. With ties this is the exact permutation distribution
/// (R's `wilcox.test` falls back to a normal approximation there). The p-value is
/// `min(1, 2 · min(P(W+ ≤ w), P(W+ ≥ w)))`, as in R.
///
/// For m non-zero differences the distribution has m(m + 1) + 1 entries, each updated once per
/// rank: O(m³) time and O(m²) memory. Callers bound m (`--pairs` is capped at
/// [`MAX_PAIRS`](crate::abba::MAX_PAIRS)).
pub fn wilcoxon_signed_rank(d: &[f64]) -> Wilcoxon {
    let nonzero: Vec<f64> = d.iter().copied().filter(|&x| x != 0.0).collect();
    let magnitudes: Vec<f64> = nonzero.iter().map(|x| x.abs()).collect();
    let ranks = doubled_mid_ranks(&magnitudes);
    let w_plus2: usize = nonzero
        .iter()
        .zip(&ranks)
        .filter(|(x, _)| **x > 0.0)
        .map(|(_, r)| r)
        .sum();
    let total2: usize = ranks.iter().sum();
    let w_minus2 = total2 - w_plus2;

    // dist[s] = P(doubled W+ = s) under the null.
    let mut dist = vec![0.0_f64; total2 + 1];
    dist[0] = 1.0;
    let mut reach = 0usize;
    for &r in &ranks {
        for s in (0..=reach + r).rev() {
            let without = dist[s];
            let with = if s >= r { dist[s - r] } else { 0.0 };
            dist[s] = 0.5 * (without + with);
        }
        reach += r;
    }
    let lower: f64 = dist[..=w_plus2].iter().sum();
    let upper: f64 = dist[w_plus2..].iter().sum();
    let p_value = if nonzero.is_empty() {
        1.0
    } else {
        (2.0 * lower.min(upper)).min(1.0)
    };
    Wilcoxon {
        n_nonzero: nonzero.len(),
        w_plus: w_plus2 as f64 / 2.0,
        w_minus: w_minus2 as f64 / 2.0,
        p_value,
    }
}

/// A fitted line y = intercept + slope · x.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LinearFit {
    /// Value of the line at x = 0.
    pub intercept: f64,
    /// Change of y per unit of x.
    pub slope: f64,
    /// Coefficient of determination; 1 when the data lie exactly on the line.
    pub r_squared: f64,
    /// Standard error of the slope, √(SS_res / (n − 2) / S_xx); `None` for fewer than three
    /// points, which leave no residual to estimate it from.
    pub slope_se: Option<f64>,
    /// Number of points fitted.
    pub n: usize,
}

/// The two-sided 95 % Student-t quantile with `df` degrees of freedom (`None` for df = 0).
pub fn t_quantile_95(df: usize) -> Option<f64> {
    let t = StudentsT::new(0.0, 1.0, df as f64).ok()?;
    Some(t.inverse_cdf(0.975))
}

/// Ordinary least-squares line through `(x, y)`; `None` unless there are two distinct x values.
pub fn ols(x: &[f64], y: &[f64]) -> Option<LinearFit> {
    if x.len() != y.len() {
        return None;
    }
    let mx = mean(x)?;
    let my = mean(y)?;
    let sxx: f64 = x.iter().map(|xi| (xi - mx) * (xi - mx)).sum();
    if sxx == 0.0 {
        return None;
    }
    let sxy: f64 = x.iter().zip(y).map(|(xi, yi)| (xi - mx) * (yi - my)).sum();
    let slope = sxy / sxx;
    let intercept = my - slope * mx;
    let ss_tot: f64 = y.iter().map(|yi| (yi - my) * (yi - my)).sum();
    let ss_res: f64 = x
        .iter()
        .zip(y)
        .map(|(xi, yi)| {
            let r = yi - (intercept + slope * xi);
            r * r
        })
        .sum();
    let r_squared = if ss_tot == 0.0 {
        1.0
    } else {
        1.0 - ss_res / ss_tot
    };
    let slope_se = (x.len() > 2).then(|| (ss_res / (x.len() - 2) as f64 / sxx).sqrt());
    Some(LinearFit {
        intercept,
        slope,
        r_squared,
        slope_se,
        n: x.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    /// Student's sleep data (Cushny & Peebles 1905, as tabulated by "Student", Biometrika 6, 1908;
    /// R's `datasets::sleep`): extra hours of sleep under drug 2 minus drug 1, per patient.
    /// `t.test(extra ~ group, data = sleep, paired = TRUE)` reports t = -4.0621, df = 9 and the
    /// 95 % CI [-2.4598858, -0.7001142] for drug 1 minus drug 2, i.e. mean 1.58, CI
    /// [0.7001142, 2.4598858] for the difference taken this way round.
    const SLEEP_DIFF: [f64; 10] = [1.2, 2.4, 1.3, 1.3, 0.0, 1.0, 1.8, 0.8, 4.6, 1.4];

    #[test]
    fn paired_t_matches_students_sleep_data() {
        let ci = paired_t_interval(&SLEEP_DIFF, 0.95).unwrap();
        assert!(close(ci.mean, 1.58, 1e-12));
        assert_eq!(ci.df, 9);
        assert!(close(ci.t.unwrap(), 4.062128, 1e-5), "t = {:?}", ci.t);
        assert!(close(ci.lo, 0.7001142, 1e-6), "lo = {}", ci.lo);
        assert!(close(ci.hi, 2.4598858, 1e-6), "hi = {}", ci.hi);
    }

    #[test]
    fn paired_t_degenerate_cases() {
        assert_eq!(paired_t_interval(&[], 0.95), None);
        assert_eq!(paired_t_interval(&[3.0], 0.95), None);
        let flat = paired_t_interval(&[-2.0, -2.0, -2.0], 0.95).unwrap();
        assert_eq!((flat.lo, flat.hi, flat.t), (-2.0, -2.0, None));
    }

    #[test]
    fn descriptive_statistics() {
        assert_eq!(mean(&[1.0, 2.0, 6.0]), Some(3.0));
        assert_eq!(median(&[5.0, 1.0, 3.0]), Some(3.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[]), None);
        let sd = sample_sd(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert!(close(sd * sd, 32.0 / 7.0, 1e-12));
        assert_eq!(sample_sd(&[1.0]), None);
        assert_eq!(coefficient_of_variation(&[1.0, -1.0]), None);
        assert!(close(
            coefficient_of_variation(&[9.0, 11.0]).unwrap(),
            2f64.sqrt() / 10.0 * 100.0,
            1e-12
        ));
    }

    #[test]
    fn mid_ranks_are_doubled_averages() {
        assert_eq!(doubled_mid_ranks(&[3.0, 1.0, 2.0]), vec![6, 2, 4]);
        // 1.0 and 1.0 share positions 2 and 3 → 2.5 → doubled 5.
        assert_eq!(doubled_mid_ranks(&[1.0, 0.5, 1.0, 7.0]), vec![5, 2, 5, 8]);
    }

    #[test]
    fn wilcoxon_all_positive_ten_is_two_in_1024() {
        let d: Vec<f64> = (1..=10).map(f64::from).collect();
        let w = wilcoxon_signed_rank(&d);
        assert_eq!((w.w_plus, w.w_minus, w.n_nonzero), (55.0, 0.0, 10));
        assert_eq!(w.p_value, 2.0 / 1024.0);
    }

    /// Hollander & Wolfe (1973), *Nonparametric Statistical Methods*, p. 29 — the depression
    /// example in R's `?wilcox.test`: `wilcox.test(x, y, paired = TRUE, alternative = "greater")`
    /// gives V = 40, p = 0.01953 (= 10/512); two-sided exact p is therefore 20/512.
    #[test]
    #[expect(
        clippy::approx_constant,
        reason = "3.14 is a published observation, not π"
    )]
    fn wilcoxon_matches_r_depression_example() {
        let x = [1.83, 0.50, 1.62, 2.48, 1.68, 1.88, 1.55, 3.06, 1.30];
        let y = [0.878, 0.647, 0.598, 2.05, 1.06, 1.29, 1.06, 3.14, 1.29];
        let d: Vec<f64> = x.iter().zip(&y).map(|(a, b)| a - b).collect();
        let w = wilcoxon_signed_rank(&d);
        assert_eq!((w.w_plus, w.w_minus), (40.0, 5.0));
        assert!(close(w.p_value, 20.0 / 512.0, 1e-15), "p = {}", w.p_value);
    }

    /// Independent oracle: enumerate all 2^m sign assignments of the (mid-)ranks and count those at
    /// least as far from the centre m(m+1)/4 as the observed W+.
    fn brute_force_p(d: &[f64]) -> f64 {
        let nonzero: Vec<f64> = d.iter().copied().filter(|&x| x != 0.0).collect();
        let m = nonzero.len();
        let abs: Vec<f64> = nonzero.iter().map(|x| x.abs()).collect();
        // Mid-ranks computed the slow way: 1 + #smaller + (#equal − 1)/2.
        let ranks: Vec<f64> = abs
            .iter()
            .map(|&a| {
                let smaller = abs.iter().filter(|&&b| b < a).count() as f64;
                let equal = abs.iter().filter(|&&b| b == a).count() as f64;
                1.0 + smaller + (equal - 1.0) / 2.0
            })
            .collect();
        let observed: f64 = nonzero
            .iter()
            .zip(&ranks)
            .filter(|(x, _)| **x > 0.0)
            .map(|(_, r)| r)
            .sum();
        let centre = ranks.iter().sum::<f64>() / 2.0;
        let extreme = (observed - centre).abs();
        let mut count = 0u64;
        for mask in 0u32..(1 << m) {
            let w: f64 = (0..m)
                .filter(|i| mask & (1 << i) != 0)
                .map(|i| ranks[i])
                .sum();
            if (w - centre).abs() >= extreme - 1e-9 {
                count += 1;
            }
        }
        count as f64 / f64::from(1u32 << m)
    }

    #[test]
    fn wilcoxon_with_ties_and_zeros_matches_enumeration() {
        let cases: [&[f64]; 4] = [
            &[
                1.5, -1.5, 2.0, 3.0, -0.5, 0.0, 4.0, 2.0, -3.0, 5.0, 0.0, 1.0,
            ],
            &[-1.0, -1.0, -1.0, 2.0, -2.0, -3.0, -3.0, 0.0, -4.0, 1.0],
            &SLEEP_DIFF,
            &[
                0.25, -0.25, 0.25, -0.25, 0.5, 0.0, 0.75, -0.75, 0.75, 1.0, 1.0, -1.0, 2.0,
            ],
        ];
        for d in cases {
            let w = wilcoxon_signed_rank(d);
            let oracle = brute_force_p(d);
            assert!(
                close(w.p_value, oracle, 1e-12),
                "{d:?}: {} vs {oracle}",
                w.p_value
            );
        }
        // The sleep data: one zero dropped, one tie, all nine remaining positive → 2/512.
        let w = wilcoxon_signed_rank(&SLEEP_DIFF);
        assert_eq!((w.n_nonzero, w.w_plus, w.w_minus), (9, 45.0, 0.0));
        assert_eq!(w.p_value, 2.0 / 512.0);
    }

    /// At the `--pairs` cap the exact distribution is still exact: all 500 differences positive
    /// give p = 2 / 2^500, far below anything a normal approximation resolves.
    #[test]
    fn wilcoxon_is_exact_at_the_pairs_cap() {
        let m = crate::abba::MAX_PAIRS;
        let d: Vec<f64> = (1..=m).map(f64::from).collect();
        let w = wilcoxon_signed_rank(&d);
        let m = f64::from(m);
        assert_eq!((w.w_plus, w.w_minus), (m * (m + 1.0) / 2.0, 0.0));
        assert_eq!(w.p_value, 2.0 * 0.5f64.powi(500));
        // One negative difference of rank 1: P(W+ ≥ max − 1) = 2 / 2^500, two-sided twice that.
        let mut d = d;
        d[0] = -1.0;
        assert_eq!(wilcoxon_signed_rank(&d).p_value, 4.0 * 0.5f64.powi(500));
    }

    #[test]
    fn wilcoxon_degenerate_and_mirrored() {
        let zeros = wilcoxon_signed_rank(&[0.0, 0.0, 0.0]);
        assert_eq!((zeros.n_nonzero, zeros.p_value), (0, 1.0));
        assert_eq!(wilcoxon_signed_rank(&[]).p_value, 1.0);
        assert_eq!(wilcoxon_signed_rank(&[-4.0]).p_value, 1.0);
        let d = [0.3, -1.2, 2.5, 2.5, 0.7, -0.1, 1.9, 3.3];
        let neg: Vec<f64> = d.iter().map(|x| -x).collect();
        let (w, wn) = (wilcoxon_signed_rank(&d), wilcoxon_signed_rank(&neg));
        assert_eq!((w.w_plus, w.w_minus), (wn.w_minus, wn.w_plus));
        assert_eq!(w.p_value, wn.p_value);
    }

    #[test]
    fn ols_recovers_an_exact_line() {
        let x = [1.0, 2.0, 4.0, 8.0];
        let y: Vec<f64> = x.iter().map(|v| 3.5 + 0.25 * v).collect();
        let fit = ols(&x, &y).unwrap();
        assert!(close(fit.slope, 0.25, 1e-12));
        assert!(close(fit.intercept, 3.5, 1e-12));
        assert!(close(fit.r_squared, 1.0, 1e-12));
        assert!(close(fit.slope_se.unwrap(), 0.0, 1e-12));
    }

    #[test]
    fn ols_noisy_and_degenerate() {
        // By hand: Sxx = 5, Sxy = 3 → slope 0.6, intercept 0.6; SSres = 3.2, SStot = 5 → R² = 0.36.
        let x = [0.0, 1.0, 2.0, 3.0];
        let y = [1.0, 0.0, 3.0, 2.0];
        let fit = ols(&x, &y).unwrap();
        assert!(close(fit.slope, 0.6, 1e-12) && close(fit.intercept, 0.6, 1e-12));
        assert!(close(fit.r_squared, 0.36, 1e-12));
        // √(3.2 / 2 / 5) = √0.32.
        assert!(close(fit.slope_se.unwrap(), 0.32f64.sqrt(), 1e-12));
        assert_eq!(ols(&[0.0, 1.0], &[1.0, 3.0]).unwrap().slope_se, None);
        assert_eq!(fit.n, 4);
        // qt(0.975, c(1, 2, 30)) in R.
        assert!(close(t_quantile_95(1).unwrap(), 12.706_204_736, 1e-6));
        assert!(close(t_quantile_95(2).unwrap(), 4.302_652_730, 1e-6));
        assert!(close(t_quantile_95(30).unwrap(), 2.042_272_456, 1e-6));
        assert_eq!(t_quantile_95(0), None);
        assert_eq!(ols(&[2.0, 2.0], &[1.0, 5.0]), None);
        assert_eq!(ols(&[1.0], &[1.0]), None);
        assert_eq!(ols(&[1.0, 2.0], &[1.0]), None);
        assert_eq!(ols(&[1.0, 2.0], &[4.0, 4.0]).unwrap().r_squared, 1.0);
    }
}
