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
