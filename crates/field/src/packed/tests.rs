//! Each packed operation against the scalar one, on edge values and random ones, on every
//! SIMD path the CPU has.

use ballast_cpu::Kernels;
use ballast_testkit::SplitMix64;

use super::{Halves, Kernel, PackedField, ProductSum, run};
use crate::Felt;
use crate::felt::{EPSILON, P};

/// Values where reductions change branch: 0, 1, near 2^32, near p, near 2^63, and a
/// SplitMix64 stream for the rest.
fn samples(len: usize, seed: u64) -> Vec<Felt> {
    let edges = [
        0,
        1,
        2,
        EPSILON - 1,
        EPSILON,
        EPSILON + 1,
        EPSILON + 2, // (2^32 + 1)·(2^32 − 1) = 2^64 − 1: a product in [p, 2^64)
        1 << 32,
        1 << 63,
        (1 << 63) - 1,
        P - EPSILON,
        P - 2,
        P - 1,
    ];
    SplitMix64::new(seed)
        .take(len)
        .enumerate()
        .map(|(i, z)| {
            Felt::new(if i % 3 == 0 {
                edges[(z as usize) % edges.len()]
            } else {
                z
            })
        })
        .collect()
}

/// The SIMD paths the CPU has (a missing one is skipped, or fails where CI requires it).
fn simd_paths() -> Vec<Kernels> {
    Kernels::supported()
        .into_iter()
        .filter(|k| !matches!(k, Kernels::Scalar))
        .collect()
}

type Op = fn(Felt, Felt) -> Felt;
const OPS: [(&str, Op); 4] = [
    ("add", |a, b| a + b),
    ("sub", |a, b| a - b),
    ("mul", |a, b| a * b),
    ("halve", |a, _| a.halve()),
];

/// Operation `op` on `a` and `b` a register at a time, checking `nonzero_lanes` on the way.
struct Ops<'a> {
    op: usize,
    a: &'a [Felt],
    b: &'a [Felt],
}

impl Kernel for Ops<'_> {
    type Output = Vec<Felt>;

    #[inline(always)]
    fn run<Pk: PackedField>(self, token: Pk::Token) -> Vec<Felt> {
        let mut out = vec![Felt::ZERO; self.a.len()];
        for ((o, x), y) in out
            .chunks_exact_mut(Pk::LANES)
            .zip(self.a.chunks_exact(Pk::LANES))
            .zip(self.b.chunks_exact(Pk::LANES))
        {
            let nonzero = x
                .iter()
                .enumerate()
                .fold(0u8, |m, (i, v)| m | (u8::from(*v != Felt::ZERO) << i));
            let (x, y) = (Pk::load(token, x), Pk::load(token, y));
            assert_eq!(x.nonzero_lanes(), nonzero, "nonzero lanes");
            let r = match self.op {
                0 => x + y,
                1 => x - y,
                2 => x * y,
                _ => x.halve(),
            };
            r.store(o);
        }
        out
    }
}

#[test]
fn every_path_matches_scalar() {
    for kernels in simd_paths() {
        for seed in 0..20 {
            let (a, b) = (samples(4096, seed), samples(4096, seed + 1000));
            for (op, (name, f)) in OPS.iter().enumerate() {
                let want: Vec<Felt> = a.iter().zip(&b).map(|(&x, &y)| f(x, y)).collect();
                let got = run(kernels, Ops { op, a: &a, b: &b }).unwrap();
                assert_eq!(got, want, "{} {name}, seed {seed}", kernels.path());
            }
        }
    }
}

/// For every block size: partners land in the same lane, and a second interleave restores
/// the input.
struct Interleave;

impl Kernel for Interleave {
    type Output = ();

    #[inline(always)]
    fn run<Pk: PackedField>(self, token: Pk::Token) {
        let lanes = Pk::LANES;
        let x: Vec<Felt> = (0..2 * lanes as u64).map(Felt::new).collect();
        let mut half = 1;
        while half < lanes {
            let (lo, hi) = Pk::load(token, &x).interleave(Pk::load(token, &x[lanes..]), half);
            let (mut l, mut h) = (vec![Felt::ZERO; lanes], vec![Felt::ZERO; lanes]);
            lo.store(&mut l);
            hi.store(&mut h);
            for k in 0..lanes {
                let i = l[k].as_u64() as usize;
                assert_eq!(
                    (i / half) % 2,
                    0,
                    "half {half}: lane {k} holds a low element"
                );
                assert_eq!(h[k].as_u64() as usize, i + half, "half {half}: lane {k}");
                assert_eq!(i % half, k % half, "half {half}: twiddle index of lane {k}");
            }
            let (a, b) = lo.interleave(hi, half);
            let mut back = vec![Felt::ZERO; 2 * lanes];
            a.store(&mut back);
            b.store(&mut back[lanes..]);
            assert_eq!(back, x, "half {half}: interleave is its own inverse");
            half *= 2;
        }
    }
}

#[test]
fn interleave_pairs_partners() {
    for kernels in simd_paths() {
        run(kernels, Interleave).unwrap();
    }
}

/// Σ a_i·b_i lane by lane through `ProductSum`, with `a` split per register and `b`
/// broadcast from one element per step.
struct Dot<'a> {
    a: &'a [Felt],
    b: &'a [Felt],
}

impl Kernel for Dot<'_> {
    type Output = Vec<Felt>;

    #[inline(always)]
    fn run<Pk: PackedField>(self, token: Pk::Token) -> Vec<Felt> {
        let mut sum = ProductSum::<Pk>::zero(token);
        for (chunk, &scalar) in self.a.chunks_exact(Pk::LANES).zip(self.b) {
            sum.add(
                Halves::of(Pk::load(token, chunk)),
                Halves::splat(token, scalar),
            );
        }
        sum.sum().as_ref().to_vec()
    }
}

#[test]
fn product_sums_match_scalar_dot_products() {
    // Long sums of maximal values carry through every digit; sampled ones through the rest.
    let max = Felt::new(P - 1);
    for kernels in simd_paths() {
        let lanes = if matches!(kernels, Kernels::Avx512(_)) {
            8
        } else {
            4
        };
        for (steps, seed) in [(1usize, 0u64), (3, 1), (1000, 2), (5000, 3)] {
            let mut a = samples(steps * lanes, seed);
            let mut b = samples(steps, seed + 7);
            if seed == 3 {
                a.iter_mut().for_each(|x| *x = max);
                b.iter_mut().for_each(|x| *x = max);
            }
            let want: Vec<Felt> = (0..lanes)
                .map(|k| (0..steps).fold(Felt::ZERO, |s, i| s + a[i * lanes + k] * b[i]))
                .collect();
            let got = run(kernels, Dot { a: &a, b: &b }).unwrap();
            assert_eq!(got, want, "{}, {steps} steps", kernels.path());
        }
    }
}
