//! Extension values in a table's columns, 3 coordinates each, for the DEEP and query tests.

use ballast_field::{Ext3, Felt, RowBlocks};

/// The extension element in columns `at..at + 3` of `row`.
pub fn ext(row: &[Felt], at: usize) -> Ext3 {
    Ext3::new([row[at], row[at + 1], row[at + 2]])
}

/// The extension element in columns `at..at + 3` of the table's row `row`.
pub fn get(table: &RowBlocks, row: usize, at: usize) -> Ext3 {
    ext(&table.row(row), at)
}

/// Writes `value` into columns `at..at + 3` of the table's row `row`.
pub fn set(table: &mut RowBlocks, row: usize, at: usize, value: Ext3) {
    for (c, v) in value.coeffs().into_iter().enumerate() {
        table.set(row, at + c, v);
    }
}
