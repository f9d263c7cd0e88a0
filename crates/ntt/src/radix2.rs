//! In-place radix-2 transforms: decimation in frequency and decimation in time.
//!
//! Both recurse on halves until a block is small enough to stay in cache, then finish
//! iteratively. Halves at least [`PARALLEL_SPAN`] long are transformed in parallel. The
//! arithmetic is the same whatever the recursion or thread count, so outputs are identical.

use ballast_field::Felt;

use crate::Twiddles;

/// Blocks of at most this many elements are transformed iteratively (32 KiB: L1-sized).
const ITERATIVE_SPAN: usize = 1 << 12;
/// Halves at least this long are transformed with `rayon::join`.
const PARALLEL_SPAN: usize = 1 << 15;

/// Forward transform, natural order in, bit-reversed order out (Gentleman–Sande).
///
/// With the forward tables, `values[i] = p(w^br(i))` afterwards, where `p` has the input as
/// its coefficients; with the inverse tables it computes `n·coeffs` in bit-reversed order from
/// natural-order evaluations.
///
/// # Panics
/// If the length is not a power of two no larger than the tables.
pub fn dif(values: &mut [Felt], twiddles: &Twiddles) {
    check_len(values.len(), twiddles);
    dif_rec(values, twiddles);
}

/// Forward transform, bit-reversed order in, natural order out (Cooley–Tukey).
///
/// With the forward tables, if `values[i] = c[br(i)]` then afterwards `values[j] = p(w^j)`.
///
/// # Panics
/// If the length is not a power of two no larger than the tables.
pub fn dit(values: &mut [Felt], twiddles: &Twiddles) {
    check_len(values.len(), twiddles);
    dit_rec(values, twiddles);
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

fn dif_rec(values: &mut [Felt], twiddles: &Twiddles) {
    let n = values.len();
    if n <= ITERATIVE_SPAN {
        dif_iterative(values, twiddles);
        return;
    }
    let half = n / 2;
    let (lo, hi) = values.split_at_mut(half);
    dif_butterflies(lo, hi, twiddles.stage(half));
    if half >= PARALLEL_SPAN {
        rayon::join(|| dif_rec(lo, twiddles), || dif_rec(hi, twiddles));
    } else {
        dif_rec(lo, twiddles);
        dif_rec(hi, twiddles);
    }
}

fn dit_rec(values: &mut [Felt], twiddles: &Twiddles) {
    let n = values.len();
    if n <= ITERATIVE_SPAN {
        dit_iterative(values, twiddles);
        return;
    }
    let half = n / 2;
    let (lo, hi) = values.split_at_mut(half);
    if half >= PARALLEL_SPAN {
        rayon::join(|| dit_rec(lo, twiddles), || dit_rec(hi, twiddles));
    } else {
        dit_rec(lo, twiddles);
        dit_rec(hi, twiddles);
    }
    dit_butterflies(lo, hi, twiddles.stage(half));
}

fn dif_iterative(values: &mut [Felt], twiddles: &Twiddles) {
    let mut half = values.len() / 2;
    while half >= 2 {
        let stage = twiddles.stage(half);
        for block in values.chunks_exact_mut(2 * half) {
            let (lo, hi) = block.split_at_mut(half);
            dif_butterflies(lo, hi, stage);
        }
        half /= 2;
    }
    if values.len() >= 2 {
        unit_butterflies(values);
    }
}

fn dit_iterative(values: &mut [Felt], twiddles: &Twiddles) {
    if values.len() >= 2 {
        unit_butterflies(values);
    }
    let mut half = 2;
    while half < values.len() {
        let stage = twiddles.stage(half);
        for block in values.chunks_exact_mut(2 * half) {
            let (lo, hi) = block.split_at_mut(half);
            dit_butterflies(lo, hi, stage);
        }
        half *= 2;
    }
}

/// The stage whose butterflies span one element: its only twiddle is 1, so DIF and DIT
/// coincide and need no multiplication.
#[inline(always)]
fn unit_butterflies(values: &mut [Felt]) {
    for pair in values.chunks_exact_mut(2) {
        let (x, y) = (pair[0], pair[1]);
        pair[0] = x + y;
        pair[1] = x - y;
    }
}

#[inline(always)]
fn dif_butterflies(lo: &mut [Felt], hi: &mut [Felt], stage: &[Felt]) {
    for ((a, b), &w) in lo.iter_mut().zip(hi.iter_mut()).zip(stage) {
        let (x, y) = (*a, *b);
        *a = x + y;
        *b = (x - y) * w;
    }
}

#[inline(always)]
fn dit_butterflies(lo: &mut [Felt], hi: &mut [Felt], stage: &[Felt]) {
    for ((a, b), &w) in lo.iter_mut().zip(hi.iter_mut()).zip(stage) {
        let (x, y) = (*a, *b * w);
        *a = x + y;
        *b = x - y;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bit_reverse;
    use crate::evaluate_poly;

    fn sample(len: usize, seed: u64) -> Vec<Felt> {
        let mut state = seed;
        (0..len)
            .map(|_| {
                // SplitMix64: a deterministic stand-in for random input.
                state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let mut z = state;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                Felt::new(z ^ (z >> 31))
            })
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
    #[should_panic(expected = "not a power of two")]
    fn non_power_of_two_is_a_programming_error() {
        dif(&mut [Felt::ONE; 3], &Twiddles::forward(2));
    }
}
