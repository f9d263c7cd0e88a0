//! Checking a trace against its AIR before proving.

use ballast_field::{ColMatrix, Felt};
use rayon::prelude::*;

use crate::{Air, AirError, ConstraintBuilder, Domain, Frame};

/// Rows gathered together.
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
    // with the row after the tile, which the tile's last row reads as its next row.
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
