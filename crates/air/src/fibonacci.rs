//! The multi-sequence Fibonacci workload.
//!
//! `s` independent sequences, two columns each: column 2j holds a, column 2j + 1 holds b,
//! and every step is a' = b, b' = a + b over Goldilocks. At s = 16 and 2^19 rows it is the
//! statement lambda_vm benchmarks against Plonky3. The public inputs are the first row and
//! the last row, which is what lets a long run be proven as a chain of segments.

use ballast_field::{ColMatrix, Felt, FieldElement};
use rayon::prelude::*;

use crate::{Air, Boundary, BoundaryRow};

/// The Fibonacci AIR for one table of 2^`log_rows` rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FibonacciAir {
    log_rows: usize,
    first_row: Vec<Felt>,
    last_row: Vec<Felt>,
}

impl FibonacciAir {
    /// The constraint system's name.
    pub const ID: &'static str = "ballast/fibonacci-multi/v1";

    /// The AIR whose first and last rows are the given ones (2 values per sequence each).
    ///
    /// # Panics
    /// If the rows are empty, of odd length or of different lengths.
    pub fn new(log_rows: usize, first_row: Vec<Felt>, last_row: Vec<Felt>) -> Self {
        assert!(
            !first_row.is_empty()
                && first_row.len().is_multiple_of(2)
                && first_row.len() == last_row.len(),
            "rows must hold two values per sequence"
        );
        Self {
            log_rows,
            first_row,
            last_row,
        }
    }

    /// Number of sequences.
    pub fn sequences(&self) -> usize {
        self.first_row.len() / 2
    }

    /// Runs the sequences for 2^`log_rows` rows from `first_row`, column-major.
    ///
    /// # Panics
    /// If `first_row` is empty or of odd length.
    pub fn generate_trace(log_rows: usize, first_row: &[Felt]) -> ColMatrix {
        assert!(
            !first_row.is_empty() && first_row.len().is_multiple_of(2),
            "a row holds two values per sequence"
        );
        let height = 1usize << log_rows;
        let mut trace = ColMatrix::zeroed(first_row.len(), height);
        // Columns 2j and 2j + 1 are adjacent in the column-major layout: one chunk per
        // sequence, each run on its own task.
        trace
            .as_mut_slice()
            .par_chunks_exact_mut(2 * height)
            .zip(first_row.par_chunks_exact(2))
            .for_each(|(pair, start)| {
                let (a_col, b_col) = pair.split_at_mut(height);
                let (mut a, mut b) = (start[0], start[1]);
                for (a_slot, b_slot) in a_col.iter_mut().zip(b_col.iter_mut()) {
                    *a_slot = a;
                    *b_slot = b;
                    (a, b) = (b, a + b);
                }
            });
        trace
    }

    /// The last row after running 2^`log_rows` rows from `first_row`, without storing the
    /// table.
    pub fn last_row_from(log_rows: usize, first_row: &[Felt]) -> Vec<Felt> {
        first_row
            .par_chunks_exact(2)
            .flat_map_iter(|start| {
                let (mut a, mut b) = (start[0], start[1]);
                for _ in 1..1usize << log_rows {
                    (a, b) = (b, a + b);
                }
                [a, b]
            })
            .collect()
    }
}

impl Air for FibonacciAir {
    fn id(&self) -> &str {
        Self::ID
    }

    fn width(&self) -> usize {
        self.first_row.len()
    }

    fn log_rows(&self) -> usize {
        self.log_rows
    }

    fn num_transition_constraints(&self) -> usize {
        self.first_row.len()
    }

    fn max_constraint_degree(&self) -> usize {
        1
    }

    fn eval_transition<E: FieldElement>(&self, current: &[E], next: &[E], out: &mut [E]) {
        for ((cur, nxt), out) in current
            .chunks_exact(2)
            .zip(next.chunks_exact(2))
            .zip(out.chunks_exact_mut(2))
        {
            let (a, b) = (cur[0], cur[1]);
            out[0] = nxt[0] - b;
            out[1] = nxt[1] - (a + b);
        }
    }

    fn boundaries(&self) -> Vec<Boundary> {
        let first = self
            .first_row
            .iter()
            .enumerate()
            .map(|(column, &value)| Boundary {
                column,
                row: BoundaryRow::First,
                value,
            });
        let last = self
            .last_row
            .iter()
            .enumerate()
            .map(|(column, &value)| Boundary {
                column,
                row: BoundaryRow::Last,
                value,
            });
        first.chain(last).collect()
    }

    fn public_inputs(&self) -> Vec<Felt> {
        [self.first_row.as_slice(), self.last_row.as_slice()].concat()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AirError, check_trace};

    fn start(sequences: u64) -> Vec<Felt> {
        (0..2 * sequences)
            .map(|i| Felt::new(i / 2 + i % 2))
            .collect()
    }

    #[test]
    fn trace_is_the_fibonacci_sequence() {
        let trace = FibonacciAir::generate_trace(4, &[Felt::ZERO, Felt::ONE]);
        let a: Vec<u64> = trace.column(0).iter().map(|f| f.as_u64()).collect();
        assert_eq!(
            a,
            [0, 1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610]
        );
        assert_eq!(trace.column(1)[15].as_u64(), 987);
    }

    #[test]
    fn generated_trace_satisfies_its_air() {
        let first = start(3);
        let trace = FibonacciAir::generate_trace(6, &first);
        let last = FibonacciAir::last_row_from(6, &first);
        assert_eq!(trace.row(63), last);
        let air = FibonacciAir::new(6, first, last);
        assert_eq!(check_trace(&air, &trace), Ok(()));
    }

    #[test]
    fn a_broken_trace_is_reported_at_the_failing_row() {
        let first = start(2);
        let mut trace = FibonacciAir::generate_trace(5, &first);
        let last = trace.row(31);
        trace.column_mut(3)[17] += Felt::ONE;
        let air = FibonacciAir::new(5, first, last.clone());
        // Row 17's b of sequence 1 breaks b' = a + b (constraint 3) between rows 16 and 17 first.
        assert_eq!(
            check_trace(&air, &trace),
            Err(AirError::Transition {
                constraint: 3,
                row: 16
            })
        );
        let wrong_last: Vec<Felt> = last.iter().map(|&v| v + Felt::ONE).collect();
        let air = FibonacciAir::new(5, start(2), wrong_last);
        let good = FibonacciAir::generate_trace(5, &start(2));
        assert!(matches!(
            check_trace(&air, &good),
            Err(AirError::Boundary { row: 31, .. })
        ));
    }
}
