//! A table of field elements stored column after column, in one allocation.
//!
//! What a column-wise stage keeps (a table's polynomials, one column each): one allocation
//! of the table's size, like the [`RowBlocks`](crate::RowBlocks) it is made from, so that a
//! never-purging allocator reuses one for the other where many columns' allocations of
//! their own would not.

use rayon::prelude::*;

use crate::Felt;

/// A `width` × `height` table, column `c` at `height·c ..`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnMajor {
    height: usize,
    data: Vec<Felt>,
}

impl ColumnMajor {
    /// A table of zeros.
    ///
    /// # Panics
    /// If `height` is zero.
    pub fn zeroed(width: usize, height: usize) -> Self {
        assert!(height > 0, "a table of at least one row");
        Self {
            height,
            data: crate::blocks::zeroed_felts(width * height),
        }
    }

    /// The columns in order.
    pub fn columns(&self) -> impl ExactSizeIterator<Item = &[Felt]> {
        self.data.chunks_exact(self.height)
    }

    /// The columns in order, each writable, in parallel.
    pub fn par_columns_mut(&mut self) -> impl IndexedParallelIterator<Item = &mut [Felt]> {
        self.data.par_chunks_exact_mut(self.height)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_lie_one_after_another() {
        let mut table = ColumnMajor::zeroed(3, 4);
        table.par_columns_mut().enumerate().for_each(|(c, column)| {
            for (r, value) in column.iter_mut().enumerate() {
                *value = Felt::new((10 * c + r) as u64);
            }
        });
        let all: Vec<&[Felt]> = table.columns().collect();
        assert_eq!(all.len(), 3);
        assert_eq!(all[1], &[10, 11, 12, 13].map(Felt::new));
        assert_eq!(all[2], &[20, 21, 22, 23].map(Felt::new));
    }
}
