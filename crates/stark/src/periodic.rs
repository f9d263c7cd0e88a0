//! Periodic columns as polynomials: the prover evaluates them on the quotient coset, the
//! verifier at the out-of-domain point. A public column ([`ballast_air::PublicColumn`]) is
//! one of the table's length, which the verifier evaluates from its cells alone.
//!
//! A column with period p holds v[i mod p] in row i. With ω_p = ω^(n/p), row i's point ω^i
//! has (ω^i)^(n/p) = ω_p^(i mod p), so the column is P(x) = p̃(x^(n/p)) where p̃ (degree < p)
//! interpolates v on ⟨ω_p⟩. P has degree (p − 1)·n/p < n, like a trace column.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use ballast_air::{Air, PeriodicColumn, PublicColumn, SparseColumns};
use ballast_field::{Ext3, Felt, inverse_differences};
use ballast_ntt::{LdePlan, Twiddles, bit_reverse, dif};

/// Each of `air`'s periodic columns at `z`, then each of its public columns on
/// `public_inputs`: the values its verifier evaluates the constraints with at the
/// out-of-domain point ([`Frame::periodic`](ballast_air::Frame)'s).
pub fn periodic_at<A: Air>(air: &A, public_inputs: &[Felt], z: Ext3) -> Vec<Ext3> {
    PeriodicAt::of(air, &LagrangeAt::new(z)).with_public(air, public_inputs)
}

/// The Lagrange weights of the subgroups ⟨ω_p⟩ at the powers of one point z, each computed
/// once: what the tables evaluated at z share (a tables proof's, a layer's children's). A
/// table of n rows evaluates its columns of period p at z^(n/p), so the weights of p at
/// z^e are every (P/p)-th term of those of a larger P at z^e, where those are at hand.
pub struct LagrangeAt {
    z: Ext3,
    /// The weights of ⟨ω_p⟩ at z^e, by (e, p).
    weights: RefCell<BTreeMap<(u64, usize), Rc<Weights>>>,
}

impl LagrangeAt {
    /// No weights yet, at `z`.
    pub fn new(z: Ext3) -> Self {
        Self {
            z,
            weights: RefCell::default(),
        }
    }

    /// The point.
    pub fn z(&self) -> Ext3 {
        self.z
    }

    /// The weights of ⟨ω_p⟩ at z^`e`.
    fn weights(&self, e: u64, p: usize) -> Rc<Weights> {
        if let Some(weights) = self.weights.borrow().get(&(e, p)) {
            return Rc::clone(weights);
        }
        let w = self.z.pow(e);
        let larger = (self.weights.borrow().range((e, p + 1)..=(e, usize::MAX)))
            .find_map(|(&(_, big), weights)| weights.subgroup(w, big, p));
        let weights = Rc::new(larger.unwrap_or_else(|| Weights::at(w, p)));
        self.weights
            .borrow_mut()
            .insert((e, p), Rc::clone(&weights));
        weights
    }
}

/// An AIR's periodic columns at a point: what its tables of any public inputs share (a
/// layer's verifier evaluates alike children's tables at one point).
pub struct PeriodicAt {
    z: Ext3,
    values: Vec<Ext3>,
    /// The weights of every row at `z`, where a periodic column of the table's length had
    /// them computed: its public columns read them.
    rows: Option<Rc<Weights>>,
}

impl PeriodicAt {
    /// Each of `air`'s periodic columns at the point of `at`, whose weights it reads.
    pub fn of<A: Air>(air: &A, at: &LagrangeAt) -> Self {
        let log_rows = air.log_rows();
        // The weights of a period p: p̃ at z^(n/p).
        let weights_of = |p: usize| at.weights((1u64 << log_rows) / p as u64, p);
        let mut weights: BTreeMap<usize, Rc<Weights>> = BTreeMap::new();
        let values = match air.sparse_periodic() {
            Some(sparse) if sparse.count() > 0 => {
                let p = sparse.rows();
                (weights.entry(p).or_insert_with(|| weights_of(p))).evaluate_sparse(sparse)
            }
            _ => (air.periodic_columns().iter())
                .map(|c| {
                    let p = c.values.len();
                    (weights.entry(p).or_insert_with(|| weights_of(p))).evaluate(&c.values)
                })
                .collect(),
        };
        let rows = weights.remove(&(1 << log_rows));
        Self {
            z: at.z(),
            values,
            rows,
        }
    }

    /// The point they are at.
    pub fn z(&self) -> Ext3 {
        self.z
    }

    /// [`periodic_at`] of `air` on `public_inputs`: `air` is the AIR these values were
    /// computed from (its weights are read at its rows).
    pub fn with_public<A: Air>(&self, air: &A, public_inputs: &[Felt]) -> Vec<Ext3> {
        let public = public_at(
            &air.public_columns(),
            public_inputs,
            air.log_rows(),
            self.z,
            self.rows.as_deref(),
        );
        [self.values.as_slice(), &public].concat()
    }
}

/// Each public column at `z` in a table of 2^`log_rows` rows, from its cells alone:
/// Σ v·λ_r(z) over its cells (r, v), λ_r(z) = (z^n − 1)/n · ω^r/(z − ω^r) the Lagrange
/// polynomial of row r, with one inversion for every row that holds a cell, or none where
/// the weights of every row at `z` are at hand (`rows`, a periodic column's of the table's
/// length).
fn public_at(
    columns: &[PublicColumn],
    public_inputs: &[Felt],
    log_rows: usize,
    z: Ext3,
    rows: Option<&Weights>,
) -> Vec<Ext3> {
    let cell_rows = CellRows::of(columns);
    // Each cell row's λ_r(z)/scale, in row order.
    let (scale, terms) = match rows {
        Some(Weights::Barycentric { scale, terms }) => {
            (*scale, cell_rows.rows().map(|r| terms[r]).collect())
        }
        _ => {
            let omega = Felt::two_adic_root(log_rows);
            let points: Vec<Felt> = cell_rows.rows().map(|r| omega.pow(r as u64)).collect();
            // At z = ω^r, 1 for r and 0 for every other.
            lagrange_at(&points, z, 1 << log_rows).unwrap_or_else(|| {
                let at = |x: Felt| Ext3::from(Felt::new(u64::from(Ext3::from(x) == z)));
                (Ext3::ONE, points.iter().map(|&x| at(x)).collect())
            })
        }
    };
    columns
        .iter()
        .map(|c| {
            let sum = c.cells.iter().fold(Ext3::ZERO, |sum, cell| {
                sum + terms[cell_rows.rank(cell.row)].scale(public_inputs[cell.input])
            });
            scale * sum
        })
        .collect()
}

/// The rows that hold a cell of some column, as a bitset with each word's count of rows
/// before it: a row's place among them in constant time.
struct CellRows {
    words: Vec<u64>,
    before: Vec<usize>,
}

impl CellRows {
    fn of(columns: &[PublicColumn]) -> Self {
        let cells = || columns.iter().flat_map(|c| &c.cells);
        let end = cells().map(|cell| cell.row + 1).max().unwrap_or(0);
        let mut words = vec![0u64; end.div_ceil(64)];
        for cell in cells() {
            words[cell.row / 64] |= 1 << (cell.row % 64);
        }
        let before = (words.iter())
            .scan(0, |count, w| {
                let here = *count;
                *count += w.count_ones() as usize;
                Some(here)
            })
            .collect();
        Self { words, before }
    }

    /// The rows, in order.
    fn rows(&self) -> impl Iterator<Item = usize> + '_ {
        (self.words.iter().enumerate()).flat_map(|(k, &word)| {
            std::iter::successors(Some(word).filter(|&w| w != 0), |&w| {
                Some(w & (w - 1)).filter(|&w| w != 0)
            })
            .map(move |w| 64 * k + w.trailing_zeros() as usize)
        })
    }

    /// `row`'s place among the rows (it holds a cell).
    fn rank(&self, row: usize) -> usize {
        let below = self.words[row / 64] & ((1u64 << (row % 64)) - 1);
        self.before[row / 64] + below.count_ones() as usize
    }
}

/// How p̃(w) follows from a column's p values v_i, for every column of period p.
enum Weights {
    /// w is off ⟨ω_p⟩: p̃(w) = scale·Σ v_i·terms_i with scale = (w^p − 1)/p and
    /// terms_i = ω_p^i/(w − ω_p^i) (the scale applied once a column, not once a value).
    Barycentric { scale: Ext3, terms: Vec<Ext3> },
    /// w = ω_p^i: p̃(w) = v_i.
    Point(usize),
}

impl Weights {
    /// Those of ⟨ω_p⟩ at `w`, from these of ⟨ω_big⟩ at `w` (p divides big): every
    /// (big/p)-th term, for ω_p = ω_big^(big/p); none where `w` is a point of ⟨ω_big⟩.
    fn subgroup(&self, w: Ext3, big: usize, p: usize) -> Option<Self> {
        let Self::Barycentric { terms, .. } = self else {
            return None;
        };
        let p64 = p as u64;
        Some(Self::Barycentric {
            scale: (w.pow(p64) - Ext3::ONE).scale(Felt::new(p64).inverse()),
            terms: terms.iter().step_by(big / p).copied().collect(),
        })
    }

    fn at(w: Ext3, p: usize) -> Self {
        let omega = Felt::two_adic_root(p.trailing_zeros() as usize);
        let points: Vec<Felt> = std::iter::successors(Some(Felt::ONE), |&x| Some(x * omega))
            .take(p)
            .collect();
        match lagrange_at(&points, w, p) {
            Some((scale, terms)) => Self::Barycentric { scale, terms },
            None => Self::Point(
                points
                    .iter()
                    .position(|&x| Ext3::from(x) == w)
                    .expect("w − x is zero at one of the points"),
            ),
        }
    }

    fn evaluate(&self, values: &[Felt]) -> Ext3 {
        match self {
            // Selectors and flags are mostly zeros and ones: no product for either.
            Self::Barycentric { scale, terms } => {
                let sum = (values.iter().zip(terms)).fold(Ext3::ZERO, |sum, (&v, &term)| match v {
                    Felt::ZERO => sum,
                    Felt::ONE => sum + term,
                    v => sum + term.scale(v),
                });
                *scale * sum
            }
            Self::Point(i) => Ext3::from(values[*i]),
        }
    }

    /// Each of `sparse`'s columns of period p at w: a pass over its entries, none over its
    /// zeros.
    fn evaluate_sparse(&self, sparse: &SparseColumns) -> Vec<Ext3> {
        let mut values = vec![Ext3::ZERO; sparse.count()];
        for e in sparse.entries() {
            let term = match self {
                Self::Barycentric { terms, .. } => terms[e.row as usize],
                Self::Point(i) if *i == e.row as usize => Ext3::ONE,
                Self::Point(_) => continue,
            };
            let sum = &mut values[e.column as usize];
            *sum += match e.value {
                Felt::ONE => term,
                v => term.scale(v),
            };
        }
        if let Self::Barycentric { scale, .. } = self {
            values.iter_mut().for_each(|v| *v = *scale * *v);
        }
        values
    }
}

/// The Lagrange polynomials of ⟨ω_p⟩ (p a power of two) at `w` for each of `points`, some
/// of its elements, as a scale and a term a point: L_x(w) = (w^p − 1)/p · x/(w − x). None
/// when `w` is one of `points`.
fn lagrange_at(points: &[Felt], w: Ext3, p: usize) -> Option<(Ext3, Vec<Ext3>)> {
    let p = p as u64;
    // 1/(x − w) = −1/(w − x), so x/(w − x) = (−x)/(x − w).
    let inverses = inverse_differences(points, w)?;
    let scale = (w.pow(p) - Ext3::ONE).scale(Felt::new(p).inverse());
    let terms = points.iter().zip(inverses);
    Some((
        scale,
        terms.map(|(&x, inverse)| inverse.scale(-x)).collect(),
    ))
}

/// The coefficients of each periodic column's p̃, and the table height they repeat in.
pub(crate) struct PeriodicPolys {
    log_rows: usize,
    coeffs: Vec<Vec<Felt>>,
}

impl PeriodicPolys {
    /// Interpolates every column (lengths are checked by [`ballast_air::ConstraintInfo`]).
    pub(crate) fn new(columns: &[PeriodicColumn], log_rows: usize) -> Self {
        let coeffs = columns
            .iter()
            .map(|c| {
                let p = c.values.len();
                let log_p = p.trailing_zeros() as usize;
                let mut raw = c.values.clone();
                dif(&mut raw, &Twiddles::inverse(log_p));
                let p_inv = Felt::new(p as u64).inverse();
                (0..p).map(|i| raw[bit_reverse(i, log_p)] * p_inv).collect()
            })
            .collect();
        Self { log_rows, coeffs }
    }

    /// Each column on the coset g·H_q of size 2^(log_rows + log_chunks), natural order, as
    /// the 2^log_chunks·p values it cycles through: position t holds P(g·ζ^t) for
    /// t < 2^log_chunks·p, and P(g·ζ^t) = P(g·ζ^(t mod 2^log_chunks·p)).
    pub(crate) fn on_quotient_coset(&self, log_chunks: usize) -> Vec<Vec<Felt>> {
        self.coeffs
            .iter()
            .map(|c| {
                let log_p = c.len().trailing_zeros() as usize;
                let log_m = log_p + log_chunks;
                let m = 1usize << log_m;
                // (g·ζ^t)^(n/p) = g^(n/p)·ζ_m^t with ζ_m a primitive m-th root.
                let shift = LdePlan::SHIFT.pow(1u64 << (self.log_rows - log_p));
                let mut values = vec![Felt::ZERO; m];
                let mut power = Felt::ONE;
                for (slot, &coeff) in values.iter_mut().zip(c) {
                    *slot = coeff * power;
                    power *= shift;
                }
                dif(&mut values, &Twiddles::forward(log_m));
                (0..m).map(|t| values[bit_reverse(t, log_m)]).collect()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use ballast_air::{ConstraintBuilder, Frame, PublicCell, SparseEntry};
    use ballast_ntt::evaluate_poly;

    use super::*;

    /// An AIR of these periodic (given sparsely when `sparse` is) and public columns (its
    /// constraint is never evaluated).
    struct Columns {
        log_rows: usize,
        periodic: Vec<PeriodicColumn>,
        sparse: Option<SparseColumns>,
        public: Vec<PublicColumn>,
        inputs: usize,
    }

    impl Air for Columns {
        fn id(&self) -> &str {
            "columns"
        }
        fn width(&self) -> usize {
            1
        }
        fn log_rows(&self) -> usize {
            self.log_rows
        }
        fn num_public_inputs(&self) -> usize {
            self.inputs
        }
        fn periodic_columns(&self) -> Cow<'_, [PeriodicColumn]> {
            Cow::Borrowed(&self.periodic)
        }
        fn sparse_periodic(&self) -> Option<&SparseColumns> {
            self.sparse.as_ref()
        }
        fn public_columns(&self) -> Cow<'_, [PublicColumn]> {
            Cow::Borrowed(&self.public)
        }
        fn eval<B: ConstraintBuilder>(&self, f: &Frame<'_, B::Expr>, b: &mut B) {
            b.every_row(f.current[0]);
        }
    }

    fn periodic(log_rows: usize, periodic: Vec<PeriodicColumn>) -> Columns {
        Columns {
            log_rows,
            periodic,
            sparse: None,
            public: Vec::new(),
            inputs: 0,
        }
    }

    #[test]
    fn periodic_polynomials_take_the_column_values_on_the_rows_and_agree_off_them() {
        let column = PeriodicColumn {
            values: (0..8u32).map(|i| Felt::from(i * i + 3)).collect(),
        };
        let log_rows = 6;
        let air = periodic(log_rows, vec![column.clone()]);
        let at = |x: Ext3| periodic_at(&air, &[], x)[0];
        let omega = Felt::two_adic_root(log_rows);
        for row in 0..64u64 {
            let value = at(Ext3::from(omega.pow(row)));
            assert_eq!(
                value,
                Ext3::from(column.values[row as usize % 8]),
                "row {row}"
            );
        }
        let log_chunks = 1;
        let coset = &PeriodicPolys::new(&air.periodic, log_rows).on_quotient_coset(log_chunks)[0];
        assert_eq!(coset.len(), 16);
        let zeta = Felt::two_adic_root(log_rows + log_chunks);
        for t in [0u64, 1, 7, 15, 16, 100] {
            let x = LdePlan::SHIFT * zeta.pow(t);
            assert_eq!(
                Ext3::from(coset[t as usize % 16]),
                at(Ext3::from(x)),
                "t {t}"
            );
        }
        // Off every coset, columns of two periods (a selector among them): each barycentric
        // sum is its interpolant's Horner evaluation.
        let air = periodic(
            log_rows,
            vec![
                column.clone(),
                PeriodicColumn {
                    values: [1, 0, 0, 0].map(Felt::new).to_vec(),
                },
                PeriodicColumn {
                    values: (0..8u64).map(|i| Felt::new(i << 40)).collect(),
                },
            ],
        );
        let z = Ext3::new([Felt::new(5), Felt::new(7), Felt::new(11)]);
        let polys = PeriodicPolys::new(&air.periodic, log_rows);
        for (k, (value, coeffs)) in periodic_at(&air, &[], z)
            .into_iter()
            .zip(&polys.coeffs)
            .enumerate()
        {
            let coeffs: Vec<Ext3> = coeffs.iter().map(|&c| Ext3::from(c)).collect();
            let w = z.pow(64 / coeffs.len() as u64);
            assert_eq!(value, evaluate_poly(&coeffs, w), "column {k}");
        }
    }

    #[test]
    fn tables_at_one_point_share_its_weights_and_evaluate_as_alone() {
        // A table of 2^6 rows, then one of 2^4 whose full-length columns read every 4th of
        // its weights, a column of period 4 at z^4, and a public column; at a point off
        // every subgroup, and at a row of the taller table only (its weights a point's).
        let column = |len: u64, salt: u64| PeriodicColumn {
            values: (0..len).map(|i| Felt::new(i * i * 7 + salt)).collect(),
        };
        let tall = periodic(6, vec![column(64, 1), column(8, 2)]);
        let short = Columns {
            public: vec![PublicColumn {
                cells: vec![PublicCell { row: 3, input: 0 }],
            }],
            inputs: 1,
            ..periodic(4, vec![column(16, 3), column(4, 4), column(16, 5)])
        };
        let inputs = [Felt::new(99)];
        let omega = Ext3::from(Felt::two_adic_root(6));
        for z in [
            Ext3::new([Felt::new(5), Felt::new(7), Felt::new(11)]),
            omega,
        ] {
            let at = LagrangeAt::new(z);
            let shared = [
                PeriodicAt::of(&tall, &at).with_public(&tall, &[]),
                PeriodicAt::of(&short, &at).with_public(&short, &inputs),
            ];
            assert_eq!(
                at.weights.borrow().len(),
                4,
                "(1, 64), (8, 8), (1, 16), (4, 4)"
            );
            let alone = [periodic_at(&tall, &[], z), periodic_at(&short, &inputs, z)];
            assert_eq!(shared, alone);
        }
    }

    #[test]
    fn a_public_column_is_the_periodic_column_of_its_values_at_every_point() {
        // Rows in one word of the verifier's bitset, and across several (row 64 onwards).
        for (log_rows, last, far) in [(5, 31, 20), (8, 255, 64)] {
            let rows = 1usize << log_rows;
            let inputs: Vec<Felt> = (0..6u64).map(|i| Felt::new(1000 + i * i)).collect();
            let cell = |row, input| PublicCell { row, input };
            let public = vec![
                PublicColumn {
                    cells: vec![cell(0, 3), cell(4, 0), cell(5, 5), cell(last, 3)],
                },
                // A row shared with the first column, and an empty column.
                PublicColumn {
                    cells: vec![cell(5, 1), cell(far, 2), cell(far + 1, 4)],
                },
                PublicColumn { cells: Vec::new() },
            ];
            let values: Vec<PeriodicColumn> =
                public.iter().map(|c| c.values(rows, &inputs)).collect();
            // With a column of the table's length, whose weights the public columns then
            // read, and without one.
            let short = PeriodicColumn {
                values: vec![Felt::new(9); 4],
            };
            let full = PeriodicColumn {
                values: (0..rows as u64).map(|i| Felt::new(3 * i + 1)).collect(),
            };
            for columns in [vec![short.clone(), full], vec![short]] {
                let with_public = Columns {
                    log_rows,
                    periodic: columns,
                    sparse: None,
                    public: public.clone(),
                    inputs: inputs.len(),
                };
                let materialised = periodic(
                    log_rows,
                    [with_public.periodic.clone(), values.clone()].concat(),
                );
                let omega = Felt::two_adic_root(log_rows);
                let off = Ext3::new([Felt::new(5), Felt::new(7), Felt::new(11)]);
                for x in [
                    off,
                    Ext3::from(Felt::ONE),
                    Ext3::from(omega.pow(5)),
                    Ext3::from(omega.pow(far as u64 + 1)),
                    Ext3::from(omega),
                ] {
                    assert_eq!(
                        periodic_at(&with_public, &inputs, x),
                        periodic_at(&materialised, &[], x)
                    );
                }
                let at_last =
                    periodic_at(&with_public, &inputs, Ext3::from(omega.pow(last as u64)));
                assert_eq!(at_last[with_public.periodic.len()], Ext3::from(inputs[3]));
            }
        }
    }

    #[test]
    fn sparse_columns_are_their_columns_written_out_at_every_point() {
        let log_rows = 6;
        let entry = |row, column, value| SparseEntry {
            row,
            column,
            value: Felt::new(value),
        };
        let omega = Felt::two_adic_root(log_rows);
        let off = Ext3::new([Felt::new(5), Felt::new(7), Felt::new(11)]);
        // Of the table's length and of a shorter period; ones, other values, an empty column.
        for rows in [64, 16] {
            let entries = vec![
                entry(0, 0, 1),
                entry(0, 2, 1 << 40),
                entry(3, 1, 1),
                entry(5, 0, 7),
                entry(rows - 1, 2, 1),
            ];
            let sparse = SparseColumns::new(4, rows as usize, entries).expect("in order");
            let written = periodic(log_rows, sparse.columns());
            let given = Columns {
                sparse: Some(sparse),
                ..periodic(log_rows, written.periodic.clone())
            };
            for x in [
                off,
                Ext3::ONE,
                Ext3::from(omega.pow(5)),
                Ext3::from(omega.pow(7)),
            ] {
                assert_eq!(periodic_at(&given, &[], x), periodic_at(&written, &[], x));
            }
        }
    }

    #[test]
    fn sparse_entries_out_of_order_or_range_are_refused() {
        let entry = |row, column| SparseEntry {
            row,
            column,
            value: Felt::ONE,
        };
        assert!(SparseColumns::new(2, 8, vec![entry(0, 1), entry(1, 0)]).is_ok());
        for entries in [
            vec![entry(1, 0), entry(0, 1)],
            vec![entry(0, 1), entry(0, 0)],
            vec![entry(0, 1), entry(0, 1)],
            vec![entry(8, 0)],
            vec![entry(0, 2)],
        ] {
            assert!(matches!(
                SparseColumns::new(2, 8, entries),
                Err(ballast_air::AirError::SparseEntry { .. })
            ));
        }
    }
}
