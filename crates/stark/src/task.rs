//! One parallel task of the composition's evaluation: its points' place in the LDE, their
//! zerofiers, and the quotient at them one point at a time (the SIMD paths, `lanes.rs`, take
//! a register of points at a time).

use ballast_air::{Air, ConstraintBuilder, Domain, Frame};
use ballast_field::{Ext3, Felt, RowBlocks, batch_inverse};
use ballast_ntt::coset_points;

/// Which quotient points a task evaluates, where they sit in the LDE, and the zerofiers'
/// fixed parts. The points evaluated are t = u·`step` + `offset` (u from 0): all of g·H_q,
/// or one coset of it, the point x_u = `shift`·ω^u with ω of order 2^`log_points`.
pub(crate) struct Geometry {
    pub(crate) log_points: usize,
    pub(crate) shift: Felt,
    pub(crate) step: usize,
    pub(crate) offset: usize,
    /// LDE rows between consecutive points evaluated.
    pub(crate) stride: usize,
    /// LDE rows between a point and its next row.
    pub(crate) blowup: usize,
    pub(crate) omega_last: Felt,
    /// 1/(x^n − 1), which depends on t mod 2^log_chunks only.
    pub(crate) vanishing_inv: Vec<Felt>,
}

impl Geometry {
    /// The quotient point t of the u-th point evaluated.
    #[inline]
    pub(crate) fn point(&self, u: usize) -> usize {
        u * self.step + self.offset
    }
}

/// One parallel task: the quotient at the points evaluated `start .. start + chunk.len()`.
pub(crate) struct Task<'a, A> {
    /// Each domain's powers of α ([`Composition`](crate::quotient::Composition)).
    pub(crate) coeffs: &'a [Vec<Ext3>; Domain::COUNT],
    pub(crate) air: &'a A,
    pub(crate) lde: &'a RowBlocks,
    pub(crate) public_inputs: &'a [Felt],
    pub(crate) periodic: &'a [Vec<Felt>],
    pub(crate) geometry: &'a Geometry,
    pub(crate) start: usize,
}

/// The zerofier inverses of a task's points: 1/Z for each domain.
pub(crate) struct Zerofiers {
    pub(crate) every: Vec<Felt>,
    pub(crate) transition: Vec<Felt>,
    pub(crate) first: Vec<Felt>,
    pub(crate) last: Vec<Felt>,
}

impl<A: Air> Task<'_, A> {
    pub(crate) fn zerofiers(&self, len: usize) -> Zerofiers {
        let g = self.geometry;
        let xs = coset_points(g.shift, g.log_points, self.start, len);
        let mask = g.vanishing_inv.len() - 1;
        let every: Vec<Felt> = (0..len)
            .map(|j| g.vanishing_inv[g.point(self.start + j) & mask])
            .collect();
        let transition = xs
            .iter()
            .zip(&every)
            .map(|(&x, &inv)| (x - g.omega_last) * inv)
            .collect();
        Zerofiers {
            every,
            transition,
            first: invert(xs.iter().map(|&x| x - Felt::ONE)),
            last: invert(xs.iter().map(|&x| x - g.omega_last)),
        }
    }

    /// The LDE row of the u-th point evaluated, and of its next row.
    #[inline]
    pub(crate) fn rows_of(&self, u: usize) -> (usize, usize) {
        let mask = self.lde.height() - 1;
        let row = u * self.geometry.stride;
        (row, (row + self.geometry.blowup) & mask)
    }

    /// The task one point at a time.
    pub(crate) fn evaluate_scalar(&self, chunk: &mut [Ext3]) {
        let z = self.zerofiers(chunk.len());
        let width = self.lde.width();
        let (mut current, mut next) = (vec![Felt::ZERO; width], vec![Felt::ZERO; width]);
        let mut periodic_row = vec![Felt::ZERO; self.periodic.len()];
        for (j, q) in chunk.iter_mut().enumerate() {
            let u = self.start + j;
            let (row, next_row) = self.rows_of(u);
            let t = self.geometry.point(u);
            self.lde.read_row(row, &mut current);
            self.lde.read_row(next_row, &mut next);
            for (slot, column) in periodic_row.iter_mut().zip(self.periodic) {
                *slot = column[t % column.len()];
            }
            let frame = Frame {
                current: &current,
                next: &next,
                periodic: &periodic_row,
                public_inputs: self.public_inputs,
            };
            let mut folder = Folder::new(self.coeffs);
            self.air.eval(&frame, &mut folder);
            let [every, transition, first, last] = folder.sums;
            *q = every.scale(z.every[j])
                + transition.scale(z.transition[j])
                + first.scale(z.first[j])
                + last.scale(z.last[j]);
        }
    }
}

/// The prover's builder at one point: each constraint's value times its power of α, summed
/// per domain as it is asserted.
struct Folder<'a> {
    coeffs: &'a [Vec<Ext3>; Domain::COUNT],
    used: [usize; Domain::COUNT],
    sums: [Ext3; Domain::COUNT],
}

impl<'a> Folder<'a> {
    fn new(coeffs: &'a [Vec<Ext3>; Domain::COUNT]) -> Self {
        Self {
            coeffs,
            used: [0; Domain::COUNT],
            sums: [Ext3::ZERO; Domain::COUNT],
        }
    }
}

impl ConstraintBuilder for Folder<'_> {
    type Expr = Felt;

    #[inline(always)]
    fn assert_zero(&mut self, domain: Domain, value: Felt) {
        let d = domain.index();
        self.sums[d] += self.coeffs[d][self.used[d]].scale(value);
        self.used[d] += 1;
    }
}

/// Inverses of non-zero base-field values (points of g·H_q are never 1 or ω^(n−1)).
fn invert(values: impl Iterator<Item = Felt>) -> Vec<Felt> {
    let values: Vec<Felt> = values.collect();
    batch_inverse(&values).expect("coset points avoid the trace domain")
}
