//! Constraints of degree 3 split the quotient into two chunks; they prove, verify and reject.

use ballast_air::{Air, Boundary, BoundaryRow};
use ballast_field::{ColMatrix, Felt, FieldElement};
use ballast_stark::{
    CpuBackend, PhaseTimes, SegmentPosition, StarkParams, VerifierError, prove, prove_unchecked,
    verify,
};

/// Two columns: x' = x³ + y and y' = x·y + 1 (degrees 3 and 2), x pinned in row 0 and at
/// the end.
struct CubicAir {
    log_rows: usize,
    first: Felt,
    last: Felt,
}

impl CubicAir {
    fn trace(log_rows: usize, x0: Felt) -> ColMatrix {
        let (mut x, mut y) = (x0, Felt::new(3));
        let (mut xs, mut ys) = (Vec::new(), Vec::new());
        for _ in 0..1usize << log_rows {
            xs.push(x);
            ys.push(y);
            (x, y) = (x * x * x + y, x * y + Felt::ONE);
        }
        ColMatrix::from_columns(&[xs, ys])
    }
}

impl Air for CubicAir {
    fn id(&self) -> &str {
        "test/cubic"
    }
    fn width(&self) -> usize {
        2
    }
    fn log_rows(&self) -> usize {
        self.log_rows
    }
    fn num_transition_constraints(&self) -> usize {
        2
    }
    fn max_constraint_degree(&self) -> usize {
        3
    }
    fn eval_transition<E: FieldElement>(&self, current: &[E], next: &[E], out: &mut [E]) {
        let (x, y) = (current[0], current[1]);
        out[0] = next[0] - (x * x * x + y);
        out[1] = next[1] - (x * y + E::ONE);
    }
    fn boundaries(&self) -> Vec<Boundary> {
        vec![
            Boundary {
                column: 0,
                row: BoundaryRow::First,
                value: self.first,
            },
            Boundary {
                column: 0,
                row: BoundaryRow::Last,
                value: self.last,
            },
        ]
    }
    fn public_inputs(&self) -> Vec<Felt> {
        vec![self.first, self.last]
    }
}

const POSITION: SegmentPosition = SegmentPosition { index: 0, count: 1 };

#[test]
fn degree_three_constraints_prove_verify_and_reject() {
    let log_rows = 7;
    let trace = CubicAir::trace(log_rows, Felt::new(2));
    let air = CubicAir {
        log_rows,
        first: Felt::new(2),
        last: trace.column(0)[127],
    };
    let backend = CpuBackend::new();
    let mut times = PhaseTimes::default();
    for log_blowup in 1..=3 {
        let params = StarkParams {
            log_blowup,
            num_queries: 20,
            pow_bits: 0,
            log_final_poly_len: 2,
        };
        let proof = prove(&air, &trace, &params, POSITION, &backend, &mut times).unwrap();
        assert_eq!(
            proof.ood.quotient_z.len(),
            6,
            "two chunks of three coordinates"
        );
        verify(&air, &proof, &params, POSITION).unwrap();
    }

    let params = StarkParams::testing();
    let mut bad = trace.clone();
    bad.column_mut(1)[50] += Felt::ONE;
    let forged = prove_unchecked(&air, &bad, &params, POSITION, &backend, &mut times).unwrap();
    assert_eq!(
        verify(&air, &forged, &params, POSITION),
        Err(VerifierError::OodMismatch { segment: 0 })
    );
}
