//! Parity checks shared by the emulated and the device tests: each runs the crate's launch
//! sequences on some [`Launcher`] and compares every value and digest with the CPU code.

use ballast_cuda::{
    ColumnForm, Launcher, LdeTables, commit_fri_layer, commit_rows, download_matrix, extend,
    upload_matrix,
};
use ballast_field::{Ext3, Felt, RowBlocks};
use ballast_fri::commit_layer;
use ballast_merkle::MerkleTree;
use ballast_ntt::LdePlan;
use ballast_stark::{Backend, CpuBackend, PhaseTimes, StarkParams, Workload, prove_statement};
use ballast_workloads::{Fibonacci, KeccakChain};

/// p − 1, the largest canonical value.
const P_MINUS_ONE: u64 = Felt::MODULUS - 1;

/// Values at the edges of the reduction: small multiples of 2 (whose products with 1/n land
/// in [p, 2^64) before the last subtraction), 2^32 ± 1, 2^63 and the top of the field.
const EDGES: [u64; 13] = [
    0,
    1,
    2,
    3,
    4,
    6,
    8,
    (1 << 32) - 1,
    1 << 32,
    (1 << 32) + 1,
    1 << 63,
    Felt::MODULUS - 2,
    P_MINUS_ONE,
];

/// Two columns per edge value e, 2^`log_n` rows: e throughout, and e then −e (halves).
/// Transforming the first multiplies e by n and 1/n; the first DIF stage on the second adds
/// e + (p − e) = p exactly. Together they reach every reduction branch.
pub fn edge_matrix(log_n: usize) -> RowBlocks {
    let n = 1 << log_n;
    let columns: Vec<Vec<Felt>> = EDGES
        .iter()
        .flat_map(|&e| {
            let e = Felt::new(e);
            let halves = (0..n).map(|r| if r < n / 2 { e } else { -e }).collect();
            [vec![e; n], halves]
        })
        .collect();
    RowBlocks::from_columns(&columns)
}

/// Deterministic field elements: the edge values 0, 1 and p − 1 first, then SplitMix64.
pub fn sample(len: usize, seed: u64) -> Vec<Felt> {
    let mut state = seed;
    (0..len)
        .map(|i| match i {
            0 => Felt::ZERO,
            1 => Felt::ONE,
            2 => Felt::new(P_MINUS_ONE),
            _ => {
                state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let mut z = state;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                Felt::new(z ^ (z >> 31))
            }
        })
        .collect()
}

/// A `width` × 2^`log_n` matrix; column 1 (when present) is all p − 1 to stress reduction.
pub fn matrix(width: usize, log_n: usize, seed: u64) -> RowBlocks {
    if width == 0 {
        return RowBlocks::zeroed(0, 1 << log_n, 1 << log_n);
    }
    let columns: Vec<Vec<Felt>> = (0..width)
        .map(|c| {
            if c == 1 {
                vec![Felt::new(P_MINUS_ONE); 1 << log_n]
            } else {
                sample(1 << log_n, seed + c as u64)
            }
        })
        .collect();
    RowBlocks::from_columns(&columns)
}

fn assert_same_tree(got: &MerkleTree, expected: &MerkleTree, what: &str) {
    assert_eq!(got.levels().len(), expected.levels().len(), "{what}: depth");
    for (depth, (g, e)) in got.levels().iter().zip(expected.levels()).enumerate() {
        assert!(g == e, "{what}: level {depth} differs");
    }
}

/// (log_n, log_blowup, width) shapes: tiny, odd widths, and 2^12–2^16 rows.
pub const LDE_SHAPES: [(usize, usize, usize); 9] = [
    (0, 1, 2),
    (1, 1, 1),
    (3, 2, 3),
    (6, 4, 2),
    (10, 1, 5),
    (12, 1, 8),
    (13, 3, 2),
    (14, 2, 3),
    (16, 1, 2),
];

/// The device LDE equals [`LdePlan::extend_in_place`]'s exactly, of evaluations and of raw
/// columns, on sampled and on edge-value columns.
pub fn check_lde<L: Launcher>(launcher: &L) {
    for (i, &(log_n, log_blowup, width)) in LDE_SHAPES.iter().enumerate() {
        let plan = LdePlan::new(log_n, log_blowup);
        let tables = LdeTables::upload(launcher, log_n, log_blowup).unwrap();
        let height = 1 << (log_n + log_blowup);
        for input in [matrix(width, log_n, 100 * i as u64), edge_matrix(log_n)] {
            let width = input.width();
            for form in [ColumnForm::Evaluations, ColumnForm::Raw] {
                let mut expected = input.clone();
                plan.extend_in_place(&mut expected, form);
                let lde = extend(launcher, &tables, &input, form).unwrap();
                let mut got = RowBlocks::zeroed(0, 0, 0);
                download_matrix(launcher, &lde, &mut got, width, height).unwrap();
                assert!(
                    got == expected,
                    "{form:?} LDE of {width} × 2^{log_n} by 2^{log_blowup} differs"
                );
            }
        }
    }
}

/// Row trees of CPU-built matrices equal [`MerkleTree::commit_rows`], for widths whose leaf
/// messages end at every kind of place in a Keccak block (0 columns: a bare prefix; 16:
/// padding in the last lane; 17: one byte into a second block; 33, 34: the second block's
/// last lane and a third block) and heights down to a single leaf.
pub fn check_row_trees<L: Launcher>(launcher: &L) {
    for (width, log_height) in [
        (0, 3),
        (1, 0),
        (2, 5),
        (3, 12),
        (16, 9),
        (17, 7),
        (33, 6),
        (34, 4),
    ] {
        let m = matrix(width, log_height, 7 + width as u64);
        let buffer = upload_matrix(launcher, &m).unwrap();
        let got = commit_rows(launcher, &buffer, width, m.height()).unwrap();
        assert_same_tree(
            &got,
            &MerkleTree::commit_rows(&m),
            &format!("rows of {width} × 2^{log_height}"),
        );
    }
}

/// FRI layer trees equal [`commit_layer`], for every arity up to a whole layer.
pub fn check_fri_layers<L: Launcher>(launcher: &L) {
    for (log_len, log_arity) in [(1, 1), (2, 1), (5, 3), (10, 2), (13, 3), (15, 3), (4, 4)] {
        let coords = sample(3 << log_len, log_len as u64);
        let evals: Vec<Ext3> = coords
            .chunks_exact(3)
            .map(|c| Ext3::new([c[0], c[1], c[2]]))
            .collect();
        let got = commit_fri_layer(launcher, &evals, log_arity).unwrap();
        assert_same_tree(
            &got,
            &commit_layer(&evals, log_arity),
            &format!("FRI layer of 2^{log_len} in cosets of 2^{log_arity}"),
        );
    }
}

/// The backend calls agree with [`CpuBackend`]: the LDE and every tree level, of
/// evaluations and of raw columns, with the table cache hit (same shape twice) and missed
/// (shape changes).
pub fn check_backend(backend: &dyn Backend) {
    let cpu = CpuBackend::new();
    for (i, &(log_n, log_blowup, width)) in [(12, 1, 4), (12, 1, 4), (9, 3, 3), (14, 2, 2)]
        .iter()
        .enumerate()
    {
        let input = matrix(width, log_n, 1000 + i as u64);
        let what = format!("{width} × 2^{log_n} by 2^{log_blowup}");
        for form in [ColumnForm::Evaluations, ColumnForm::Raw] {
            let (mut got, mut expected) = (input.clone(), input.clone());
            let got_tree = backend
                .extend_and_commit(&mut got, form, log_blowup, &mut PhaseTimes::default())
                .unwrap();
            let expected_tree = cpu
                .extend_and_commit(&mut expected, form, log_blowup, &mut PhaseTimes::default())
                .unwrap();
            assert!(got == expected, "{form:?} LDE of {what}");
            assert_same_tree(
                &got_tree,
                &expected_tree,
                &format!("{form:?} tree of {what}"),
            );
        }
    }
    let evals: Vec<Ext3> = sample(3 << 11, 5)
        .chunks_exact(3)
        .map(|c| Ext3::new([c[0], c[1], c[2]]))
        .collect();
    assert_same_tree(
        &backend.commit_fri_layer(&evals, 3).unwrap(),
        &cpu.commit_fri_layer(&evals, 3).unwrap(),
        "commit_fri_layer",
    );
}

/// Proves the same multi-segment statements on `backend` and on the CPU; the bytes must be
/// identical.
pub fn check_proofs(backend: &dyn Backend) {
    let fibonacci = [
        (
            Fibonacci {
                sequences: 2,
                log_rows: 8,
                segments: 3,
            },
            StarkParams::testing(),
        ),
        (
            Fibonacci {
                sequences: 3,
                log_rows: 10,
                segments: 2,
            },
            StarkParams {
                log_blowup: 2,
                num_queries: 20,
                pow_bits: 4,
                log_final_poly_len: 3,
            },
        ),
    ];
    for (workload, params) in fibonacci {
        check_proof(backend, &workload, &params);
    }
    // A wide table: 2,349 columns.
    let chain = KeccakChain {
        seed: [3; 32],
        steps: 3,
        log_rows: 6,
    };
    check_proof(backend, &chain, &StarkParams::testing());
}

fn check_proof<W: Workload>(backend: &dyn Backend, workload: &W, params: &StarkParams) {
    let prove = |b: &dyn Backend| {
        prove_statement(workload, params, b, &mut PhaseTimes::default(), &mut |_| {})
            .expect("an honest statement proves")
            .to_bytes()
    };
    let got = prove(backend);
    let expected = prove(&CpuBackend::new());
    assert!(
        got == expected,
        "{} proof of {workload:?} differs from the CPU's ({} vs {} bytes)",
        backend.name(),
        got.len(),
        expected.len()
    );
}
