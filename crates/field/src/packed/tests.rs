//! Each packed operation against the scalar one, on edge values and random ones.

use ballast_cpu::CpuPath;
use ballast_testkit::SplitMix64;

use super::{avx2, avx512};
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

type Op = fn(Felt, Felt) -> Felt;
const OPS: [(&str, Op); 3] = [
    ("add", |a, b| a + b),
    ("sub", |a, b| a - b),
    ("mul", |a, b| a * b),
];

fn expected(op: usize, a: &[Felt], b: &[Felt]) -> Vec<Felt> {
    a.iter().zip(b).map(|(&x, &y)| (OPS[op].1)(x, y)).collect()
}

macro_rules! packed_tests {
    ($name:ident, $isa:ident, $feature:literal) => {
        #[target_feature(enable = $feature)]
        fn $name(op: usize, a: &[Felt], b: &[Felt]) -> Vec<Felt> {
            use $isa::Packed;
            let mut out = vec![Felt::ZERO; a.len()];
            for ((o, x), y) in out
                .chunks_exact_mut(Packed::LANES)
                .zip(a.chunks_exact(Packed::LANES))
                .zip(b.chunks_exact(Packed::LANES))
            {
                let nonzero = x
                    .iter()
                    .enumerate()
                    .fold(0u8, |m, (i, v)| m | (u8::from(*v != Felt::ZERO) << i));
                let (x, y) = (Packed::load(x), Packed::load(y));
                assert_eq!(x.nonzero_lanes(), nonzero, "nonzero lanes");
                let r = match op {
                    0 => x.add(y),
                    1 => x.sub(y),
                    _ => x.mul(y),
                };
                r.store(o);
            }
            out
        }
    };
}
packed_tests!(ops_avx2, avx2, "avx2");
packed_tests!(ops_avx512, avx512, "avx512f");

fn check(isa: &str, run: impl Fn(usize, &[Felt], &[Felt]) -> Vec<Felt>) {
    for seed in 0..20 {
        let (a, b) = (samples(4096, seed), samples(4096, seed + 1000));
        for (op, (name, _)) in OPS.iter().enumerate() {
            assert_eq!(
                run(op, &a, &b),
                expected(op, &a, &b),
                "{isa} {name}, seed {seed}"
            );
        }
    }
}

#[test]
fn avx2_matches_scalar() {
    if !ballast_cpu::testable(CpuPath::Avx2) {
        return;
    }
    // SAFETY: the CPU supports AVX2 (checked above).
    check("avx2", |op, a, b| unsafe { ops_avx2(op, a, b) });
}

#[test]
fn avx512_matches_scalar() {
    if !ballast_cpu::testable(CpuPath::Avx512) {
        return;
    }
    // SAFETY: the CPU supports AVX-512F (checked above).
    check("avx512", |op, a, b| unsafe { ops_avx512(op, a, b) });
}

macro_rules! interleave_test {
    ($name:ident, $isa:ident, $feature:literal) => {
        /// For every block size: partners land in the same lane, and a second interleave
        /// restores the input.
        #[target_feature(enable = $feature)]
        fn $name() {
            use $isa::Packed;
            let lanes = Packed::LANES;
            let x: Vec<Felt> = (0..2 * lanes as u64).map(Felt::new).collect();
            let mut half = 1;
            while half < lanes {
                let (lo, hi) = Packed::load(&x).interleave(Packed::load(&x[lanes..]), half);
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
    };
}
interleave_test!(interleave_avx2, avx2, "avx2");
interleave_test!(interleave_avx512, avx512, "avx512f");

#[test]
fn interleave_pairs_partners() {
    if ballast_cpu::testable(CpuPath::Avx2) {
        // SAFETY: the CPU supports AVX2.
        unsafe { interleave_avx2() }
    }
    if ballast_cpu::testable(CpuPath::Avx512) {
        // SAFETY: the CPU supports AVX-512F.
        unsafe { interleave_avx512() }
    }
}

macro_rules! product_sum_test {
    ($name:ident, $isa:ident, $feature:literal) => {
        /// Σ a_i·b_i lane by lane through `ProductSum`, with `a` split per register and `b`
        /// broadcast from one element per step.
        #[target_feature(enable = $feature)]
        fn $name(a: &[Felt], b: &[Felt]) -> Vec<Felt> {
            use $isa::{Halves, Packed, ProductSum};
            let lanes = Packed::LANES;
            let mut sum = ProductSum::zero();
            for (chunk, &scalar) in a.chunks_exact(lanes).zip(b) {
                sum.add(Halves::of(Packed::load(chunk)), Halves::splat(scalar));
            }
            sum.sum().to_vec()
        }
    };
}
product_sum_test!(product_sum_avx2, avx2, "avx2");
product_sum_test!(product_sum_avx512, avx512, "avx512f");

#[test]
fn product_sums_match_scalar_dot_products() {
    // Long sums of maximal values carry through every digit; sampled ones through the rest.
    let max = Felt::new(P - 1);
    for (lanes, path, run) in [
        (
            4,
            CpuPath::Avx2,
            product_sum_avx2 as unsafe fn(&[Felt], &[Felt]) -> Vec<Felt>,
        ),
        (8, CpuPath::Avx512, product_sum_avx512),
    ] {
        if !ballast_cpu::testable(path) {
            continue;
        }
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
            // SAFETY: the CPU supports the instruction set (checked above).
            let got = unsafe { run(&a, &b) };
            assert_eq!(got, want, "{path}, {steps} steps");
        }
    }
}
