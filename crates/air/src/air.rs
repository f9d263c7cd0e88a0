//! The constraint system a prover proves and a verifier checks.
//!
//! An AIR is a table of `width()` columns × 2^`log_rows()` rows and constraints written once,
//! against a [`ConstraintBuilder`]: the prover evaluates them on trace values (base field),
//! the verifier at an out-of-domain point (extension field), and [`ConstraintInfo`]
//! symbolically, to derive each constraint's degree. Values that change from one instance to
//! the next (a seed, a claimed output) enter only as public inputs, which the transcript binds;
//! whatever else an instance holds is bound through its key, the digest of its
//! [`SymbolicAir`](crate::SymbolicAir) (`docs/protocol.md` §4).

use std::borrow::Cow;

use ballast_field::{Felt, Halve};

/// The rows a constraint must hold on. Each domain has its own zerofier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Domain {
    /// Every row: divided by x^n − 1.
    EveryRow,
    /// Every row but the last (it reads the next row): divided by (x^n − 1)/(x − ω^(n−1)).
    Transition,
    /// Row 0: divided by x − 1.
    FirstRow,
    /// Row n − 1: divided by x − ω^(n−1).
    LastRow,
}

impl Domain {
    /// How many domains there are.
    pub const COUNT: usize = 4;

    /// Every domain, in the order the prover and verifier combine them.
    pub const ALL: [Domain; Domain::COUNT] = [
        Domain::EveryRow,
        Domain::Transition,
        Domain::FirstRow,
        Domain::LastRow,
    ];

    /// Position in [`Domain::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// What constraints read at one row: the current and next rows, the periodic columns and
/// the public inputs.
#[derive(Clone, Copy, Debug)]
pub struct Frame<'a, E> {
    /// The current row, one value per column.
    pub current: &'a [E],
    /// The next row (row i + 1, cyclically), one value per column.
    pub next: &'a [E],
    /// The periodic columns' values at this row, in [`Air::periodic_columns`] order.
    pub periodic: &'a [E],
    /// The public inputs, in order.
    pub public_inputs: &'a [E],
}

/// Where constraints go: each value asserted to vanish on its domain.
pub trait ConstraintBuilder {
    /// The value type: [`Felt`] on trace rows, an extension element out of domain. It halves
    /// ([`Halve`]): constraints may divide by two without a multiplication.
    type Expr: Halve;

    /// Requires `value` to vanish on `domain`.
    fn assert_zero(&mut self, domain: Domain, value: Self::Expr);

    /// `value` vanishes on every row.
    #[inline(always)]
    fn every_row(&mut self, value: Self::Expr) {
        self.assert_zero(Domain::EveryRow, value);
    }
    /// `value` vanishes on every row but the last.
    #[inline(always)]
    fn transition(&mut self, value: Self::Expr) {
        self.assert_zero(Domain::Transition, value);
    }
    /// `value` vanishes on the first row.
    #[inline(always)]
    fn first_row(&mut self, value: Self::Expr) {
        self.assert_zero(Domain::FirstRow, value);
    }
    /// `value` vanishes on the last row.
    #[inline(always)]
    fn last_row(&mut self, value: Self::Expr) {
        self.assert_zero(Domain::LastRow, value);
    }
}

/// A column whose values the verifier knows: `values` repeated down the table. Its length
/// is a power of two no larger than the table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeriodicColumn {
    /// One period of the column's values.
    pub values: Vec<Felt>,
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

    /// Number of public inputs [`Frame::public_inputs`] holds.
    fn num_public_inputs(&self) -> usize;

    /// The periodic columns [`Frame::periodic`] holds: borrowed where the AIR keeps them,
    /// so that a verifier reading them several times copies nothing.
    fn periodic_columns(&self) -> Cow<'_, [PeriodicColumn]> {
        Cow::Borrowed(&[])
    }

    /// Asserts every constraint of the row `frame` shows on `builder`. The sequence of
    /// domains must not depend on the values read. Implementations (and the helpers they
    /// call) are `#[inline(always)]`, so that the SIMD paths compile them with their own
    /// instructions.
    fn eval<B: ConstraintBuilder>(&self, frame: &Frame<'_, B::Expr>, builder: &mut B);
}
