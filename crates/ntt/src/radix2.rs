//! In-place radix-2 transforms: decimation in frequency and decimation in time.
//!
//! Both recurse on halves until a block is small enough to stay in cache, then finish
//! iteratively. Halves at least [`PARALLEL_SPAN`] long are transformed in parallel. The
//! arithmetic is the same whatever the recursion or thread count, so outputs are identical.

use ballast_cpu::Kernels;
use ballast_field::Felt;

use crate::Twiddles;
use crate::kernels::{dif_layer, dit_layer, unit_layer};

/// Blocks of at most this many elements are transformed iteratively (32 KiB: L1-sized).
const ITERATIVE_SPAN: usize = 1 << 12;
/// Halves at least this long are transformed with `rayon::join`.
const PARALLEL_SPAN: usize = 1 << 15;

/// Forward transform, natural order in, bit-reversed order out (Gentleman–Sande).
///
/// With the forward tables, `values[i] = p(w^br(i))` afterwards, where `p` has the input as
/// its coefficients; with the inverse tables it computes `n·coeffs` in bit-reversed order from
/// natural-order evaluations. Runs on the process's CPU path.
///
/// # Panics
/// If the length is not a power of two no larger than the tables.
pub fn dif(values: &mut [Felt], twiddles: &Twiddles) {
    dif_on(Kernels::active(), values, twiddles);
}

/// Forward transform, bit-reversed order in, natural order out (Cooley–Tukey).
///
/// With the forward tables, if `values[i] = c[br(i)]` then afterwards `values[j] = p(w^j)`.
/// Runs on the process's CPU path.
///
/// # Panics
/// If the length is not a power of two no larger than the tables.
pub fn dit(values: &mut [Felt], twiddles: &Twiddles) {
    dit_on(Kernels::active(), values, twiddles);
}

/// [`dif`] with the given kernels.
pub(crate) fn dif_on(kernels: Kernels, values: &mut [Felt], twiddles: &Twiddles) {
    check_len(values.len(), twiddles);
    dif_rec(kernels, values, twiddles);
}

/// [`dit`] with the given kernels.
pub(crate) fn dit_on(kernels: Kernels, values: &mut [Felt], twiddles: &Twiddles) {
    check_len(values.len(), twiddles);
    dit_rec(kernels, values, twiddles);
}

fn check_len(len: usize, twiddles: &Twiddles) {
    assert!(
        len.is_power_of_two(),
        "transform length {len} is not a power of two"
    );
    assert!(
        len <= 1 << twiddles.log_n(),
        "transform of length {len} needs larger twiddle tables"
    );
}

fn dif_rec(kernels: Kernels, values: &mut [Felt], twiddles: &Twiddles) {
    let n = values.len();
    if n <= ITERATIVE_SPAN {
        dif_iterative(kernels, values, twiddles);
        return;
    }
    let half = n / 2;
    dif_layer(kernels, values, half, twiddles.stage(half));
    let (lo, hi) = values.split_at_mut(half);
    if half >= PARALLEL_SPAN {
        rayon::join(
            || dif_rec(kernels, lo, twiddles),
            || dif_rec(kernels, hi, twiddles),
        );
    } else {
        dif_rec(kernels, lo, twiddles);
        dif_rec(kernels, hi, twiddles);
    }
}

fn dit_rec(kernels: Kernels, values: &mut [Felt], twiddles: &Twiddles) {
    let n = values.len();
    if n <= ITERATIVE_SPAN {
        dit_iterative(kernels, values, twiddles);
        return;
    }
    let half = n / 2;
    let (lo, hi) = values.split_at_mut(half);
    if half >= PARALLEL_SPAN {
        rayon::join(
            || dit_rec(kernels, lo, twiddles),
            || dit_rec(kernels, hi, twiddles),
        );
    } else {
        dit_rec(kernels, lo, twiddles);
        dit_rec(kernels, hi, twiddles);
    }
    dit_layer(kernels, values, half, twiddles.stage(half));
}

fn dif_iterative(kernels: Kernels, values: &mut [Felt], twiddles: &Twiddles) {
    let mut half = values.len() / 2;
    while half >= 2 {
        dif_layer(kernels, values, half, twiddles.stage(half));
        half /= 2;
    }
    if values.len() >= 2 {
        unit_layer(kernels, values);
    }
}

fn dit_iterative(kernels: Kernels, values: &mut [Felt], twiddles: &Twiddles) {
    if values.len() >= 2 {
        unit_layer(kernels, values);
    }
    let mut half = 2;
    while half < values.len() {
        dit_layer(kernels, values, half, twiddles.stage(half));
        half *= 2;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bit_reverse;
    use crate::evaluate_poly;

    fn sample(len: usize, seed: u64) -> Vec<Felt> {
        ballast_testkit::SplitMix64::new(seed)
            .take(len)
            .map(Felt::new)
            .collect()
    }

    /// The naive O(n²) evaluation of the polynomial with coefficients `coeffs` at w^j.
    fn naive_evaluations(coeffs: &[Felt]) -> Vec<Felt> {
        let log_n = coeffs.len().trailing_zeros() as usize;
        let w = Felt::two_adic_root(log_n);
        (0..coeffs.len() as u64)
            .map(|j| evaluate_poly(coeffs, w.pow(j)))
            .collect()
    }

    #[test]
    fn dif_matches_naive_evaluation_in_bit_reversed_order() {
        // 2^13 crosses the iterative/recursive boundary.
        for log_n in [0, 1, 2, 3, 6, 10, 13] {
            let coeffs = sample(1 << log_n, log_n as u64);
            let expected = naive_evaluations(&coeffs);
            let mut values = coeffs.clone();
            dif(&mut values, &Twiddles::forward(log_n));
            for (i, v) in values.iter().enumerate() {
                assert_eq!(
                    *v,
                    expected[bit_reverse(i, log_n)],
                    "log_n {log_n}, index {i}"
                );
            }
        }
    }

    #[test]
    fn dit_matches_naive_evaluation_from_bit_reversed_input() {
        for log_n in [0, 1, 4, 9, 13] {
            let coeffs = sample(1 << log_n, 100 + log_n as u64);
            let expected = naive_evaluations(&coeffs);
            let mut values: Vec<Felt> = (0..coeffs.len())
                .map(|i| coeffs[bit_reverse(i, log_n)])
                .collect();
            dit(&mut values, &Twiddles::forward(log_n));
            assert_eq!(values, expected, "log_n {log_n}");
        }
    }

    #[test]
    fn inverse_dif_then_forward_dit_is_n_times_identity() {
        let log_n = 16; // large enough to take the parallel branch
        let evals = sample(1 << log_n, 7);
        let mut values = evals.clone();
        dif(&mut values, &Twiddles::inverse(log_n));
        dit(&mut values, &Twiddles::forward(log_n));
        let n = Felt::new(1 << log_n);
        let scaled: Vec<Felt> = evals.iter().map(|&e| e * n).collect();
        assert_eq!(values, scaled);
    }

    #[test]
    fn every_path_transforms_alike() {
        // 2^14 takes the recursive branch; 2^16 the parallel one.
        for log_n in [0, 1, 2, 3, 4, 5, 9, 14, 16] {
            let input = sample(1 << log_n, 50 + log_n as u64);
            let (forward, inverse) = (Twiddles::forward(log_n), Twiddles::inverse(log_n));
            let mut want = input.clone();
            dif_on(Kernels::Scalar, &mut want, &inverse);
            dit_on(Kernels::Scalar, &mut want, &forward);
            for kernels in Kernels::supported() {
                let mut got = input.clone();
                dif_on(kernels, &mut got, &inverse);
                dit_on(kernels, &mut got, &forward);
                assert_eq!(got, want, "{} path, log_n {log_n}", kernels.path());
            }
        }
    }

    #[test]
    #[should_panic(expected = "not a power of two")]
    fn non_power_of_two_is_a_programming_error() {
        dif(&mut [Felt::ONE; 3], &Twiddles::forward(2));
    }
}
