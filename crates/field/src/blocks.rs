//! A table of field elements stored as blocks of rows.
//!
//! Block b holds rows 8b .. 8b + 8, column after column: the eight values of column c in
//! block b are contiguous. A register of rows is one load (eight lanes on AVX-512, two
//! registers of four on AVX2), so the stages that work on several rows at once — leaf
//! hashing, constraint evaluation, the trace check — read the table in place, while a row
//! (an opening) is `width` values eight apart and a column is one cache line per block.
//!
//! The allocation may be larger than the rows in use: the prover reserves room for the
//! low-degree extension once and extends the trace in place ([`RowBlocks::set_height`]).

use std::ops::Range;

use ballast_cpu::prefetch_at;
use rayon::prelude::*;

use crate::Felt;

/// Rows per block.
pub const BLOCK_ROWS: usize = 8;

/// A `width` × `height` table in blocks of [`BLOCK_ROWS`] rows.
#[derive(Clone, Debug)]
pub struct RowBlocks {
    width: usize,
    height: usize,
    /// Blocks of `BLOCK_ROWS · width` values; at least enough for `height` rows.
    data: Vec<Felt>,
}

impl RowBlocks {
    /// A table of zeros with room for `capacity` rows (at least `height`).
    pub fn zeroed(width: usize, height: usize, capacity: usize) -> Self {
        let blocks = capacity.max(height).div_ceil(BLOCK_ROWS);
        Self {
            width,
            height,
            data: zeroed_felts(blocks * BLOCK_ROWS * width),
        }
    }

    /// A table from its rows, laid one after another in `rows` (`width` values each).
    ///
    /// # Panics
    /// If `rows.len()` is not a multiple of `width`, or `width` is zero.
    pub fn from_rows(width: usize, rows: &[Felt]) -> Self {
        Self::from_row_vec(width, rows.to_vec())
    }

    /// A table from its rows, laid one after another in `rows` (`width` values each), in
    /// `rows`' own allocation: each block's rows are laid column after column where they
    /// lie, so a trace built row by row costs no second copy.
    ///
    /// # Panics
    /// If `rows.len()` is not a multiple of `width`, or `width` is zero.
    pub fn from_row_vec(width: usize, mut rows: Vec<Felt>) -> Self {
        assert!(
            width > 0 && rows.len().is_multiple_of(width),
            "rows of unequal length"
        );
        let height = rows.len() / width;
        let len = BLOCK_ROWS * width;
        rows.resize(height.div_ceil(BLOCK_ROWS) * len, Felt::ZERO);
        rows.par_chunks_mut(len)
            .for_each_init(Vec::new, |block_rows: &mut Vec<Felt>, block| {
                block_rows.clear();
                block_rows.extend_from_slice(block);
                for (r, row) in block_rows.chunks_exact(width).enumerate() {
                    for (slot, &value) in block[r..].iter_mut().step_by(BLOCK_ROWS).zip(row) {
                        *slot = value;
                    }
                }
            });
        Self {
            width,
            height,
            data: rows,
        }
    }

    /// A table from its columns.
    ///
    /// # Panics
    /// If the columns do not all have the same length.
    pub fn from_columns(columns: &[Vec<Felt>]) -> Self {
        let height = columns.first().map_or(0, Vec::len);
        assert!(
            columns.iter().all(|c| c.len() == height),
            "columns of unequal length"
        );
        let mut table = Self::zeroed(columns.len(), height, height);
        for (c, column) in columns.iter().enumerate() {
            for (r, &value) in column.iter().enumerate() {
                table.set(r, c, value);
            }
        }
        table
    }

    /// Number of columns.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Number of rows in use.
    pub fn height(&self) -> usize {
        self.height
    }

    /// Rows the allocation has room for.
    pub fn capacity(&self) -> usize {
        self.data.len() / (BLOCK_ROWS * self.width).max(1) * BLOCK_ROWS
    }

    /// Uses `height` rows, growing the allocation if it has no room for them. Rows beyond
    /// the old height hold whatever the allocation held (zeros where it grew).
    pub fn set_height(&mut self, height: usize) {
        let len = height.div_ceil(BLOCK_ROWS) * BLOCK_ROWS * self.width;
        if self.data.len() < len {
            let mut data = zeroed_felts(len);
            data[..self.data.len()].copy_from_slice(&self.data);
            self.data = data;
        }
        self.height = height;
    }

    /// Reshapes the allocation into a `width` × `height` table, growing it if needed; the
    /// values are unspecified until written. This is how one allocation serves one segment
    /// after another.
    pub fn reshape(&mut self, width: usize, height: usize) {
        self.width = width;
        self.set_height(height);
    }

    /// Sets every value of the rows in use to zero.
    pub fn fill_zero(&mut self) {
        let len = self.blocks() * BLOCK_ROWS * self.width;
        self.data[..len]
            .par_chunks_mut(1 << 16)
            .for_each(|chunk| chunk.fill(Felt::ZERO));
    }

    /// Number of blocks the rows in use span.
    pub fn blocks(&self) -> usize {
        self.height.div_ceil(BLOCK_ROWS)
    }

    /// Where row `r` of column `c` is stored.
    #[inline(always)]
    fn index(&self, r: usize, c: usize) -> usize {
        debug_assert!(
            r < self.height && c < self.width,
            "({r}, {c}) is outside the table"
        );
        (r / BLOCK_ROWS * self.width + c) * BLOCK_ROWS + r % BLOCK_ROWS
    }

    /// Where row `r` of column 0 is in [`as_slice`](Self::as_slice); column c of the row is
    /// [`BLOCK_ROWS`]·c further on.
    #[inline(always)]
    pub fn row_offset(&self, r: usize) -> usize {
        r / BLOCK_ROWS * self.width * BLOCK_ROWS + r % BLOCK_ROWS
    }

    /// The value at row `r`, column `c`.
    #[inline(always)]
    pub fn get(&self, r: usize, c: usize) -> Felt {
        self.data[self.index(r, c)]
    }

    /// Sets the value at row `r`, column `c`.
    #[inline(always)]
    pub fn set(&mut self, r: usize, c: usize, value: Felt) {
        let i = self.index(r, c);
        self.data[i] = value;
    }

    /// Block `b`: `width` runs of [`BLOCK_ROWS`] values, column after column.
    pub fn block(&self, b: usize) -> &[Felt] {
        let len = BLOCK_ROWS * self.width;
        &self.data[b * len..(b + 1) * len]
    }

    /// The blocks in use, in parallel.
    pub fn par_blocks(&self) -> impl IndexedParallelIterator<Item = &[Felt]> {
        let len = BLOCK_ROWS * self.width;
        self.data[..self.blocks() * len].par_chunks_exact(len.max(1))
    }

    /// Runs of `blocks` blocks in use, mutably and in parallel, each with the index of its
    /// first row.
    pub fn par_block_runs_mut(
        &mut self,
        blocks: usize,
    ) -> impl IndexedParallelIterator<Item = (usize, BlockRunMut<'_>)> {
        let (width, height, len) = (self.width, self.height, BLOCK_ROWS * self.width);
        let used = self.blocks() * len;
        self.data[..used]
            .par_chunks_mut((blocks * len).max(1))
            .enumerate()
            .map(move |(i, data)| {
                let first = i * blocks * BLOCK_ROWS;
                let rows = (blocks * BLOCK_ROWS).min(height - first);
                (first, BlockRunMut { width, rows, data })
            })
    }

    /// Row `r`.
    pub fn row(&self, r: usize) -> Vec<Felt> {
        let mut row = vec![Felt::ZERO; self.width];
        self.read_row(r, &mut row);
        row
    }

    /// Row `r` into `out` (one value per column).
    ///
    /// # Panics
    /// If `out` is not `width` long or `r` is not a row in use.
    pub fn read_row(&self, r: usize, out: &mut [Felt]) {
        assert_eq!(out.len(), self.width, "a row has one value per column");
        assert!(r < self.height, "row {r} of {}", self.height);
        let block = self.block(r / BLOCK_ROWS);
        for (slot, value) in out
            .iter_mut()
            .zip(block.iter().skip(r % BLOCK_ROWS).step_by(BLOCK_ROWS))
        {
            *slot = *value;
        }
    }

    /// Writes `row` (one value per column) as row `r`.
    ///
    /// # Panics
    /// If `row` is not `width` long or `r` is not a row in use.
    pub fn write_row(&mut self, r: usize, row: &[Felt]) {
        assert_eq!(row.len(), self.width, "a row has one value per column");
        assert!(r < self.height, "row {r} of {}", self.height);
        let len = BLOCK_ROWS * self.width;
        let b = r / BLOCK_ROWS;
        let block = &mut self.data[b * len..(b + 1) * len];
        for (slot, &value) in block
            .iter_mut()
            .skip(r % BLOCK_ROWS)
            .step_by(BLOCK_ROWS)
            .zip(row)
        {
            *slot = value;
        }
    }

    /// Column `c`, all rows in use.
    pub fn column(&self, c: usize) -> Vec<Felt> {
        (0..self.height).map(|r| self.get(r, c)).collect()
    }

    /// Runs `f` on groups of `group` columns in parallel, each group given write access to
    /// its own columns only ([`ColumnsMut`]).
    pub fn par_column_groups_mut<F>(&mut self, group: usize, f: F)
    where
        F: Fn(ColumnsMut<'_>) + Sync + Send,
    {
        self.par_column_groups_mut_with(group, || (), |(), columns| f(columns));
    }

    /// [`par_column_groups_mut`](Self::par_column_groups_mut) with scratch space: `init`
    /// makes a value that `f` reuses across the groups one task runs (rayon's
    /// `for_each_init`), so buffers are allocated a few times, not once per group.
    pub fn par_column_groups_mut_with<T, I, F>(&mut self, group: usize, init: I, f: F)
    where
        I: Fn() -> T + Sync + Send,
        F: Fn(&mut T, ColumnsMut<'_>) + Sync + Send,
    {
        let group = group.max(1);
        let shared = Shared(self.data.as_mut_ptr());
        let (width, height, len) = (self.width, self.height, self.data.len());
        (0..width.div_ceil(group))
            .into_par_iter()
            .for_each_init(init, |scratch, g| {
                let columns = g * group..((g + 1) * group).min(width);
                f(
                    scratch,
                    ColumnsMut {
                        data: shared,
                        len,
                        width,
                        height,
                        columns,
                        _table: std::marker::PhantomData,
                    },
                );
            });
    }

    /// The values of the rows in use, block after block.
    pub fn as_slice(&self) -> &[Felt] {
        &self.data[..self.blocks() * BLOCK_ROWS * self.width]
    }
}

/// Blocks ahead of the one being read that a group of columns prefetches.
const PREFETCH_BLOCKS: usize = 8;

/// `len` zeros, written in parallel a stretch at a time, each stretch's pages mapped in
/// first ([`prefault`]). Not a zeroed allocation (calloc): for a calloc that reuses freed
/// memory jemalloc purges the pages, which then fault in again and are zeroed by the
/// kernel, a cost a prover that frees and allocates tables over and over would pay each
/// time.
pub(crate) fn zeroed_felts(len: usize) -> Vec<Felt> {
    let mut felts: Vec<Felt> = Vec::with_capacity(len);
    (felts.spare_capacity_mut()[..len])
        .par_chunks_mut(PREFAULT_STRETCH / std::mem::size_of::<Felt>())
        .for_each(|stretch| {
            prefault(stretch);
            stretch.fill(std::mem::MaybeUninit::new(Felt::ZERO));
        });
    // SAFETY: the first `len` values were just written.
    unsafe { felts.set_len(len) };
    felts
}

/// Bytes [`prefault`] maps in a call: a few dozen calls per table, spread over the threads.
const PREFAULT_STRETCH: usize = 8 << 20;

/// Maps `values`' fresh pages in without writing them: one `MADV_POPULATE_WRITE` for the
/// stretch instead of a page fault at each page first touched (the kernel zeroes and maps
/// the pages either way; pages already mapped are left as they are). A hint: where the
/// kernel does not have it (before Linux 5.14, or another system) the pages fault in on
/// first touch as before.
fn prefault<T>(values: &mut [T]) {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: `sysconf` reads a constant of the system; it has no preconditions.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
        let start = (values.as_mut_ptr() as usize).next_multiple_of(page);
        let end = (values.as_mut_ptr() as usize + std::mem::size_of_val(values)) / page * page;
        if end > start {
            // SAFETY: [start, end) lies within `values`, which this call borrows mutably;
            // populating pages changes no value (fresh pages read as zeros, mapped ones keep
            // their contents). The result is ignored: a refusal leaves the pages to fault
            // in on first touch.
            unsafe {
                libc::madvise(
                    start as *mut libc::c_void,
                    end - start,
                    libc::MADV_POPULATE_WRITE,
                );
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = values;
}

impl PartialEq for RowBlocks {
    /// Equal shapes and equal values in every row in use (room beyond them is ignored).
    fn eq(&self, other: &Self) -> bool {
        self.width == other.width
            && self.height == other.height
            && (0..self.height).all(|r| self.row(r) == other.row(r))
    }
}

impl Eq for RowBlocks {}

/// A run of whole blocks of a [`RowBlocks`], mutably: the rows a parallel task writes.
pub struct BlockRunMut<'a> {
    width: usize,
    rows: usize,
    data: &'a mut [Felt],
}

impl BlockRunMut<'_> {
    /// Rows in the run (the last run may end inside a block).
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Sets row `r` (counted from the run's first row), column `c`.
    #[inline(always)]
    pub fn set(&mut self, r: usize, c: usize, value: Felt) {
        self.data[(r / BLOCK_ROWS * self.width + c) * BLOCK_ROWS + r % BLOCK_ROWS] = value;
    }

    /// Block `b` of the run, mutably: `width` runs of [`BLOCK_ROWS`] values, column after
    /// column (its rows beyond [`rows`](Self::rows), in a last partial block, are padding).
    pub fn block_mut(&mut self, b: usize) -> &mut [Felt] {
        let len = BLOCK_ROWS * self.width;
        &mut self.data[b * len..(b + 1) * len]
    }

    /// Writes block `b` of the run from its [`BLOCK_ROWS`] rows, laid one after another in
    /// `rows`: the block is written front to back, one run per column.
    ///
    /// # Panics
    /// If `rows` is not [`BLOCK_ROWS`] rows of `width` values.
    pub fn write_block(&mut self, b: usize, rows: &[Felt]) {
        let len = BLOCK_ROWS * self.width;
        assert_eq!(
            rows.len(),
            len,
            "{BLOCK_ROWS} rows of {} values",
            self.width
        );
        let block = &mut self.data[b * len..(b + 1) * len];
        for (c, run) in block.chunks_exact_mut(BLOCK_ROWS).enumerate() {
            for (k, slot) in run.iter_mut().enumerate() {
                *slot = rows[k * self.width + c];
            }
        }
    }
}

/// The table's allocation, shared by tasks that touch disjoint columns.
#[derive(Clone, Copy)]
struct Shared(*mut Felt);

// SAFETY: `Shared` is only used by `par_column_groups_mut_with`, whose groups are disjoint sets of
// columns; every access through it stays within its group's columns (`ColumnsMut` checks).
unsafe impl Send for Shared {}
// SAFETY: as above.
unsafe impl Sync for Shared {}

/// Write access to some columns of a [`RowBlocks`], for one task of
/// [`RowBlocks::par_column_groups_mut`].
pub struct ColumnsMut<'a> {
    data: Shared,
    len: usize,
    width: usize,
    height: usize,
    columns: Range<usize>,
    _table: std::marker::PhantomData<&'a mut [Felt]>,
}

impl ColumnsMut<'_> {
    /// The columns this task owns.
    pub fn columns(&self) -> Range<usize> {
        self.columns.clone()
    }

    /// Rows `0 .. rows` of this task's columns into `out`, column after column (`rows`
    /// values each). Block by block, so each block's piece of the group is one run.
    ///
    /// # Panics
    /// If `out` is not `rows` values per column or the allocation has no row `rows − 1`.
    pub fn read(&self, rows: usize, out: &mut [Felt]) {
        let data = self.data;
        self.for_each_run(rows, out.len(), |at, to| {
            let run = to.len();
            // SAFETY: `for_each_run` bounds the run by the allocation and gives this task's
            // columns only, which no other task accesses while `par_column_groups_mut` runs
            // (its borrow of the table is unique); `out` is this task's own buffer.
            unsafe { copy_run(data.0.add(at), out[to].as_mut_ptr(), run) }
        });
    }

    /// `values` (column after column, `rows` values each) as rows `0 .. rows` of this
    /// task's columns.
    ///
    /// # Panics
    /// As [`read`](Self::read).
    pub fn write(&mut self, rows: usize, values: &[Felt]) {
        let data = self.data;
        self.for_each_run(rows, values.len(), |at, from| {
            let run = from.len();
            // SAFETY: as in `read`; `&mut self` keeps this task's writes exclusive.
            unsafe { copy_run(values[from].as_ptr(), data.0.add(at), run) }
        });
    }

    /// Calls `f(at, range)` for each block's run of each of this task's columns over rows
    /// `0 .. rows`: `at` is the run's offset in the table, `range` its place in a buffer
    /// of `len` values holding the columns one after another.
    ///
    /// # Panics
    /// If `len` is not `rows` values per column or the allocation has no row `rows − 1`.
    #[inline(always)]
    fn for_each_run(&self, rows: usize, len: usize, mut f: impl FnMut(usize, Range<usize>)) {
        assert_eq!(len, rows * self.columns.len(), "rows values per column");
        assert!(
            rows.div_ceil(BLOCK_ROWS) * BLOCK_ROWS * self.width <= self.len,
            "{rows} rows are outside the allocation"
        );
        for r0 in (0..rows).step_by(BLOCK_ROWS) {
            let run = BLOCK_ROWS.min(rows - r0);
            let base = r0 / BLOCK_ROWS * self.width * BLOCK_ROWS;
            self.prefetch_ahead(base);
            for (j, c) in self.columns.clone().enumerate() {
                f(base + c * BLOCK_ROWS, j * rows + r0..j * rows + r0 + run);
            }
        }
    }

    /// Prefetches this group's runs [`PREFETCH_BLOCKS`] blocks after the block at `base`: the
    /// group reads one short run per block, far apart, which the hardware does not foresee.
    #[inline(always)]
    fn prefetch_ahead(&self, base: usize) {
        let ahead = base + PREFETCH_BLOCKS * self.width * BLOCK_ROWS;
        for c in self.columns.clone() {
            prefetch_at(self.data.0.wrapping_add(ahead + c * BLOCK_ROWS));
        }
    }

    /// Rows this task may address: the table's height in use.
    pub fn height(&self) -> usize {
        self.height
    }
}

/// Copies `run` (at most [`BLOCK_ROWS`]) values; a whole run is one fixed-size copy, not a
/// call to `memcpy`.
///
/// # Safety
/// `from` must be readable and `to` writable for `run` values, and the two must not overlap.
#[inline(always)]
unsafe fn copy_run(from: *const Felt, to: *mut Felt, run: usize) {
    // SAFETY: the caller's contract; `[Felt; BLOCK_ROWS]` has `Felt`'s alignment.
    unsafe {
        if run == BLOCK_ROWS {
            to.cast::<[Felt; BLOCK_ROWS]>()
                .write_unaligned(from.cast::<[Felt; BLOCK_ROWS]>().read_unaligned());
        } else {
            std::ptr::copy_nonoverlapping(from, to, run);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(width: usize, height: usize) -> Vec<Vec<Felt>> {
        (0..width)
            .map(|c| {
                (0..height)
                    .map(|r| Felt::new((c * 1000 + r) as u64))
                    .collect()
            })
            .collect()
    }

    #[test]
    fn rows_columns_and_blocks_agree() {
        for (width, height) in [(3, 2), (5, 8), (2, 21), (1, 64)] {
            let columns = sample(width, height);
            let table = RowBlocks::from_columns(&columns);
            assert_eq!((table.width(), table.height()), (width, height));
            for r in 0..height {
                let row: Vec<Felt> = columns.iter().map(|c| c[r]).collect();
                assert_eq!(table.row(r), row);
                let again = RowBlocks::from_rows(width, &row);
                assert_eq!(again.row(0), row);
            }
            for (c, column) in columns.iter().enumerate() {
                assert_eq!(&table.column(c), column);
            }
            // The rows laid one after another give the same blocks, padding included.
            let rows: Vec<Felt> = (0..height).flat_map(|r| table.row(r)).collect();
            assert_eq!(
                RowBlocks::from_row_vec(width, rows).as_slice(),
                table.as_slice()
            );
            // Block b holds column c's rows 8b.. contiguously.
            let b = (height - 1) / BLOCK_ROWS;
            let block = table.block(b);
            for c in 0..width {
                for k in 0..BLOCK_ROWS.min(height - b * BLOCK_ROWS) {
                    assert_eq!(block[c * BLOCK_ROWS + k], columns[c][b * BLOCK_ROWS + k]);
                }
            }
        }
    }

    #[test]
    fn column_groups_write_only_their_columns() {
        let mut table = RowBlocks::zeroed(7, 20, 40);
        table.set_height(40);
        table.par_column_groups_mut(3, |mut cols| {
            let values: Vec<Felt> = cols
                .columns()
                .flat_map(|c| (0..40).map(move |r| Felt::new((c * 100 + r) as u64)))
                .collect();
            cols.write(40, &values);
            let mut back = vec![Felt::ZERO; values.len()];
            cols.read(40, &mut back);
            assert_eq!(back, values);
        });
        for c in 0..7 {
            for r in 0..40 {
                assert_eq!(table.get(r, c), Felt::new((c * 100 + r) as u64));
            }
        }
        assert_eq!(table.capacity(), 40);
    }

    #[test]
    fn prefaulting_changes_no_value_and_tables_read_as_zeros() {
        // Several stretches, none page-aligned at its end: values written before survive,
        // and a fresh table reads as zeros.
        let len = (3 << 20) + 5;
        let mut values: Vec<Felt> = (0..len as u64).map(|i| Felt::new(i * 7 + 1)).collect();
        for stretch in values.chunks_mut(PREFAULT_STRETCH / std::mem::size_of::<Felt>()) {
            prefault(stretch);
        }
        assert!(
            values
                .iter()
                .enumerate()
                .all(|(i, &v)| v == Felt::new(i as u64 * 7 + 1))
        );
        let table = RowBlocks::zeroed(5, 8, 1 << 18);
        assert!(table.data.iter().all(|&v| v == Felt::ZERO));
        // A table in memory freed after other values were written there reads as zeros.
        for _ in 0..4 {
            drop(vec![Felt::new(7); 10_000]);
            let table = RowBlocks::zeroed(10, 1_000, 1_000);
            assert!(table.data.iter().all(|&v| v == Felt::ZERO));
        }
    }

    #[test]
    fn groups_share_a_task_s_scratch_and_write_their_own_columns() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let mut table = RowBlocks::zeroed(11, 16, 16);
        let reused = AtomicUsize::new(0);
        // One thread: its task runs group after group, with few scratch values among them.
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        pool.install(|| {
            table.par_column_groups_mut_with(2, Vec::new, |seen: &mut Vec<usize>, mut cols| {
                // The scratch carries the columns of the groups this task ran before.
                assert!(seen.iter().all(|&c| c < cols.columns().start));
                if !seen.is_empty() {
                    reused.fetch_add(1, Ordering::Relaxed);
                }
                seen.extend(cols.columns());
                let values: Vec<Felt> = cols
                    .columns()
                    .flat_map(|c| (0..16).map(move |r| Felt::new((c * 100 + r) as u64)))
                    .collect();
                cols.write(16, &values);
            });
        });
        assert!(reused.into_inner() > 0, "no group reused a scratch value");
        for c in 0..11 {
            let column: Vec<Felt> = (0..16).map(|r| Felt::new((c * 100 + r) as u64)).collect();
            assert_eq!(table.column(c), column);
        }
    }

    #[test]
    #[should_panic(expected = "outside the allocation")]
    fn a_group_cannot_reach_past_the_allocation() {
        let mut table = RowBlocks::zeroed(4, 8, 8);
        table.par_column_groups_mut(2, |mut cols| cols.write(16, &[Felt::ONE; 32]));
    }

    #[test]
    fn block_runs_cover_the_rows() {
        let mut table = RowBlocks::zeroed(3, 24, 24);
        table.par_block_runs_mut(1).for_each(|(first, mut run)| {
            assert_eq!(run.rows(), BLOCK_ROWS);
            let rows: Vec<Felt> = (0..BLOCK_ROWS)
                .flat_map(|r| [Felt::new((first + r) as u64); 3])
                .collect();
            run.write_block(0, &rows);
        });
        for r in 0..24 {
            assert_eq!(table.row(r), vec![Felt::new(r as u64); 3]);
        }
    }
}
