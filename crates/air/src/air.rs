//! The constraint system a prover proves and a verifier checks.

use ballast_field::{Felt, FieldElement};

/// The row a boundary constraint applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoundaryRow {
    /// Row 0.
    First,
    /// Row 2^k − 1.
    Last,
}

/// `column` holds `value` in `row`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Boundary {
    /// The constrained column.
    pub column: usize,
    /// The constrained row.
    pub row: BoundaryRow,
    /// The required value.
    pub value: Felt,
}

/// A table of `width()` columns × 2^`log_rows()` rows and the constraints it satisfies.
pub trait Air: Sync {
    /// A stable name of the constraint system, bound into the transcript. Changing the
    /// constraints means changing the name.
    fn id(&self) -> &str;

    /// Number of columns.
    fn width(&self) -> usize;

    /// log2 of the number of rows.
    fn log_rows(&self) -> usize;

    /// Number of transition constraints.
    fn num_transition_constraints(&self) -> usize;

    /// The largest total degree of a transition constraint in the trace values.
    fn max_constraint_degree(&self) -> usize;

    /// Evaluates the transition constraints on a row and its successor into `out`
    /// (`num_transition_constraints()` values, each zero when satisfied).
    fn eval_transition<E: FieldElement>(&self, current: &[E], next: &[E], out: &mut [E]);

    /// The boundary constraints.
    fn boundaries(&self) -> Vec<Boundary>;

    /// The public inputs, in the order the transcript absorbs them.
    fn public_inputs(&self) -> Vec<Felt>;
}
