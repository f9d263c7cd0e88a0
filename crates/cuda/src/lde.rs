//! The coset low-degree extension on the device, and matrices to and from it.
//!
//! The values are [`LdePlan`]'s exactly: the same twiddles and coset scales, computed on the
//! host once per shape, and the same transforms, one radix-2 stage per launch. Where the CPU
//! runs B transforms of size n per column and interleaves their outputs, the device runs
//! them interleaved in place (stride B), so the LDE comes out in natural order.

use ballast_field::{Felt, RowBlocks};
use ballast_merkle::MerkleTree;
use ballast_ntt::{ColumnForm, LdePlan, bit_reverse};
use ballast_stark::{Phase, PhaseTimes};
use rayon::prelude::*;

use crate::CudaError;
use crate::kernels::{Arg, Kernel, Launcher, run};
use crate::merkle::commit_rows;

/// The tables an extension of 2^`log_n` rows by 2^`log_blowup` reads, uploaded once per
/// shape: the same values [`LdePlan`] computes.
pub struct LdeTables<B> {
    log_n: usize,
    log_blowup: usize,
    /// Forward twiddles, stage by stage (`ballast_ntt::Twiddles::forward`).
    forward: B,
    /// Inverse twiddles, without the 1/n.
    inverse: B,
    /// `scales[v·n + p] = (g·ζ^v)^br(p) / n`.
    scales: B,
}

impl<B> LdeTables<B> {
    /// Computes the tables on the host and uploads them.
    ///
    /// # Errors
    /// If the extended domain exceeds the field's 2^32 subgroup, or the upload fails.
    pub fn upload<L: Launcher<Buffer = B>>(
        launcher: &L,
        log_n: usize,
        log_blowup: usize,
    ) -> Result<Self, CudaError> {
        let log_lde = log_n + log_blowup;
        if log_lde > ballast_field::TWO_ADICITY {
            return Err(CudaError::TooLarge {
                what: "log2 of the extended domain",
                size: log_lde as u64,
                max: ballast_field::TWO_ADICITY as u64,
            });
        }
        Ok(Self {
            log_n,
            log_blowup,
            forward: launcher.upload(&twiddle_table(log_n, false))?,
            inverse: launcher.upload(&twiddle_table(log_n, true))?,
            scales: launcher.upload(&coset_scales(log_n, log_blowup))?,
        })
    }

    /// log2 of the column height these tables serve.
    pub fn log_n(&self) -> usize {
        self.log_n
    }

    /// log2 of the blowup factor.
    pub fn log_blowup(&self) -> usize {
        self.log_blowup
    }
}

/// Twiddles for every stage of a size-2^`log_n` transform: the stage spanning h elements
/// reads `table[h − 1 .. 2h − 1]` = w_{2h}^j (or its inverse). Never empty, so that no
/// zero-length buffer is allocated.
fn twiddle_table(log_n: usize, inverse: bool) -> Vec<u64> {
    let mut table = Vec::with_capacity((1usize << log_n).max(1));
    for log_span in 1..=log_n {
        let root = Felt::two_adic_root(log_span);
        let root = if inverse { root.inverse() } else { root };
        table.extend(root.powers(1 << (log_span - 1)).iter().map(|w| w.as_u64()));
    }
    if table.is_empty() {
        table.push(0);
    }
    table
}

/// `scales[v·n + p] = (g·ζ^v)^br(p) / n` for each of the 2^`log_blowup` cosets g·ζ^v·H.
fn coset_scales(log_n: usize, log_blowup: usize) -> Vec<u64> {
    let n = 1usize << log_n;
    let zeta = Felt::two_adic_root(log_n + log_blowup);
    let n_inv = Felt::new(n as u64).inverse();
    let mut scales = vec![0u64; n << log_blowup];
    scales
        .par_chunks_exact_mut(n)
        .enumerate()
        .for_each(|(v, block)| {
            let powers = (LdePlan::SHIFT * zeta.pow(v as u64)).powers(n);
            for (p, slot) in block.iter_mut().enumerate() {
                *slot = (powers[bit_reverse(p, log_n)] * n_inv).as_u64();
            }
        });
    scales
}

/// The table's rows in use, column after column, as words: the device's layout.
fn words_of(table: &RowBlocks) -> Vec<u64> {
    (0..table.width())
        .into_par_iter()
        .flat_map_iter(|c| (0..table.height()).map(move |r| table.get(r, c).as_u64()))
        .collect()
}

/// Uploads a table column after column.
///
/// # Errors
/// If the upload fails.
pub fn upload_matrix<L: Launcher>(launcher: &L, table: &RowBlocks) -> Result<L::Buffer, CudaError> {
    launcher.upload(&words_of(table))
}

/// Downloads a `width` × `height` matrix stored column after column into `table`, which
/// takes that shape (its allocation grows only if it has no room).
///
/// # Errors
/// If the download fails or an element is not canonical.
pub fn download_matrix<L: Launcher>(
    launcher: &L,
    buffer: &L::Buffer,
    table: &mut RowBlocks,
    width: usize,
    height: usize,
) -> Result<(), CudaError> {
    let words = launcher.download(buffer, width * height)?;
    if let Some(&word) = words
        .par_iter()
        .find_any(|&&w| Felt::from_canonical(w).is_none())
    {
        return Err(CudaError::BadOutput(format!(
            "the non-canonical field element {word:#x}"
        )));
    }
    table.reshape(width, height);
    table.par_column_groups_mut(1, |mut column| {
        let c = column.columns().start;
        let values: Vec<Felt> = words[c * height..(c + 1) * height]
            .iter()
            .map(|&w| Felt::new(w))
            .collect();
        column.write(height, &values);
    });
    Ok(())
}

/// Extends the columns of `input` (height 2^`tables.log_n()`) to the coset g·H' on the
/// device, leaving the LDE there: [`upload_matrix`] then [`extend_uploaded`].
///
/// # Errors
/// If the height does not match the tables, or the device fails.
pub fn extend<L: Launcher>(
    launcher: &L,
    tables: &LdeTables<L::Buffer>,
    input: &RowBlocks,
    form: ColumnForm,
) -> Result<L::Buffer, CudaError> {
    let n = 1usize << tables.log_n;
    if input.height() != n {
        return Err(CudaError::Input(format!(
            "{} rows to extend with tables for {n}",
            input.height()
        )));
    }
    let columns = upload_matrix(launcher, input)?;
    extend_uploaded(launcher, tables, &columns, input.width(), form)
}

/// Extends `width` columns of height 2^`tables.log_n()`, already on the device (and
/// overwritten when given as evaluations), into a new buffer: 2^`log_blowup` × height rows,
/// column after column, in the order [`LdePlan::extend_in_place`] leaves them.
///
/// The sequence: for evaluations, the inverse DIF stages (half = n/2 … 1) turn each column
/// into n × its coefficients, bit-reversed; `lde_scatter` spreads them, scaled per coset,
/// over the LDE columns with stride B; the forward DIT stages (half = 1 … n/2) then
/// evaluate the B interleaved cosets at once, leaving position u·B + v = T(g·ζ^(u·B + v)).
///
/// # Errors
/// If the device fails.
pub fn extend_uploaded<L: Launcher>(
    launcher: &L,
    tables: &LdeTables<L::Buffer>,
    columns: &L::Buffer,
    width: usize,
    form: ColumnForm,
) -> Result<L::Buffer, CudaError> {
    let (log_n, log_blowup) = (tables.log_n, tables.log_blowup);
    let n = 1u64 << log_n;
    let width = width as u64;
    let butterflies = width * n / 2;
    if form == ColumnForm::Evaluations {
        for log_half in (0..log_n).rev() {
            run(
                launcher,
                Kernel::NttDifStage,
                butterflies,
                &[
                    Arg::Buffer(columns),
                    Arg::Buffer(&tables.inverse),
                    Arg::Word(butterflies),
                    Arg::Word(log_n as u64),
                    Arg::Word(0),
                    Arg::Word(log_half as u64),
                ],
            )?;
        }
    }
    let lde_len = width * (n << log_blowup);
    // lde_scatter writes every one of its `lde_len` words before the stages read them.
    let lde = launcher.alloc_uninit(lde_len as usize)?;
    run(
        launcher,
        Kernel::LdeScatter,
        lde_len,
        &[
            Arg::Buffer(columns),
            Arg::Buffer(&tables.scales),
            Arg::Buffer(&lde),
            Arg::Word(lde_len),
            Arg::Word(log_n as u64),
            Arg::Word(log_blowup as u64),
        ],
    )?;
    let butterflies = butterflies << log_blowup;
    for log_half in 0..log_n {
        run(
            launcher,
            Kernel::NttDitStage,
            butterflies,
            &[
                Arg::Buffer(&lde),
                Arg::Buffer(&tables.forward),
                Arg::Word(butterflies),
                Arg::Word(log_n as u64),
                Arg::Word(log_blowup as u64),
                Arg::Word(log_half as u64),
            ],
        )?;
    }
    Ok(lde)
}

/// [`extend`] then [`commit_rows`], with the LDE kept on the device between them and
/// downloaded once into `table`, whose rows held the input: what
/// [`ballast_stark::Backend::extend_and_commit`] does. The host keeps the LDE because the
/// constraints, the DEEP composition and the openings read it there. The upload and the
/// transforms count as [`Phase::Lde`], the hashing and both downloads as [`Phase::Tree`]
/// (the device runs the stages in order on one stream, so the split is approximate).
///
/// # Errors
/// As [`extend`] and [`commit_rows`].
pub fn extend_and_commit<L: Launcher>(
    launcher: &L,
    tables: &LdeTables<L::Buffer>,
    table: &mut RowBlocks,
    form: ColumnForm,
    times: &mut PhaseTimes,
) -> Result<MerkleTree, CudaError> {
    let lde = times.time(Phase::Lde, || extend(launcher, tables, table, form))?;
    let (width, height) = (table.width(), table.height() << tables.log_blowup);
    times.time(Phase::Tree, || {
        let tree = commit_rows(launcher, &lde, width, height)?;
        download_matrix(launcher, &lde, table, width, height)?;
        Ok(tree)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_hold_the_documented_values() {
        let (log_n, log_blowup) = (3, 2);
        let scales = coset_scales(log_n, log_blowup);
        let zeta = Felt::two_adic_root(log_n + log_blowup);
        let n_inv = Felt::new(8).inverse();
        for v in 0..4usize {
            for p in 0..8usize {
                let expected =
                    (LdePlan::SHIFT * zeta.pow(v as u64)).pow(bit_reverse(p, log_n) as u64) * n_inv;
                assert_eq!(scales[v * 8 + p], expected.as_u64(), "v {v}, p {p}");
            }
        }
        let forward = twiddle_table(3, false);
        assert_eq!(forward.len(), 7);
        let w8: Vec<u64> = Felt::two_adic_root(3)
            .powers(4)
            .iter()
            .map(|w| w.as_u64())
            .collect();
        assert_eq!(forward[3..7], w8[..]);
        assert_eq!(twiddle_table(0, true), vec![0]);
    }
}
