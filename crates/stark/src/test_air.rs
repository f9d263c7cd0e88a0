//! A small AIR for the crate's own tests: a counter with a squared companion and a periodic
//! step, exercising every constraint domain, a periodic column and degree 2.

use std::borrow::Cow;

use ballast_air::{Air, ConstraintBuilder, Frame, PeriodicColumn, PublicCell, PublicColumn};
use ballast_field::{Felt, RowBlocks};

/// Column 0 counts up by the periodic step (1, 2, 1, 2, …); column 1 is column 0 squared.
/// Public inputs: the first and the last count.
pub(crate) struct CounterAir {
    pub log_rows: usize,
}

impl Air for CounterAir {
    fn id(&self) -> &str {
        "ballast/test-counter"
    }
    fn width(&self) -> usize {
        2
    }
    fn log_rows(&self) -> usize {
        self.log_rows
    }
    fn num_public_inputs(&self) -> usize {
        2
    }
    fn periodic_columns(&self) -> Cow<'_, [PeriodicColumn]> {
        vec![PeriodicColumn {
            values: vec![Felt::ONE, Felt::new(2)],
        }]
        .into()
    }
    #[inline(always)]
    fn eval<B: ConstraintBuilder>(&self, f: &Frame<'_, B::Expr>, b: &mut B) {
        let (c, n) = (f.current, f.next);
        b.transition(n[0] - c[0] - f.periodic[0]);
        b.every_row(c[1] - c[0] * c[0]);
        b.first_row(c[0] - f.public_inputs[0]);
        b.last_row(c[0] - f.public_inputs[1]);
    }
}

/// The counter's trace from `start`, and its public inputs.
pub(crate) fn counter_trace(log_rows: usize, start: u64) -> (RowBlocks, Vec<Felt>) {
    let n = 1usize << log_rows;
    let mut count = Felt::new(start);
    let mut columns = vec![Vec::with_capacity(n), Vec::with_capacity(n)];
    for row in 0..n {
        columns[0].push(count);
        columns[1].push(count * count);
        count += Felt::new(1 + (row as u64 % 2));
    }
    let public = vec![columns[0][0], columns[0][n - 1]];
    (RowBlocks::from_columns(&columns), public)
}

/// x counts up by one from public input 0, and on each of the rows [`MARKED_ROWS`] equals
/// the public input a public column holds there (inputs 1, 2, 3).
pub(crate) struct MarkedAir {
    pub log_rows: usize,
}

/// The rows of [`MarkedAir`] whose value a public input gives.
pub(crate) const MARKED_ROWS: [usize; 3] = [2, 9, 30];

impl Air for MarkedAir {
    fn id(&self) -> &str {
        "ballast/test-marked"
    }
    fn width(&self) -> usize {
        1
    }
    fn log_rows(&self) -> usize {
        self.log_rows
    }
    fn num_public_inputs(&self) -> usize {
        1 + MARKED_ROWS.len()
    }
    fn periodic_columns(&self) -> Cow<'_, [PeriodicColumn]> {
        let marks = (0..1 << self.log_rows)
            .map(|r| Felt::new(u64::from(MARKED_ROWS.contains(&r))))
            .collect();
        vec![PeriodicColumn { values: marks }].into()
    }
    fn public_columns(&self) -> Cow<'_, [PublicColumn]> {
        let cells = (MARKED_ROWS.iter().enumerate())
            .map(|(k, &row)| PublicCell { row, input: 1 + k })
            .collect();
        vec![PublicColumn { cells }].into()
    }
    #[inline(always)]
    fn eval<B: ConstraintBuilder>(&self, f: &Frame<'_, B::Expr>, b: &mut B) {
        let x = f.current[0];
        b.transition(f.next[0] - x - B::Expr::from(Felt::ONE));
        b.first_row(x - f.public_inputs[0]);
        b.every_row(f.periodic[0] * (x - f.periodic[1]));
    }
}

/// [`MarkedAir`]'s trace from `start`, and its public inputs.
pub(crate) fn marked_trace(log_rows: usize, start: u64) -> (RowBlocks, Vec<Felt>) {
    let x: Vec<Felt> = (0..1u64 << log_rows)
        .map(|r| Felt::new(start + r))
        .collect();
    let mut public = vec![x[0]];
    public.extend(MARKED_ROWS.map(|r| x[r]));
    (RowBlocks::from_columns(&[x]), public)
}

/// Two Fibonacci sequences whose first row is public but whose last row is a field of the
/// AIR, not a public input: the shape of a weak Fiat–Shamir ("Frozen Heart") forgery.
pub(crate) struct HiddenEndAir {
    pub log_rows: usize,
    pub end: [Felt; 4],
}

impl Air for HiddenEndAir {
    fn id(&self) -> &str {
        "ballast/test-hidden-end"
    }
    fn width(&self) -> usize {
        4
    }
    fn log_rows(&self) -> usize {
        self.log_rows
    }
    fn num_public_inputs(&self) -> usize {
        4
    }
    #[inline(always)]
    fn eval<B: ConstraintBuilder>(&self, f: &Frame<'_, B::Expr>, b: &mut B) {
        for (c, n) in f.current.chunks_exact(2).zip(f.next.chunks_exact(2)) {
            b.transition(n[0] - c[1]);
            b.transition(n[1] - (c[0] + c[1]));
        }
        for (&v, &start) in f.current.iter().zip(f.public_inputs) {
            b.first_row(v - start);
        }
        for (&v, &end) in f.current.iter().zip(&self.end) {
            b.last_row(v - B::Expr::from(end));
        }
    }
}

/// Two Fibonacci sequences from (1, 2) and (3, 4): the trace and its first row.
pub(crate) fn hidden_end_trace(log_rows: usize) -> (RowBlocks, Vec<Felt>) {
    let start = [1u64, 2, 3, 4].map(Felt::new);
    let mut columns = vec![Vec::new(); 4];
    for pair in 0..2 {
        let (mut a, mut b) = (start[2 * pair], start[2 * pair + 1]);
        for _ in 0..1usize << log_rows {
            columns[2 * pair].push(a);
            columns[2 * pair + 1].push(b);
            (a, b) = (b, a + b);
        }
    }
    (RowBlocks::from_columns(&columns), start.to_vec())
}
