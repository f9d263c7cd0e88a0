//! Checking a trace against its AIR before proving.

use ballast_cpu::Kernels;
use ballast_field::{ColMatrix, Felt};
use rayon::prelude::*;

#[cfg(target_arch = "x86_64")]
use crate::lanes::{avx2, avx512};
use crate::{Air, AirError, ConstraintBuilder, Domain, Frame, PeriodicColumn};

/// Rows gathered together: a multiple of every path's lane count.
const TILE: usize = 32;
/// Tiles checked per parallel task, at least.
const TILES_PER_TASK: usize = 16;

/// Checks the trace's shape and every constraint on every row of its domain.
///
/// # Errors
/// The first violation found: the lowest failing row, then the lowest constraint.
pub fn check_trace<A: Air>(
    air: &A,
    trace: &ColMatrix,
    public_inputs: &[Felt],
) -> Result<(), AirError> {
    check_trace_on(Kernels::active(), air, trace, public_inputs)
}

fn check_trace_on<A: Air>(
    kernels: Kernels,
    air: &A,
    trace: &ColMatrix,
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
    let periodic = air.periodic_columns();
    // Rows are gathered a tile at a time, column by column (each column read as one run),
    // with the row after the tile, which the tile's last row reads as its next row. On a SIMD
    // path a tile is checked a register of rows at a time first, and row by row only when
    // something fails, to name the first failure.
    let failure = (0..height.div_ceil(TILE))
        .into_par_iter()
        .with_min_len(TILES_PER_TASK)
        .map_init(
            || {
                (
                    vec![Felt::ZERO; (TILE + 1) * width],
                    vec![Felt::ZERO; periodic.len()],
                )
            },
            |(tile, periodic_row), t| {
                let first = t * TILE;
                let rows = TILE.min(height - first);
                if rows == TILE
                    && tile_passes(kernels, air, trace, tile, first, &periodic, public_inputs)
                {
                    return None;
                }
                for (c, column) in trace.columns().enumerate() {
                    for k in 0..=rows {
                        tile[k * width + c] = column[(first + k) % height];
                    }
                }
                (0..rows).find_map(|k| {
                    let row = first + k;
                    for (slot, column) in periodic_row.iter_mut().zip(&periodic) {
                        *slot = column.values[row % column.values.len()];
                    }
                    let frame = Frame {
                        current: &tile[k * width..(k + 1) * width],
                        next: &tile[(k + 1) * width..(k + 2) * width],
                        periodic: periodic_row,
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
            },
        )
        .find_first(Option::is_some);
    match failure {
        Some(Some(err)) => Err(err),
        _ => Ok(()),
    }
}

/// True when the SIMD path checked the `TILE` rows from `first` and found them all
/// satisfied; false on the scalar path or when some row fails (the caller then checks row by
/// row). `scratch` receives the tile column after column.
fn tile_passes<A: Air>(
    kernels: Kernels,
    air: &A,
    trace: &ColMatrix,
    scratch: &mut [Felt],
    first: usize,
    periodic: &[PeriodicColumn],
    public_inputs: &[Felt],
) -> bool {
    if matches!(kernels, Kernels::Scalar) {
        return false;
    }
    let height = trace.height();
    for (c, column) in trace.columns().enumerate() {
        for k in 0..=TILE {
            scratch[c * (TILE + 1) + k] = column[(first + k) % height];
        }
    }
    let last = height - 1;
    ballast_cpu::dispatch!(
        kernels,
        isa => isa::tile_passes(air, scratch, TILE, first, last, periodic, public_inputs),
        _ => false,
    )
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
    use super::*;

    /// x' = x + p (p periodic: 1, 2, 3, 4), y = x², x = public input 0 on the first row and
    /// public input 1 on the last.
    struct Steps;

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
            2
        }
        fn periodic_columns(&self) -> Vec<PeriodicColumn> {
            vec![PeriodicColumn {
                values: (1..=4).map(Felt::new).collect(),
            }]
        }
        fn eval<B: ConstraintBuilder>(&self, f: &Frame<'_, B::Expr>, b: &mut B) {
            let (x, y) = (f.current[0], f.current[1]);
            b.every_row(y - x * x);
            b.transition(f.next[0] - x - f.periodic[0]);
            b.first_row(x - f.public_inputs[0]);
            b.last_row(x - f.public_inputs[1]);
        }
    }

    fn trace() -> (ColMatrix, Vec<Felt>) {
        let mut x = vec![Felt::new(5)];
        for r in 0..127 {
            x.push(x[r] + Felt::new(r as u64 % 4 + 1));
        }
        let y = x.iter().map(|&v| v * v).collect();
        let public = vec![x[0], x[127]];
        (ColMatrix::from_columns(&[x, y]), public)
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
                let mut columns: Vec<Vec<Felt>> = good.columns().map(<[Felt]>::to_vec).collect();
                columns[column][row] += Felt::ONE;
                let bad = ColMatrix::from_columns(&columns);
                let want = check_trace_on(Kernels::Scalar, &Steps, &bad, &public);
                assert!(want.is_err(), "row {row} column {column}");
                assert_eq!(
                    check_trace_on(kernels, &Steps, &bad, &public),
                    want,
                    "{path}: row {row} column {column}"
                );
            }
            let wrong_end = [public[0], public[1] + Felt::ONE];
            assert_eq!(
                check_trace_on(kernels, &Steps, &good, &wrong_end),
                Err(AirError::Unsatisfied {
                    constraint: 3,
                    row: 127
                }),
                "{path}"
            );
        }
    }
}
