//! The composition (quotient) polynomial.
//!
//! With random α and constraint i asserted on domain D_i with zerofier Z_D,
//!
//! Q(x) = Σ_D (Σ_{i ∈ D} α^i·C_i(x)) / Z_D(x),
//!
//! Z_every = x^n − 1, Z_transition = (x^n − 1)/(x − ω^(n−1)), Z_first = x − 1,
//! Z_last = x − ω^(n−1). Q is a polynomial of degree < 2^c·n (c from
//! [`ConstraintInfo`]) exactly when the trace satisfies every constraint; otherwise, except
//! with probability about (#constraints)/|F| over α, it is not a polynomial at all and FRI
//! rejects.

use ballast_air::{Air, Algebra, ConstraintBuilder, ConstraintInfo, Domain, Frame};
use ballast_cpu::Kernels;
use ballast_field::{ColMatrix, Ext3, Felt, batch_inverse, dot_ext_base};
use ballast_ntt::{LdePlan, coset_points};
use rayon::prelude::*;

#[cfg(target_arch = "x86_64")]
use crate::lanes::{avx2, avx512};
use crate::protocol::last_point;

/// Quotient points evaluated per parallel task.
const POINTS_PER_TASK: usize = 1 << 10;
/// Points whose rows are gathered together: each column is read as one short run. A
/// multiple of every path's lane count.
pub(crate) const TILE: usize = 32;

/// The powers of α of each domain's constraints, in assertion order.
pub(crate) struct Composition {
    coeffs: [Vec<Ext3>; 4],
}

impl Composition {
    /// Assigns α^i to constraint i.
    pub(crate) fn new(info: &ConstraintInfo, alpha: Ext3) -> Self {
        let mut coeffs: [Vec<Ext3>; 4] = Default::default();
        for (&(domain, _), power) in info
            .constraints
            .iter()
            .zip(alpha.powers(info.constraints.len()))
        {
            coeffs[domain.index()].push(power);
        }
        Self { coeffs }
    }

    /// Q's evaluations on the coset g·H_q of size n·2^`log_chunks`, natural order, from the
    /// trace's LDE on g·H' (size n·2^`log_blowup`, natural order) and the periodic columns
    /// on g·H_q ([`crate::periodic::PeriodicPolys::on_quotient_coset`]).
    ///
    /// Quotient point t is LDE point t·2^(log_blowup − log_chunks); its next row is the LDE
    /// point 2^log_blowup further on.
    pub(crate) fn evaluate<A: Air>(
        &self,
        air: &A,
        lde: &ColMatrix,
        public_inputs: &[Felt],
        periodic: &[Vec<Felt>],
        log_blowup: usize,
        log_chunks: usize,
    ) -> Vec<Ext3> {
        let shape = (log_blowup, log_chunks);
        self.evaluate_on(Kernels::active(), air, lde, public_inputs, periodic, shape)
    }

    /// [`evaluate`](Self::evaluate) with the given kernels; `shape` is (log_blowup,
    /// log_chunks).
    fn evaluate_on<A: Air>(
        &self,
        kernels: Kernels,
        air: &A,
        lde: &ColMatrix,
        public_inputs: &[Felt],
        periodic: &[Vec<Felt>],
        (log_blowup, log_chunks): (usize, usize),
    ) -> Vec<Ext3> {
        let log_n = air.log_rows();
        let log_q = log_n + log_chunks;
        // x^n on g·H_q takes 2^log_chunks values: g^n·r^(t mod 2^log_chunks).
        let shift_n = LdePlan::SHIFT.pow(1 << log_n);
        let chunk_root = Felt::two_adic_root(log_chunks);
        let geometry = Geometry {
            log_q,
            stride: 1usize << (log_blowup - log_chunks),
            blowup: 1usize << log_blowup,
            omega_last: last_point(log_n),
            vanishing_inv: (0..1u64 << log_chunks)
                .map(|k| (shift_n * chunk_root.pow(k) - Felt::ONE).inverse())
                .collect(),
        };
        let mut out = vec![Ext3::ZERO; 1 << log_q];
        out.par_chunks_mut(POINTS_PER_TASK)
            .enumerate()
            .for_each(|(task, chunk)| {
                let task = Task {
                    composition: self,
                    air,
                    lde,
                    public_inputs,
                    periodic,
                    geometry: &geometry,
                    start: task * POINTS_PER_TASK,
                };
                if chunk.len().is_multiple_of(TILE) {
                    ballast_cpu::dispatch!(
                        kernels,
                        isa => isa::evaluate(&task, chunk),
                        _ => task.evaluate_scalar(chunk),
                    );
                } else {
                    task.evaluate_scalar(chunk);
                }
            });
        out
    }

    /// Q(z) from the constraint values at z in assertion order (the verifier's side).
    pub(crate) fn combine_at(
        &self,
        info: &ConstraintInfo,
        values: &[Ext3],
        z: Ext3,
        log_rows: usize,
    ) -> Ext3 {
        let mut sums = [Ext3::ZERO; 4];
        let mut used = [0usize; 4];
        for (&(domain, _), &value) in info.constraints.iter().zip(values) {
            let d = domain.index();
            sums[d] += self.coeffs[d][used[d]] * value;
            used[d] += 1;
        }
        let omega_last = Ext3::from(last_point(log_rows));
        let vanishing = z.pow(1 << log_rows) - Ext3::ONE;
        // draw_ood_point keeps z out of H, so none of these denominators is zero.
        let every_inv = vanishing.inverse();
        let zerofier_inv = |domain: Domain| match domain {
            Domain::EveryRow => every_inv,
            Domain::Transition => (z - omega_last) * every_inv,
            Domain::FirstRow => (z - Ext3::ONE).inverse(),
            Domain::LastRow => (z - omega_last).inverse(),
        };
        Domain::ALL.iter().fold(Ext3::ZERO, |acc, &d| {
            acc + sums[d.index()] * zerofier_inv(d)
        })
    }
}

/// Where the quotient points sit in the LDE, and the zerofiers' fixed parts.
pub(crate) struct Geometry {
    log_q: usize,
    /// LDE rows between consecutive quotient points.
    stride: usize,
    /// LDE rows between a point and its next row.
    blowup: usize,
    omega_last: Felt,
    /// 1/(x^n − 1), which depends on t mod 2^log_chunks only.
    vanishing_inv: Vec<Felt>,
}

/// One parallel task: the quotient at points `start .. start + chunk.len()`.
pub(crate) struct Task<'a, A> {
    pub(crate) composition: &'a Composition,
    pub(crate) air: &'a A,
    pub(crate) lde: &'a ColMatrix,
    pub(crate) public_inputs: &'a [Felt],
    pub(crate) periodic: &'a [Vec<Felt>],
    pub(crate) geometry: &'a Geometry,
    pub(crate) start: usize,
}

/// The zerofier inverses of a task's points.
pub(crate) struct Zerofiers {
    xs: Vec<Felt>,
    first_inv: Vec<Felt>,
    last_inv: Vec<Felt>,
}

impl<A: Air> Task<'_, A> {
    pub(crate) fn zerofiers(&self, len: usize) -> Zerofiers {
        let xs = coset_points(LdePlan::SHIFT, self.geometry.log_q, self.start, len);
        let first_inv = invert(xs.iter().map(|&x| x - Felt::ONE));
        let last_inv = invert(xs.iter().map(|&x| x - self.geometry.omega_last));
        Zerofiers {
            xs,
            first_inv,
            last_inv,
        }
    }

    /// Gathers points `t0 ..` (`count` of them) of every column, column-major by point
    /// (`current[c·TILE + k]`), with their next rows.
    pub(crate) fn gather_tile(
        &self,
        t0: usize,
        count: usize,
        current: &mut [Felt],
        next: &mut [Felt],
    ) {
        let Geometry { stride, blowup, .. } = *self.geometry;
        let mask = self.lde.height() - 1;
        for (c, column) in self.lde.columns().enumerate() {
            for k in 0..count {
                let row = (t0 + k) * stride;
                current[c * TILE + k] = column[row];
                next[c * TILE + k] = column[(row + blowup) & mask];
            }
        }
    }

    /// Q at point j of the task from its constraint values, sorted by domain.
    pub(crate) fn combine(&self, z: &Zerofiers, j: usize, values: [&[Felt]; 4]) -> Ext3 {
        let coeffs = &self.composition.coeffs;
        let [every, transition, first, last] =
            std::array::from_fn(|d| dot_ext_base(&coeffs[d], values[d]));
        let g = self.geometry;
        let t = self.start + j;
        let every_inv = g.vanishing_inv[t & (g.vanishing_inv.len() - 1)];
        let transition_inv = (z.xs[j] - g.omega_last) * every_inv;
        every.scale(every_inv)
            + transition.scale(transition_inv)
            + first.scale(z.first_inv[j])
            + last.scale(z.last_inv[j])
    }

    /// The task one point at a time.
    fn evaluate_scalar(&self, chunk: &mut [Ext3]) {
        let z = self.zerofiers(chunk.len());
        let width = self.lde.width();
        let mut current = vec![Felt::ZERO; TILE * width];
        let mut next = vec![Felt::ZERO; TILE * width];
        let (mut row, mut next_row) = (vec![Felt::ZERO; width], vec![Felt::ZERO; width]);
        let mut periodic_row = vec![Felt::ZERO; self.periodic.len()];
        let mut values: [Vec<Felt>; 4] = Default::default();
        for (i, tile) in chunk.chunks_mut(TILE).enumerate() {
            let t0 = self.start + i * TILE;
            self.gather_tile(t0, tile.len(), &mut current, &mut next);
            for (k, q) in tile.iter_mut().enumerate() {
                for c in 0..width {
                    row[c] = current[c * TILE + k];
                    next_row[c] = next[c * TILE + k];
                }
                for (slot, column) in periodic_row.iter_mut().zip(self.periodic) {
                    *slot = column[(t0 + k) % column.len()];
                }
                values.iter_mut().for_each(Vec::clear);
                let frame = Frame {
                    current: &row,
                    next: &next_row,
                    periodic: &periodic_row,
                    public_inputs: self.public_inputs,
                };
                self.air.eval(&frame, &mut PointBuilder(&mut values));
                *q = self.combine(&z, i * TILE + k, std::array::from_fn(|d| &values[d][..]));
            }
        }
    }
}

/// The prover's builder: constraint values sorted by domain, one point (`Felt`) or a
/// register of points (a packed type) at a time.
pub(crate) struct PointBuilder<'a, E>(pub(crate) &'a mut [Vec<E>; 4]);

impl<E: Algebra> ConstraintBuilder for PointBuilder<'_, E> {
    type Expr = E;

    #[inline(always)]
    fn assert_zero(&mut self, domain: Domain, value: E) {
        self.0[domain.index()].push(value);
    }
}

/// Inverses of non-zero base-field values (points of g·H_q are never 1 or ω^(n−1)).
fn invert(values: impl Iterator<Item = Felt>) -> Vec<Felt> {
    let values: Vec<Felt> = values.collect();
    batch_inverse(&values).expect("coset points avoid the trace domain")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::periodic::PeriodicPolys;
    use crate::test_air::CounterAir;

    #[test]
    fn every_path_evaluates_the_same_quotient() {
        // Arbitrary LDE values (the evaluation is pointwise: they need not be low-degree),
        // near p every seventh value; 2^12 quotient points: several tasks and tiles.
        let (log_rows, log_blowup, log_chunks) = (11, 2, 1);
        let air = CounterAir { log_rows };
        let info = ConstraintInfo::of(&air).unwrap();
        let height = 1usize << (log_rows + log_blowup);
        let mut state = 7u64;
        let columns: Vec<Vec<Felt>> = (0..2)
            .map(|_| {
                (0..height)
                    .map(|i| {
                        state = state
                            .wrapping_mul(6_364_136_223_846_793_005)
                            .wrapping_add(1);
                        Felt::new(if i % 7 == 0 {
                            Felt::MODULUS - 1 - (state >> 60)
                        } else {
                            state
                        })
                    })
                    .collect()
            })
            .collect();
        let lde = ColMatrix::from_columns(&columns);
        let periodic =
            PeriodicPolys::new(&air.periodic_columns(), log_rows).on_quotient_coset(log_chunks);
        let composition = Composition::new(
            &info,
            Ext3::new([Felt::new(3), Felt::new(5), Felt::new(11)]),
        );
        let public = [Felt::new(4), Felt::new(9)];
        let shape = (log_blowup, log_chunks);
        let scalar =
            composition.evaluate_on(Kernels::Scalar, &air, &lde, &public, &periodic, shape);
        for kernels in Kernels::supported() {
            let got = composition.evaluate_on(kernels, &air, &lde, &public, &periodic, shape);
            assert!(got == scalar, "{} path", kernels.path());
        }
    }
}
