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

use ballast_air::{Air, ConstraintInfo, Domain};
use ballast_cpu::Kernels;
use ballast_field::{Ext3, Felt, RowBlocks};
use ballast_ntt::LdePlan;
use rayon::prelude::*;

use crate::lanes::Evaluate;
use crate::task::{Geometry, Task};

/// Quotient points evaluated per parallel task: a multiple of every path's lane count.
const POINTS_PER_TASK: usize = 1 << 9;

/// The powers of α of each domain's constraints, in assertion order.
pub(crate) struct Composition {
    pub(crate) coeffs: [Vec<Ext3>; Domain::COUNT],
}

impl Composition {
    /// Assigns α^i to constraint i.
    pub(crate) fn new(info: &ConstraintInfo, alpha: Ext3) -> Self {
        Self::from_coefficients(info, &alpha.powers(info.constraints.len()))
    }

    /// Assigns `coefficients[i]` to constraint i.
    pub(crate) fn from_coefficients(info: &ConstraintInfo, coefficients: &[Ext3]) -> Self {
        let mut coeffs: [Vec<Ext3>; Domain::COUNT] = Default::default();
        for (&(domain, _), &c) in info.constraints.iter().zip(coefficients) {
            coeffs[domain.index()].push(c);
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
        let geometry = whole_domain(air.log_rows(), log_blowup, log_chunks);
        let input = (air, lde, public_inputs, periodic);
        self.evaluate_on(Kernels::active(), input, &geometry)
    }

    /// Q's evaluations on coset v of g·H_q, the points t = u·2^c + v (natural order of u),
    /// from the trace's evaluations there (`coset`, 2^log_n rows: coset v of the trace's
    /// extension by `plan`, 2^c = 2^log_chunks) and the periodic columns on g·H_q. The
    /// composition a coset at a time, for a prover that keeps no extension whole.
    pub(crate) fn evaluate_coset<A: Air>(
        &self,
        air: &A,
        coset: &RowBlocks,
        public_inputs: &[Felt],
        periodic: &[Vec<Felt>],
        plan: &LdePlan,
        v: usize,
    ) -> Vec<Ext3> {
        let geometry = one_coset(plan, v);
        let input = (air, coset, public_inputs, periodic);
        self.evaluate_on(Kernels::active(), input, &geometry)
    }

    /// Q at the points `geometry` names, with the given kernels, from `input`: the AIR, the
    /// trace's LDE, the public inputs and the periodic columns on g·H_q.
    fn evaluate_on<A: Air>(
        &self,
        kernels: Kernels,
        (air, lde, public_inputs, periodic): (&A, &RowBlocks, &[Felt], &[Vec<Felt>]),
        geometry: &Geometry,
    ) -> Vec<Ext3> {
        let mut out = vec![Ext3::ZERO; 1 << geometry.log_points];
        out.par_chunks_mut(POINTS_PER_TASK)
            .enumerate()
            .for_each(|(task, chunk)| {
                let task = Task {
                    coeffs: &self.coeffs,
                    air,
                    lde,
                    public_inputs,
                    periodic,
                    geometry,
                    start: task * POINTS_PER_TASK,
                };
                let simd = chunk.len() == POINTS_PER_TASK
                    && ballast_field::packed::run(kernels, Evaluate { task: &task, chunk })
                        .is_some();
                if !simd {
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

/// Every point of g·H_q (2^`log_chunks` times a trace of 2^`log_n` rows), from the trace's
/// LDE by 2^`log_blowup`: quotient point t is LDE point t·2^(log_blowup − log_chunks), and
/// its next row the LDE point 2^log_blowup further on.
fn whole_domain(log_n: usize, log_blowup: usize, log_chunks: usize) -> Geometry {
    Geometry {
        log_points: log_n + log_chunks,
        shift: LdePlan::SHIFT,
        step: 1,
        offset: 0,
        stride: 1 << (log_blowup - log_chunks),
        blowup: 1 << log_blowup,
        omega_last: last_point(log_n),
        vanishing_inv: vanishing_inverses(log_n, log_chunks),
    }
}

/// Coset v of g·H_q (the extension by `plan`), the points t = u·2^log_chunks + v, from the
/// trace's evaluations there: point u is row u, and its next row row u + 1.
fn one_coset(plan: &LdePlan, v: usize) -> Geometry {
    let (log_n, log_chunks) = (plan.log_n(), plan.log_blowup());
    Geometry {
        log_points: log_n,
        shift: plan.point(v),
        step: 1 << log_chunks,
        offset: v,
        stride: 1,
        blowup: 1,
        omega_last: last_point(log_n),
        vanishing_inv: vanishing_inverses(log_n, log_chunks),
    }
}

/// 1/(x^n − 1) on g·H_q, by t mod 2^`log_chunks`: x^n takes 2^log_chunks values there,
/// g^n·r^(t mod 2^log_chunks).
fn vanishing_inverses(log_n: usize, log_chunks: usize) -> Vec<Felt> {
    let shift_n = LdePlan::SHIFT.pow(1 << log_n);
    let chunk_root = Felt::two_adic_root(log_chunks);
    (0..1u64 << log_chunks)
        .map(|k| (shift_n * chunk_root.pow(k) - Felt::ONE).inverse())
        .collect()
}

/// ω^(n−1), the trace domain's last point.
pub(crate) fn last_point(log_rows: usize) -> Felt {
    Felt::two_adic_root(log_rows).inverse()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::periodic::PeriodicPolys;
    use crate::test_air::CounterAir;

    #[test]
    fn last_point_is_omega_to_n_minus_one() {
        let w = Felt::two_adic_root(5);
        assert_eq!(last_point(5), w.pow(31));
    }

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
        let input = (&air, &lde, &public[..], &periodic[..]);
        let geometry = whole_domain(log_rows, log_blowup, log_chunks);
        let scalar = composition.evaluate_on(Kernels::Scalar, input, &geometry);
        for kernels in Kernels::supported() {
            let got = composition.evaluate_on(kernels, input, &geometry);
            assert!(got == scalar, "{} path", kernels.path());
        }
        // A coset at a time: its points' rows, and the same values at its points.
        let stride = 1 << (log_blowup - log_chunks);
        let plan = LdePlan::new(log_rows, log_chunks);
        for v in 0..1 << log_chunks {
            let rows: Vec<Felt> = (0..1usize << log_rows)
                .flat_map(|u| lde.row(((u << log_chunks) + v) * stride))
                .collect();
            let rows = RowBlocks::from_row_vec(lde.width(), rows);
            let input = (&air, &rows, &public[..], &periodic[..]);
            for kernels in Kernels::supported() {
                let got = composition.evaluate_on(kernels, input, &one_coset(&plan, v));
                for (u, value) in got.into_iter().enumerate() {
                    assert_eq!(
                        value,
                        scalar[(u << log_chunks) + v],
                        "{} path",
                        kernels.path()
                    );
                }
            }
        }
    }
}
