//! What an AIR's constraints are, derived by evaluating them symbolically.

use std::ops::{Add, AddAssign, Mul, MulAssign, Neg, Sub, SubAssign};

use ballast_field::{Felt, Halve};

use crate::{Air, AirError, ConstraintBuilder, Domain, Frame, known_count, periodic_lengths};

/// The degree of an expression in the trace polynomials: a column, a periodic column or a
/// public one counts 1 (each has degree < n), a constant 0. Sums take the larger degree, products
/// add them, so the figure is an upper bound on the true degree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Degree(pub u32);

impl From<Felt> for Degree {
    fn from(_: Felt) -> Self {
        Degree(0)
    }
}

impl Add for Degree {
    type Output = Self;
    fn add(self, rhs: Self) -> Self {
        Degree(self.0.max(rhs.0))
    }
}

impl Sub for Degree {
    type Output = Self;
    fn sub(self, rhs: Self) -> Self {
        Degree(self.0.max(rhs.0))
    }
}

impl Halve for Degree {
    /// Halving multiplies by a constant: the degree stays.
    fn halve(self) -> Self {
        self
    }
}

impl Mul for Degree {
    type Output = Self;
    // The degree of a product is the sum of the degrees.
    #[allow(clippy::suspicious_arithmetic_impl)]
    fn mul(self, rhs: Self) -> Self {
        Degree(self.0 + rhs.0)
    }
}

impl Neg for Degree {
    type Output = Self;
    fn neg(self) -> Self {
        self
    }
}

impl AddAssign for Degree {
    fn add_assign(&mut self, rhs: Self) {
        *self = *self + rhs;
    }
}

impl SubAssign for Degree {
    fn sub_assign(&mut self, rhs: Self) {
        *self = *self - rhs;
    }
}

impl MulAssign for Degree {
    fn mul_assign(&mut self, rhs: Self) {
        *self = *self * rhs;
    }
}

/// The constraints of an AIR, in the order `eval` asserts them: each one's domain and
/// degree, and the number of quotient chunks they need.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConstraintInfo {
    /// Domain and degree of constraint i.
    pub constraints: Vec<(Domain, u32)>,
    /// log2 of the number of quotient chunks: the quotient has degree < 2^this · n.
    pub log_quotient_chunks: usize,
}

impl ConstraintInfo {
    /// Evaluates `air`'s constraints symbolically.
    ///
    /// The quotient of a constraint of degree d by its zerofier has degree below
    /// (d − 1)·n on every row and on transitions, and below d·n on the first or last row,
    /// so it needs that many chunks (at least one); the count is rounded up to a power
    /// of two.
    ///
    /// # Errors
    /// If the AIR asserts no constraint, a periodic column's length is not a power of two
    /// no larger than the table, or a public column's cell is out of the table or the
    /// inputs or out of order.
    pub fn of<A: Air>(air: &A) -> Result<Self, AirError> {
        let n = 1usize << air.log_rows();
        for (index, len) in periodic_lengths(air).into_iter().enumerate() {
            if !len.is_power_of_two() || len > n {
                return Err(AirError::PeriodicColumn {
                    index,
                    len,
                    rows: n,
                });
            }
        }
        let inputs = air.num_public_inputs();
        for (index, column) in air.public_columns().iter().enumerate() {
            let mut next_row = 0;
            for cell in &column.cells {
                if cell.row < next_row || cell.row >= n || cell.input >= inputs {
                    return Err(AirError::PublicColumn {
                        index,
                        row: cell.row,
                        input: cell.input,
                        rows: n,
                        inputs,
                    });
                }
                next_row = cell.row + 1;
            }
        }
        let row = vec![Degree(1); air.width()];
        let periodic = vec![Degree(1); known_count(air)];
        let public = vec![Degree(0); air.num_public_inputs()];
        let frame = Frame {
            current: &row,
            next: &row,
            periodic: &periodic,
            public_inputs: &public,
        };
        let mut builder = DegreeBuilder {
            constraints: Vec::new(),
        };
        air.eval(&frame, &mut builder);
        if builder.constraints.is_empty() {
            return Err(AirError::NoConstraints);
        }
        let chunks = builder
            .constraints
            .iter()
            .map(|&(domain, d)| match domain {
                Domain::EveryRow | Domain::Transition => d.saturating_sub(1),
                Domain::FirstRow | Domain::LastRow => d,
            })
            .max()
            .unwrap_or(1)
            .max(1) as usize;
        Ok(Self {
            constraints: builder.constraints,
            log_quotient_chunks: chunks.next_power_of_two().trailing_zeros() as usize,
        })
    }

    /// The largest constraint degree.
    pub fn max_degree(&self) -> u32 {
        self.constraints.iter().map(|&(_, d)| d).max().unwrap_or(0)
    }

    /// How many constraints each domain has, in [`Domain::ALL`] order.
    pub fn counts(&self) -> [usize; Domain::COUNT] {
        let mut counts = [0; Domain::COUNT];
        for &(domain, _) in &self.constraints {
            counts[domain.index()] += 1;
        }
        counts
    }
}

struct DegreeBuilder {
    constraints: Vec<(Domain, u32)>,
}

impl ConstraintBuilder for DegreeBuilder {
    type Expr = Degree;

    fn assert_zero(&mut self, domain: Domain, value: Degree) {
        self.constraints.push((domain, value.0));
    }
}
