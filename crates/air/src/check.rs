//! Checking a trace against its AIR before proving.

use ballast_cpu::Kernels;
use ballast_field::{Felt, RowBlocks};
use rayon::prelude::*;

use crate::lanes::RowsPass;
use crate::{Air, AirError, ConstraintBuilder, Domain, Frame, PeriodicColumn, known_columns};

/// Rows checked per parallel task: a multiple of every path's lane count.
const ROWS_PER_TASK: usize = 256;

/// Checks the trace's shape and every constraint on every row of its domain.
///
/// # Errors
/// The first violation found: the lowest failing row, then the lowest constraint.
pub fn check_trace<A: Air>(
    air: &A,
    trace: &RowBlocks,
    public_inputs: &[Felt],
) -> Result<(), AirError> {
    check_trace_on(Kernels::active(), air, trace, public_inputs)
}

fn check_trace_on<A: Air>(
    kernels: Kernels,
    air: &A,
    trace: &RowBlocks,
    public_inputs: &[Felt],
) -> Result<(), AirError> {
    let (width, height) = (air.width(), 1usize << air.log_rows());
    if trace.width() != width || trace.height() != height {
        return Err(AirError::Shape {
            width,
            height,
            got_width: trace.width(),
            got_height: trace.height(),
        });
    }
    if public_inputs.len() != air.num_public_inputs() {
        return Err(AirError::PublicInputs {
            expected: air.num_public_inputs(),
            got: public_inputs.len(),
        });
    }
    let periodic = known_columns(air, public_inputs);
    // On a SIMD path a task's rows are checked a register of rows at a time first, and row
    // by row only when something fails, to name the first failure.
    let failure = (0..height.div_ceil(ROWS_PER_TASK))
        .into_par_iter()
        .map(|task| {
            let rows = task * ROWS_PER_TASK..((task + 1) * ROWS_PER_TASK).min(height);
            if rows.len() == ROWS_PER_TASK
                && rows_pass(kernels, air, trace, rows.start, &periodic, public_inputs)
            {
                return None;
            }
            let (mut current, mut next) = (vec![Felt::ZERO; width], vec![Felt::ZERO; width]);
            let mut periodic_row = vec![Felt::ZERO; periodic.len()];
            rows.into_iter().find_map(|row| {
                trace.read_row(row, &mut current);
                trace.read_row((row + 1) % height, &mut next);
                for (slot, column) in periodic_row.iter_mut().zip(periodic.iter()) {
                    *slot = column.values[row % column.values.len()];
                }
                let frame = Frame {
                    current: &current,
                    next: &next,
                    periodic: &periodic_row,
                    public_inputs,
                };
                let mut b = RowBuilder {
                    row,
                    last: height - 1,
                    index: 0,
                    failed: None,
                };
                air.eval(&frame, &mut b);
                b.failed
                    .map(|constraint| AirError::Unsatisfied { constraint, row })
            })
        })
        .find_first(Option::is_some);
    match failure {
        Some(Some(err)) => Err(err),
        _ => Ok(()),
    }
}

/// True when the SIMD path checked the [`ROWS_PER_TASK`] rows from `first` and found them
/// all satisfied; false on the scalar path or when some row fails (the caller then checks
/// row by row).
fn rows_pass<A: Air>(
    kernels: Kernels,
    air: &A,
    trace: &RowBlocks,
    first: usize,
    periodic: &[PeriodicColumn],
    public_inputs: &[Felt],
) -> bool {
    let kernel = RowsPass {
        air,
        trace,
        rows: first..first + ROWS_PER_TASK,
        periodic,
        public_inputs,
    };
    ballast_field::packed::run(kernels, kernel).unwrap_or(false)
}

struct RowBuilder {
    row: usize,
    last: usize,
    index: usize,
    failed: Option<usize>,
}

impl ConstraintBuilder for RowBuilder {
    type Expr = Felt;

    fn assert_zero(&mut self, domain: Domain, value: Felt) {
        let applies = match domain {
            Domain::EveryRow => true,
            Domain::Transition => self.row != self.last,
            Domain::FirstRow => self.row == 0,
            Domain::LastRow => self.row == self.last,
        };
        if applies && value != Felt::ZERO && self.failed.is_none() {
            self.failed = Some(self.index);
        }
        self.index += 1;
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;
    use crate::{ConstraintInfo, PublicCell, PublicColumn};

    /// x' = x + p (p periodic: 1, 2, 3, 4), y = x², x = public input 0 on the first row and
    /// public input 1 on the last, and on each of the rows [`MARKED`] the public input a
    /// public column holds there (inputs 2, 3, 4).
    struct Steps;

    const MARKED: [usize; 3] = [3, 40, 99];

    impl Air for Steps {
        fn id(&self) -> &str {
            "test/steps"
        }
        fn width(&self) -> usize {
            2
        }
        fn log_rows(&self) -> usize {
            7
        }
        fn num_public_inputs(&self) -> usize {
            2 + MARKED.len()
        }
        fn periodic_columns(&self) -> Cow<'_, [PeriodicColumn]> {
            let marks = (0..128)
                .map(|r| Felt::new(u64::from(MARKED.contains(&r))))
                .collect();
            vec![
                PeriodicColumn {
                    values: (1..=4).map(Felt::new).collect(),
                },
                PeriodicColumn { values: marks },
            ]
            .into()
        }
        fn public_columns(&self) -> Cow<'_, [PublicColumn]> {
            let cells = (MARKED.iter().enumerate())
                .map(|(k, &row)| PublicCell { row, input: 2 + k })
                .collect();
            vec![PublicColumn { cells }].into()
        }
        fn eval<B: ConstraintBuilder>(&self, f: &Frame<'_, B::Expr>, b: &mut B) {
            let (x, y) = (f.current[0], f.current[1]);
            b.every_row(y - x * x);
            b.transition(f.next[0] - x - f.periodic[0]);
            b.first_row(x - f.public_inputs[0]);
            b.last_row(x - f.public_inputs[1]);
            b.every_row(f.periodic[1] * (x - f.periodic[2]));
        }
    }

    fn trace() -> (RowBlocks, Vec<Felt>) {
        let mut x = vec![Felt::new(5)];
        for r in 0..127 {
            x.push(x[r] + Felt::new(r as u64 % 4 + 1));
        }
        let y = x.iter().map(|&v| v * v).collect();
        let mut public = vec![x[0], x[127]];
        public.extend(MARKED.map(|r| x[r]));
        (RowBlocks::from_columns(&[x, y]), public)
    }

    #[test]
    fn every_path_finds_the_same_first_failure() {
        let (good, public) = trace();
        for kernels in Kernels::supported() {
            let path = kernels.path();
            assert_eq!(
                check_trace_on(kernels, &Steps, &good, &public),
                Ok(()),
                "{path}"
            );
            // Rows at tile and lane edges, the first and the last; either column.
            for (row, column) in [(0, 0), (1, 1), (7, 0), (31, 1), (32, 0), (100, 1), (127, 0)] {
                let mut bad = good.clone();
                bad.set(row, column, good.get(row, column) + Felt::ONE);
                let want = check_trace_on(Kernels::Scalar, &Steps, &bad, &public);
                assert!(want.is_err(), "row {row} column {column}");
                assert_eq!(
                    check_trace_on(kernels, &Steps, &bad, &public),
                    want,
                    "{path}: row {row} column {column}"
                );
            }
            let mut wrong_end = public.clone();
            wrong_end[1] += Felt::ONE;
            assert_eq!(
                check_trace_on(kernels, &Steps, &good, &wrong_end),
                Err(AirError::Unsatisfied {
                    constraint: 3,
                    row: 127
                }),
                "{path}"
            );
            // An input a public column holds, at its row.
            let mut wrong_mark = public.clone();
            wrong_mark[3] += Felt::ONE;
            assert_eq!(
                check_trace_on(kernels, &Steps, &good, &wrong_mark),
                Err(AirError::Unsatisfied {
                    constraint: 4,
                    row: 40
                }),
                "{path}"
            );
        }
    }

    /// One column of four rows, two public inputs and one public column of these cells.
    struct Cells(Vec<PublicCell>);

    impl Air for Cells {
        fn id(&self) -> &str {
            "test/cells"
        }
        fn width(&self) -> usize {
            1
        }
        fn log_rows(&self) -> usize {
            2
        }
        fn num_public_inputs(&self) -> usize {
            2
        }
        fn public_columns(&self) -> Cow<'_, [PublicColumn]> {
            vec![PublicColumn {
                cells: self.0.clone(),
            }]
            .into()
        }
        fn eval<B: ConstraintBuilder>(&self, f: &Frame<'_, B::Expr>, b: &mut B) {
            b.every_row(f.current[0] - f.periodic[0]);
        }
    }

    #[test]
    fn a_public_cell_out_of_the_table_the_inputs_or_order_is_refused() {
        let cell = |row, input| PublicCell { row, input };
        assert!(ConstraintInfo::of(&Cells(vec![cell(0, 1), cell(3, 0)])).is_ok());
        for (cells, bad) in [
            (vec![cell(4, 0)], cell(4, 0)),
            (vec![cell(1, 2)], cell(1, 2)),
            (vec![cell(2, 0), cell(1, 1)], cell(1, 1)),
            (vec![cell(1, 0), cell(1, 1)], cell(1, 1)),
        ] {
            assert_eq!(
                ConstraintInfo::of(&Cells(cells)),
                Err(AirError::PublicColumn {
                    index: 0,
                    row: bad.row,
                    input: bad.input,
                    rows: 4,
                    inputs: 2
                })
            );
        }
    }
}
