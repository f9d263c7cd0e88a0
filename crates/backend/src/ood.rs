//! The out-of-domain claims a segment's proof makes.

use ballast_field::Ext3;

/// The claimed values of every committed polynomial at z (and of the trace at z·ω).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OodValues {
    /// Trace column k at z.
    pub trace_z: Vec<Ext3>,
    /// Trace column k at z·ω (the next row).
    pub trace_zw: Vec<Ext3>,
    /// Quotient column c at z: chunk c / 3, base coordinate c mod 3.
    pub quotient_z: Vec<Ext3>,
}

impl OodValues {
    /// The claims of `tables`, as one table's whose columns are theirs in order: the trace's
    /// (and quotient's) columns of the first, then of the second, … (the row of a
    /// tables proof's mixed tree at one height).
    pub fn concat(tables: &[OodValues]) -> Self {
        let joined = |part: fn(&OodValues) -> &Vec<Ext3>| {
            tables.iter().flat_map(part).copied().collect::<Vec<_>>()
        };
        Self {
            trace_z: joined(|t| &t.trace_z),
            trace_zw: joined(|t| &t.trace_zw),
            quotient_z: joined(|t| &t.quotient_z),
        }
    }
}
