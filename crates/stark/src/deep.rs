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

/// The DEEP constants of each height of a tables proof, `heights` giving each height's
/// tables' out-of-domain values (in order) and its log2 rows, tallest first: one function a
/// height, that of one table whose columns are the height's tables', concatenated in order
/// ([`OodValues::concat`]), so that its powers of γ run along the mixed trees' rows.
pub fn height_deep_coefficients<'a>(
    heights: impl IntoIterator<Item = (&'a [OodValues], usize)>,
    z: Ext3,
    gamma: Ext3,
) -> Vec<DeepCoefficients> {
    (heights.into_iter())
        .map(|(ood, log_rows)| deep_coefficients(&OodValues::concat(ood), z, log_rows, gamma))
        .collect()
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

/// A DEEP function as two polynomials over the extension: U = A + B and V = γ^W'·A, so
/// that f(x) = (U(x) − u)/(x − z) + (V(x) − v)/(x − zω) with u = a and v = γ^W'·b. The sums
/// are linear in the columns, so the extension of six base columns (U's and V's
/// coordinates) gives f where [`evaluate_all`] reads every column: a tables proof's
/// function for one height, whose columns are its tables', concatenated.
pub(crate) struct DeepSum {
    /// U's three coordinates, then V's, in the raw form of the tables' columns.
    columns: Vec<Vec<Felt>>,
    u: Ext3,
    v: Ext3,
    z: Ext3,
    zw: Ext3,
}

impl DeepSum {
    /// The function of `deep` over the `trace` and `quotient` columns (raw form).
    ///
    /// # Panics
    /// If the columns differ in length, or are not as many as `deep`'s coefficients.
    pub(crate) fn new(deep: &DeepCoefficients, trace: &[&[Felt]], quotient: &[&[Felt]]) -> Self {
        assert_eq!(
            (trace.len(), quotient.len()),
            (deep.trace.len(), deep.quotient.len())
        );
        let n = trace.first().or(quotient.first()).map_or(0, |c| c.len());
        assert!(
            trace.iter().chain(quotient).all(|c| c.len() == n),
            "columns of one height"
        );
        // Each trace column's coefficients in U and in V, each quotient column's in U.
        let trace_terms: Vec<(Ext3, Ext3, &[Felt])> = (deep.trace.iter().zip(trace))
            .map(|(&c, &column)| (c, deep.next_row * c, column))
            .collect();
        let quotient_terms: Vec<(Ext3, &[Felt])> = (deep.quotient.iter().zip(quotient))
            .map(|(&c, &column)| (c, column))
            .collect();
        let (u, v) = (deep.at_z, deep.next_row * deep.at_zw);
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
            z: deep.z,
            zw: deep.zw,
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
    fn two_tables_concatenated_extend_to_their_deep_function() {
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
        let extended = |raw: &[&[Felt]]| {
            let raw: Vec<Vec<Felt>> = raw.iter().map(|c| c.to_vec()).collect();
            let mut lde = RowBlocks::from_columns(&raw);
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
                (ood, columns(width, salt), columns(3, salt + 17))
            })
            .collect();
        let claims: Vec<OodValues> = tables.iter().map(|(ood, ..)| ood.clone()).collect();
        let deep = deep_coefficients(&OodValues::concat(&claims), z, log_n, gamma);
        let trace: Vec<&[Felt]> = tables
            .iter()
            .flat_map(|(_, t, _)| t)
            .map(Vec::as_slice)
            .collect();
        let quotient: Vec<&[Felt]> = tables
            .iter()
            .flat_map(|(.., q)| q)
            .map(Vec::as_slice)
            .collect();
        let got = DeepSum::new(&deep, &trace, &quotient).extend(&plan);
        let expected = evaluate_all(&deep, &extended(&trace), &extended(&quotient));
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
