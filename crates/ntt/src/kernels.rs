//! The transforms' inner loops, once per CPU path.
//!
//! A *layer* applies one stage's butterflies to every block of 2·`half` elements of a slice.
//! The SIMD layers work on whole registers: for `half` at least the lane count, lo and hi
//! halves are loaded side by side; for smaller `half`, two registers of consecutive values
//! are interleaved so that partners share a lane, and interleaved back afterwards. Slices
//! too short for a register pair take the scalar loop. Every path computes the same field
//! operations, so outputs are identical.

use ballast_cpu::Kernels;
use ballast_field::Felt;

/// Decimation-in-frequency butterflies: (x, y) → (x + y, (x − y)·w).
pub(crate) fn dif_layer(kernels: Kernels, values: &mut [Felt], half: usize, stage: &[Felt]) {
    ballast_cpu::dispatch!(kernels, isa => isa::dif_layer(values, half, stage), _ => scalar::dif_layer(values, half, stage));
}

/// Decimation-in-time butterflies: (x, y) → (x + y·w, x − y·w).
pub(crate) fn dit_layer(kernels: Kernels, values: &mut [Felt], half: usize, stage: &[Felt]) {
    ballast_cpu::dispatch!(kernels, isa => isa::dit_layer(values, half, stage), _ => scalar::dit_layer(values, half, stage));
}

/// The stage whose butterflies span one element: its twiddle is 1, so DIF and DIT coincide,
/// (x, y) → (x + y, x − y).
pub(crate) fn unit_layer(kernels: Kernels, values: &mut [Felt]) {
    ballast_cpu::dispatch!(kernels, isa => isa::unit_layer(values), _ => scalar::unit_layer(values));
}

/// `out[i] = a[i]·b[i]`.
///
/// # Panics
/// If the slices differ in length.
pub(crate) fn mul_into(kernels: Kernels, out: &mut [Felt], a: &[Felt], b: &[Felt]) {
    assert!(
        out.len() == a.len() && a.len() == b.len(),
        "pointwise product of unequal lengths"
    );
    ballast_cpu::dispatch!(kernels, isa => isa::mul_into(out, a, b), _ => scalar::mul_into(out, a, b));
}

mod scalar {
    use ballast_field::Felt;

    pub(super) fn dif_layer(values: &mut [Felt], half: usize, stage: &[Felt]) {
        for block in values.chunks_exact_mut(2 * half) {
            let (lo, hi) = block.split_at_mut(half);
            for ((a, b), &w) in lo.iter_mut().zip(hi.iter_mut()).zip(stage) {
                let (x, y) = (*a, *b);
                *a = x + y;
                *b = (x - y) * w;
            }
        }
    }

    pub(super) fn dit_layer(values: &mut [Felt], half: usize, stage: &[Felt]) {
        for block in values.chunks_exact_mut(2 * half) {
            let (lo, hi) = block.split_at_mut(half);
            for ((a, b), &w) in lo.iter_mut().zip(hi.iter_mut()).zip(stage) {
                let (x, y) = (*a, *b * w);
                *a = x + y;
                *b = x - y;
            }
        }
    }

    pub(super) fn unit_layer(values: &mut [Felt]) {
        for pair in values.chunks_exact_mut(2) {
            let (x, y) = (pair[0], pair[1]);
            pair[0] = x + y;
            pair[1] = x - y;
        }
    }

    pub(super) fn mul_into(out: &mut [Felt], a: &[Felt], b: &[Felt]) {
        for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
            *o = x * y;
        }
    }
}

/// One body for both instruction sets: `$packed` supplies the arithmetic, `$feature` the
/// target feature every function is compiled for.
macro_rules! simd_layers {
    ($isa:ident, $packed:path, $feature:literal) => {
        #[cfg(target_arch = "x86_64")]
        mod $isa {
            use ballast_field::Felt;

            use super::scalar;
            use $packed as Packed;

            const LANES: usize = Packed::LANES;

            /// `stage` repeated across a register, for layers narrower than one.
            #[target_feature(enable = $feature)]
            fn repeated(stage: &[Felt], half: usize) -> Packed {
                let lanes: [Felt; LANES] = std::array::from_fn(|k| stage[k % half]);
                Packed::load(&lanes)
            }

            #[target_feature(enable = $feature)]
            pub(super) fn dif_layer(values: &mut [Felt], half: usize, stage: &[Felt]) {
                if half >= LANES {
                    for block in values.chunks_exact_mut(2 * half) {
                        let (lo, hi) = block.split_at_mut(half);
                        for i in (0..half).step_by(LANES) {
                            let (x, y) = (Packed::load(&lo[i..]), Packed::load(&hi[i..]));
                            x.add(y).store(&mut lo[i..]);
                            x.sub(y).mul(Packed::load(&stage[i..])).store(&mut hi[i..]);
                        }
                    }
                } else if values.len() >= 2 * LANES {
                    debug_assert!(
                        values.len().is_multiple_of(2 * LANES),
                        "a power-of-two length"
                    );
                    let w = repeated(stage, half);
                    for pair in values.chunks_exact_mut(2 * LANES) {
                        let (a, b) = pair.split_at_mut(LANES);
                        let (x, y) = Packed::load(a).interleave(Packed::load(b), half);
                        let (a2, b2) = x.add(y).interleave(x.sub(y).mul(w), half);
                        a2.store(a);
                        b2.store(b);
                    }
                } else {
                    scalar::dif_layer(values, half, stage);
                }
            }

            #[target_feature(enable = $feature)]
            pub(super) fn dit_layer(values: &mut [Felt], half: usize, stage: &[Felt]) {
                if half >= LANES {
                    for block in values.chunks_exact_mut(2 * half) {
                        let (lo, hi) = block.split_at_mut(half);
                        for i in (0..half).step_by(LANES) {
                            let x = Packed::load(&lo[i..]);
                            let y = Packed::load(&hi[i..]).mul(Packed::load(&stage[i..]));
                            x.add(y).store(&mut lo[i..]);
                            x.sub(y).store(&mut hi[i..]);
                        }
                    }
                } else if values.len() >= 2 * LANES {
                    debug_assert!(
                        values.len().is_multiple_of(2 * LANES),
                        "a power-of-two length"
                    );
                    let w = repeated(stage, half);
                    for pair in values.chunks_exact_mut(2 * LANES) {
                        let (a, b) = pair.split_at_mut(LANES);
                        let (x, y) = Packed::load(a).interleave(Packed::load(b), half);
                        let y = y.mul(w);
                        let (a2, b2) = x.add(y).interleave(x.sub(y), half);
                        a2.store(a);
                        b2.store(b);
                    }
                } else {
                    scalar::dit_layer(values, half, stage);
                }
            }

            #[target_feature(enable = $feature)]
            pub(super) fn unit_layer(values: &mut [Felt]) {
                if values.len() < 2 * LANES {
                    return scalar::unit_layer(values);
                }
                debug_assert!(
                    values.len().is_multiple_of(2 * LANES),
                    "a power-of-two length"
                );
                for pair in values.chunks_exact_mut(2 * LANES) {
                    let (a, b) = pair.split_at_mut(LANES);
                    let (x, y) = Packed::load(a).interleave(Packed::load(b), 1);
                    let (a2, b2) = x.add(y).interleave(x.sub(y), 1);
                    a2.store(a);
                    b2.store(b);
                }
            }

            #[target_feature(enable = $feature)]
            pub(super) fn mul_into(out: &mut [Felt], a: &[Felt], b: &[Felt]) {
                let whole = out.len() / LANES * LANES;
                for ((o, x), y) in out[..whole]
                    .chunks_exact_mut(LANES)
                    .zip(a.chunks_exact(LANES))
                    .zip(b.chunks_exact(LANES))
                {
                    Packed::load(x).mul(Packed::load(y)).store(o);
                }
                scalar::mul_into(&mut out[whole..], &a[whole..], &b[whole..]);
            }
        }
    };
}

simd_layers!(avx2, ballast_field::packed::avx2::Packed, "avx2");
simd_layers!(avx512, ballast_field::packed::avx512::Packed, "avx512f");

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(len: usize, seed: u64) -> Vec<Felt> {
        ballast_testkit::SplitMix64::new(seed)
            .take(len)
            .enumerate()
            .map(|(i, z)| {
                // Every fifth value near p, where reductions change branch.
                Felt::new(if i % 5 == 0 {
                    Felt::MODULUS - (z & 7) - 1
                } else {
                    z
                })
            })
            .collect()
    }

    #[test]
    fn every_path_computes_the_scalar_layers() {
        for kernels in Kernels::supported() {
            let path = kernels.path();
            for log_len in 0..8 {
                let len = 1usize << log_len;
                let mut half = 1;
                while half < len {
                    let stage = sample(half, 7 + half as u64);
                    let input = sample(len, log_len as u64);
                    for (name, layer) in [
                        ("dif", dif_layer as fn(Kernels, &mut [Felt], usize, &[Felt])),
                        ("dit", dit_layer),
                    ] {
                        let (mut got, mut want) = (input.clone(), input.clone());
                        layer(kernels, &mut got, half, &stage);
                        layer(Kernels::Scalar, &mut want, half, &stage);
                        assert_eq!(got, want, "{path} {name}: length {len}, half {half}");
                    }
                    half *= 2;
                }
                let input = sample(len, 99);
                let (mut got, mut want) = (input.clone(), input.clone());
                unit_layer(kernels, &mut got);
                scalar::unit_layer(&mut want);
                assert_eq!(got, want, "{path} unit layer: length {len}");
                for len in [len, len + 3] {
                    let (a, b) = (sample(len, 1), sample(len, 2));
                    let mut got = vec![Felt::ZERO; len];
                    mul_into(kernels, &mut got, &a, &b);
                    let want: Vec<Felt> = a.iter().zip(&b).map(|(&x, &y)| x * y).collect();
                    assert_eq!(got, want, "{path} pointwise product: length {len}");
                }
            }
        }
    }
}
