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

use crate::AirError;

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
    /// The periodic columns' values at this row, in [`Air::periodic_columns`] order, then
    /// the public columns' ([`Air::public_columns`]).
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

/// A column whose values the public inputs give: zero on every row but those of its
/// `cells`, where it holds the public input named. The AIR fixes where each input sits, the
/// statement what it is, so constraints can bind many inputs at their rows through a few
/// columns, where a periodic column would hold the values themselves in the AIR's key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PublicColumn {
    /// The rows that hold an input, in increasing order, each with its input's index.
    pub cells: Vec<PublicCell>,
}

/// One row of a [`PublicColumn`] and the public input it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PublicCell {
    /// The row.
    pub row: usize,
    /// The index of the public input in it.
    pub input: usize,
}

impl PublicColumn {
    /// Its values in a table of `rows` rows, from `public_inputs`: a periodic column of the
    /// table's length.
    ///
    /// # Panics
    /// If a cell's row or input is out of range ([`ConstraintInfo::of`](crate::ConstraintInfo::of)
    /// refuses such a column).
    pub fn values(&self, rows: usize, public_inputs: &[Felt]) -> PeriodicColumn {
        let mut values = vec![Felt::ZERO; rows];
        for cell in &self.cells {
            values[cell.row] = public_inputs[cell.input];
        }
        PeriodicColumn { values }
    }
}

/// Periodic columns of one period given by their values other than zero, row by row: how
/// an AIR whose periodic columns are long and mostly zero (the identity AIR's selectors,
/// opcodes and constants) hands them to a verifier, who evaluates them at a point from
/// these alone, without writing the columns out ([`Air::sparse_periodic`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SparseColumns {
    count: usize,
    rows: usize,
    entries: Vec<SparseEntry>,
}

/// One value of [`SparseColumns`]: `value` in column `column` of row `row`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SparseEntry {
    /// The row.
    pub row: u32,
    /// The column.
    pub column: u32,
    /// The value.
    pub value: Felt,
}

impl SparseColumns {
    /// `count` columns of `rows` values (a period), zero but for `entries`.
    ///
    /// # Errors
    /// An entry out of the rows or the columns, or not after the one before it in order of
    /// row, then column.
    pub fn new(count: usize, rows: usize, entries: Vec<SparseEntry>) -> Result<Self, AirError> {
        let mut next = 0u64;
        for (index, e) in entries.iter().enumerate() {
            let (row, column) = (e.row as usize, e.column as usize);
            let at = u64::from(e.row) << 32 | u64::from(e.column);
            if at < next || row >= rows || column >= count {
                return Err(AirError::SparseEntry {
                    index,
                    row,
                    column,
                    rows,
                    columns: count,
                });
            }
            next = at + 1;
        }
        Ok(Self {
            count,
            rows,
            entries,
        })
    }

    /// How many columns.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Each column's length: its period.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The values other than zero, in order of row, then column.
    pub fn entries(&self) -> &[SparseEntry] {
        &self.entries
    }

    /// The columns written out.
    pub fn columns(&self) -> Vec<PeriodicColumn> {
        // Each column allocated zeroed (a clone of one zero column would copy it).
        let mut columns: Vec<Vec<Felt>> = (0..self.count)
            .map(|_| vec![Felt::ZERO; self.rows])
            .collect();
        for e in &self.entries {
            columns[e.column as usize][e.row as usize] = e.value;
        }
        (columns.into_iter())
            .map(|values| PeriodicColumn { values })
            .collect()
    }
}

/// Each of `air`'s periodic columns' lengths, sparse ones ([`Air::sparse_periodic`]) without
/// writing them out: what its constraint info and its key read of them.
pub fn periodic_lengths<A: Air>(air: &A) -> Vec<usize> {
    match air.sparse_periodic() {
        Some(sparse) => vec![sparse.rows(); sparse.count()],
        None => (air.periodic_columns().iter())
            .map(|c| c.values.len())
            .collect(),
    }
}

/// The columns [`Frame::periodic`] holds for `air` on `public_inputs`: its periodic columns,
/// then its public columns' values. Borrowed when it has no public column.
pub fn known_columns<'a, A: Air>(air: &'a A, public_inputs: &[Felt]) -> Cow<'a, [PeriodicColumn]> {
    let public = air.public_columns();
    let periodic = air.periodic_columns();
    if public.is_empty() {
        return periodic;
    }
    let rows = 1usize << air.log_rows();
    let mut columns = periodic.into_owned();
    columns.extend(public.iter().map(|c| c.values(rows, public_inputs)));
    columns.into()
}

/// How many values [`Frame::periodic`] holds for `air`: its periodic and public columns.
pub fn known_count<A: Air>(air: &A) -> usize {
    periodic_lengths(air).len() + air.public_columns().len()
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

    /// The periodic columns by their values other than zero, for an AIR whose periodic
    /// columns are all of one period and mostly zero; a verifier evaluates them from these.
    /// `None`, the default: [`periodic_columns`](Self::periodic_columns) alone. An AIR that
    /// gives them must give them written out ([`SparseColumns::columns`]) as its periodic
    /// columns, or its prover and its verifier disagree.
    fn sparse_periodic(&self) -> Option<&SparseColumns> {
        None
    }

    /// Bytes from which this AIR's code builds every periodic column and every public
    /// column's cells, for an AIR whose columns are far longer than what they are built
    /// from: its key holds these bytes in place of each periodic column's digest and each
    /// public cell (`docs/protocol.md` §6 item 21), so the columns must be a function of
    /// them: two instances of one [`id`](Self::id) and height with the same source must
    /// have the same periodic columns and public cells, or the key no longer binds them.
    /// `None`, the default: the key hashes every periodic value and every public cell.
    fn columns_source(&self) -> Option<Vec<u8>> {
        None
    }

    /// The public columns, whose values [`Frame::periodic`] holds after the periodic
    /// columns'.
    fn public_columns(&self) -> Cow<'_, [PublicColumn]> {
        Cow::Borrowed(&[])
    }

    /// Asserts every constraint of the row `frame` shows on `builder`. The sequence of
    /// domains must not depend on the values read. Implementations (and the helpers they
    /// call) are `#[inline(always)]`, so that the SIMD paths compile them with their own
    /// instructions.
    fn eval<B: ConstraintBuilder>(&self, frame: &Frame<'_, B::Expr>, builder: &mut B);
}
