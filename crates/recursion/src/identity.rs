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
//!
//! Several children's identities at one α and z (a layer's tables, for a layer over it)
//! share one table ([`IdentityAir::joint`]): each program runs in its own rows, back to
//! back, each followed by its check row, where its identity holds with its own n, ω and
//! quotient values (the table's last row for the last); after each other check row, a
//! periodic flag restarts the power at 1 and the sums at 0. The registers are shared: a
//! program reads a register only after writing it. With one child it is the AIR above,
//! constraint for constraint.

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

use ballast_air::{
    Air, AirError, ConstraintBuilder, ConstraintInfo, ConstraintProgram, Domain, Frame,
    Instruction, Leaf, Operand, PeriodicColumn, ProgramError, PublicCell, PublicColumn,
    SparseColumns, SparseEntry, known_count,
};
use ballast_field::{Algebra, Ext3, Felt, RowBlocks};
use ballast_stark::{LagrangeAt, OodValues, PeriodicAt};

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
    /// This error occurs when identities joined in one table are none, are already joined,
    /// or were drawn at another α or z than the first.
    #[error("identities joined in one table must be of one child each, at one α and z")]
    Joint,
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
    /// Each list's name and length, in the order of the fields.
    fn lengths(&self) -> [(&'static str, usize); 5] {
        [
            ("trace values at z", self.trace_z.len()),
            ("trace values at zω", self.trace_zw.len()),
            ("periodic values at z", self.periodic_z.len()),
            ("public inputs", self.public_inputs.len()),
            ("quotient values at z", self.quotient_z.len()),
        ]
    }

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
        let periodic = PeriodicAt::of(air, &LagrangeAt::new(z));
        Self::of_periodic(air, &periodic, public_inputs, alpha, ood)
    }

    /// [`of`](Self::of), with `air`'s periodic columns at z given (`periodic`, at that z):
    /// tables of one AIR share them.
    pub fn of_periodic<A: Air>(
        air: &A,
        periodic: &PeriodicAt,
        public_inputs: &[Felt],
        alpha: Ext3,
        ood: OodValues,
    ) -> Self {
        Self {
            alpha,
            z: periodic.z(),
            trace_z: ood.trace_z,
            trace_zw: ood.trace_zw,
            periodic_z: periodic.with_public(air, public_inputs),
            public_inputs: public_inputs.to_vec(),
            quotient_z: ood.quotient_z,
        }
    }
}

/// The out-of-domain identity of one child proof, or of several at one α and z (a layer's
/// tables, [`joint`](Self::joint)): an [`Air`] of 3·R + 27 columns (R the most registers a
/// child program has) and 2^k rows (one an instruction, one more a child), whose public
/// inputs are α and z, then each child's quotient values at z, then each child's claims its
/// instructions read ([`public_inputs`](Self::public_inputs)).
#[derive(Clone, Debug)]
pub struct IdentityAir {
    /// Each child's program, claims, log2 rows and rows here.
    parts: Vec<Part>,
    /// The most registers a program has: the register file's.
    registers: usize,
    log_rows: usize,
    /// Its periodic columns by their values other than zero: what a verifier reads (their
    /// values at z, its constraint info's and key's lengths). Shared by its copies with
    /// other claims ([`with_claims`](Self::with_claims)), whose values at z are its own.
    sparse: Arc<SparseColumns>,
    /// Its periodic columns written out, for a prover, at the first read.
    periodic: OnceLock<Vec<PeriodicColumn>>,
    /// Its public columns, written when the AIR is built.
    public: Vec<PublicColumn>,
}

/// One child's identity within an [`IdentityAir`]: its program runs from `start`, and its
/// identity is checked on `check`, the row after its last instruction (the table's last row
/// for the last child).
#[derive(Clone, Debug)]
pub(crate) struct Part {
    program: ConstraintProgram,
    claims: OodClaims,
    /// log2 of the child's rows.
    child_log_rows: usize,
    start: usize,
    check: usize,
    /// Where its quotient's values start in the public inputs (every child's lead them, so
    /// the constraints, which read them alone, read low indices whatever the claims' count).
    quotient_input: usize,
    /// Where its other claims start: its trace values at z, at zω, periodic values, public
    /// inputs.
    claims_input: usize,
}

/// Refuses, by name, the first of the claims' lists (`got`: name and length) whose length
/// is not `expected`'s.
fn check_lengths<const N: usize>(
    expected: [usize; N],
    got: [(&'static str, usize); N],
) -> Result<(), IdentityError> {
    match expected.into_iter().zip(got).find(|(e, (_, g))| e != g) {
        Some((expected, (what, got))) => Err(IdentityError::Shape {
            what,
            expected,
            got,
        }),
        None => Ok(()),
    }
}

impl Part {
    /// The part of a proof of `air`, its constraints compiled to `program`, whose
    /// out-of-domain values are `claims`, placed at row 0.
    ///
    /// # Errors
    /// A malformed child AIR, or claims of another shape than its.
    fn of<A: Air>(
        air: &A,
        program: ConstraintProgram,
        claims: OodClaims,
    ) -> Result<Self, IdentityError> {
        let [trace_z, trace_zw, periodic_z, public_inputs, quotient_z] = claims.lengths();
        let own = [
            air.width(),
            air.width(),
            known_count(air),
            air.num_public_inputs(),
        ];
        check_lengths(own, [trace_z, trace_zw, periodic_z, public_inputs])?;
        let chunks = 1usize << ConstraintInfo::of(air)?.log_quotient_chunks;
        check_lengths([Ext3::DEGREE * chunks], [quotient_z])?;
        let mut asserted = 0u32;
        for instruction in program.instructions() {
            if let Instruction::Assert { index, .. } = *instruction {
                assert_eq!(index, asserted, "the program asserts in index order");
                asserted += 1;
            }
        }
        Ok(Self {
            program,
            claims,
            child_log_rows: air.log_rows(),
            start: 0,
            check: 0,
            quotient_input: 0,
            claims_input: 0,
        })
    }
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
/// Periodic columns after the selectors, before a check flag for each child but the last
/// (1 on its check row); the public columns follow them in `Frame::periodic`: the claim
/// added to operand a, then b (3 coordinates each).
const PERIODIC: usize = ASSERT + Domain::COUNT;

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
        Ok(Self::of_parts(vec![Part::of(air, program, claims)?]))
    }

    /// This one child's identity on other `claims` of the same shape: its columns are its
    /// program's and its claims' lengths', not their values, so they are kept (children of
    /// one AIR build their identities from one).
    ///
    /// # Errors
    /// Claims of another shape than its, or an identity of several children.
    pub(crate) fn with_claims(&self, claims: OodClaims) -> Result<Self, IdentityError> {
        let [part] = self.parts.as_slice() else {
            return Err(IdentityError::Shape {
                what: "children of an identity given new claims",
                expected: 1,
                got: self.parts.len(),
            });
        };
        let own = part.claims.lengths().map(|(_, length)| length);
        check_lengths(own, claims.lengths())?;
        let mut identity = self.clone();
        identity.parts[0].claims = claims;
        Ok(identity)
    }

    /// One child's part of a [`joint`](Self::joint) identity, `program` its AIR's
    /// ([`ConstraintProgram::of`], compiled once for AIRs of one definition), its periodic
    /// columns not written: [`joined`](Self::joined) writes the whole table's once.
    ///
    /// # Errors
    /// As [`with_program`](Self::with_program).
    pub(crate) fn part<A: Air>(
        air: &A,
        program: ConstraintProgram,
        claims: OodClaims,
    ) -> Result<Part, IdentityError> {
        Part::of(air, program, claims)
    }

    /// The identities of several children's proofs at one α and z, `identities` (each
    /// of one child, in order), in one table: each child's program runs in its own rows,
    /// back to back, each followed by the row that checks its identity, with its sums and
    /// power restarted after it; the registers are shared (a program reads a register only
    /// after writing it). A layer over a layer checks its child's tables' identities so,
    /// in one table whatever their count.
    ///
    /// # Errors
    /// No identity, one that is itself several children's, or claims at another α or z than
    /// the first's.
    pub fn joint(identities: Vec<IdentityAir>) -> Result<Self, IdentityError> {
        let parts = (identities.into_iter())
            .map(|identity| match <[Part; 1]>::try_from(identity.parts) {
                Ok([part]) => Ok(part),
                Err(_) => Err(IdentityError::Joint),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Self::joined(parts)
    }

    /// [`joint`](Self::joint) of the children's `parts`, in order.
    ///
    /// # Errors
    /// No part, or claims at another α or z than the first's.
    pub(crate) fn joined(parts: Vec<Part>) -> Result<Self, IdentityError> {
        let first = parts.first().ok_or(IdentityError::Joint)?;
        let (alpha, z) = (first.claims.alpha, first.claims.z);
        if parts
            .iter()
            .any(|p| (p.claims.alpha, p.claims.z) != (alpha, z))
        {
            return Err(IdentityError::Joint);
        }
        Ok(Self::of_parts(parts))
    }

    /// The AIR of `parts`, placed (their rows and public inputs) and written.
    fn of_parts(mut parts: Vec<Part>) -> Self {
        let lengths: Vec<usize> = (parts.iter())
            .map(|p| p.program.instructions().len())
            .collect();
        let log_rows = identity_log_rows(&lengths);
        let rows = 1usize << log_rows;
        let (mut start, mut inputs) = (0, Z + 3);
        let count = parts.len();
        for (j, part) in parts.iter_mut().enumerate() {
            part.start = start;
            part.check = if j + 1 == count {
                rows - 1
            } else {
                start + lengths[j]
            };
            part.quotient_input = inputs;
            start = part.check + 1;
            inputs += part.quotient_count();
        }
        for part in &mut parts {
            part.claims_input = inputs;
            inputs += part.input_count() - part.quotient_count();
        }
        let registers = (parts.iter())
            .map(|p| p.program.registers())
            .max()
            .unwrap_or(0);
        let mut identity = Self {
            parts,
            registers,
            log_rows,
            sparse: Arc::default(),
            periodic: OnceLock::new(),
            public: Vec::new(),
        };
        let steps = identity.steps();
        identity.sparse = Arc::new(identity.write_periodic(&steps));
        identity.public = identity.write_public(&steps);
        identity
    }

    /// Its periodic columns' values other than zero: for each instruction row, the register
    /// each operand reads and the result's (its grid row and column), each operand's
    /// constant, the opcode and the assertion's domain; on each child's check row but the
    /// last's, its check flag. One pass over the rows, each row giving its few values in
    /// the columns' order.
    fn write_periodic(&self, steps: &[Option<(usize, Step)>]) -> SparseColumns {
        let grid = self.grid();
        let (selectors, own) = (grid.selectors(), 3 * grid.selectors());
        let restarted = self.restarted();
        let mut entries = Vec::with_capacity(8 * steps.len());
        let mut push = |row: usize, column: usize, value: Felt| {
            if value != Felt::ZERO {
                let (row, column) = (row as u32, column as u32);
                entries.push(SparseEntry { row, column, value });
            }
        };
        fn register(operand: Option<Operand>) -> Option<usize> {
            match operand {
                Some(Operand::Register(x)) => Some(x as usize),
                _ => None,
            }
        }
        let mut checks = restarted.iter().enumerate().peekable();
        for (row, step) in steps.iter().enumerate() {
            if let Some(&(j, s)) = step.as_ref() {
                for (k, r) in [register(s.a), register(s.b), s.write]
                    .into_iter()
                    .enumerate()
                {
                    if let Some(r) = r {
                        let selector = k * selectors;
                        if grid.row_flags() > 0 {
                            push(row, selector + r / grid.columns, Felt::ONE);
                        }
                        let column = selector + grid.row_flags() + r % grid.columns;
                        push(row, column, Felt::ONE);
                    }
                }
                for (constant, operand) in [(CONSTANT_A, s.a), (CONSTANT_B, s.b)] {
                    if let Some(Operand::Constant(k)) = operand {
                        let value = self.parts[j].program.constants()[k as usize];
                        push(row, own + constant, value);
                    }
                }
                if let Some(op) = s.op {
                    let opcode = match op {
                        Op::Add => ADD,
                        Op::Sub => SUB,
                        Op::Mul => MUL,
                        Op::Neg => NEG,
                    };
                    push(row, own + opcode, Felt::ONE);
                }
                if let Some(domain) = s.assert {
                    push(row, own + ASSERT + domain.index(), Felt::ONE);
                }
            }
            // A check flag, its row's last column, whatever else the row holds.
            if let Some((k, _)) = checks.next_if(|(_, part)| part.check == row) {
                push(row, own + PERIODIC + k, Felt::ONE);
            }
        }
        let count = own + PERIODIC + restarted.len();
        SparseColumns::new(count, steps.len(), entries)
            .expect("the rows are walked in order, each in its columns' order")
    }

    /// Its public columns: for each operand and coordinate, on each row whose operand is a
    /// leaf, the public input of that coordinate of its child's claim (a child's public
    /// input is a base-field value: its first coordinate alone).
    fn write_public(&self, steps: &[Option<(usize, Step)>]) -> Vec<PublicColumn> {
        let mut columns = Vec::with_capacity(6);
        for pick in [|s: &Step| s.a, |s: &Step| s.b] {
            for c in 0..3 {
                let cells = (steps.iter().enumerate())
                    .filter_map(|(row, s)| {
                        match s.as_ref().and_then(|(j, s)| Some((j, pick(s)?))) {
                            Some((&j, Operand::Leaf(leaf))) => self.parts[j]
                                .claim_input(leaf, c)
                                .map(|input| PublicCell { row, input }),
                            _ => None,
                        }
                    })
                    .collect();
                columns.push(PublicColumn { cells });
            }
        }
        columns
    }

    /// Each row's child and instruction, as its selectors see it (none on a check or idle
    /// row).
    fn steps(&self) -> Vec<Option<(usize, Step)>> {
        let mut steps = vec![None; 1 << self.log_rows];
        for (j, part) in self.parts.iter().enumerate() {
            for (k, &i) in part.program.instructions().iter().enumerate() {
                steps[part.start + k] = Some((j, Step::of(i)));
            }
        }
        steps
    }

    /// The children whose sums and power restart after their check row: all but the last.
    fn restarted(&self) -> &[Part] {
        self.parts.split_last().map_or(&[], |(_, rest)| rest)
    }

    /// Each child's claims, in the order joined (one for [`new`](Self::new)'s).
    pub fn claims(&self) -> Vec<&OodClaims> {
        self.parts.iter().map(|p| &p.claims).collect()
    }

    /// The public inputs: α and z, then each child's quotient values at z, then for each
    /// child each trace value at z, then at zω, each periodic value at z (3 coordinates
    /// each), then its public inputs.
    pub fn public_inputs(&self) -> Vec<Felt> {
        let c = &self.parts[0].claims;
        let mut inputs: Vec<Felt> = [c.alpha, c.z].iter().flat_map(|v| v.coeffs()).collect();
        for part in &self.parts {
            inputs.extend(part.claims.quotient_z.iter().flat_map(|v| v.coeffs()));
        }
        for part in &self.parts {
            let c = &part.claims;
            let ext = (c.trace_z.iter()).chain(&c.trace_zw).chain(&c.periodic_z);
            inputs.extend(ext.flat_map(|v| v.coeffs()));
            inputs.extend(&c.public_inputs);
        }
        inputs
    }

    /// The trace: each child's program run on its claims, a row an instruction.
    ///
    /// # Errors
    /// A z in a child's trace domain, which its transcript never draws.
    pub fn trace(&self) -> Result<RowBlocks, IdentityError> {
        let inverses = (self.parts.iter())
            .map(|p| {
                (p.claims.z.pow(1 << p.child_log_rows) - Ext3::ONE)
                    .try_inverse()
                    .ok_or(IdentityError::OnTheDomain)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let width = self.width();
        let rows = 1usize << self.log_rows;
        let alpha = self.parts[0].claims.alpha;
        let mut table = Vec::with_capacity(rows * width);
        let mut file = vec![Ext3::ZERO; self.registers];
        let mut power = Ext3::ONE;
        let mut sums = [Ext3::ZERO; Domain::COUNT];
        let steps = self.steps();
        let mut part = 0;
        for (row, step) in steps.iter().enumerate() {
            let (a, b) = step.as_ref().map_or((Ext3::ZERO, Ext3::ZERO), |(j, s)| {
                let read = |operand| self.parts[*j].read(&file, operand);
                (read(s.a), read(s.b))
            });
            let result = (step.as_ref())
                .and_then(|(_, s)| s.op)
                .map_or(Ext3::ZERO, |op| op.apply(a, b));
            for v in file
                .iter()
                .chain(&[a, b, result, power])
                .chain(&sums)
                .chain(&[inverses[part]])
            {
                table.extend(v.coeffs());
            }
            match step {
                Some((
                    _,
                    Step {
                        write: Some(dst), ..
                    },
                )) => file[*dst] = result,
                Some((
                    _,
                    Step {
                        assert: Some(domain),
                        ..
                    },
                )) => {
                    sums[domain.index()] += power * a;
                    power *= alpha;
                }
                _ => {}
            }
            if row == self.parts[part].check && part + 1 < self.parts.len() {
                (power, sums, part) = (Ext3::ONE, [Ext3::ZERO; Domain::COUNT], part + 1);
            }
        }
        Ok(RowBlocks::from_row_vec(width, table))
    }

    /// The grid its registers' selectors address.
    fn grid(&self) -> Grid {
        Grid::of(self.registers)
    }

    /// Offset of the columns after the registers.
    fn own(&self) -> usize {
        3 * self.registers
    }

    /// Where the public columns start among the periodic ones the constraints read.
    fn claim_columns(&self) -> usize {
        PERIODIC + self.restarted().len()
    }
}

impl Part {
    /// How many public inputs it takes: its quotient's values and its claims.
    fn input_count(&self) -> usize {
        let c = &self.claims;
        let values = c.quotient_z.len() + c.trace_z.len() + c.trace_zw.len() + c.periodic_z.len();
        3 * values + c.public_inputs.len()
    }

    /// How many public inputs its quotient's values take.
    fn quotient_count(&self) -> usize {
        3 * self.claims.quotient_z.len()
    }

    /// Which public input holds coordinate `c` of `leaf`'s claim; none for a child's public
    /// input's other coordinates, which are zero.
    fn claim_input(&self, leaf: Leaf, c: usize) -> Option<usize> {
        let claims = &self.claims;
        let trace_z = self.claims_input;
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
        Z + 3 + self.parts.iter().map(Part::input_count).sum::<usize>()
    }

    fn periodic_columns(&self) -> Cow<'_, [PeriodicColumn]> {
        Cow::Borrowed(self.periodic.get_or_init(|| self.sparse.columns()))
    }

    fn sparse_periodic(&self) -> Option<&SparseColumns> {
        Some(&*self.sparse)
    }

    /// What `write_periodic` and `write_public` build the columns from: the register count
    /// (the grid's), then each program's counts of claims (its quotient's, its trace's at z
    /// and at zω, its periodic columns' and its public inputs: where each of its leaves sits
    /// among the public inputs), instruction words and constants, each list led by its
    /// length (each program's rows follow from the lengths and the height).
    fn columns_source(&self) -> Option<Vec<u8>> {
        let mut words = vec![self.registers as u64, self.parts.len() as u64];
        for part in &self.parts {
            let c = &part.claims;
            words.extend(
                [
                    c.quotient_z.len(),
                    c.trace_z.len(),
                    c.trace_zw.len(),
                    c.periodic_z.len(),
                    c.public_inputs.len(),
                ]
                .map(|count| count as u64),
            );
            let program = &part.program;
            let instructions = program.words();
            words.push(instructions.len() as u64);
            words.extend(instructions);
            words.push(program.constants().len() as u64);
            words.extend(program.constants().iter().map(|c| c.as_u64()));
        }
        Some(words.iter().flat_map(|w| w.to_le_bytes()).collect())
    }

    fn public_columns(&self) -> Cow<'_, [PublicColumn]> {
        Cow::Borrowed(&self.public)
    }

    #[inline(always)]
    fn eval<B: ConstraintBuilder>(&self, f: &Frame<'_, B::Expr>, b: &mut B) {
        let registers = self.registers;
        let own = self.own();
        let (cur, next) = (f.current, f.next);
        let grid = self.grid();
        let group = |k: usize| &f.periodic[k * grid.selectors()..(k + 1) * grid.selectors()];
        let (read_a, read_b, write_grid) = (group(0), group(1), group(2));
        let p = &f.periodic[3 * grid.selectors()..];
        // Register r's selector: its grid row's flag times its grid column's.
        let column_flag = |flags: &[B::Expr], r: usize| flags[grid.row_flags() + r % grid.columns];
        let selector = |flags: &[B::Expr], r: usize| {
            let column = column_flag(flags, r);
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
        // The register the flags select, grid row by grid row: Σ_i row_i·Σ_j column_j·R_ij,
        // so that the flags' products, which every coordinate would share, are never formed.
        let selected = |flags: &[B::Expr], constant: usize, claim: usize| {
            let immediate = add(ext(p, constant), ext(p, claim));
            (0..grid.rows).fold(immediate, |acc, i| {
                let row = (i * grid.columns..registers.min((i + 1) * grid.columns))
                    .fold([zero; 3], |row, r| {
                        add(row, scale(register(r), column_flag(flags, r)))
                    });
                add(
                    acc,
                    if grid.rows > 1 {
                        scale(row, flags[i])
                    } else {
                        row
                    },
                )
            })
        };
        let (a, bb) = (ext(cur, own + OPERAND_A), ext(cur, own + OPERAND_B));
        let claims = self.claim_columns();
        let operand_a = selected(read_a, CONSTANT_A, claims);
        let operand_b = selected(read_b, CONSTANT_B, claims + 3);
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
        // The check rows after which the power and the sums restart (none for one child).
        let checks: Vec<B::Expr> = (0..self.restarted().len())
            .map(|j| p[PERIODIC + j])
            .collect();
        let restart = checks.iter().copied().reduce(|acc, c| acc + c);
        // Each operand's coordinates, the result's, then register by register: a compiled
        // program holds one register's write selector at a time, not all of them across the
        // coordinates.
        for c in 0..3 {
            b.every_row(cur[own + OPERAND_A + c] - operand_a[c]);
        }
        for c in 0..3 {
            b.every_row(cur[own + OPERAND_B + c] - operand_b[c]);
        }
        for c in 0..3 {
            b.every_row(result[c] - expected[c]);
        }
        for (r, &w) in writes.iter().enumerate() {
            for c in 0..3 {
                let held = register(r)[c];
                b.transition(next[3 * r + c] - held - w * (result[c] - held));
            }
        }
        for c in 0..3 {
            let stepped = next[own + POWER + c] - power[c] - asserts * (stepped[c] - power[c]);
            b.transition(restart.map_or(stepped, |r| stepped - r * (one[c] - power[c])));
            b.first_row(power[c] - one[c]);
            for d in 0..Domain::COUNT {
                let sum = cur[own + SUMS + 3 * d + c];
                let added = next[own + SUMS + 3 * d + c] - sum - p[ASSERT + d] * term[c];
                b.transition(restart.map_or(added, |r| added + r * sum));
                b.first_row(sum);
            }
        }

        // Each child's identity, multiplied through by Z·(z − 1)·(z − ω^(n−1)), and 1/Z's
        // check: on the last row for the last child, on its check row for each other.
        let mul = Ext3::mul_over::<B::Expr>;
        let sum = |d: Domain| ext(cur, own + SUMS + 3 * d.index());
        let identity = |part: &Part| {
            let n = 1u64 << part.child_log_rows;
            let z_n = crate::ext::pow(z, n, one);
            let vanishing = sub(z_n, one);
            let to_first = sub(z, one);
            let omega_last = Felt::two_adic_root(part.child_log_rows).inverse();
            let to_last = sub(z, constant(Ext3::from(omega_last)));
            // Each chunk's three coordinate values (3 elements each), one after another.
            let quotients = part.quotient_input..part.quotient_input + part.quotient_count();
            let quotient =
                f.public_inputs[quotients]
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
            (lhs, rhs, inverted)
        };
        let (lhs, rhs, inverted) = identity(self.parts.last().expect("a child"));
        for c in 0..3 {
            b.last_row(lhs[c] - rhs[c]);
            b.last_row(inverted[c] - one[c]);
        }
        for (part, &check) in self.restarted().iter().zip(&checks) {
            let (lhs, rhs, inverted) = identity(part);
            for c in 0..3 {
                b.every_row(check * (lhs[c] - rhs[c]));
                b.every_row(check * (inverted[c] - one[c]));
            }
        }
    }
}

/// log2 of the rows that run programs of these instruction counts, whatever the claims:
/// an instruction a row and a check row a program, at least 2^2.
pub(crate) fn identity_log_rows(lengths: &[usize]) -> usize {
    (lengths.iter().sum::<usize>() + lengths.len())
        .next_power_of_two()
        .max(4)
        .trailing_zeros() as usize
}

#[cfg(test)]
mod tests {
    use ballast_stark::TableAir;

    use super::*;

    /// x' = x + y·p on transitions, with p periodic and x's first row a public input.
    struct Tiny;

    impl Air for Tiny {
        fn id(&self) -> &str {
            "test/tiny"
        }
        fn width(&self) -> usize {
            2
        }
        fn log_rows(&self) -> usize {
            3
        }
        fn num_public_inputs(&self) -> usize {
            1
        }
        fn periodic_columns(&self) -> Cow<'_, [PeriodicColumn]> {
            let values = [1, 2, 3, 4].map(Felt::new).to_vec();
            Cow::Owned(vec![PeriodicColumn { values }])
        }
        fn eval<B: ConstraintBuilder>(&self, f: &Frame<'_, B::Expr>, b: &mut B) {
            let (x, y, p) = (f.current[0], f.current[1], f.periodic[0]);
            b.transition(f.next[0] - x - y * p);
            b.first_row(x - f.public_inputs[0]);
        }
    }

    fn claims(seed: u64) -> OodClaims {
        let ext = |k: u64| Ext3::new([Felt::new(seed + k), Felt::new(7 * k), Felt::new(seed)]);
        let chunks = 1usize << ConstraintInfo::of(&Tiny).unwrap().log_quotient_chunks;
        OodClaims {
            alpha: ext(1),
            z: ext(2),
            trace_z: vec![ext(3), ext(4)],
            trace_zw: vec![ext(5), ext(6)],
            periodic_z: vec![ext(7)],
            public_inputs: vec![Felt::new(seed + 8)],
            quotient_z: (0..Ext3::DEGREE * chunks)
                .map(|k| ext(9 + k as u64))
                .collect(),
        }
    }

    #[test]
    fn an_identity_on_new_claims_is_the_one_built_on_them() {
        let template = IdentityAir::new(&Tiny, claims(0)).unwrap();
        let built = IdentityAir::new(&Tiny, claims(100)).unwrap();
        let reused = template.with_claims(claims(100)).unwrap();
        assert_eq!(reused.public_inputs(), built.public_inputs());
        assert_ne!(reused.public_inputs(), template.public_inputs());
        assert_eq!(reused.periodic_columns(), built.periodic_columns());
        // The copy shares its template's sparse columns: a verifier evaluates them once.
        let sparse = |air: &IdentityAir| std::ptr::from_ref(air.sparse_periodic().unwrap());
        assert_eq!(sparse(&reused), sparse(&template));
        assert_eq!(reused.public_columns(), built.public_columns());
        let key = |air: &IdentityAir| TableAir::key(air, &TableAir::info(air).unwrap());
        assert_eq!(key(&reused), key(&built));
        assert_eq!(reused.trace().unwrap(), built.trace().unwrap());
        // Claims of another shape are refused by name.
        let mut short = claims(100);
        short.quotient_z.pop();
        assert!(matches!(
            template.with_claims(short),
            Err(IdentityError::Shape {
                what: "quotient values at z",
                ..
            })
        ));
    }
}
