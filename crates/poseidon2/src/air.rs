//! The permutation as AIR constraints: the values one permutation keeps in a row
//! ([`fill`], [`Sbox::columns`] of them) and the constraints that tie them to its input
//! ([`eval`]). Both run the permutation's one definition (`crate::permutation`'s rounds),
//! so the constraints are the permutation itself, not a second copy of it, and the same
//! ones a verifier AIR uses for the Merkle paths and the transcript it recomputes.
//!
//! A row keeps, in the order the rounds reach them: in each full round, the cube of every
//! S-box input when the S-boxes are [`Sbox::Cubed`], then the state after the round's
//! matrix; in each partial round, the cube of the first cell's S-box input (again when
//! cubed), then its S-box output. The S-box inputs are linear in the columns, so cubed,
//! x⁷ is x³·x³·x with x³ a column and every constraint has degree 3; whole, the row is
//! half as wide and the constraints have degree 7. The partial rounds' other cells stay
//! linear expressions, never columns.

use ballast_air::ConstraintBuilder;
use ballast_cpu::Kernels;
use ballast_field::Felt;
use ballast_field::packed::{Kernel, PackedField, run};

use crate::constants::{CONSTANTS, FULL_ROUNDS, PARTIAL_ROUNDS, WIDTH};
use crate::permutation::rounds;

/// How a permutation's S-boxes (x⁷) meet an AIR's columns: a row twice as wide for
/// constraints of degree 3, or half as wide for degree 7. The degree sets the quotient's
/// chunks (2 or 8), which the blowup must hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sbox {
    /// Each S-box input's cube kept in a column: degree 3, 236 columns.
    Cubed,
    /// Nothing kept inside an S-box: degree 7, 118 columns.
    Whole,
}

impl Sbox {
    /// Columns one permutation keeps: 24 a full round and 2 a partial round cubed, 12 and
    /// 1 whole.
    pub const fn columns(self) -> usize {
        match self {
            Self::Cubed => FULL_ROUNDS * 2 * WIDTH + PARTIAL_ROUNDS * 2,
            Self::Whole => FULL_ROUNDS * WIDTH + PARTIAL_ROUNDS,
        }
    }

    /// The degree of [`eval`]'s constraints.
    pub const fn degree(self) -> u32 {
        match self {
            Self::Cubed => 3,
            Self::Whole => 7,
        }
    }

    fn cubes(self) -> bool {
        self == Self::Cubed
    }
}

/// The permutation of `input`, the values `sbox` keeps written into `columns`
/// ([`Sbox::columns`] of them): the output, equal to [`permute`](crate::permute)'s.
///
/// # Panics
/// If `columns` is not `sbox.columns()` long.
pub fn fill(sbox: Sbox, input: [Felt; WIDTH], columns: &mut [Felt]) -> [Felt; WIDTH] {
    assert_eq!(columns.len(), sbox.columns(), "one value per kept column");
    let mut state = input;
    let mut at = 0;
    rounds(&mut state, &CONSTANTS, sbox.cubes(), |value| {
        columns[at] = value;
        at += 1;
        value
    });
    state
}

/// [`fill`] of many inputs, column by column: `out` holds `sbox.columns()` runs of `stride`
/// values, and run c starts with column c of each input's row, in order (the layout of a
/// block of `ballast_field::RowBlocks`). On a SIMD path a register of inputs is permuted at
/// once and each kept value stored as one run; the values are [`fill`]'s on every path.
///
/// # Panics
/// If `inputs` is longer than `stride`, or `out` shorter than `sbox.columns()` runs.
pub fn fill_runs(
    kernels: Kernels,
    sbox: Sbox,
    inputs: &[[Felt; WIDTH]],
    stride: usize,
    out: &mut [Felt],
) {
    assert!(
        inputs.len() <= stride,
        "{} inputs in runs of {stride}",
        inputs.len()
    );
    let columns = sbox.columns();
    assert!(out.len() >= columns * stride, "{columns} runs of {stride}");
    let done = run(
        kernels,
        FillRuns {
            sbox,
            inputs,
            stride,
            out: &mut *out,
        },
    )
    .unwrap_or(0);
    // On the stack, as wide as the widest kind keeps: no allocation on the trace's path.
    let mut row = [Felt::ZERO; Sbox::Cubed.columns()];
    let row = &mut row[..columns];
    for (k, &input) in inputs.iter().enumerate().skip(done) {
        fill(sbox, input, row);
        for (c, &value) in row.iter().enumerate() {
            out[c * stride + k] = value;
        }
    }
}

/// Inputs permuted a register at a time into their runs; returns how many (whole registers
/// only).
struct FillRuns<'a> {
    sbox: Sbox,
    inputs: &'a [[Felt; WIDTH]],
    stride: usize,
    out: &'a mut [Felt],
}

impl Kernel for FillRuns<'_> {
    type Output = usize;

    #[inline(always)]
    fn run<P: PackedField>(self, token: P::Token) -> usize {
        let Self {
            sbox,
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
            rounds(&mut state, &constants, sbox.cubes(), |value| {
                value.store(&mut out[at..]);
                at += stride;
                value
            });
        }
        groups * P::LANES
    }
}

/// Asserts, on every row, that `columns` (`sbox.columns()` of the row's values) keep the
/// permutation of `input` (expressions of degree at most 1 in the row, for constraints of
/// degree `sbox.degree()`), and returns its output: the last round's columns.
///
/// # Panics
/// If `columns` is not `sbox.columns()` long.
#[inline(always)]
pub fn eval<B: ConstraintBuilder>(
    builder: &mut B,
    sbox: Sbox,
    input: [B::Expr; WIDTH],
    columns: &[B::Expr],
) -> [B::Expr; WIDTH] {
    assert_eq!(columns.len(), sbox.columns(), "one value per kept column");
    let constants = CONSTANTS.lift(B::Expr::from);
    let mut state = input;
    let mut columns = columns.iter();
    rounds(&mut state, &constants, sbox.cubes(), |value| {
        let column = *columns.next().expect("one column per kept value");
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

    const BOTH: [Sbox; 2] = [Sbox::Cubed, Sbox::Whole];

    /// A row: the permutation's input in 12 columns, then its kept columns.
    struct Permutations {
        sbox: Sbox,
        log_rows: usize,
    }

    impl Air for Permutations {
        fn id(&self) -> &str {
            "test/poseidon2-permutations"
        }
        fn width(&self) -> usize {
            WIDTH + self.sbox.columns()
        }
        fn log_rows(&self) -> usize {
            self.log_rows
        }
        fn num_public_inputs(&self) -> usize {
            0
        }
        fn eval<B: ConstraintBuilder>(&self, frame: &Frame<'_, B::Expr>, builder: &mut B) {
            let input = std::array::from_fn(|i| frame.current[i]);
            eval(builder, self.sbox, input, &frame.current[WIDTH..]);
        }
    }

    fn table(air: &Permutations, seed: u64) -> RowBlocks {
        let rows = 1 << air.log_rows;
        let width = air.width();
        let mut table = RowBlocks::zeroed(width, rows, rows);
        let mut rng = SplitMix64::new(seed);
        let mut row = vec![Felt::ZERO; width];
        for r in 0..rows {
            let input: [Felt; WIDTH] =
                std::array::from_fn(|_| Felt::new(rng.next().expect("endless")));
            row[..WIDTH].copy_from_slice(&input);
            let output = fill(air.sbox, input, &mut row[WIDTH..]);
            let mut expected = input;
            crate::permute(&mut expected);
            assert_eq!(output, expected, "row {r}");
            assert_eq!(row[width - WIDTH..], output, "the last columns");
            table.write_row(r, &row);
        }
        table
    }

    #[test]
    fn many_at_once_fill_what_one_at_a_time_fills_on_every_path() {
        let mut rng = SplitMix64::new(3);
        for sbox in BOTH {
            let columns = sbox.columns();
            for kernels in Kernels::supported() {
                for (count, stride) in [(8, 8), (2, 8), (13, 16), (3, 3)] {
                    let inputs: Vec<[Felt; WIDTH]> = (0..count)
                        .map(|_| std::array::from_fn(|_| Felt::new(rng.next().expect("endless"))))
                        .collect();
                    let mut runs = vec![Felt::new(7); columns * stride];
                    fill_runs(kernels, sbox, &inputs, stride, &mut runs);
                    let mut row = vec![Felt::ZERO; columns];
                    for (k, &input) in inputs.iter().enumerate() {
                        fill(sbox, input, &mut row);
                        for (c, &value) in row.iter().enumerate() {
                            assert_eq!(
                                runs[c * stride + k],
                                value,
                                "{sbox:?} {} input {k}",
                                kernels.path()
                            );
                        }
                    }
                    // Beyond the inputs, the runs are untouched.
                    for c in 0..columns {
                        for k in count..stride {
                            assert_eq!(runs[c * stride + k], Felt::new(7));
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn constraints_have_the_s_boxes_degree_and_hold_on_filled_rows() {
        assert_eq!((Sbox::Cubed.columns(), Sbox::Whole.columns()), (236, 118));
        for sbox in BOTH {
            let air = Permutations { sbox, log_rows: 4 };
            let info = ConstraintInfo::of(&air).unwrap();
            assert_eq!(info.max_degree(), sbox.degree(), "{sbox:?}");
            assert_eq!(info.counts(), [sbox.columns(), 0, 0, 0]);
            assert_eq!(check_trace(&air, &table(&air, 1), &[]), Ok(()));
        }
    }

    /// A row whose kept column `forged` is one more than the permutation's and whose later
    /// columns follow from it: consistent everywhere but at that column's own constraint.
    fn forged_row(sbox: Sbox, input: [Felt; WIDTH], forged: usize) -> Vec<Felt> {
        let mut row = input.to_vec();
        let mut state = input;
        rounds(&mut state, &CONSTANTS, sbox.cubes(), |value| {
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
        for sbox in BOTH {
            let air = Permutations { sbox, log_rows: 3 };
            let honest = table(&air, 2);
            for forged in 0..sbox.columns() {
                let row = forged % 8;
                let input = std::array::from_fn(|i| honest.get(row, i));
                let mut table = honest.clone();
                table.write_row(row, &forged_row(sbox, input, forged));
                assert!(
                    matches!(
                        check_trace(&air, &table, &[]),
                        Err(AirError::Unsatisfied { row: r, .. }) if r == row
                    ),
                    "{sbox:?} column {forged}"
                );
            }
        }
    }
}
