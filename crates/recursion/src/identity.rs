//! A child's out-of-domain identity as an AIR: the child AIR's constraints evaluated at z on
//! the values its proof claims there, combined with α's powers and divided by their
//! zerofiers, equal the quotient its proof claims at z (`ballast_stark`'s verifier step 3).
//!
//! The constraints are read from the child AIR's own definition: its [`ConstraintProgram`]
//! (the `eval` traced into a DAG and scheduled onto registers, the program the device runs),
//! one instruction a row, over the extension. Registers are columns; each row's operands are
//! columns too, equal to the register its periodic selectors pick plus an immediate: a
//! constant in a periodic column, or a leaf the proof claims (a public input) in a public
//! column (`ballast_air::PublicColumn`), so that a product of operands is of degree 2 and
//! the constraint on the result column of degree 3. The registers sit in a grid of ⌈√R⌉
//! columns, and a selector is two one-hot periodic columns' product, the register's grid
//! row's and column's: 2·⌈√R⌉ or so periodic columns an operand, not R, at degree 3 in the
//! operand's and the carry's constraints. A row writes its result
//! into the register its selector names (the next row's), every other register carries
//! over; the program reads a register only after writing it, so every read is the program's
//! value. An assertion row adds `power·value` to its domain's sum, where `power` starts at 1
//! and steps by α on each assertion (the program asserts constraint i as its i-th
//! assertion), so each sum ends as Σ_i α^i·C_i(z) over its domain's constraints. The last
//! row holds
//!
//! S_every/Z + S_transition·(z − ω^(n−1))/Z + S_first/(z − 1) + S_last/(z − ω^(n−1)) = Q(z),
//!
//! Z = z^n − 1 and Q(z) = Σ_j z^(j·n)·Q_j(z), multiplied through by Z·(z − 1)·(z − ω^(n−1)).
//! That is not zero, which the AIR checks itself: an inverse column times Z is 1 on the last
//! row, so z is not in the child's trace domain H (which holds 1 and ω^(n−1)), as the
//! child's transcript ensures when it draws z. Its public inputs are α, z, the quotient's
//! values, then the immediates: the trace's values at z and zω, the child's periodic columns
//! at z and its public inputs, each held by the public columns on the rows that read it. So
//! the AIR's definition, and its key, is the child's shape; a layer's verifier builds its
//! inputs from what the transcript AIR read and absorbed and the child's statement.

use std::borrow::Cow;

use ballast_air::{
    Air, AirError, ConstraintBuilder, ConstraintInfo, ConstraintProgram, Domain, Frame,
    Instruction, Leaf, Operand, PeriodicColumn, ProgramError, PublicCell, PublicColumn,
    known_count,
};
use ballast_field::{Algebra, Ext3, Felt, RowBlocks};
use ballast_stark::{OodValues, periodic_at};

use crate::ext::{Ext, add, ext, scale, sub};

/// Why a child's out-of-domain identity has no AIR.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum IdentityError {
    /// This error occurs when the child AIR's constraints do not compile into a program.
    #[error("the child's constraints: {0}")]
    Program(#[from] ProgramError),
    /// This error occurs when the child AIR has no quotient shape (no constraints, or a bad
    /// periodic column).
    #[error("the child AIR: {0}")]
    Air(#[from] AirError),
    /// This error occurs when z is in the child's trace domain, where its zerofiers vanish.
    #[error("the out-of-domain point is in the child's trace domain")]
    OnTheDomain,
    /// This error occurs when a claim has another count of values than the child AIR reads.
    #[error("{what}: {got} values, the child AIR has {expected}")]
    Shape {
        /// Which claim.
        what: &'static str,
        /// How many the child AIR has.
        expected: usize,
        /// How many were given.
        got: usize,
    },
}

/// What a child's identity is checked on: its challenges and the values its proof claims at
/// the out-of-domain point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OodClaims {
    /// α: constraint i's coefficient is α^i.
    pub alpha: Ext3,
    /// The out-of-domain point z.
    pub z: Ext3,
    /// Each trace column at z.
    pub trace_z: Vec<Ext3>,
    /// Each trace column at zω.
    pub trace_zw: Vec<Ext3>,
    /// Each periodic column of the child at z.
    pub periodic_z: Vec<Ext3>,
    /// The child segment's public inputs.
    pub public_inputs: Vec<Felt>,
    /// Each quotient column at z: chunk c / 3, coordinate c mod 3.
    pub quotient_z: Vec<Ext3>,
}

impl OodClaims {
    /// The claims of a proof of `air` whose public inputs are `public_inputs`, whose
    /// transcript drew `alpha` and `z` and which claims `ood` there: the one construction of
    /// a layer's prover (from the child's proof) and its verifier (from what the transcript
    /// AIR read and absorbed), the periodic values at z computed from `air`.
    pub fn of<A: Air>(
        air: &A,
        public_inputs: &[Felt],
        alpha: Ext3,
        z: Ext3,
        ood: OodValues,
    ) -> Self {
        Self {
            alpha,
            z,
            trace_z: ood.trace_z,
            trace_zw: ood.trace_zw,
            periodic_z: periodic_at(air, public_inputs, z),
            public_inputs: public_inputs.to_vec(),
            quotient_z: ood.quotient_z,
        }
    }
}

/// The out-of-domain identity of one child proof: an [`Air`] of 3·R + 27 columns (R the child
/// program's registers) and 2^k rows (one an instruction, at least one more), whose public
/// inputs are α, z and the quotient's values at z, then the claims its instructions read
/// ([`public_inputs`](Self::public_inputs)).
#[derive(Clone, Debug)]
pub struct IdentityAir {
    program: ConstraintProgram,
    claims: OodClaims,
    /// log2 of the child's rows.
    child_log_rows: usize,
    log_rows: usize,
    /// Its periodic columns, written once and lent to each of a verifier's four reads (the
    /// AIR's constraint info, its key twice, its values at z).
    periodic: Vec<PeriodicColumn>,
    /// Its public columns, written once likewise.
    public: Vec<PublicColumn>,
}

// Columns after the registers (each an extension value, 3 coordinates).
/// Operand a.
const OPERAND_A: usize = 0;
/// Operand b.
const OPERAND_B: usize = 3;
/// The instruction's result.
const RESULT: usize = 6;
/// α^i, i the assertions above this row.
const POWER: usize = 9;
/// Each domain's sum so far ([`Domain::index`] order).
const SUMS: usize = 12;
/// 1/Z(z), bound on the last row only.
const VANISHING_INVERSE: usize = SUMS + 3 * Domain::COUNT;
/// Columns after the registers.
const OWN: usize = VANISHING_INVERSE + 3;

// Periodic columns after the selectors (read a, read b, write: each a grid's rows, then its
// columns, [`Grid`]).
/// The constant added to operand a, then b (3 coordinates each).
const CONSTANT_A: usize = 0;
const CONSTANT_B: usize = 3;
/// The opcodes: add, subtract, multiply, negate.
const ADD: usize = 6;
const SUB: usize = 7;
const MUL: usize = 8;
const NEG: usize = 9;
/// An assertion on each domain ([`Domain::index`] order).
const ASSERT: usize = 10;
/// Periodic columns after the selectors.
const PERIODIC: usize = ASSERT + Domain::COUNT;
// The public columns follow them in `Frame::periodic`.
/// The claim added to operand a, then b (3 coordinates each).
const CLAIM_A: usize = PERIODIC;
const CLAIM_B: usize = PERIODIC + 3;

impl IdentityAir {
    /// The identity of a proof of `air` whose out-of-domain values are `claims`.
    ///
    /// # Errors
    /// Constraints that do not compile ([`ConstraintProgram::of`]), or claims of another
    /// shape than the child AIR's.
    pub fn new<A: Air>(air: &A, claims: OodClaims) -> Result<Self, IdentityError> {
        Self::with_program(air, ConstraintProgram::of(air)?, claims)
    }

    /// [`new`](Self::new) with `air`'s program already compiled, for a caller that reads it
    /// too.
    ///
    /// # Errors
    /// A malformed child AIR, or claims of another shape than its.
    pub(crate) fn with_program<A: Air>(
        air: &A,
        program: ConstraintProgram,
        claims: OodClaims,
    ) -> Result<Self, IdentityError> {
        for (what, expected, got) in [
            ("trace values at z", air.width(), claims.trace_z.len()),
            ("trace values at zω", air.width(), claims.trace_zw.len()),
            (
                "periodic values at z",
                known_count(air),
                claims.periodic_z.len(),
            ),
            (
                "public inputs",
                air.num_public_inputs(),
                claims.public_inputs.len(),
            ),
        ] {
            if expected != got {
                return Err(IdentityError::Shape {
                    what,
                    expected,
                    got,
                });
            }
        }
        let chunks = 1usize << ConstraintInfo::of(air)?.log_quotient_chunks;
        if claims.quotient_z.len() != Ext3::DEGREE * chunks {
            return Err(IdentityError::Shape {
                what: "quotient values at z",
                expected: Ext3::DEGREE * chunks,
                got: claims.quotient_z.len(),
            });
        }
        let mut asserted = 0u32;
        for instruction in program.instructions() {
            if let Instruction::Assert { index, .. } = *instruction {
                assert_eq!(index, asserted, "the program asserts in index order");
                asserted += 1;
            }
        }
        let mut identity = Self {
            log_rows: program_log_rows(&program),
            program,
            claims,
            child_log_rows: air.log_rows(),
            periodic: Vec::new(),
            public: Vec::new(),
        };
        identity.periodic = identity.write_periodic();
        identity.public = identity.write_public();
        Ok(identity)
    }

    /// Its periodic columns' values: for each instruction row, the register each operand
    /// reads and the result's (its grid row and column), each operand's constant, the opcode
    /// and the assertion's domain.
    fn write_periodic(&self) -> Vec<PeriodicColumn> {
        let grid = self.grid();
        let rows = 1usize << self.log_rows;
        let steps = self.steps();
        let column = |value: &dyn Fn(&Step) -> Felt| PeriodicColumn {
            values: (0..rows)
                .map(|row| steps.get(row).map_or(Felt::ZERO, value))
                .collect(),
        };
        let flag = |on: bool| if on { Felt::ONE } else { Felt::ZERO };
        fn register(operand: Option<Operand>) -> Option<usize> {
            match operand {
                Some(Operand::Register(x)) => Some(x as usize),
                _ => None,
            }
        }
        let picks: [fn(&Step) -> Option<usize>; 3] =
            [|s| register(s.a), |s| register(s.b), |s| s.write];
        let mut columns = Vec::with_capacity(3 * grid.selectors() + PERIODIC);
        for pick in picks {
            for h in 0..grid.row_flags() {
                columns.push(column(&|s| {
                    flag(pick(s).is_some_and(|r| r / grid.columns == h))
                }));
            }
            for c in 0..grid.columns {
                columns.push(column(&|s| {
                    flag(pick(s).is_some_and(|r| r % grid.columns == c))
                }));
            }
        }
        for pick in [|s: &Step| s.a, |s: &Step| s.b] {
            for c in 0..3 {
                columns.push(column(&|s| match pick(s) {
                    Some(Operand::Constant(k)) if c == 0 => self.program.constants()[k as usize],
                    _ => Felt::ZERO,
                }));
            }
        }
        for op in [Op::Add, Op::Sub, Op::Mul, Op::Neg] {
            columns.push(column(&|s| flag(s.op == Some(op))));
        }
        for domain in Domain::ALL {
            columns.push(column(&|s| flag(s.assert == Some(domain))));
        }
        columns
    }

    /// Its public columns: for each operand and coordinate, on each row whose operand is a
    /// leaf, the public input of that coordinate of its claim (a child's public input is a
    /// base-field value: its first coordinate alone).
    fn write_public(&self) -> Vec<PublicColumn> {
        let steps = self.steps();
        let mut columns = Vec::with_capacity(6);
        for pick in [|s: &Step| s.a, |s: &Step| s.b] {
            for c in 0..3 {
                let cells = (steps.iter().enumerate())
                    .filter_map(|(row, s)| match pick(s) {
                        Some(Operand::Leaf(leaf)) => self
                            .claim_input(leaf, c)
                            .map(|input| PublicCell { row, input }),
                        _ => None,
                    })
                    .collect();
                columns.push(PublicColumn { cells });
            }
        }
        columns
    }

    /// Which public input holds coordinate `c` of `leaf`'s claim; none for a child's public
    /// input's other coordinates, which are zero.
    fn claim_input(&self, leaf: Leaf, c: usize) -> Option<usize> {
        let claims = &self.claims;
        let trace_z = self.claims_start();
        let trace_zw = trace_z + 3 * claims.trace_z.len();
        let periodic_z = trace_zw + 3 * claims.trace_zw.len();
        let public = periodic_z + 3 * claims.periodic_z.len();
        match leaf {
            Leaf::Current(i) => Some(trace_z + 3 * i as usize + c),
            Leaf::Next(i) => Some(trace_zw + 3 * i as usize + c),
            Leaf::Periodic(i) => Some(periodic_z + 3 * i as usize + c),
            Leaf::Public(i) => (c == 0).then_some(public + i as usize),
        }
    }

    /// Each row's instruction, as its selectors see it.
    fn steps(&self) -> Vec<Step> {
        let instructions = self.program.instructions().iter();
        instructions.map(|&i| Step::of(i)).collect()
    }

    /// Where the claims start in the public inputs: after α, z and the quotient's values.
    fn claims_start(&self) -> usize {
        Z + 3 + 3 * self.claims.quotient_z.len()
    }

    /// The claims it checks.
    pub fn claims(&self) -> &OodClaims {
        &self.claims
    }

    /// The public inputs: α, z, each quotient value at z, each trace value at z, then at zω,
    /// each periodic value at z (3 coordinates each), then the child's public inputs.
    pub fn public_inputs(&self) -> Vec<Felt> {
        let c = &self.claims;
        let ext = [c.alpha, c.z].into_iter();
        let ext = ext.chain(c.quotient_z.iter().copied());
        let ext = ext.chain(
            c.trace_z
                .iter()
                .chain(&c.trace_zw)
                .chain(&c.periodic_z)
                .copied(),
        );
        ext.flat_map(|v| v.coeffs())
            .chain(c.public_inputs.iter().copied())
            .collect()
    }

    /// The trace: the program run on the claims, a row an instruction.
    ///
    /// # Errors
    /// A z in the child's trace domain, which its transcript never draws.
    pub fn trace(&self) -> Result<RowBlocks, IdentityError> {
        let vanishing_inverse = (self.claims.z.pow(1 << self.child_log_rows) - Ext3::ONE)
            .try_inverse()
            .ok_or(IdentityError::OnTheDomain)?;
        let registers = self.program.registers();
        let width = self.width();
        let rows = 1usize << self.log_rows;
        let mut table = Vec::with_capacity(rows * width);
        let mut file = vec![Ext3::ZERO; registers];
        let mut power = Ext3::ONE;
        let mut sums = [Ext3::ZERO; Domain::COUNT];
        for row in 0..rows {
            let step = self.program.instructions().get(row).map(|&i| Step::of(i));
            let (a, b) = step.map_or((Ext3::ZERO, Ext3::ZERO), |s| {
                (self.read(&file, s.a), self.read(&file, s.b))
            });
            let result = step
                .and_then(|s| s.op)
                .map_or(Ext3::ZERO, |op| op.apply(a, b));
            for v in file
                .iter()
                .chain(&[a, b, result, power])
                .chain(&sums)
                .chain(&[vanishing_inverse])
            {
                table.extend(v.coeffs());
            }
            match step {
                Some(Step {
                    write: Some(dst), ..
                }) => file[dst] = result,
                Some(Step {
                    assert: Some(domain),
                    ..
                }) => {
                    sums[domain.index()] += power * a;
                    power *= self.claims.alpha;
                }
                _ => {}
            }
        }
        Ok(RowBlocks::from_rows(width, &table))
    }

    /// An operand's value: its register's, or its immediate.
    fn read(&self, file: &[Ext3], operand: Option<Operand>) -> Ext3 {
        match operand {
            Some(Operand::Register(r)) => file[r as usize],
            other => self.immediate(other),
        }
    }

    /// What an operand adds to its selected register: a leaf's claimed value or a constant.
    fn immediate(&self, operand: Option<Operand>) -> Ext3 {
        let c = &self.claims;
        match operand {
            None | Some(Operand::Register(_)) => Ext3::ZERO,
            Some(Operand::Constant(k)) => Ext3::from(self.program.constants()[k as usize]),
            Some(Operand::Leaf(leaf)) => match leaf {
                Leaf::Current(i) => c.trace_z[i as usize],
                Leaf::Next(i) => c.trace_zw[i as usize],
                Leaf::Periodic(i) => c.periodic_z[i as usize],
                Leaf::Public(i) => Ext3::from(c.public_inputs[i as usize]),
            },
        }
    }

    /// The grid its registers' selectors address.
    fn grid(&self) -> Grid {
        Grid::of(self.program.registers())
    }

    /// Offset of the columns after the registers.
    fn own(&self) -> usize {
        3 * self.program.registers()
    }
}

/// The registers as a grid of ⌈√R⌉ columns: register r at row r / columns, column
/// r mod columns, each selected by its row's and its column's one-hot periodic columns.
/// Where that takes as many columns as R (R ≤ 5), one row of R: a grid of one row needs no
/// row flags, so a register's column flag is its selector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Grid {
    rows: usize,
    columns: usize,
}

impl Grid {
    fn of(registers: usize) -> Self {
        let columns = (1..)
            .find(|c| c * c >= registers)
            .expect("a square at least as large");
        let rows = registers.div_ceil(columns);
        if rows + columns >= registers {
            Self {
                rows: 1,
                columns: registers,
            }
        } else {
            Self { rows, columns }
        }
    }

    /// The periodic columns of its rows' flags: none for one row.
    fn row_flags(self) -> usize {
        if self.rows > 1 { self.rows } else { 0 }
    }

    /// Periodic columns a selector takes: its grid rows' and columns'.
    fn selectors(self) -> usize {
        self.row_flags() + self.columns
    }
}

/// An arithmetic instruction's operation, in its periodic columns' order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Add,
    Sub,
    Mul,
    Neg,
}

impl Op {
    fn apply(self, a: Ext3, b: Ext3) -> Ext3 {
        match self {
            Op::Add => a + b,
            Op::Sub => a - b,
            Op::Mul => a * b,
            Op::Neg => -a,
        }
    }
}

/// One row's instruction: its operands, operation, destination and assertion.
#[derive(Clone, Copy, Debug)]
struct Step {
    a: Option<Operand>,
    b: Option<Operand>,
    op: Option<Op>,
    write: Option<usize>,
    assert: Option<Domain>,
}

impl Step {
    /// An instruction as the row's selectors see it.
    fn of(instruction: Instruction) -> Self {
        let arithmetic = |op, dst: u32, a, b| Self {
            a: Some(a),
            b,
            op: Some(op),
            write: Some(dst as usize),
            assert: None,
        };
        match instruction {
            Instruction::Add(dst, a, b) => arithmetic(Op::Add, dst, a, Some(b)),
            Instruction::Sub(dst, a, b) => arithmetic(Op::Sub, dst, a, Some(b)),
            Instruction::Mul(dst, a, b) => arithmetic(Op::Mul, dst, a, Some(b)),
            Instruction::Neg(dst, a) => arithmetic(Op::Neg, dst, a, None),
            Instruction::Assert { domain, value, .. } => Self {
                a: Some(value),
                b: None,
                op: None,
                write: None,
                assert: Some(domain),
            },
        }
    }
}

/// An extension constant as expressions.
fn constant<E: Algebra>(v: Ext3) -> Ext<E> {
    v.coeffs().map(E::from)
}

/// Where α's coordinates start in the public inputs.
const ALPHA: usize = 0;
/// Where z's coordinates start in the public inputs, after α's; the quotient's values follow.
const Z: usize = 3;

impl Air for IdentityAir {
    fn id(&self) -> &str {
        "ballast/ood-identity"
    }

    fn width(&self) -> usize {
        self.own() + OWN
    }

    fn log_rows(&self) -> usize {
        self.log_rows
    }

    fn num_public_inputs(&self) -> usize {
        let c = &self.claims;
        let values = c.trace_z.len() + c.trace_zw.len() + c.periodic_z.len();
        self.claims_start() + 3 * values + c.public_inputs.len()
    }

    fn periodic_columns(&self) -> Cow<'_, [PeriodicColumn]> {
        Cow::Borrowed(&self.periodic)
    }

    fn public_columns(&self) -> Cow<'_, [PublicColumn]> {
        Cow::Borrowed(&self.public)
    }

    #[inline(always)]
    fn eval<B: ConstraintBuilder>(&self, f: &Frame<'_, B::Expr>, b: &mut B) {
        let registers = self.program.registers();
        let own = self.own();
        let (cur, next) = (f.current, f.next);
        let grid = self.grid();
        let group = |k: usize| &f.periodic[k * grid.selectors()..(k + 1) * grid.selectors()];
        let (read_a, read_b, write_grid) = (group(0), group(1), group(2));
        let p = &f.periodic[3 * grid.selectors()..];
        // Register r's selector: its grid row's flag times its grid column's.
        let selector = |flags: &[B::Expr], r: usize| {
            let column = flags[grid.row_flags() + r % grid.columns];
            if grid.rows > 1 {
                flags[r / grid.columns] * column
            } else {
                column
            }
        };
        let zero = B::Expr::from(Felt::ZERO);
        let one = constant::<B::Expr>(Ext3::ONE);
        let alpha = ext(f.public_inputs, ALPHA);
        let z = ext(f.public_inputs, Z);

        let register = |r: usize| ext(cur, 3 * r);
        let selected = |flags: &[B::Expr], constant: usize, claim: usize| {
            (0..registers).fold(add(ext(p, constant), ext(p, claim)), |acc, r| {
                add(acc, scale(register(r), selector(flags, r)))
            })
        };
        let (a, bb) = (ext(cur, own + OPERAND_A), ext(cur, own + OPERAND_B));
        let operand_a = selected(read_a, CONSTANT_A, CLAIM_A);
        let operand_b = selected(read_b, CONSTANT_B, CLAIM_B);
        let result = ext(cur, own + RESULT);
        let expected = sub(
            add(
                add(scale(add(a, bb), p[ADD]), scale(sub(a, bb), p[SUB])),
                scale(Ext3::mul_over(a, bb), p[MUL]),
            ),
            scale(a, p[NEG]),
        );
        let power = ext(cur, own + POWER);
        let asserts = (0..Domain::COUNT).fold(zero, |acc, d| acc + p[ASSERT + d]);
        let stepped = Ext3::mul_over(power, alpha);
        let term = Ext3::mul_over(power, a);
        let writes: Vec<B::Expr> = (0..registers).map(|r| selector(write_grid, r)).collect();
        for c in 0..3 {
            b.every_row(cur[own + OPERAND_A + c] - operand_a[c]);
            b.every_row(cur[own + OPERAND_B + c] - operand_b[c]);
            b.every_row(result[c] - expected[c]);
            for (r, &w) in writes.iter().enumerate() {
                let held = register(r)[c];
                b.transition(next[3 * r + c] - held - w * (result[c] - held));
            }
            b.transition(next[own + POWER + c] - power[c] - asserts * (stepped[c] - power[c]));
            b.first_row(power[c] - one[c]);
            for d in 0..Domain::COUNT {
                let sum = cur[own + SUMS + 3 * d + c];
                b.transition(next[own + SUMS + 3 * d + c] - sum - p[ASSERT + d] * term[c]);
                b.first_row(sum);
            }
        }

        // The identity, multiplied through by Z·(z − 1)·(z − ω^(n−1)).
        let n = 1u64 << self.child_log_rows;
        let z_n = crate::ext::pow(z, n, one);
        let vanishing = sub(z_n, one);
        let to_first = sub(z, one);
        let omega_last = Felt::two_adic_root(self.child_log_rows).inverse();
        let to_last = sub(z, constant(Ext3::from(omega_last)));
        // Each chunk's three coordinate values (3 elements each) follow α and z.
        let quotient = f.public_inputs[Z + 3..self.claims_start()]
            .chunks_exact(9)
            .rev()
            .fold([zero; 3], |acc, values| {
                let chunk = (0..3).fold([zero; 3], |s, c| {
                    add(
                        s,
                        Ext3::mul_over(constant(Ext3::basis(c)), ext(values, 3 * c)),
                    )
                });
                add(Ext3::mul_over(acc, z_n), chunk)
            });
        let sum = |d: Domain| ext(cur, own + SUMS + 3 * d.index());
        let mul = Ext3::mul_over::<B::Expr>;
        let lhs = [
            mul(sum(Domain::EveryRow), mul(to_first, to_last)),
            mul(
                sum(Domain::Transition),
                mul(mul(to_last, to_last), to_first),
            ),
            mul(sum(Domain::FirstRow), mul(vanishing, to_last)),
            mul(sum(Domain::LastRow), mul(vanishing, to_first)),
        ]
        .into_iter()
        .fold([zero; 3], add);
        let rhs = mul(quotient, mul(vanishing, mul(to_first, to_last)));
        let inverted = mul(ext(cur, own + VANISHING_INVERSE), vanishing);
        for c in 0..3 {
            b.last_row(lhs[c] - rhs[c]);
            b.last_row(inverted[c] - one[c]);
        }
    }
}

/// log2 of the rows that run `program`, whatever the claims: an instruction a row and an
/// idle row, at least 2^2.
pub(crate) fn program_log_rows(program: &ConstraintProgram) -> usize {
    (program.instructions().len() + 1)
        .next_power_of_two()
        .max(4)
        .trailing_zeros() as usize
}
