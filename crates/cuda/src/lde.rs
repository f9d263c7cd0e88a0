//! Transforms and the coset low-degree extension on the device, in passes of several
//! radix-2 stages in shared memory (`kernels/ntt.cu`).
//!
//! The values are [`LdePlan`](ballast_ntt::LdePlan)'s exactly: the same inverse DIF, the
//! same coset scales, the same forward DIT per coset, so the same field elements in the
//! same places. The tables (twiddles, coset scales) are computed on the device once per
//! shape.

use ballast_field::Felt;
use ballast_ntt::LdePlan;

use crate::CudaError;
use crate::kernels::{Arg, Grid, Kernel, Launcher};

/// log2 of the largest tile a pass holds in shared memory: 2^11 words, 16 KiB.
pub const LOG_TILE: usize = 11;

/// Where a pass reads (`kernels/ntt.cu`'s layouts).
pub(crate) enum Source<'a, B> {
    /// Columns one after another.
    Columns(&'a B),
    /// The host's row-blocked table (`RowBlocks`), as uploaded.
    RowBlocks(&'a B),
}

impl<B> Clone for Source<'_, B> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<B> Copy for Source<'_, B> {}

/// The passes of a size-2^`log_n` transform with tiles of at most 2^`log_tile` words, bottom
/// up: (first stage, stages). Stages are split evenly; a transform of size 1 is one pass of
/// no stage (a copy).
pub(crate) fn passes(log_n: usize, log_tile: usize) -> Vec<(usize, usize)> {
    let tile = log_tile.min(log_n);
    let count = log_n.div_ceil(tile.max(1)).max(1);
    let mut out = Vec::with_capacity(count);
    let mut first = 0;
    for k in 0..count {
        let stages = (log_n - first).div_ceil(count - k);
        out.push((first, stages));
        first += stages;
    }
    out
}

/// The tables of the extension of columns of 2^`log_n` rows by 2^`log_blowup`, on the device.
pub(crate) struct LdeTables<B> {
    pub(crate) log_n: usize,
    pub(crate) log_blowup: usize,
    /// The forward transform's twiddles, size 2^log_n.
    pub(crate) forward: B,
    /// The inverse transform's twiddles (no 1/n), size 2^`log_inverse`.
    pub(crate) inverse: B,
    pub(crate) log_inverse: usize,
    /// `scales[v·n + p] = (g·ζ^v)^br(p) / n`.
    pub(crate) scales: B,
    /// log2 of the tile the passes use.
    pub(crate) log_tile: usize,
}

impl<B> LdeTables<B> {
    /// Computes the tables on the device: forward twiddles for 2^`log_n`, inverse twiddles
    /// for transforms up to 2^`log_inverse` (≥ `log_n`), and the coset scales.
    ///
    /// # Errors
    /// If the extended domain exceeds the field's 2^32 subgroup, or the device fails.
    pub(crate) fn new<L: Launcher<Buffer = B>>(
        launcher: &L,
        log_n: usize,
        log_blowup: usize,
        log_inverse: usize,
        log_tile: usize,
    ) -> Result<Self, CudaError> {
        let log_lde = log_n + log_blowup;
        if log_lde.max(log_inverse) > ballast_field::TWO_ADICITY {
            return Err(CudaError::TooLarge {
                what: "log2 of the extended domain",
                size: log_lde.max(log_inverse) as u64,
                max: ballast_field::TWO_ADICITY as u64,
            });
        }
        let twiddles = |log_size: usize, inverse: bool| -> Result<B, CudaError> {
            let count = (1u64 << log_size) - 1;
            let table = launcher.alloc(count.max(1) as usize)?;
            let root = Felt::two_adic_root(log_size);
            let root = if inverse { root.inverse() } else { root };
            if count > 0 {
                launcher.launch(
                    Kernel::NttTwiddles,
                    Grid::items(count)?,
                    &[
                        Arg::Buffer(&table),
                        Arg::Word(count),
                        Arg::Word(log_size as u64),
                        Arg::Word(root.as_u64()),
                    ],
                )?;
            }
            Ok(table)
        };
        let forward = twiddles(log_n, false)?;
        let inverse = twiddles(log_inverse, true)?;
        let count = 1u64 << log_lde;
        let scales = launcher.alloc(count as usize)?;
        launcher.launch(
            Kernel::LdeScales,
            Grid::items(count)?,
            &[
                Arg::Buffer(&scales),
                Arg::Word(count),
                Arg::Word(log_n as u64),
                Arg::Word(LdePlan::SHIFT.as_u64()),
                Arg::Word(Felt::two_adic_root(log_lde).as_u64()),
                Arg::Word(Felt::new(1 << log_n).inverse().as_u64()),
            ],
        )?;
        Ok(Self {
            log_n,
            log_blowup,
            forward,
            inverse,
            log_inverse,
            scales,
            log_tile,
        })
    }
}

/// One pass of a transform over `width` columns of 2^`log_n` values.
#[allow(clippy::too_many_arguments)]
fn pass<L: Launcher>(
    launcher: &L,
    src: Source<'_, L::Buffer>,
    scaled: Option<(&L::Buffer, usize)>,
    dst: &L::Buffer,
    extension: Option<usize>,
    twiddles: &L::Buffer,
    width: usize,
    log_n: usize,
    (first, stages): (usize, usize),
    dit: bool,
    log_tile: usize,
    coset: usize,
) -> Result<(), CudaError> {
    // kernels/ntt.cu's LAYOUT_* values.
    const COLUMNS: u64 = 0;
    const ROW_BLOCKS: u64 = 1;
    const SCALED: u64 = 2;
    const EXTENSION: u64 = 3;
    let tile = log_tile.min(log_n);
    let (src, src_layout) = match (src, scaled) {
        (Source::RowBlocks(b), _) => (b, ROW_BLOCKS),
        (Source::Columns(b), Some(_)) => (b, SCALED),
        (Source::Columns(b), None) => (b, COLUMNS),
    };
    let scales = scaled.map_or(twiddles, |(s, _)| s);
    let (dst_layout, log_blowup) = match extension {
        Some(log_blowup) => (EXTENSION, log_blowup),
        None => (COLUMNS, 0),
    };
    let size = 1u32 << tile;
    let grid = Grid::blocks(
        (width as u64) << (log_n - tile),
        (size / 2).clamp(1, 256),
        size,
    )?;
    launcher.launch(
        Kernel::NttPass,
        grid,
        &[
            Arg::Buffer(src),
            Arg::Buffer(dst),
            Arg::Buffer(twiddles),
            Arg::Buffer(scales),
            Arg::Word(log_n as u64),
            Arg::Word(first as u64),
            Arg::Word(stages as u64),
            Arg::Word(u64::from(dit)),
            Arg::Word(tile as u64),
            Arg::Word(src_layout),
            Arg::Word(dst_layout),
            Arg::Word(width as u64),
            Arg::Word(coset as u64),
            Arg::Word(log_blowup as u64),
        ],
    )
}

/// The inverse DIF of `width` columns of 2^`log_n` values (evaluations on H in natural order
/// in, n × the coefficients in bit-reversed order out, in `dst`, column after column).
///
/// # Errors
/// If the device fails.
pub(crate) fn inverse<L: Launcher>(
    launcher: &L,
    tables: &LdeTables<L::Buffer>,
    src: Source<'_, L::Buffer>,
    dst: &L::Buffer,
    width: usize,
    log_n: usize,
) -> Result<(), CudaError> {
    debug_assert!(log_n <= tables.log_inverse);
    for (k, &stages) in passes(log_n, tables.log_tile).iter().rev().enumerate() {
        let from = if k == 0 { src } else { Source::Columns(dst) };
        pass(
            launcher,
            from,
            None,
            dst,
            None,
            &tables.inverse,
            width,
            log_n,
            stages,
            false,
            tables.log_tile,
            0,
        )?;
    }
    Ok(())
}

/// The coset extension of `width` raw columns (n × coefficients, bit-reversed, in `raw`)
/// into `lde`: column c of 2^(log_n + log_blowup) rows at c·N, natural order, position
/// u·B + v holding T(g·ζ^(u·B + v)). `scratch` (`width`·n words) holds a coset between
/// passes when there are several.
///
/// # Errors
/// If the device fails.
pub(crate) fn extend<L: Launcher>(
    launcher: &L,
    tables: &LdeTables<L::Buffer>,
    raw: &L::Buffer,
    scratch: &L::Buffer,
    lde: &L::Buffer,
    width: usize,
) -> Result<(), CudaError> {
    let plan = passes(tables.log_n, tables.log_tile);
    let last = plan.len() - 1;
    for coset in 0..1usize << tables.log_blowup {
        for (k, &stages) in plan.iter().enumerate() {
            let (src, scaled) = if k == 0 {
                (Source::Columns(raw), Some((&tables.scales, coset)))
            } else {
                (Source::Columns(scratch), None)
            };
            let (dst, extension) = if k == last {
                (lde, Some(tables.log_blowup))
            } else {
                (scratch, None)
            };
            pass(
                launcher,
                src,
                scaled,
                dst,
                extension,
                &tables.forward,
                width,
                tables.log_n,
                stages,
                true,
                tables.log_tile,
                coset,
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_split_the_stages_evenly_within_a_tile() {
        assert_eq!(passes(14, 11), [(0, 7), (7, 7)]);
        assert_eq!(passes(16, 11), [(0, 8), (8, 8)]);
        assert_eq!(passes(23, 11), [(0, 8), (8, 8), (16, 7)]);
        assert_eq!(passes(5, 11), [(0, 5)]);
        assert_eq!(passes(5, 2), [(0, 2), (2, 2), (4, 1)]);
        assert_eq!(passes(0, 11), [(0, 0)]);
        for log_n in 0..30 {
            for log_tile in 1..12 {
                let p = passes(log_n, log_tile);
                assert_eq!(p.iter().map(|&(_, s)| s).sum::<usize>(), log_n);
                assert!(p.iter().all(|&(_, s)| s <= log_tile.min(log_n)));
            }
        }
    }
}
