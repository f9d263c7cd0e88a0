//! The trace check on a register of rows at once (the SIMD paths): constraints are written
//! over [`Algebra`](crate::Algebra), so `eval` runs on packed values, lane i holding row i
//! of the group. A group passes when every constraint that applies to a lane's row is zero
//! there; a task with any failure is checked again row by row, which names the first one.
//! [`gather`] loads a column of several rows of a [`RowBlocks`] table into one register;
//! the prover's composition uses it too. Both are written once over [`PackedField`].

use std::marker::PhantomData;
use std::ops::Range;

use ballast_field::packed::{Kernel, PackedField};
use ballast_field::{BLOCK_ROWS, Felt, RowBlocks, prefetch};

use crate::{Air, ConstraintBuilder, Domain, Frame, PeriodicColumn};

/// Which lanes hold a non-zero value, per domain.
struct Nonzero<P>([u8; Domain::COUNT], PhantomData<P>);

impl<P: PackedField> ConstraintBuilder for Nonzero<P> {
    type Expr = P;

    #[inline(always)]
    fn assert_zero(&mut self, domain: Domain, value: P) {
        self.0[domain.index()] |= value.nonzero_lanes();
    }
}

/// Whether `rows` (a multiple of the lane count) all satisfy the AIR: a [`Kernel`].
pub(crate) struct RowsPass<'a, A> {
    pub(crate) air: &'a A,
    pub(crate) trace: &'a RowBlocks,
    pub(crate) rows: Range<usize>,
    pub(crate) periodic: &'a [PeriodicColumn],
    pub(crate) public_inputs: &'a [Felt],
}

impl<A: Air> Kernel for RowsPass<'_, A> {
    type Output = bool;

    #[inline(always)]
    fn run<P: PackedField>(self, token: P::Token) -> bool {
        let Self {
            air,
            trace,
            rows,
            periodic,
            public_inputs,
        } = self;
        let width = air.width();
        let height = trace.height();
        let last = height - 1;
        let values = trace.as_slice();
        let zero = P::splat(token, Felt::ZERO);
        let (mut current, mut next) = (vec![zero; width], vec![zero; width]);
        let mut periodic_row = vec![zero; periodic.len()];
        let public: Vec<P> = public_inputs.iter().map(|&v| P::splat(token, v)).collect();
        for first in rows.step_by(P::LANES) {
            let at = P::array(|k| trace.row_offset(first + k));
            let after = P::array(|k| trace.row_offset((first + k + 1) % height));
            gather(token, values, at.as_ref(), &mut current);
            gather(token, values, after.as_ref(), &mut next);
            for (slot, column) in periodic_row.iter_mut().zip(periodic) {
                let values = &column.values;
                let lane = P::array(|k| values[(first + k) % values.len()]);
                *slot = P::load(token, lane.as_ref());
            }
            let frame = Frame {
                current: &current,
                next: &next,
                periodic: &periodic_row,
                public_inputs: &public,
            };
            let mut nonzero = Nonzero::<P>([0; Domain::COUNT], PhantomData);
            air.eval(&frame, &mut nonzero);
            let [every, transition, first_row, last_row] = nonzero.0;
            for k in 0..P::LANES {
                let row = first + k;
                let bit = |mask: u8| mask >> k & 1 == 1;
                if bit(every)
                    || (row != last && bit(transition))
                    || (row == 0 && bit(first_row))
                    || (row == last && bit(last_row))
                {
                    return false;
                }
            }
        }
        true
    }
}

/// Column c of the rows at `offsets` ([`RowBlocks::row_offset`], one per lane) into
/// `out[c]`, one row per lane: a plain load where the rows are consecutive in a block.
#[inline(always)]
pub fn gather<P: PackedField>(token: P::Token, values: &[Felt], offsets: &[usize], out: &mut [P]) {
    // The runs are read in order through each block: prefetch ahead of them.
    const AHEAD: usize = 16 * BLOCK_ROWS;
    let base = offsets[0];
    if offsets.iter().enumerate().all(|(k, &o)| o == base + k) {
        for (c, slot) in out.iter_mut().enumerate() {
            prefetch(values, base + BLOCK_ROWS * c + AHEAD);
            *slot = P::load(token, &values[base + BLOCK_ROWS * c..]);
        }
    } else {
        let last = offsets[P::LANES - 1];
        for (c, slot) in out.iter_mut().enumerate() {
            prefetch(values, base + BLOCK_ROWS * c + AHEAD);
            prefetch(values, last + BLOCK_ROWS * c + AHEAD);
            let lanes = P::array(|k| values[offsets[k] + BLOCK_ROWS * c]);
            *slot = P::load(token, lanes.as_ref());
        }
    }
}
