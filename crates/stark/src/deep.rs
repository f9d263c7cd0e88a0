//! The DEEP composition: one function FRI tests for all committed polynomials at once.
//!
//! With random γ, trace columns T_k (k < W), quotient columns Q_c (c < C) and W' = W + C:
//!
//! f(x) = Σ_k γ^k·(T_k(x) − T_k(z))/(x − z) + Σ_c γ^(W+c)·(Q_c(x) − Q_c(z))/(x − z)
//!      + γ^W'·Σ_k γ^k·(T_k(x) − T_k(zω))/(x − zω)
//!
//! Each quotient is a polynomial (of degree < n − 1) exactly when the claimed value is the
//! polynomial's value at that point; FRI tests f against the code of degree < n, so a claimed
//! value that is not the polynomial's leaves f far from that code, and the out-of-domain
//! claims are bound to the commitments. Grouping by denominator, f(x) = (A(x) + B(x) − a)/(x − z) + γ^W'·(A(x) − b)/(x − zω)
//! with A = Σ_k γ^k·T_k and B = Σ_c γ^(W+c)·Q_c.

use ballast_backend::{DeepCoefficients, OodValues};
use ballast_cpu::Kernels;
use ballast_field::{BLOCK_ROWS, Ext3, Felt, RowBlocks, dot_block_rows, inverse_differences};
use ballast_ntt::{LdePlan, coset_points, from_cosets};
use rayon::prelude::*;

use crate::dots::DotBlockRows;

/// LDE points combined per parallel task.
const POINTS_PER_TASK: usize = 1 << 10;

/// The DEEP constants for γ, shared by prover (all points, on the backend) and verifier
/// (query points, [`DeepCoefficients::evaluate`]), and a recursive verifier's a and b
/// (`at_z`, `at_zw`).
pub fn deep_coefficients(
    ood: &OodValues,
    z: Ext3,
    log_rows: usize,
    gamma: Ext3,
) -> DeepCoefficients {
    let width = ood.trace_z.len();
    let all = gamma.powers(width + ood.quotient_z.len() + 1);
    let (trace, rest) = all.split_at(width);
    let (quotient, next) = rest.split_at(ood.quotient_z.len());
    let dot = |coeffs: &[Ext3], values: &[Ext3]| {
        coeffs
            .iter()
            .zip(values)
            .fold(Ext3::ZERO, |acc, (&c, &v)| acc + c * v)
    };
    DeepCoefficients {
        at_z: dot(trace, &ood.trace_z) + dot(quotient, &ood.quotient_z),
        at_zw: dot(trace, &ood.trace_zw),
        trace: trace.to_vec(),
        quotient: quotient.to_vec(),
        next_row: next[0],
        z,
        zw: z * Ext3::from(Felt::two_adic_root(log_rows)),
    }
}

/// f on the whole LDE domain g·H' (natural order), on the host. Each task combines a run of
/// blocks, each block's rows at once ([`dot_block_rows`]), so the tables are read in place.
pub(crate) fn evaluate_all(
    deep: &DeepCoefficients,
    trace: &RowBlocks,
    quotient: &RowBlocks,
) -> Vec<Ext3> {
    evaluate_all_on(Kernels::active(), deep, trace, quotient)
}

fn evaluate_all_on(
    kernels: Kernels,
    deep: &DeepCoefficients,
    trace: &RowBlocks,
    quotient: &RowBlocks,
) -> Vec<Ext3> {
    let mut out = vec![Ext3::ZERO; trace.height()];
    par_points(
        &mut out,
        LdePlan::SHIFT,
        deep.z,
        deep.zw,
        |start, chunk, inv_z, inv_zw| {
            for (i, points) in chunk.chunks_mut(BLOCK_ROWS).enumerate() {
                let b = (start + i * BLOCK_ROWS) / BLOCK_ROWS;
                let dots = |coeffs: &[Ext3], block: &[Felt]| {
                    ballast_field::packed::run(kernels, DotBlockRows { coeffs, block })
                        .unwrap_or_else(|| dot_block_rows(coeffs, block))
                };
                let (a, q) = (
                    dots(&deep.trace, trace.block(b)),
                    dots(&deep.quotient, quotient.block(b)),
                );
                for (k, f) in points.iter_mut().enumerate() {
                    let j = i * BLOCK_ROWS + k;
                    *f = (a[k] + q[k] - deep.at_z) * inv_z[j]
                        + deep.next_row * (a[k] - deep.at_zw) * inv_zw[j];
                }
            }
        },
    );
    out
}

/// Fills `out`, the points of the coset `shift`·H_m (m = `out.len()`, natural order), in
/// parallel tasks: `task(start, chunk, 1/(x − z), 1/(x − zω))` for each run of points from
/// `start`, the inverses at its points (z and zω avoid the LDE coset: the OOD point is drawn
/// so).
fn par_points(
    out: &mut [Ext3],
    shift: Felt,
    z: Ext3,
    zw: Ext3,
    task: impl Fn(usize, &mut [Ext3], &[Ext3], &[Ext3]) + Sync,
) {
    let log_len = out.len().trailing_zeros() as usize;
    out.par_chunks_mut(POINTS_PER_TASK)
        .enumerate()
        .for_each(|(k, chunk)| {
            let start = k * POINTS_PER_TASK;
            let xs = coset_points(shift, log_len, start, chunk.len());
            let inv_z = inverse_differences(&xs, z).expect("z is outside the LDE coset");
            let inv_zw = inverse_differences(&xs, zw).expect("zω is outside the LDE coset");
            task(start, chunk, &inv_z, &inv_zw);
        });
}

/// The DEEP functions of tables of one height, summed with their weights w_k, as two
/// polynomials over the extension: U = Σ_k w_k·(A_k + B_k) and V = Σ_k w_k·γ_k·A_k (γ_k
/// the table's next-row weight), so that their sum is
/// f(x) = (U(x) − u)/(x − z) + (V(x) − v)/(x − zω) with u = Σ_k w_k·a_k and
/// v = Σ_k w_k·γ_k·b_k. The sums are linear in the columns, so the extension of six base
/// columns (U's and V's coordinates) gives f where [`evaluate_all`] reads every column.
pub(crate) struct DeepSum {
    /// U's three coordinates, then V's, in the raw form of the tables' columns.
    columns: Vec<Vec<Felt>>,
    u: Ext3,
    v: Ext3,
    z: Ext3,
    zw: Ext3,
}

/// One table of a [`DeepSum`].
pub(crate) struct DeepTable<'a> {
    /// Its DEEP coefficients.
    pub(crate) deep: &'a DeepCoefficients,
    /// Its weight in the sum.
    pub(crate) weight: Ext3,
    /// Its trace's columns, raw form.
    pub(crate) trace: &'a [Vec<Felt>],
    /// Its quotient's columns, raw form.
    pub(crate) quotient: &'a [Vec<Felt>],
}

impl DeepSum {
    /// The sum over `tables`.
    ///
    /// # Panics
    /// If `tables` is empty, or its tables differ in height or z.
    pub(crate) fn new(tables: &[DeepTable<'_>]) -> Self {
        let first = &tables[0];
        let n = first
            .trace
            .first()
            .or(first.quotient.first())
            .map_or(0, Vec::len);
        assert!(
            tables.iter().all(|t| {
                (t.deep.z, t.deep.zw) == (first.deep.z, first.deep.zw)
                    && t.trace.iter().chain(t.quotient).all(|c| c.len() == n)
            }),
            "tables of one height and one z"
        );
        // Each trace column's coefficients in U and in V, each quotient column's in U.
        let mut trace_terms: Vec<(Ext3, Ext3, &[Felt])> = Vec::new();
        let mut quotient_terms: Vec<(Ext3, &[Felt])> = Vec::new();
        let (mut u, mut v) = (Ext3::ZERO, Ext3::ZERO);
        for &DeepTable {
            deep,
            weight,
            trace,
            quotient,
        } in tables
        {
            let next = weight * deep.next_row;
            for (&c, column) in deep.trace.iter().zip(trace) {
                trace_terms.push((weight * c, next * c, column));
            }
            for (&c, column) in deep.quotient.iter().zip(quotient) {
                quotient_terms.push((weight * c, column));
            }
            u += weight * deep.at_z;
            v += next * deep.at_zw;
        }
        let mut columns = vec![vec![Felt::ZERO; n]; 2 * Ext3::DEGREE];
        let mut sums = vec![[Ext3::ZERO; 2]; n];
        sums.par_chunks_mut(POINTS_PER_TASK)
            .enumerate()
            .for_each(|(task, chunk)| {
                let start = task * POINTS_PER_TASK;
                for &(cu, cv, column) in &trace_terms {
                    for (sum, &value) in chunk.iter_mut().zip(&column[start..]) {
                        sum[0] += cu.scale(value);
                        sum[1] += cv.scale(value);
                    }
                }
                for &(cu, column) in &quotient_terms {
                    for (sum, &value) in chunk.iter_mut().zip(&column[start..]) {
                        sum[0] += cu.scale(value);
                    }
                }
            });
        for (p, [su, sv]) in sums.into_iter().enumerate() {
            for (d, (a, b)) in su.coeffs().into_iter().zip(sv.coeffs()).enumerate() {
                columns[d][p] = a;
                columns[Ext3::DEGREE + d][p] = b;
            }
        }
        Self {
            columns,
            u,
            v,
            z: first.deep.z,
            zw: first.deep.zw,
        }
    }

    /// f on the whole extension by `plan` (natural order), a coset at a time.
    pub(crate) fn extend(&self, plan: &LdePlan) -> Vec<Ext3> {
        from_cosets(plan.log_blowup(), |v| {
            self.evaluate(&plan.coset(&self.columns, v), plan.point(v))
        })
    }

    /// f on the coset `shift`·H_m whose points are `values`' rows: the extension of
    /// [`columns`](Self::columns) there.
    fn evaluate(&self, values: &RowBlocks, shift: Felt) -> Vec<Ext3> {
        let mut out = vec![Ext3::ZERO; values.height()];
        par_points(
            &mut out,
            shift,
            self.z,
            self.zw,
            |start, chunk, inv_z, inv_zw| {
                let mut row = [Felt::ZERO; 2 * Ext3::DEGREE];
                for (j, f) in chunk.iter_mut().enumerate() {
                    values.read_row(start + j, &mut row);
                    let u = Ext3::new([row[0], row[1], row[2]]);
                    let v = Ext3::new([row[3], row[4], row[5]]);
                    *f = (u - self.u) * inv_z[j] + (v - self.v) * inv_zw[j];
                }
            },
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sum_of_polynomials_extended_is_the_sum_of_the_tables_deep_functions() {
        // Two tables of one height (2^5 rows, blowup 4), of 3 and 2 trace columns, with
        // arbitrary columns and claims: f is a formula, whatever the claims.
        let (log_n, log_blowup) = (5, 2);
        let plan = LdePlan::new(log_n, log_blowup);
        let ext = |a: u64| Ext3::new([Felt::new(a), Felt::new(a * 7 + 2), Felt::new(a << 33)]);
        let columns = |count: u64, salt: u64| -> Vec<Vec<Felt>> {
            (0..count)
                .map(|c| {
                    (0..32u64)
                        .map(|r| Felt::new(r * r * 31 + c * 1009 + salt))
                        .collect()
                })
                .collect()
        };
        let extended = |raw: &[Vec<Felt>]| {
            let mut lde = RowBlocks::from_columns(raw);
            plan.extend_in_place(&mut lde, ballast_ntt::ColumnForm::Raw);
            lde
        };
        let (z, gamma) = (ext(987_654_321), ext(4_242));
        let tables: Vec<_> = [(3, 1), (2, 5)]
            .into_iter()
            .map(|(width, salt)| {
                let ood = OodValues {
                    trace_z: (0..width).map(|i| ext(salt + i)).collect(),
                    trace_zw: (0..width).map(|i| ext(salt * 3 + i)).collect(),
                    quotient_z: (0..3).map(|i| ext(salt * 5 + i)).collect(),
                };
                let deep = deep_coefficients(&ood, z, log_n, gamma);
                (deep, columns(width, salt), columns(3, salt + 17))
            })
            .collect();
        let weights = [Ext3::ONE, ext(99)];
        let summed: Vec<DeepTable> = tables
            .iter()
            .zip(weights)
            .map(|((deep, trace, quotient), weight)| DeepTable {
                deep,
                weight,
                trace,
                quotient,
            })
            .collect();
        let got = DeepSum::new(&summed).extend(&plan);
        let mut expected = vec![Ext3::ZERO; 1 << (log_n + log_blowup)];
        for ((deep, trace, quotient), weight) in tables.iter().zip(weights) {
            let f = evaluate_all(deep, &extended(trace), &extended(quotient));
            for (e, v) in expected.iter_mut().zip(f) {
                *e += weight * v;
            }
        }
        assert!(got == expected);
    }

    #[test]
    fn every_path_combines_the_same() {
        // 2^12 LDE points (several tasks), arbitrary values near p, a wide and a narrow table.
        let table = |width: u64, salt: u64| {
            let columns: Vec<Vec<Felt>> = (0..width)
                .map(|c| {
                    (0..1u64 << 12)
                        .map(|r| Felt::new(Felt::MODULUS - 1 - ((r * 7919 + c) ^ salt)))
                        .collect()
                })
                .collect();
            RowBlocks::from_columns(&columns)
        };
        let (trace, quotient) = (table(37, 5), table(6, 11));
        let ext = |a: u64| Ext3::new([Felt::new(a), Felt::new(a * 3 + 1), Felt::new(a << 40)]);
        let ood = OodValues {
            trace_z: (0..37).map(ext).collect(),
            trace_zw: (100..137).map(ext).collect(),
            quotient_z: (200..206).map(ext).collect(),
        };
        let deep = deep_coefficients(&ood, ext(987_654_321), 11, ext(123_457));
        let scalar = evaluate_all_on(Kernels::Scalar, &deep, &trace, &quotient);
        for kernels in Kernels::supported() {
            let got = evaluate_all_on(kernels, &deep, &trace, &quotient);
            assert!(got == scalar, "{} path", kernels.path());
        }
        // The verifier's point-by-point form agrees with the table's.
        let zeta = Felt::two_adic_root(12);
        for j in [0usize, 1, 2047, 4095] {
            let x = LdePlan::SHIFT * zeta.pow(j as u64);
            assert_eq!(deep.evaluate(&trace.row(j), &quotient.row(j), x), scalar[j]);
        }
    }
}
