//! The multi-sequence Fibonacci workload.
//!
//! `s` independent sequences, two columns each: column 2j holds a, column 2j + 1 holds b,
//! and every step is a' = b, b' = a + b over Goldilocks. Sequence j starts at (j, j + 1).
//! At s = 16 and 2^19 rows it is the statement lambda_vm benchmarks against Plonky3.
//! Segments overlap in one row (segment i ends where segment i + 1 starts), so a statement
//! of m segments × 2^k rows covers m·(2^k − 1) steps.

use ballast_air::{Air, ConstraintBuilder, Frame};
use ballast_field::{Felt, RowBlocks};
use ballast_stark::{
    MAX_LOG_ROWS, MAX_SEGMENTS, ParamsError, ProofFormatError, Workload, check_range,
};
use rayon::prelude::*;
use serde_json::{Map, Value};

use crate::flags::{Flag, FlagError, FlagValues, FromFlags};
use crate::{Describe, thousands};

/// Most sequences a statement may have (2 columns each).
pub const MAX_SEQUENCES: usize = 1 << 12;

/// `sequences` Fibonacci runs × 2^`log_rows` rows × `segments`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fibonacci {
    /// Independent sequences (two columns each).
    pub sequences: usize,
    /// log2 of the rows per segment.
    pub log_rows: usize,
    /// Number of segments.
    pub segments: usize,
}

impl Fibonacci {
    /// Steps the statement covers: segments·(2^k − 1).
    pub fn steps(&self) -> u64 {
        self.segments as u64 * ((1u64 << self.log_rows) - 1)
    }
}

impl Workload for Fibonacci {
    const TAG: u8 = 1;
    const NAME: &'static str = "fibonacci";
    const ENCODED_LEN: usize = 4 + 1 + 4;
    type Air = FibonacciAir;
    type State = Vec<Felt>;

    fn validate(&self) -> Result<(), ParamsError> {
        check_range("sequences", self.sequences, 1, MAX_SEQUENCES)?;
        check_range("segments", self.segments, 1, MAX_SEGMENTS)?;
        check_range("log_rows", self.log_rows, 1, MAX_LOG_ROWS)
    }

    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(Self::ENCODED_LEN);
        out.extend_from_slice(&(self.sequences as u32).to_le_bytes());
        out.push(self.log_rows as u8);
        out.extend_from_slice(&(self.segments as u32).to_le_bytes());
        out
    }

    fn decode(bytes: &[u8]) -> Result<Self, ParamsError> {
        let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().expect("4 bytes"));
        let workload = Self {
            sequences: u32_at(0) as usize,
            log_rows: usize::from(bytes[4]),
            segments: u32_at(5) as usize,
        };
        workload.validate()?;
        Ok(workload)
    }

    fn segments(&self) -> usize {
        self.segments
    }

    fn log_rows(&self) -> usize {
        self.log_rows
    }

    fn state_len(&self) -> usize {
        2 * self.sequences * Felt::BYTES
    }

    fn encode_state(&self, state: &Vec<Felt>, out: &mut Vec<u8>) {
        out.extend(state.iter().flat_map(|v| v.to_le_bytes()));
    }

    fn decode_state(&self, bytes: &[u8], offset: usize) -> Result<Vec<Felt>, ProofFormatError> {
        bytes
            .chunks_exact(Felt::BYTES)
            .enumerate()
            .map(|(i, chunk)| {
                Felt::from_le_bytes(chunk.try_into().expect("8 bytes")).ok_or(
                    ProofFormatError::NonCanonical {
                        offset: offset + i * Felt::BYTES,
                    },
                )
            })
            .collect()
    }

    fn start(&self) -> Vec<Felt> {
        (0..self.sequences as u64)
            .flat_map(|j| [Felt::new(j), Felt::new(j + 1)])
            .collect()
    }

    fn air(&self, _segment: usize) -> FibonacciAir {
        FibonacciAir {
            sequences: self.sequences,
            log_rows: self.log_rows,
        }
    }

    fn public_inputs(&self, _segment: usize, start: &Vec<Felt>, end: &Vec<Felt>) -> Vec<Felt> {
        [start.as_slice(), end.as_slice()].concat()
    }

    fn trace(&self, _segment: usize, start: &Vec<Felt>, table: &mut RowBlocks) -> Vec<Felt> {
        FibonacciAir::generate_trace(start, table);
        table.row(table.height() - 1)
    }

    fn run(&self, _segment: usize, start: &Vec<Felt>) -> Vec<Felt> {
        start
            .par_chunks_exact(2)
            .flat_map_iter(|pair| {
                let (mut a, mut b) = (pair[0], pair[1]);
                for _ in 1..1usize << self.log_rows {
                    (a, b) = (b, a + b);
                }
                [a, b]
            })
            .collect()
    }
}

impl FromFlags for Fibonacci {
    const ABOUT: &'static str = "\
--sequences independent Fibonacci sequences over Goldilocks, sequence j starting at (j, j + 1),
for --segments segments of 2^--log-rows rows [defaults: 16 sequences, 2^19 rows, 4 segments].";
    const FLAGS: &'static [Flag] = &[Flag {
        name: "sequences",
        value_name: "S",
        help: "independent sequences, two trace columns each [default: 16]",
    }];

    fn from_flags(flags: &FlagValues) -> Result<Self, FlagError> {
        let fibonacci = Self {
            sequences: flags.number("sequences")?.unwrap_or(16),
            log_rows: flags.number("log-rows")?.unwrap_or(19),
            segments: flags.number("segments")?.unwrap_or(4),
        };
        fibonacci.validate().map_err(|e| FlagError::of_params(&e))?;
        Ok(fibonacci)
    }
}

impl Describe for Fibonacci {
    fn summary(&self, end: &Vec<Felt>) -> String {
        let pairs: Vec<String> = end
            .chunks_exact(2)
            .take(2)
            .map(|p| format!("({}, {})", p[0], p[1]))
            .collect();
        format!(
            "fibonacci: {} sequences × 2^{} rows × {} segments ({} steps), ending at {}{}",
            self.sequences,
            self.log_rows,
            self.segments,
            thousands(self.steps()),
            pairs.join(", "),
            if self.sequences > 2 { ", …" } else { "" }
        )
    }

    fn json(&self, end: &Vec<Felt>) -> Map<String, Value> {
        let mut map = self.computation_json();
        map.insert("end".into(), Value::Array(felt_values(end)));
        map
    }

    fn computation(&self) -> String {
        format!(
            "fibonacci: {} sequences × 2^{} rows × {} segments ({} steps)",
            self.sequences,
            self.log_rows,
            self.segments,
            thousands(self.steps())
        )
    }

    fn computation_json(&self) -> Map<String, Value> {
        let mut map = Map::new();
        map.insert("sequences".into(), self.sequences.into());
        map.insert("log_rows".into(), self.log_rows.into());
        map.insert("segments".into(), self.segments.into());
        map.insert("steps".into(), self.steps().into());
        map.insert("start".into(), Value::Array(felt_values(&self.start())));
        map
    }
}

/// Field elements as JSON numbers.
fn felt_values(row: &[Felt]) -> Vec<Value> {
    row.iter().map(|f| Value::from(f.as_u64())).collect()
}

/// One segment's table: 2·`sequences` columns × 2^`log_rows` rows. Public inputs: the first
/// row, then the last row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FibonacciAir {
    /// Independent sequences.
    pub sequences: usize,
    /// log2 of the rows.
    pub log_rows: usize,
}

impl FibonacciAir {
    /// Runs the sequences from `first_row` down every row of `table` (two columns per
    /// sequence), each sequence on its own task.
    ///
    /// # Panics
    /// If `first_row` is empty, of odd length, or not one value per column of `table`.
    pub fn generate_trace(first_row: &[Felt], table: &mut RowBlocks) {
        assert!(
            !first_row.is_empty() && first_row.len().is_multiple_of(2),
            "a row holds two values per sequence"
        );
        assert_eq!(first_row.len(), table.width(), "one start value per column");
        let height = table.height();
        table.par_column_groups_mut(2, |mut pair| {
            let j = pair.columns().start;
            let (mut a, mut b) = (first_row[j], first_row[j + 1]);
            let mut values = vec![Felt::ZERO; 2 * height];
            let (a_col, b_col) = values.split_at_mut(height);
            for (a_slot, b_slot) in a_col.iter_mut().zip(b_col.iter_mut()) {
                *a_slot = a;
                *b_slot = b;
                (a, b) = (b, a + b);
            }
            pair.write(height, &values);
        });
    }
}

impl Air for FibonacciAir {
    fn id(&self) -> &str {
        "ballast/fibonacci-multi/v2"
    }

    fn width(&self) -> usize {
        2 * self.sequences
    }

    fn log_rows(&self) -> usize {
        self.log_rows
    }

    fn num_public_inputs(&self) -> usize {
        4 * self.sequences
    }

    #[inline(always)]
    fn eval<B: ConstraintBuilder>(&self, f: &Frame<'_, B::Expr>, b: &mut B) {
        let width = self.width();
        for (cur, next) in f.current.chunks_exact(2).zip(f.next.chunks_exact(2)) {
            b.transition(next[0] - cur[1]);
            b.transition(next[1] - (cur[0] + cur[1]));
        }
        let (first, last) = f.public_inputs.split_at(width);
        for (&value, &expected) in f.current.iter().zip(first) {
            b.first_row(value - expected);
        }
        for (&value, &expected) in f.current.iter().zip(last) {
            b.last_row(value - expected);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ballast_air::{AirError, ConstraintInfo, Domain, check_trace};

    #[test]
    fn trace_is_the_fibonacci_sequence() {
        let mut trace = RowBlocks::zeroed(2, 16, 16);
        FibonacciAir::generate_trace(&[Felt::ZERO, Felt::ONE], &mut trace);
        let a: Vec<u64> = trace.column(0).iter().map(|f| f.as_u64()).collect();
        assert_eq!(
            a,
            [0, 1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610]
        );
        assert_eq!(trace.column(1)[15].as_u64(), 987);
    }

    #[test]
    fn constraints_are_degree_one_transitions_and_boundaries() {
        let air = FibonacciAir {
            sequences: 3,
            log_rows: 5,
        };
        let info = ConstraintInfo::of(&air).unwrap();
        assert_eq!(info.counts(), [0, 6, 6, 6]);
        assert_eq!(info.max_degree(), 1);
        assert_eq!(info.log_quotient_chunks, 0);
        assert!(
            info.constraints[..6]
                .iter()
                .all(|&(d, _)| d == Domain::Transition)
        );
    }

    #[test]
    fn run_and_trace_agree_and_a_broken_trace_is_reported_at_the_failing_row() {
        let w = Fibonacci {
            sequences: 2,
            log_rows: 5,
            segments: 2,
        };
        let (mut trace, end) = w.trace_table(0, &w.start());
        assert_eq!(w.run(0, &w.start()), end);
        let air = w.air(0);
        let public = w.public_inputs(0, &w.start(), &end);
        assert_eq!(check_trace(&air, &trace, &public), Ok(()));
        trace.set(17, 3, trace.get(17, 3) + Felt::ONE);
        // Row 17's b of sequence 1 breaks b' = a + b (constraint 3) between rows 16 and 17.
        assert_eq!(
            check_trace(&air, &trace, &public),
            Err(AirError::Unsatisfied {
                constraint: 3,
                row: 16
            })
        );
        let mut wrong = public.clone();
        wrong[4] += Felt::ONE;
        let good = w.trace_table(0, &w.start()).0;
        assert!(matches!(
            check_trace(&air, &good, &wrong),
            Err(AirError::Unsatisfied { row: 31, .. })
        ));
    }
}
