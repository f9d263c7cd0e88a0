//! Checking a trace against its AIR before proving.

use ballast_field::{ColMatrix, Felt};
use rayon::prelude::*;

use crate::{Air, AirError, BoundaryRow};

/// Rows checked per parallel task.
const ROWS_PER_TASK: usize = 1 << 12;

/// Checks the trace's shape, every boundary constraint and every transition.
///
/// # Errors
/// The first violation found: the lowest failing row for transitions.
pub fn check_trace<A: Air>(air: &A, trace: &ColMatrix) -> Result<(), AirError> {
    let (width, height) = (air.width(), 1usize << air.log_rows());
    if trace.width() != width || trace.height() != height {
        return Err(AirError::Shape {
            width,
            height,
            got_width: trace.width(),
            got_height: trace.height(),
        });
    }
    for b in air.boundaries() {
        let row = match b.row {
            BoundaryRow::First => 0,
            BoundaryRow::Last => height - 1,
        };
        let got = trace.column(b.column)[row];
        if got != b.value {
            return Err(AirError::Boundary {
                column: b.column,
                row,
                expected: b.value.as_u64(),
                got: got.as_u64(),
            });
        }
    }
    let failure = (0..height - 1)
        .into_par_iter()
        .with_min_len(ROWS_PER_TASK)
        .map_init(
            || {
                (
                    vec![Felt::ZERO; width],
                    vec![Felt::ZERO; width],
                    vec![Felt::ZERO; air.num_transition_constraints()],
                )
            },
            |(current, next, out), row| {
                for (c, column) in trace.columns().enumerate() {
                    current[c] = column[row];
                    next[c] = column[row + 1];
                }
                air.eval_transition(current, next, out);
                out.iter()
                    .position(|&v| v != Felt::ZERO)
                    .map(|constraint| AirError::Transition { constraint, row })
            },
        )
        .find_first(Option::is_some);
    match failure {
        Some(Some(err)) => Err(err),
        _ => Ok(()),
    }
}
