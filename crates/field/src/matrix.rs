//! A column-major matrix of base-field elements in one allocation.
//!
//! Traces and their low-degree extensions are tables of `width` columns × `height` rows.
//! Every column is a polynomial's evaluations, so the NTTs work column by column on
//! contiguous memory, while Merkle leaves and query openings read rows across columns.

use rayon::prelude::*;

use crate::Felt;

/// A `width` × `height` table of field elements stored column after column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColMatrix {
    width: usize,
    height: usize,
    data: Vec<Felt>,
}

impl ColMatrix {
    /// A matrix of zeros.
    pub fn zeroed(width: usize, height: usize) -> Self {
        Self {
            width,
            height,
            data: vec![Felt::ZERO; width * height],
        }
    }

    /// A matrix from its columns.
    ///
    /// # Panics
    /// If the columns do not all have the same length.
    pub fn from_columns(columns: &[Vec<Felt>]) -> Self {
        let height = columns.first().map_or(0, Vec::len);
        assert!(
            columns.iter().all(|c| c.len() == height),
            "columns of unequal length"
        );
        Self {
            width: columns.len(),
            height,
            data: columns.concat(),
        }
    }

    /// A matrix from its rows, laid one after another in `rows` (`width` values each).
    /// Transposed in parallel, a band of columns per task.
    ///
    /// # Panics
    /// If `rows.len()` is not a multiple of `width`, or `width` is zero.
    pub fn from_row_major(width: usize, rows: &[Felt]) -> Self {
        assert!(
            width > 0 && rows.len().is_multiple_of(width),
            "rows of unequal length"
        );
        // Tiles of BAND columns × BAND rows: each row's piece of a band is one cache-friendly
        // run, and the band's columns are one contiguous, task-owned slice of the output.
        const BAND: usize = 64;
        let height = rows.len() / width;
        let mut data = vec![Felt::ZERO; rows.len()];
        data.par_chunks_mut((BAND * height).max(1))
            .enumerate()
            .for_each(|(band, out)| {
                let first = band * BAND;
                let columns = out.len() / height.max(1);
                for r0 in (0..height).step_by(BAND) {
                    for (c, column) in out.chunks_exact_mut(height).enumerate() {
                        for r in r0..(r0 + BAND).min(height) {
                            column[r] = rows[r * width + first + c];
                        }
                    }
                }
                debug_assert!(columns <= BAND);
            });
        Self {
            width,
            height,
            data,
        }
    }

    /// Number of columns.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Number of rows.
    pub fn height(&self) -> usize {
        self.height
    }

    /// Column `i`.
    pub fn column(&self, i: usize) -> &[Felt] {
        &self.data[i * self.height..(i + 1) * self.height]
    }

    /// Column `i`, mutably.
    pub fn column_mut(&mut self, i: usize) -> &mut [Felt] {
        &mut self.data[i * self.height..(i + 1) * self.height]
    }

    /// The columns in order.
    pub fn columns(&self) -> impl ExactSizeIterator<Item = &[Felt]> {
        // `max(1)` keeps `chunks_exact` valid for an empty matrix.
        self.data.chunks_exact(self.height.max(1))
    }

    /// The columns in parallel.
    pub fn par_columns(&self) -> impl IndexedParallelIterator<Item = &[Felt]> {
        self.data.par_chunks_exact(self.height.max(1))
    }

    /// The columns, mutably and in parallel.
    pub fn par_columns_mut(&mut self) -> impl IndexedParallelIterator<Item = &mut [Felt]> {
        self.data.par_chunks_exact_mut(self.height.max(1))
    }

    /// Row `index` gathered across all columns.
    pub fn row(&self, index: usize) -> Vec<Felt> {
        let mut row = vec![Felt::ZERO; self.width];
        self.read_row(index, &mut row);
        row
    }

    /// Row `index` gathered into `out` (one slot per column), without allocating.
    ///
    /// # Panics
    /// If `out` is not `width` long or `index` is not a row.
    pub fn read_row(&self, index: usize, out: &mut [Felt]) {
        assert_eq!(out.len(), self.width, "a row has one value per column");
        for (slot, column) in out.iter_mut().zip(self.columns()) {
            *slot = column[index];
        }
    }

    /// The whole table, column after column, mutably.
    pub fn as_mut_slice(&mut self) -> &mut [Felt] {
        &mut self.data
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_and_columns_agree() {
        let m = ColMatrix::from_columns(&[
            vec![Felt::new(1), Felt::new(2)],
            vec![Felt::new(3), Felt::new(4)],
            vec![Felt::new(5), Felt::new(6)],
        ]);
        assert_eq!((m.width(), m.height()), (3, 2));
        assert_eq!(m.row(1), vec![Felt::new(2), Felt::new(4), Felt::new(6)]);
        assert_eq!(m.column(2), &[Felt::new(5), Felt::new(6)]);
        assert_eq!(m.columns().count(), 3);
        let rows: Vec<Felt> = (0..3).flat_map(|r| m.row(r % 2)).collect();
        let again = ColMatrix::from_row_major(3, &rows[..6]);
        assert_eq!(again, m);
    }
}
