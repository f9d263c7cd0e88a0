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

use ballast_air::{Air, ConstraintBuilder, ConstraintInfo, Domain, Frame};
use ballast_cpu::Kernels;
use ballast_field::{Ext3, Felt, RowBlocks, batch_inverse};
use ballast_ntt::{LdePlan, coset_points};
use rayon::prelude::*;

#[cfg(target_arch = "x86_64")]
use crate::lanes::{avx2, avx512};
use crate::protocol::last_point;

/// Quotient points evaluated per parallel task: a multiple of every path's lane count.
const POINTS_PER_TASK: usize = 1 << 9;

/// The powers of α of each domain's constraints, in assertion order.
pub(crate) struct Composition {
    pub(crate) coeffs: [Vec<Ext3>; Domain::COUNT],
}

impl Composition {
    /// Assigns α^i to constraint i.
    pub(crate) fn new(info: &ConstraintInfo, alpha: Ext3) -> Self {
        let mut coeffs: [Vec<Ext3>; Domain::COUNT] = Default::default();
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
        lde: &RowBlocks,
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
        lde: &RowBlocks,
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
                if chunk.len() == POINTS_PER_TASK {
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
        let mut sums = [Ext3::ZERO; Domain::COUNT];
        let mut used = [0usize; Domain::COUNT];
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
        let xs = coset_points(LdePlan::SHIFT, g.log_q, self.start, len);
        let mask = g.vanishing_inv.len() - 1;
        let every: Vec<Felt> = (0..len)
            .map(|j| g.vanishing_inv[(self.start + j) & mask])
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

    /// The LDE row of quotient point `t`, and of its next row.
    #[inline]
    pub(crate) fn rows_of(&self, t: usize) -> (usize, usize) {
        let mask = self.lde.height() - 1;
        let row = t * self.geometry.stride;
        (row, (row + self.geometry.blowup) & mask)
    }

    /// The task one point at a time.
    fn evaluate_scalar(&self, chunk: &mut [Ext3]) {
        let z = self.zerofiers(chunk.len());
        let width = self.lde.width();
        let (mut current, mut next) = (vec![Felt::ZERO; width], vec![Felt::ZERO; width]);
        let mut periodic_row = vec![Felt::ZERO; self.periodic.len()];
        for (j, q) in chunk.iter_mut().enumerate() {
            let t = self.start + j;
            let (row, next_row) = self.rows_of(t);
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
            let mut folder = Folder::new(&self.composition.coeffs);
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
        let lde = RowBlocks::from_columns(&columns);
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
