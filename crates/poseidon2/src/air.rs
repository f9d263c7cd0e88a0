//! The permutation as AIR constraints: the [`COLUMNS`] values one permutation keeps in a
//! row ([`fill`]) and the constraints that tie them to its input ([`eval`]). Both run the
//! permutation's one definition (`crate::permutation`'s rounds), so the constraints are
//! the permutation itself, not a second copy of it, and the same ones a verifier AIR will
//! use for the Merkle paths and the transcript it recomputes.
//!
//! A row keeps, in the order the rounds reach them: in each full round, the cube of every
//! S-box input, then the state after the round's matrix; in each partial round, the cube
//! of the first cell's S-box input, then its S-box output. x⁷ is x³·x³·x with x³ a column,
//! so every constraint has degree 3 in the columns (the S-box inputs are linear in them);
//! the partial rounds' other cells stay linear expressions, never columns.

use ballast_air::ConstraintBuilder;
use ballast_cpu::Kernels;
use ballast_field::Felt;
use ballast_field::packed::{Kernel, PackedField, run};

use crate::constants::{CONSTANTS, FULL_ROUNDS, PARTIAL_ROUNDS, WIDTH};
use crate::permutation::rounds;

/// Columns one permutation keeps: 24 a full round, 2 a partial round (236).
pub const COLUMNS: usize = FULL_ROUNDS * 2 * WIDTH + PARTIAL_ROUNDS * 2;

/// The permutation of `input`, its kept values written into `columns` ([`COLUMNS`] of
/// them): the output, equal to [`permute`](crate::permute)'s.
///
/// # Panics
/// If `columns` is not [`COLUMNS`] long.
pub fn fill(input: [Felt; WIDTH], columns: &mut [Felt]) -> [Felt; WIDTH] {
    assert_eq!(columns.len(), COLUMNS, "one value per kept column");
    let mut state = input;
    let mut at = 0;
    rounds(&mut state, &CONSTANTS, |value| {
        columns[at] = value;
        at += 1;
        value
    });
    state
}

/// [`fill`] of many inputs, column by column: `out` holds [`COLUMNS`] runs of `stride`
/// values, and run c starts with column c of each input's row, in order (the layout of a
/// block of `ballast_field::RowBlocks`). On a SIMD path a register of inputs is permuted at
/// once and each kept value stored as one run; the values are [`fill`]'s on every path.
///
/// # Panics
/// If `inputs` is longer than `stride`, or `out` shorter than [`COLUMNS`] runs.
pub fn fill_runs(kernels: Kernels, inputs: &[[Felt; WIDTH]], stride: usize, out: &mut [Felt]) {
    assert!(
        inputs.len() <= stride,
        "{} inputs in runs of {stride}",
        inputs.len()
    );
    assert!(out.len() >= COLUMNS * stride, "{COLUMNS} runs of {stride}");
    let done = run(
        kernels,
        FillRuns {
            inputs,
            stride,
            out: &mut *out,
        },
    )
    .unwrap_or(0);
    let mut row = [Felt::ZERO; COLUMNS];
    for (k, &input) in inputs.iter().enumerate().skip(done) {
        fill(input, &mut row);
        for (c, &value) in row.iter().enumerate() {
            out[c * stride + k] = value;
        }
    }
}

/// Inputs permuted a register at a time into their runs; returns how many (whole registers
/// only).
struct FillRuns<'a> {
    inputs: &'a [[Felt; WIDTH]],
    stride: usize,
    out: &'a mut [Felt],
}

impl Kernel for FillRuns<'_> {
    type Output = usize;

    #[inline(always)]
    fn run<P: PackedField>(self, token: P::Token) -> usize {
        let Self {
            inputs,
            stride,
            out,
        } = self;
        let constants = CONSTANTS.lift(|c| P::splat(token, c));
        let groups = inputs.len() / P::LANES;
        for g in 0..groups {
            let first = g * P::LANES;
            let mut state: [P; WIDTH] = std::array::from_fn(|i| {
                P::load(token, P::array(|k| inputs[first + k][i]).as_ref())
            });
            let mut at = first;
            rounds(&mut state, &constants, |value| {
                value.store(&mut out[at..]);
                at += stride;
                value
            });
        }
        groups * P::LANES
    }
}

/// Asserts, on every row, that `columns` ([`COLUMNS`] of the row's values) keep the
/// permutation of `input` (expressions of degree at most 1 in the row, for degree-3
/// constraints), and returns its output: the last round's columns.
///
/// # Panics
/// If `columns` is not [`COLUMNS`] long.
#[inline(always)]
pub fn eval<B: ConstraintBuilder>(
    builder: &mut B,
    input: [B::Expr; WIDTH],
    columns: &[B::Expr],
) -> [B::Expr; WIDTH] {
    assert_eq!(columns.len(), COLUMNS, "one value per kept column");
    let constants = CONSTANTS.lift(B::Expr::from);
    let mut state = input;
    let mut columns = columns.iter();
    rounds(&mut state, &constants, |value| {
        let column = *columns.next().expect("COLUMNS columns");
        builder.every_row(column - value);
        column
    });
    state
}

#[cfg(test)]
mod tests {
    use ballast_air::{Air, AirError, ConstraintInfo, Frame, check_trace};
    use ballast_field::RowBlocks;
    use ballast_testkit::SplitMix64;

    use super::*;

    /// A row: the permutation's input in 12 columns, then its kept columns.
    struct Permutations {
        log_rows: usize,
    }

    impl Air for Permutations {
        fn id(&self) -> &str {
            "test/poseidon2-permutations"
        }
        fn width(&self) -> usize {
            WIDTH + COLUMNS
        }
        fn log_rows(&self) -> usize {
            self.log_rows
        }
        fn num_public_inputs(&self) -> usize {
            0
        }
        fn eval<B: ConstraintBuilder>(&self, frame: &Frame<'_, B::Expr>, builder: &mut B) {
            let input = std::array::from_fn(|i| frame.current[i]);
            eval(builder, input, &frame.current[WIDTH..]);
        }
    }

    fn table(log_rows: usize, seed: u64) -> RowBlocks {
        let rows = 1 << log_rows;
        let mut table = RowBlocks::zeroed(WIDTH + COLUMNS, rows, rows);
        let mut rng = SplitMix64::new(seed);
        let mut row = vec![Felt::ZERO; WIDTH + COLUMNS];
        for r in 0..rows {
            let input: [Felt; WIDTH] =
                std::array::from_fn(|_| Felt::new(rng.next().expect("endless")));
            row[..WIDTH].copy_from_slice(&input);
            let output = fill(input, &mut row[WIDTH..]);
            let mut expected = input;
            crate::permute(&mut expected);
            assert_eq!(output, expected, "row {r}");
            assert_eq!(row[WIDTH + COLUMNS - WIDTH..], output, "the last columns");
            table.write_row(r, &row);
        }
        table
    }

    #[test]
    fn many_at_once_fill_what_one_at_a_time_fills_on_every_path() {
        let mut rng = SplitMix64::new(3);
        for kernels in Kernels::supported() {
            for (count, stride) in [(8, 8), (2, 8), (13, 16), (3, 3)] {
                let inputs: Vec<[Felt; WIDTH]> = (0..count)
                    .map(|_| std::array::from_fn(|_| Felt::new(rng.next().expect("endless"))))
                    .collect();
                let mut runs = vec![Felt::new(7); COLUMNS * stride];
                fill_runs(kernels, &inputs, stride, &mut runs);
                let mut row = [Felt::ZERO; COLUMNS];
                for (k, &input) in inputs.iter().enumerate() {
                    fill(input, &mut row);
                    for (c, &value) in row.iter().enumerate() {
                        assert_eq!(runs[c * stride + k], value, "{} input {k}", kernels.path());
                    }
                }
                // Beyond the inputs, the runs are untouched.
                for c in 0..COLUMNS {
                    for k in count..stride {
                        assert_eq!(runs[c * stride + k], Felt::new(7));
                    }
                }
            }
        }
    }

    #[test]
    fn constraints_have_degree_three_and_hold_on_filled_rows() {
        let air = Permutations { log_rows: 4 };
        let info = ConstraintInfo::of(&air).unwrap();
        assert_eq!(info.max_degree(), 3);
        assert_eq!(info.counts(), [COLUMNS, 0, 0, 0]);
        assert_eq!(check_trace(&air, &table(4, 1), &[]), Ok(()));
    }

    /// A row whose kept column `forged` is one more than the permutation's and whose later
    /// columns follow from it: consistent everywhere but at that column's own constraint.
    fn forged_row(input: [Felt; WIDTH], forged: usize) -> Vec<Felt> {
        let mut row = input.to_vec();
        let mut state = input;
        rounds(&mut state, &CONSTANTS, |value| {
            let value = if row.len() == WIDTH + forged {
                value + Felt::ONE
            } else {
                value
            };
            row.push(value);
            value
        });
        row
    }

    #[test]
    fn every_kept_column_is_constrained() {
        // A forged column with every later column following from it is refused on its
        // row: dropping any one constraint would let such a row pass.
        let air = Permutations { log_rows: 3 };
        let honest = table(3, 2);
        for forged in 0..COLUMNS {
            let row = forged % 8;
            let input = std::array::from_fn(|i| honest.get(row, i));
            let mut table = honest.clone();
            table.write_row(row, &forged_row(input, forged));
            assert!(
                matches!(
                    check_trace(&air, &table, &[]),
                    Err(AirError::Unsatisfied { row: r, .. }) if r == row
                ),
                "column {forged}"
            );
        }
    }
}
