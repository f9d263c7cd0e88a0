//! Coset low-degree extension in natural order, without bit-reversal passes.
//!
//! A column holds the evaluations of a polynomial T of degree < n on the subgroup H
//! (size n, generator ω). The extension evaluates T on the coset g·H' (size n·B,
//! generator ζ with ζ^B = ω), in natural order: position t holds T(g·ζ^t).
//!
//! Writing t = u·B + v splits g·H' into B cosets g·ζ^v·H. The inverse DIF turns the column
//! into n × T's coefficients in bit-reversed order; scaling them by (g·ζ^v)^br(p) / n and
//! applying the forward DIT evaluates T on g·ζ^v·H in natural order of u, which lands at
//! positions u·B + v. That is B size-n transforms instead of one of size n·B.

use ballast_field::{ColumnMajor, Felt, RowBlocks, dot_base};
use rayon::prelude::*;

use ballast_cpu::Kernels;

use crate::kernels::mul_into;
use crate::radix2::{dif_on, dit_on};
use crate::{Twiddles, bit_reverse, bit_reversed_powers, dif};

/// Precomputed tables for extending columns of height 2^`log_n` by a factor 2^`log_blowup`.
#[derive(Clone, Debug)]
pub struct LdePlan {
    log_n: usize,
    log_blowup: usize,
    forward: Twiddles,
    inverse: Twiddles,
    /// `block_scales[v·n + p] = (g·ζ^v)^br(p) / n`.
    block_scales: Vec<Felt>,
}

impl LdePlan {
    /// The coset shift g of every extension domain: the field's generator.
    pub const SHIFT: Felt = Felt::GENERATOR;

    /// Tables for columns of height 2^`log_n` extended to 2^(`log_n` + `log_blowup`).
    ///
    /// # Panics
    /// If the extended domain is larger than the field's two-adic subgroup.
    pub fn new(log_n: usize, log_blowup: usize) -> Self {
        let log_lde = log_n + log_blowup;
        assert!(
            log_lde <= ballast_field::TWO_ADICITY,
            "extension domain 2^{log_lde} exceeds the field's 2^32 subgroup"
        );
        let n = 1usize << log_n;
        let zeta = Felt::two_adic_root(log_lde);
        let n_inv = Felt::new(n as u64).inverse();
        let block_scales: Vec<Felt> = (0..1u64 << log_blowup)
            .into_par_iter()
            .flat_map_iter(|v| {
                bit_reversed_powers(Self::SHIFT * zeta.pow(v), log_n)
                    .into_iter()
                    .map(|p| p * n_inv)
            })
            .collect();
        Self {
            log_n,
            log_blowup,
            forward: Twiddles::forward(log_n),
            inverse: Twiddles::inverse(log_n),
            block_scales,
        }
    }

    /// log2 of the column height this plan extends.
    pub fn log_n(&self) -> usize {
        self.log_n
    }

    /// log2 of the blowup factor.
    pub fn log_blowup(&self) -> usize {
        self.log_blowup
    }

    /// The point of the extension's row `t`, g·ζ^t; for t below the blowup, the first point
    /// of the extension's coset t, g·ζ^t·H.
    pub fn point(&self, t: usize) -> Felt {
        Self::SHIFT * Felt::two_adic_root(self.log_n + self.log_blowup).pow(t as u64)
    }

    /// Extends the table's columns in place. On entry its 2^`log_n` rows hold each column's
    /// polynomial in `form`; on return it has 2^(`log_n` + `log_blowup`) rows, the
    /// evaluations on g·H' in natural order. The allocation grows only if it has no room.
    ///
    /// Columns are extended a group at a time, each group read into a scratch buffer the
    /// size of its extension (block by block, one run per block; the buffers are reused
    /// across the groups a task runs), transformed, and written back over the same columns:
    /// no second copy of the table.
    ///
    /// # Panics
    /// If the table's height is not 2^`log_n`.
    pub fn extend_in_place(&self, table: &mut RowBlocks, form: ColumnForm) {
        let n = 1usize << self.log_n;
        assert_eq!(table.height(), n, "column height must be 2^{}", self.log_n);
        let lde_rows = n << self.log_blowup;
        table.set_height(lde_rows);
        let kernels = Kernels::active();
        // About 1 MiB of extension per task: the group stays in the core's cache.
        let group = ((1usize << 17) / lde_rows).clamp(1, 16);
        let scratch = || Scratch {
            raw: vec![Felt::ZERO; group * n],
            out: vec![Felt::ZERO; group * lde_rows],
            block: vec![Felt::ZERO; n],
        };
        table.par_column_groups_mut_with(group, scratch, |scratch, mut columns| {
            let count = columns.columns().len();
            let (raw, out) = (
                &mut scratch.raw[..count * n],
                &mut scratch.out[..count * lde_rows],
            );
            columns.read(n, raw);
            for (raw, out) in raw.chunks_exact_mut(n).zip(out.chunks_exact_mut(lde_rows)) {
                if form == ColumnForm::Evaluations {
                    dif_on(kernels, raw, &self.inverse);
                }
                self.extend_column(kernels, raw, out, &mut scratch.block);
            }
            columns.write(lde_rows, out);
        });
    }

    /// The inverse of [`extend_in_place`](Self::extend_in_place) on evaluations: the
    /// columns' evaluations on H (2^`log_n` rows) from their extension's rows on g·H (every
    /// 2^`log_blowup`-th row). For reports on a trace that was extended in place.
    ///
    /// # Panics
    /// If the table's height is not 2^(`log_n` + `log_blowup`).
    pub fn restrict(&self, lde: &RowBlocks) -> RowBlocks {
        let n = 1usize << self.log_n;
        assert_eq!(
            lde.height(),
            n << self.log_blowup,
            "an extension of 2^{} rows",
            self.log_n + self.log_blowup
        );
        let n_inv = Felt::new(n as u64).inverse();
        // raw[p] = n·c'_br(p) with c'_i = c_i·g^i: scale by g^(−br(p))/n, then evaluate on H.
        let scales: Vec<Felt> = bit_reversed_powers(Self::SHIFT.inverse(), self.log_n)
            .into_iter()
            .map(|p| p * n_inv)
            .collect();
        let kernels = Kernels::active();
        let columns: Vec<Vec<Felt>> = (0..lde.width())
            .into_par_iter()
            .map(|c| {
                let mut values: Vec<Felt> =
                    (0..n).map(|u| lde.get(u << self.log_blowup, c)).collect();
                dif_on(kernels, &mut values, &self.inverse);
                for (value, &scale) in values.iter_mut().zip(&scales) {
                    *value *= scale;
                }
                dit_on(kernels, &mut values, &self.forward);
                values
            })
            .collect();
        RowBlocks::from_columns(&columns)
    }

    /// The raw form ([`ColumnForm::Raw`]) of each column of `table`, whose 2^`log_n` rows
    /// are evaluations on H: what [`coset`](Self::coset) and [`row`](Self::row) extend.
    ///
    /// # Panics
    /// If the table's height is not 2^`log_n`.
    pub fn raw_columns(&self, table: &RowBlocks) -> ColumnMajor {
        assert_eq!(
            table.height(),
            1 << self.log_n,
            "a table of 2^{} rows",
            self.log_n
        );
        let kernels = Kernels::active();
        let mut raw = ColumnMajor::zeroed(table.width(), 1 << self.log_n);
        raw.par_columns_mut().enumerate().for_each(|(c, column)| {
            for (r, value) in column.iter_mut().enumerate() {
                *value = table.get(r, c);
            }
            dif_on(kernels, column, &self.inverse);
        });
        raw
    }

    /// The columns' evaluations on H (2^`log_n` rows, natural order) from their raw form:
    /// the table [`raw_columns`](Self::raw_columns) was given.
    ///
    /// # Panics
    /// If a column's length is not 2^`log_n`.
    pub fn evaluations<C: AsRef<[Felt]> + Sync>(&self, raw: &[C]) -> RowBlocks {
        let n_inv = Felt::new(1 << self.log_n).inverse();
        let kernels = Kernels::active();
        let columns: Vec<Vec<Felt>> = raw
            .par_iter()
            .map(|column| {
                let mut values: Vec<Felt> = column.as_ref().iter().map(|&c| c * n_inv).collect();
                dit_on(kernels, &mut values, &self.forward);
                values
            })
            .collect();
        RowBlocks::from_columns(&columns)
    }

    /// Coset `v` of the extension of the columns `raw` (raw form): their evaluations on
    /// g·ζ^v·H, natural order, which are the extension's rows u·2^`log_blowup` + v. The
    /// extension a coset at a time, for a prover that keeps none of it whole.
    ///
    /// # Panics
    /// If `v` is not below the blowup or a column's length is not 2^`log_n`.
    pub fn coset<C: AsRef<[Felt]> + Sync>(&self, raw: &[C], v: usize) -> RowBlocks {
        let n = 1usize << self.log_n;
        assert!(
            v < 1 << self.log_blowup,
            "coset {v} of {}",
            1 << self.log_blowup
        );
        assert!(
            raw.iter().all(|c| c.as_ref().len() == n),
            "columns of 2^{} values",
            self.log_n
        );
        let kernels = Kernels::active();
        let mut table = RowBlocks::zeroed(raw.len(), n, n);
        // About 1 MiB of evaluations per task, as in `extend_in_place`.
        let group = ((1usize << 17) / n).clamp(1, 16);
        let scratch = || vec![Felt::ZERO; group * n];
        table.par_column_groups_mut_with(group, scratch, |out, mut columns| {
            let out = &mut out[..columns.columns().len() * n];
            for (c, values) in columns.columns().zip(out.chunks_exact_mut(n)) {
                self.coset_column(kernels, raw[c].as_ref(), v, values);
            }
            columns.write(n, out);
        });
        table
    }

    /// Part `v` of the extension of the columns `raw` (raw form) cut into
    /// 2^(`log_blowup` + `log_split`) cosets of m = 2^(`log_n` − `log_split`) rows: their
    /// evaluations on g·ζ^v·H_m, natural order, which are the extension's rows
    /// v + j·2^(`log_blowup` + `log_split`). A part is [`coset`](Self::coset) v for
    /// `log_split` 0; otherwise each polynomial is folded modulo x^m − (g·ζ^v)^m, n products
    /// a column, and transformed at size m: the extension in parts 2^`log_split` times
    /// smaller than a coset, each costing the fold's n products besides its transform.
    ///
    /// # Panics
    /// If `log_split` exceeds log_n, `v` is not below 2^(`log_blowup` + `log_split`), or a
    /// column's length is not 2^`log_n`.
    pub fn coset_part<C: AsRef<[Felt]> + Sync>(
        &self,
        raw: &[C],
        v: usize,
        log_split: usize,
    ) -> RowBlocks {
        if log_split == 0 {
            return self.coset(raw, v);
        }
        let log_parts = self.log_blowup + log_split;
        assert!(
            log_split <= self.log_n && v < 1 << log_parts,
            "part {v} of 2^{log_parts}"
        );
        let (n, m) = (1usize << self.log_n, 1usize << (self.log_n - log_split));
        assert!(
            raw.iter().all(|c| c.as_ref().len() == n),
            "columns of 2^{} values",
            self.log_n
        );
        // The raw form holds n·a_i at br(i), and a_(r + m·k), k < 2^log_split, all sit in
        // the run br(r)·2^log_split + (0..2^log_split): scaled by the shift's powers and
        // summed, the run is the folded polynomial's coefficient at br(r).
        let n_inv = Felt::new(n as u64).inverse();
        let scales: Vec<Felt> = bit_reversed_powers(self.point(v), self.log_n)
            .into_iter()
            .map(|p| p * n_inv)
            .collect();
        let twiddles = Twiddles::forward(self.log_n - log_split);
        let kernels = Kernels::active();
        let mut table = RowBlocks::zeroed(raw.len(), m, m);
        let group = ((1usize << 17) / m).clamp(1, 16);
        let scratch = || (vec![Felt::ZERO; n], vec![Felt::ZERO; group * m]);
        table.par_column_groups_mut_with(group, scratch, |(scaled, out), mut columns| {
            let out = &mut out[..columns.columns().len() * m];
            for (c, values) in columns.columns().zip(out.chunks_exact_mut(m)) {
                mul_into(kernels, scaled, raw[c].as_ref(), &scales);
                for (value, run) in values.iter_mut().zip(scaled.chunks_exact(n / m)) {
                    *value = run.iter().fold(Felt::ZERO, |sum, &x| sum + x);
                }
                dit_on(kernels, values, &twiddles);
            }
            columns.write(m, out);
        });
        table
    }

    /// Row `t` of the extension of the columns `raw` (raw form): each column's polynomial
    /// at g·ζ^t.
    ///
    /// # Panics
    /// If `t` is not a row of the extension or a column's length is not 2^`log_n`.
    pub fn row<C: AsRef<[Felt]> + Sync>(&self, raw: &[C], t: usize) -> Vec<Felt> {
        let log_lde = self.log_n + self.log_blowup;
        assert!(t < 1 << log_lde, "row {t} of 2^{log_lde}");
        let x = self.point(t);
        let n_inv = Felt::new(1 << self.log_n).inverse();
        // The raw form is n × the coefficients in bit-reversed order.
        let powers: Vec<Felt> = bit_reversed_powers(x, self.log_n)
            .into_iter()
            .map(|p| p * n_inv)
            .collect();
        raw.par_iter()
            .map(|column| {
                let column = column.as_ref();
                assert_eq!(column.len(), powers.len(), "a column of 2^{}", self.log_n);
                dot_base(column, &powers)
            })
            .collect()
    }

    /// Rows `first` + j·2^(log_lde − `log_count`), j < 2^`log_count`, of the extension of
    /// the columns `raw` (raw form), in order of j: the points c·ω^j with c = g·ζ^first and
    /// ω of order 2^log_count. Each polynomial folded modulo x^(2^log_count) − c^(2^log_count)
    /// gives them all for about the cost of one row (n products a column, and 4^log_count
    /// for the small transform).
    ///
    /// # Panics
    /// If `log_count` exceeds log_n, `first` is not below 2^(log_lde − log_count), or a
    /// column's length is not 2^`log_n`.
    pub fn strided<C: AsRef<[Felt]> + Sync>(
        &self,
        raw: &[C],
        first: usize,
        log_count: usize,
    ) -> RowBlocks {
        let log_lde = self.log_n + self.log_blowup;
        assert!(
            log_count <= self.log_n && first < 1 << (log_lde - log_count),
            "rows {first} + j·2^{} of 2^{log_lde}",
            log_lde - log_count
        );
        let log_run = self.log_n - log_count;
        let c = self.point(first);
        let n_inv = Felt::new(1 << self.log_n).inverse();
        // The raw form holds n·a_i at br(i); a_(r + m·2^log_count) sits at
        // br(r)·2^log_run + br(m), so each r's coefficients are one run.
        let powers: Vec<Felt> = bit_reversed_powers(c.pow(1 << log_count), log_run)
            .into_iter()
            .map(|p| p * n_inv)
            .collect();
        let root = Felt::two_adic_root(log_count);
        let columns: Vec<Vec<Felt>> = raw
            .par_iter()
            .map(|column| {
                let column = column.as_ref();
                assert_eq!(
                    column.len(),
                    1 << self.log_n,
                    "a column of 2^{}",
                    self.log_n
                );
                // b_r·c^r: the folded polynomial's coefficients, scaled to the coset.
                let mut scale = Felt::ONE;
                let folded: Vec<Felt> = (0..1usize << log_count)
                    .map(|r| {
                        let run = &column[bit_reverse(r, log_count) << log_run..][..1 << log_run];
                        let b = dot_base(run, &powers);
                        let term = b * scale;
                        scale *= c;
                        term
                    })
                    .collect();
                (0..1u64 << log_count)
                    .map(|j| {
                        let w = root.pow(j);
                        folded.iter().rev().fold(Felt::ZERO, |acc, &b| acc * w + b)
                    })
                    .collect()
            })
            .collect();
        RowBlocks::from_columns(&columns)
    }

    /// Evaluates on g·H' (natural order, into `out`) the polynomial given in raw form.
    fn extend_column(&self, kernels: Kernels, raw: &[Felt], out: &mut [Felt], block: &mut [Felt]) {
        let blowup = 1usize << self.log_blowup;
        for v in 0..blowup {
            self.coset_column(kernels, raw, v, block);
            for (row, &value) in out.chunks_exact_mut(blowup).zip(block.iter()) {
                row[v] = value;
            }
        }
    }

    /// Evaluates on the coset g·ζ^v·H (natural order, into `out`) the polynomial given in
    /// raw form.
    fn coset_column(&self, kernels: Kernels, raw: &[Felt], v: usize, out: &mut [Felt]) {
        let n = raw.len();
        mul_into(kernels, out, raw, &self.block_scales[v * n..(v + 1) * n]);
        dit_on(kernels, out, &self.forward);
    }
}

/// The values on a domain of 2^`log_cosets` cosets from each coset's, in natural order:
/// coset v's u-th value lands at u·2^log_cosets + v, as in an extension's rows.
pub fn from_cosets<T: Copy + Default>(
    log_cosets: usize,
    mut coset: impl FnMut(usize) -> Vec<T>,
) -> Vec<T> {
    let cosets = 1usize << log_cosets;
    let mut out = Vec::new();
    for v in 0..cosets {
        let values = coset(v);
        if v == 0 {
            out = vec![T::default(); values.len() * cosets];
        }
        assert_eq!(values.len() * cosets, out.len(), "cosets of one size");
        for (u, value) in values.into_iter().enumerate() {
            out[u * cosets + v] = value;
        }
    }
    out
}

/// One task's buffers for [`LdePlan::extend_in_place`], reused across its groups: the
/// group's columns as read, their extensions, and one coset's transform.
struct Scratch {
    raw: Vec<Felt>,
    out: Vec<Felt>,
    block: Vec<Felt>,
}

/// What the columns handed to [`LdePlan::extend_in_place`] hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnForm {
    /// Evaluations on the subgroup H, natural order (a trace).
    Evaluations,
    /// n × the coefficients in bit-reversed order, as [`split_into_chunks`] produces them.
    Raw,
}

/// Splits a polynomial Q of degree < 2^`log_chunks`·n (n = 2^`log_n`), given by its
/// evaluations on the coset g·H'' of size 2^`log_chunks`·n (natural order), into chunks Q_j
/// of degree < n with Q(x) = Σ_j x^(j·n)·Q_j(x), each in the raw form
/// ([`ColumnForm::Raw`]) [`LdePlan::extend_in_place`] takes.
///
/// # Panics
/// If `evals.len()` is not 2^(`log_n` + `log_chunks`).
pub fn split_into_chunks(evals: &[Felt], log_n: usize, log_chunks: usize) -> Vec<Vec<Felt>> {
    let n = 1usize << log_n;
    let log_size = log_n + log_chunks;
    assert_eq!(
        evals.len(),
        1 << log_size,
        "evaluations must cover 2^{log_size} points"
    );
    let mut raw = evals.to_vec();
    dif(&mut raw, &Twiddles::inverse(log_size));
    // raw[p] = N·c'_{br(p)} with c'_i = c_i·g^i and N = 2^log_size. Chunk j's coefficient
    // r sits at p = br_n(r)·2^log_chunks + br(j); the raw form wants n·c_{j·n + r}.
    let shift_inv = LdePlan::SHIFT.inverse();
    let scale = Felt::new(1 << log_chunks).inverse();
    // shift_inv^br(q): the r-dependent factor, in the raw form's order.
    let shift_inv_powers = bit_reversed_powers(shift_inv, log_n);
    (0..1usize << log_chunks)
        .into_par_iter()
        .map(|j| {
            let chunk_scale = scale * shift_inv.pow((j * n) as u64);
            let offset = bit_reverse(j, log_chunks);
            raw[offset..]
                .iter()
                .step_by(1 << log_chunks)
                .zip(&shift_inv_powers)
                .map(|(&value, &power)| value * chunk_scale * power)
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluate_poly;
    use proptest::prelude::*;

    fn coset_evals(coeffs: &[Felt], log_size: usize) -> Vec<Felt> {
        let zeta = Felt::two_adic_root(log_size);
        (0..1u64 << log_size)
            .map(|t| evaluate_poly(coeffs, LdePlan::SHIFT * zeta.pow(t)))
            .collect()
    }

    fn subgroup_evals(coeffs: &[Felt], log_n: usize) -> Vec<Felt> {
        let w = Felt::two_adic_root(log_n);
        (0..1u64 << log_n)
            .map(|t| evaluate_poly(coeffs, w.pow(t)))
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(12))]
        #[test]
        fn extension_matches_naive_coset_evaluation(
            log_n in 0usize..7,
            log_blowup in 1usize..7,
            seed in any::<u64>(),
        ) {
            let n = 1usize << log_n;
            let coeffs: Vec<Felt> = (0..n as u64)
                .map(|i| Felt::new(seed.wrapping_mul(i + 1) ^ (i << 40)))
                .collect();
            let mut table =
                RowBlocks::from_columns(&[subgroup_evals(&coeffs, log_n), coeffs.clone()]);
            LdePlan::new(log_n, log_blowup).extend_in_place(&mut table, ColumnForm::Evaluations);
            prop_assert_eq!(table.column(0), coset_evals(&coeffs, log_n + log_blowup));
        }
    }

    #[test]
    fn cosets_and_rows_are_the_extensions() {
        let (log_n, log_blowup) = (5, 3);
        let columns: Vec<Vec<Felt>> = (0..3u64)
            .map(|c| {
                (0..32u64)
                    .map(|r| Felt::new(c * 131 + r * r * r + 2))
                    .collect()
            })
            .collect();
        let plan = LdePlan::new(log_n, log_blowup);
        let mut lde = RowBlocks::from_columns(&columns);
        let polys = plan.raw_columns(&lde);
        let raw: Vec<&[Felt]> = polys.columns().collect();
        assert_eq!(plan.evaluations(&raw), lde);
        plan.extend_in_place(&mut lde, ColumnForm::Evaluations);
        for v in 0..1 << log_blowup {
            let coset = plan.coset(&raw, v);
            for u in 0..1 << log_n {
                assert_eq!(
                    coset.row(u),
                    lde.row(u << log_blowup | v),
                    "coset {v}, row {u}"
                );
            }
        }
        for log_split in 0..=log_n {
            let step = 1 << (log_blowup + log_split);
            for v in 0..step {
                let part = plan.coset_part(&raw, v, log_split);
                assert_eq!(part.height(), 1 << (log_n - log_split));
                for j in 0..part.height() {
                    assert_eq!(part.row(j), lde.row(v + j * step), "part {v} of {step}");
                }
            }
        }
        for t in [0, 1, 7, 100, 255] {
            assert_eq!(plan.row(&raw, t), lde.row(t), "row {t}");
        }
        for log_count in [0, 1, 3, 5] {
            let step = 1 << (log_n + log_blowup - log_count);
            for first in [0, 1, step - 1] {
                let rows = plan.strided(&raw, first, log_count);
                for j in 0..1 << log_count {
                    assert_eq!(
                        rows.row(j),
                        lde.row(first + j * step),
                        "2^{log_count} from {first}"
                    );
                }
            }
        }
    }

    #[test]
    fn extension_of_a_large_column_matches_spot_checks() {
        // 2^14 rows take the recursive and parallel transform paths.
        let log_n = 14;
        let coeffs: Vec<Felt> = (0..1u64 << log_n).map(|i| Felt::new(i * i + 3)).collect();
        let mut lde = RowBlocks::from_columns(&[subgroup_evals(&coeffs, log_n)]);
        LdePlan::new(log_n, 2).extend_in_place(&mut lde, ColumnForm::Evaluations);
        let lde = lde.column(0);
        let zeta = Felt::two_adic_root(log_n + 2);
        for t in [0u64, 1, 5, 4095, 65_535] {
            let x = LdePlan::SHIFT * zeta.pow(t);
            assert_eq!(lde[t as usize], evaluate_poly(&coeffs, x), "point {t}");
        }
    }

    #[test]
    fn a_wide_table_extends_column_by_column() {
        // 37 columns: groups of 16 and a short last one, all run by one task on one thread,
        // which reuses its buffers from group to group.
        let (log_n, log_blowup) = (5, 1);
        let columns: Vec<Vec<Felt>> = (0..37u64)
            .map(|c| (0..32u64).map(|r| Felt::new(c * 977 + r * r + 5)).collect())
            .collect();
        let plan = LdePlan::new(log_n, log_blowup);
        let mut wide = RowBlocks::from_columns(&columns);
        rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap()
            .install(|| plan.extend_in_place(&mut wide, ColumnForm::Evaluations));
        for (c, column) in columns.iter().enumerate() {
            let mut alone = RowBlocks::from_columns(std::slice::from_ref(column));
            plan.extend_in_place(&mut alone, ColumnForm::Evaluations);
            assert_eq!(wide.column(c), alone.column(0), "column {c}");
        }
    }

    #[test]
    fn restriction_undoes_the_extension() {
        let (log_n, log_blowup) = (6, 2);
        let columns: Vec<Vec<Felt>> = (0..3u64)
            .map(|c| {
                (0..64u64)
                    .map(|r| Felt::new(r * r + 1000 * c + 1))
                    .collect()
            })
            .collect();
        let trace = RowBlocks::from_columns(&columns);
        let plan = LdePlan::new(log_n, log_blowup);
        let mut lde = trace.clone();
        plan.extend_in_place(&mut lde, ColumnForm::Evaluations);
        assert_eq!(plan.restrict(&lde), trace);
    }

    #[test]
    fn chunks_recombine_to_the_polynomial() {
        let (log_n, log_chunks, log_blowup) = (4, 1, 1);
        let n = 1usize << log_n;
        let coeffs: Vec<Felt> = (0..2 * n as u64)
            .map(|i| Felt::new(1000 + i * 17))
            .collect();
        let plan = LdePlan::new(log_n, log_blowup);
        let chunks =
            split_into_chunks(&coset_evals(&coeffs, log_n + log_chunks), log_n, log_chunks);
        let mut lde = RowBlocks::from_columns(&chunks);
        plan.extend_in_place(&mut lde, ColumnForm::Raw);
        for (j, chunk) in coeffs.chunks(n).enumerate() {
            assert_eq!(
                lde.column(j),
                coset_evals(chunk, log_n + log_blowup),
                "chunk {j}"
            );
        }
    }
}
