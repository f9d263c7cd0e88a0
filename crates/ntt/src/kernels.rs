//! The transforms' inner loops: scalar, and on the SIMD paths written once over packed registers.
//!
//! A *layer* applies one stage's butterflies to every block of 2·`half` elements of a slice.
//! The SIMD layers work on whole registers: for `half` at least the lane count, lo and hi
//! halves are loaded side by side; for smaller `half`, two registers of consecutive values
//! are interleaved so that partners share a lane, and interleaved back afterwards. Slices
//! too short for a register pair take the scalar loop. Every path computes the same field
//! operations, so outputs are identical. The SIMD layers are written once over
//! [`PackedField`], and [`run`] instantiates them for the path.

use ballast_cpu::Kernels;
use ballast_field::packed::{Kernel, PackedField, run};
use ballast_field::{Algebra, Felt};

/// Decimation-in-frequency butterflies: (x, y) → (x + y, (x − y)·w).
pub(crate) fn dif_layer(kernels: Kernels, values: &mut [Felt], half: usize, stage: &[Felt]) {
    layer(kernels, Butterfly::Dif, values, half, stage);
}

/// Decimation-in-time butterflies: (x, y) → (x + y·w, x − y·w).
pub(crate) fn dit_layer(kernels: Kernels, values: &mut [Felt], half: usize, stage: &[Felt]) {
    layer(kernels, Butterfly::Dit, values, half, stage);
}

fn layer(kernels: Kernels, b: Butterfly, values: &mut [Felt], half: usize, stage: &[Felt]) {
    if run(kernels, Layer::Stage(b, values, half, stage)).is_none() {
        scalar::layer(b, values, half, stage);
    }
}

/// The two butterflies a stage can apply to a pair (x, y) with twiddle w.
#[derive(Clone, Copy)]
enum Butterfly {
    /// (x + y, (x − y)·w).
    Dif,
    /// (x + y·w, x − y·w).
    Dit,
}

impl Butterfly {
    #[inline(always)]
    fn apply<A: Algebra>(self, x: A, y: A, w: A) -> (A, A) {
        match self {
            Butterfly::Dif => (x + y, (x - y) * w),
            Butterfly::Dit => {
                let y = y * w;
                (x + y, x - y)
            }
        }
    }
}

/// The stage whose butterflies span one element: its twiddle is 1, so DIF and DIT coincide,
/// (x, y) → (x + y, x − y).
pub(crate) fn unit_layer(kernels: Kernels, values: &mut [Felt]) {
    if run(kernels, Layer::Unit(values)).is_none() {
        scalar::unit_layer(values);
    }
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
    if run(kernels, Layer::Product(out, a, b)).is_none() {
        scalar::mul_into(out, a, b);
    }
}

/// One of the SIMD loops, with its operands.
enum Layer<'a> {
    Stage(Butterfly, &'a mut [Felt], usize, &'a [Felt]),
    Unit(&'a mut [Felt]),
    Product(&'a mut [Felt], &'a [Felt], &'a [Felt]),
}

impl Kernel for Layer<'_> {
    type Output = ();

    #[inline(always)]
    fn run<P: PackedField>(self, token: P::Token) {
        match self {
            Layer::Stage(b, values, half, stage) => simd::layer::<P>(token, b, values, half, stage),
            Layer::Unit(values) => simd::unit_layer::<P>(token, values),
            Layer::Product(out, a, b) => simd::mul_into::<P>(token, out, a, b),
        }
    }
}

mod scalar {
    use ballast_field::Felt;

    use super::Butterfly;

    pub(super) fn layer(butterfly: Butterfly, values: &mut [Felt], half: usize, stage: &[Felt]) {
        for block in values.chunks_exact_mut(2 * half) {
            let (lo, hi) = block.split_at_mut(half);
            for ((a, b), &w) in lo.iter_mut().zip(hi.iter_mut()).zip(stage) {
                (*a, *b) = butterfly.apply(*a, *b, w);
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

/// The SIMD layers, once for every packed type.
mod simd {
    use ballast_field::Felt;
    use ballast_field::packed::PackedField;

    use super::{Butterfly, scalar};

    /// `stage` repeated across a register, for layers narrower than one.
    #[inline(always)]
    fn repeated<P: PackedField>(token: P::Token, stage: &[Felt], half: usize) -> P {
        P::load(token, P::array(|k| stage[k % half]).as_ref())
    }

    #[inline(always)]
    pub(super) fn layer<P: PackedField>(
        token: P::Token,
        butterfly: Butterfly,
        values: &mut [Felt],
        half: usize,
        stage: &[Felt],
    ) {
        let lanes = P::LANES;
        if half >= lanes {
            for block in values.chunks_exact_mut(2 * half) {
                let (lo, hi) = block.split_at_mut(half);
                for i in (0..half).step_by(lanes) {
                    let (x, y) = (P::load(token, &lo[i..]), P::load(token, &hi[i..]));
                    let (a, b) = butterfly.apply(x, y, P::load(token, &stage[i..]));
                    a.store(&mut lo[i..]);
                    b.store(&mut hi[i..]);
                }
            }
        } else if values.len() >= 2 * lanes {
            debug_assert!(
                values.len().is_multiple_of(2 * lanes),
                "a power-of-two length"
            );
            let w = repeated::<P>(token, stage, half);
            for pair in values.chunks_exact_mut(2 * lanes) {
                let (a, b) = pair.split_at_mut(lanes);
                let (x, y) = P::load(token, a).interleave(P::load(token, b), half);
                let (x, y) = butterfly.apply(x, y, w);
                let (a2, b2) = x.interleave(y, half);
                a2.store(a);
                b2.store(b);
            }
        } else {
            scalar::layer(butterfly, values, half, stage);
        }
    }

    #[inline(always)]
    pub(super) fn unit_layer<P: PackedField>(token: P::Token, values: &mut [Felt]) {
        let lanes = P::LANES;
        if values.len() < 2 * lanes {
            return scalar::unit_layer(values);
        }
        debug_assert!(
            values.len().is_multiple_of(2 * lanes),
            "a power-of-two length"
        );
        for pair in values.chunks_exact_mut(2 * lanes) {
            let (a, b) = pair.split_at_mut(lanes);
            let (x, y) = P::load(token, a).interleave(P::load(token, b), 1);
            let (a2, b2) = (x + y).interleave(x - y, 1);
            a2.store(a);
            b2.store(b);
        }
    }

    #[inline(always)]
    pub(super) fn mul_into<P: PackedField>(
        token: P::Token,
        out: &mut [Felt],
        a: &[Felt],
        b: &[Felt],
    ) {
        let lanes = P::LANES;
        let whole = out.len() / lanes * lanes;
        for ((o, x), y) in out[..whole]
            .chunks_exact_mut(lanes)
            .zip(a.chunks_exact(lanes))
            .zip(b.chunks_exact(lanes))
        {
            (P::load(token, x) * P::load(token, y)).store(o);
        }
        scalar::mul_into(&mut out[whole..], &a[whole..], &b[whole..]);
    }
}

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
