//! Parity checks shared by the emulated and the device tests: whole statements proven by a
//! kernel backend, compared byte for byte with the CPU backend's proofs, and what the
//! backend counted while proving them.

use ballast_cuda::{KernelBackend, Launcher};
use ballast_stark::{
    Backend, CpuBackend, PhaseTimes, Proof, StarkParams, VerifyPolicy, Workload, bundle,
    prove_part, prove_statement,
};
use ballast_workloads::{Fibonacci, KeccakChain, Poseidon2Chain};

/// A statement and the parameters it is proven with.
pub struct Case<W> {
    pub workload: W,
    pub params: StarkParams,
}

/// Parameters with blowup 2^`log_blowup`, a few queries and a little grinding.
pub fn params(log_blowup: usize, pow_bits: u32) -> StarkParams {
    StarkParams {
        log_blowup,
        num_queries: 12,
        pow_bits,
        log_final_poly_len: 1,
        hash: ballast_stark::MerkleHash::Keccak256,
    }
}

/// Fibonacci at every blowup from 2 to 16 and at 64, tables of 2^2 to 2^9 rows, one to
/// three segments.
pub fn fibonacci_cases() -> Vec<Case<Fibonacci>> {
    let fib = |sequences, log_rows, segments| Fibonacci {
        sequences,
        log_rows,
        segments,
    };
    vec![
        Case {
            workload: fib(2, 8, 3),
            params: StarkParams::testing(),
        },
        Case {
            workload: fib(3, 6, 2),
            params: params(2, 3),
        },
        Case {
            workload: fib(1, 5, 1),
            params: params(3, 0),
        },
        Case {
            workload: fib(4, 9, 2),
            params: params(4, 2),
        },
        Case {
            workload: fib(2, 4, 1),
            params: params(6, 1),
        },
        Case {
            workload: fib(1, 2, 2),
            params: StarkParams {
                log_final_poly_len: 0,
                ..params(1, 1)
            },
        },
    ]
}

/// The Keccak chain: a wide table (2,353 columns) at blowups 2, 4 and 8, a last segment the
/// chain does not fill.
pub fn keccak_cases() -> Vec<Case<KeccakChain>> {
    vec![
        Case {
            workload: KeccakChain {
                seed: [3; 32],
                steps: 3,
                log_rows: 6,
            },
            params: StarkParams::testing(),
        },
        Case {
            workload: KeccakChain {
                seed: [7; 32],
                steps: 2,
                log_rows: 5,
            },
            params: params(2, 2),
        },
        Case {
            workload: KeccakChain {
                seed: [1; 32],
                steps: 1,
                log_rows: 5,
            },
            params: params(3, 1),
        },
    ]
}

/// The Poseidon2 chain (242 columns of degree-3 constraints, one permutation a row): a last
/// segment the chain does not fill, committed with Keccak-256 at blowup 2 and with
/// Poseidon2 at blowup 4.
pub fn poseidon2_chain_cases() -> Vec<Case<Poseidon2Chain>> {
    let workload = Poseidon2Chain {
        seed: [5, 6, 7, 8].map(ballast_field::Felt::new),
        steps: 40,
        log_rows: 5,
    };
    vec![
        Case {
            workload,
            params: params(1, 2),
        },
        Case {
            workload,
            params: StarkParams {
                hash: ballast_stark::MerkleHash::Poseidon2,
                ..params(2, 3)
            },
        },
    ]
}

/// Proves `case` on `backend` and on the CPU, and requires the same bytes.
pub fn check_proof<W: Workload>(backend: &dyn Backend, case: &Case<W>) {
    let prove = |b: &dyn Backend| {
        prove_statement(
            &case.workload,
            &case.params,
            b,
            &mut PhaseTimes::default(),
            &mut |_| {},
        )
        .unwrap_or_else(|e| panic!("{} backend: {:?}: {e}", b.name(), case.workload))
        .to_bytes()
    };
    let got = prove(backend);
    let expected = prove(&CpuBackend::new());
    assert!(
        got == expected,
        "{} proof of {:?} at {:?} differs from the CPU's ({} vs {} bytes)",
        backend.name(),
        case.workload,
        case.params,
        got.len(),
        expected.len()
    );
}

/// Fibonacci and the Keccak chain committed with Poseidon2: its leaves, nodes, FRI layers
/// and grinding on the device, at blowups 2 to 16.
pub fn poseidon2_cases() -> (Vec<Case<Fibonacci>>, Case<KeccakChain>) {
    let poseidon2 = |params: StarkParams| StarkParams {
        hash: ballast_stark::MerkleHash::Poseidon2,
        ..params
    };
    let fibonacci = fibonacci_cases()
        .into_iter()
        .map(|case| Case {
            params: poseidon2(case.params),
            ..case
        })
        .collect();
    let keccak = keccak_cases().into_iter().next().expect("a keccak case");
    let keccak = Case {
        params: poseidon2(params(2, 4)),
        ..keccak
    };
    (fibonacci, keccak)
}

/// Each part of `case` proven on `backend`, bundled: the single-host CPU proof's bytes.
pub fn check_parts<W: Workload>(backend: &dyn Backend, case: &Case<W>, parts: usize) {
    let segments = case.workload.segments();
    let proofs: Vec<(String, Proof<W>)> = (0..parts)
        .map(|i| {
            let range = ballast_stark::part_range(segments, parts, i).unwrap();
            let part = prove_part(
                &case.workload,
                &case.params,
                range,
                backend,
                &mut PhaseTimes::default(),
                &mut |_| {},
            )
            .unwrap();
            (format!("part {i}"), part)
        })
        .collect();
    // Test parameters are far below any security floor.
    let policy = VerifyPolicy {
        min_security_bits: 0,
        ..VerifyPolicy::default()
    };
    let bundled = bundle(proofs, &policy).expect("the parts bundle");
    let whole = prove_statement(
        &case.workload,
        &case.params,
        &CpuBackend::new(),
        &mut PhaseTimes::default(),
        &mut |_| {},
    )
    .unwrap();
    assert!(
        bundled.to_bytes() == whole.to_bytes(),
        "{} parts of {:?} on {} do not bundle into the CPU's proof",
        parts,
        case.workload,
        backend.name()
    );
}

/// Proves a statement of several segments and checks what the backend counted: after the
/// first segment nothing is allocated; per segment, the bytes up are the trace's and little
/// else, the bytes down the proof's and little else.
pub fn check_counters<L: Launcher>(backend: &KernelBackend<L>) {
    let case = Case {
        workload: KeccakChain {
            seed: [9; 32],
            steps: 3,
            log_rows: 5,
        },
        params: params(1, 2),
    };
    let before = backend.allocations();
    prove_part(
        &case.workload,
        &case.params,
        0..1,
        backend,
        &mut PhaseTimes::default(),
        &mut |_| {},
    )
    .unwrap();
    let after_first = backend.allocations();
    assert!(after_first > before, "the first segment allocates");
    let counted = backend.counters().expect("a device backend counts");
    let rest = prove_part(
        &case.workload,
        &case.params,
        1..3,
        backend,
        &mut PhaseTimes::default(),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(
        backend.allocations(),
        after_first,
        "segments after the first of a shape allocate nothing"
    );
    let total = backend.counters().unwrap();
    let trace_bytes = (2353 * 32 * 8) as u64;
    let mib = 1u64 << 20;
    let up = (total.pcie_up_bytes - counted.pcie_up_bytes) / 2;
    let down = (total.pcie_down_bytes - counted.pcie_down_bytes) / 2;
    let proof_bytes = rest.to_bytes().len() as u64 / 2;
    assert!(
        up >= trace_bytes && up <= trace_bytes + mib,
        "{up} bytes up per segment for a trace of {trace_bytes}"
    );
    assert!(
        down <= proof_bytes + mib,
        "{down} bytes down per segment for about {proof_bytes} of proof"
    );
    assert!(total.device_peak_bytes > 0);
}
