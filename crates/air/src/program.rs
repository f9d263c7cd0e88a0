//! An AIR's constraints compiled into a register program that one interpreter runs per row.
//!
//! The [`SymbolicAir`] DAG is scheduled constraint by constraint (each constraint's
//! operands first, in post-order, nodes already computed reused), and every computed node
//! gets a register that is reused once its last reader has run. Leaves (row values,
//! periodic columns, public inputs) and constants are operands of their own, read where
//! they are used. `Assert` folds a constraint's value into its domain's sum with the
//! constraint's coefficient, which is how the prover consumes constraints
//! (Σ_i α^i·C_i per domain): [`ConstraintProgram::fold`] on the host, the `constraints`
//! kernel on a device, from the same [`words`](ConstraintProgram::words).

use std::collections::HashMap;

use ballast_field::{Ext3, Felt};
use thiserror::Error;

use crate::symbolic::{Leaf, Node, SymbolicAir};
use crate::{Air, Domain, Frame};

/// Where an instruction reads a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    /// A register: a value an earlier instruction computed.
    Register(u32),
    /// A leaf of the row, the periodic columns or the public inputs.
    Leaf(Leaf),
    /// Constant `i` of [`ConstraintProgram::constants`].
    Constant(u32),
}

/// One step of a [`ConstraintProgram`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Instruction {
    /// `dst ← a + b`.
    Add(u32, Operand, Operand),
    /// `dst ← a − b`.
    Sub(u32, Operand, Operand),
    /// `dst ← a · b`.
    Mul(u32, Operand, Operand),
    /// `dst ← −a`.
    Neg(u32, Operand),
    /// Constraint `index` (on `domain`) has the value `a`: its domain's sum gains
    /// the coefficient of constraint `index` times a.
    Assert {
        /// The constraint's index, in assertion order.
        index: u32,
        /// Its domain.
        domain: Domain,
        /// Its value.
        value: Operand,
    },
}

/// Why an AIR cannot be compiled for the interpreter.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ProgramError {
    /// This error occurs when a count exceeds what an instruction word can address.
    #[error("the constraint program needs {count} {what}, the encoding holds {max}")]
    TooLarge {
        /// What overflowed.
        what: &'static str,
        /// How many are needed (of leaves: the highest index read, plus one).
        count: usize,
        /// The most the encoding holds.
        max: usize,
    },
}

/// Bits of an operand's index in an instruction word.
const INDEX_BITS: u32 = 17;
/// Bits of an encoded operand: a 3-bit kind above the index.
const OPERAND_BITS: u32 = INDEX_BITS + 3;

/// The instruction word's opcodes (bits 0..4), as `kernels/constraints.cuh` reads them.
const OP_ADD: u64 = 0;
const OP_SUB: u64 = 1;
const OP_MUL: u64 = 2;
const OP_NEG: u64 = 3;
const OP_ASSERT: u64 = 4;

/// An AIR's constraints as a register program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConstraintProgram {
    instructions: Vec<Instruction>,
    constants: Vec<Felt>,
    registers: usize,
    domains: Vec<Domain>,
}

impl ConstraintProgram {
    /// Traces `air` ([`SymbolicAir::of`]) and compiles it.
    ///
    /// # Errors
    /// If the AIR has more columns, constants or live values than the encoding addresses.
    pub fn of<A: Air>(air: &A) -> Result<Self, ProgramError> {
        Self::compile(&SymbolicAir::of(air))
    }

    /// Compiles a traced AIR.
    ///
    /// # Errors
    /// As [`of`](Self::of).
    pub fn compile(dag: &SymbolicAir) -> Result<Self, ProgramError> {
        let max_index = 1usize << INDEX_BITS;
        // Each leaf read is an operand, whose index must fit; what no constraint reads (a
        // public input read only through a public column) takes no index.
        let mut reads = [
            ("columns", 0),
            ("periodic columns", 0),
            ("public inputs", 0),
        ];
        for node in &dag.nodes {
            if let Node::Leaf(leaf) = *node {
                let (kind, index) = match leaf {
                    Leaf::Current(c) | Leaf::Next(c) => (0, c),
                    Leaf::Periodic(c) => (1, c),
                    Leaf::Public(i) => (2, i),
                };
                reads[kind].1 = usize::max(reads[kind].1, index as usize + 1);
            }
        }
        for (what, count) in reads {
            if count > max_index {
                return Err(ProgramError::TooLarge {
                    what,
                    count,
                    max: max_index,
                });
            }
        }
        let order = schedule(dag);
        // The last instruction (by position in `order` plus asserts) reading each node.
        let mut last_use = vec![0usize; dag.nodes.len()];
        for (step, item) in order.iter().enumerate() {
            match *item {
                Step::Compute(node) => {
                    for operand in operands(&dag.nodes[node as usize]) {
                        last_use[operand as usize] = step;
                    }
                }
                Step::Assert(constraint) => last_use[dag.constraints[constraint].1 as usize] = step,
            }
        }
        let mut constants: Vec<Felt> = Vec::new();
        let mut constant_index: HashMap<Felt, u32> = HashMap::new();
        let mut register_of: Vec<Option<u32>> = vec![None; dag.nodes.len()];
        let mut free: Vec<u32> = Vec::new();
        let mut registers = 0u32;
        let mut instructions = Vec::with_capacity(order.len());
        for (step, item) in order.iter().enumerate() {
            let mut operand = |node: u32| -> Operand {
                match dag.nodes[node as usize] {
                    Node::Leaf(leaf) => Operand::Leaf(leaf),
                    Node::Constant(c) => {
                        Operand::Constant(*constant_index.entry(c).or_insert_with(|| {
                            constants.push(c);
                            constants.len() as u32 - 1
                        }))
                    }
                    _ => Operand::Register(
                        register_of[node as usize].expect("operands are computed first"),
                    ),
                }
            };
            match *item {
                Step::Assert(constraint) => {
                    let (domain, node) = dag.constraints[constraint];
                    instructions.push(Instruction::Assert {
                        index: constraint as u32,
                        domain,
                        value: operand(node),
                    });
                    release(&mut free, &register_of, &last_use, step, &[node]);
                }
                Step::Compute(node) => {
                    let n = dag.nodes[node as usize];
                    let reads = operands(&n);
                    let (a, b) = (operand(reads[0]), reads.get(1).map(|&r| operand(r)));
                    // Operands whose last reader this is free their registers first: the
                    // result may take one (the interpreter reads before it writes).
                    release(&mut free, &register_of, &last_use, step, &reads);
                    let dst = free.pop().unwrap_or_else(|| {
                        registers += 1;
                        registers - 1
                    });
                    register_of[node as usize] = Some(dst);
                    instructions.push(match n {
                        Node::Add(..) => Instruction::Add(dst, a, b.expect("two operands")),
                        Node::Sub(..) => Instruction::Sub(dst, a, b.expect("two operands")),
                        Node::Mul(..) => Instruction::Mul(dst, a, b.expect("two operands")),
                        Node::Neg(..) => Instruction::Neg(dst, a),
                        Node::Leaf(_) | Node::Constant(_) => unreachable!("leaves are operands"),
                    });
                }
            }
        }
        // A register is an operand too: its index takes an operand's bits.
        for (what, count, max) in [
            ("constants", constants.len(), max_index),
            ("registers", registers as usize, max_index),
        ] {
            if count > max {
                return Err(ProgramError::TooLarge { what, count, max });
            }
        }
        Ok(Self {
            instructions,
            constants,
            registers: registers as usize,
            domains: dag.constraints.iter().map(|&(d, _)| d).collect(),
        })
    }

    /// The instructions, in order.
    pub fn instructions(&self) -> &[Instruction] {
        &self.instructions
    }

    /// The constants [`Operand::Constant`] indexes.
    pub fn constants(&self) -> &[Felt] {
        &self.constants
    }

    /// Registers the program uses: the most values live at once.
    pub fn registers(&self) -> usize {
        self.registers
    }

    /// Each constraint's domain, in assertion order.
    pub fn domains(&self) -> &[Domain] {
        &self.domains
    }

    /// Every constraint's value at one row, in assertion order.
    ///
    /// # Panics
    /// If the program does not assert every constraint exactly once (a program from
    /// [`compile`](Self::compile) does).
    pub fn evaluate(&self, frame: &Frame<'_, Felt>) -> Vec<Felt> {
        let mut values = vec![None; self.domains.len()];
        self.run(frame, |index, _, value| {
            let slot = &mut values[index as usize];
            assert!(slot.is_none(), "constraint {index} asserted twice");
            *slot = Some(value);
        });
        values
            .into_iter()
            .enumerate()
            .map(|(i, v)| v.unwrap_or_else(|| panic!("constraint {i} is never asserted")))
            .collect()
    }

    /// Σ_i c_i·C_i (c_i = `coefficients[i]`) per domain ([`Domain::ALL`] order): what the prover's
    /// composition needs of a row, and what the device's interpreter computes.
    pub fn fold(&self, frame: &Frame<'_, Felt>, coefficients: &[Ext3]) -> [Ext3; Domain::COUNT] {
        let mut sums = [Ext3::ZERO; Domain::COUNT];
        self.run(frame, |index, domain, value| {
            sums[domain.index()] += coefficients[index as usize].scale(value);
        });
        sums
    }

    /// Runs the program on one row, handing each assertion to `assert`.
    fn run(&self, frame: &Frame<'_, Felt>, mut assert: impl FnMut(u32, Domain, Felt)) {
        let mut registers = vec![Felt::ZERO; self.registers];
        for instruction in &self.instructions {
            let read = |registers: &[Felt], operand: Operand| match operand {
                Operand::Register(r) => registers[r as usize],
                Operand::Leaf(leaf) => frame.leaf(leaf),
                Operand::Constant(c) => self.constants[c as usize],
            };
            match *instruction {
                Instruction::Add(dst, a, b) => {
                    registers[dst as usize] = read(&registers, a) + read(&registers, b);
                }
                Instruction::Sub(dst, a, b) => {
                    registers[dst as usize] = read(&registers, a) - read(&registers, b);
                }
                Instruction::Mul(dst, a, b) => {
                    registers[dst as usize] = read(&registers, a) * read(&registers, b);
                }
                Instruction::Neg(dst, a) => registers[dst as usize] = -read(&registers, a),
                Instruction::Assert {
                    index,
                    domain,
                    value,
                } => assert(index, domain, read(&registers, value)),
            }
        }
    }

    /// The instructions as the device reads them, one word each: the opcode in bits 0..4;
    /// operands a and b in bits 4..24 and 24..44, each a kind (0 register, 1 current row,
    /// 2 next row, 3 periodic, 4 public input, 5 constant) above a 17-bit index; the
    /// destination register in bits 44..64. An assertion has its value in a, its domain in
    /// bits 24..26 and its constraint index in bits 32..64.
    pub fn words(&self) -> Vec<u64> {
        let operand = |o: Operand| -> u64 {
            let (kind, index) = match o {
                Operand::Register(r) => (0, r),
                Operand::Leaf(Leaf::Current(c)) => (1, c),
                Operand::Leaf(Leaf::Next(c)) => (2, c),
                Operand::Leaf(Leaf::Periodic(c)) => (3, c),
                Operand::Leaf(Leaf::Public(c)) => (4, c),
                Operand::Constant(c) => (5, c),
            };
            (kind << INDEX_BITS) | u64::from(index)
        };
        let arithmetic = |op: u64, dst: u32, a: Operand, b: u64| {
            op | (operand(a) << 4) | (b << (4 + OPERAND_BITS)) | (u64::from(dst) << 44)
        };
        self.instructions
            .iter()
            .map(|&i| match i {
                Instruction::Add(dst, a, b) => arithmetic(OP_ADD, dst, a, operand(b)),
                Instruction::Sub(dst, a, b) => arithmetic(OP_SUB, dst, a, operand(b)),
                Instruction::Mul(dst, a, b) => arithmetic(OP_MUL, dst, a, operand(b)),
                Instruction::Neg(dst, a) => arithmetic(OP_NEG, dst, a, 0),
                Instruction::Assert {
                    index,
                    domain,
                    value,
                } => {
                    OP_ASSERT
                        | (operand(value) << 4)
                        | ((domain.index() as u64) << 24)
                        | (u64::from(index) << 32)
                }
            })
            .collect()
    }

    /// The program without its assertion of constraint `index`: for tests that must see a
    /// comparison fail.
    #[doc(hidden)]
    pub fn without_constraint(&self, index: u32) -> Self {
        let mut program = self.clone();
        program
            .instructions
            .retain(|i| !matches!(i, Instruction::Assert { index: j, .. } if *j == index));
        program
    }
}

/// One step of the schedule: compute a node, or assert a constraint.
enum Step {
    Compute(u32),
    Assert(usize),
}

/// The order of computation: constraint by constraint, each one's uncomputed operands in
/// post-order, then its assertion. Leaves and constants are never computed.
fn schedule(dag: &SymbolicAir) -> Vec<Step> {
    let mut done = vec![false; dag.nodes.len()];
    let mut order = Vec::new();
    let mut stack: Vec<(u32, bool)> = Vec::new();
    for (constraint, &(_, root)) in dag.constraints.iter().enumerate() {
        stack.push((root, false));
        while let Some((node, expanded)) = stack.pop() {
            if done[node as usize] {
                continue;
            }
            let n = &dag.nodes[node as usize];
            if matches!(n, Node::Leaf(_) | Node::Constant(_)) {
                done[node as usize] = true;
            } else if expanded {
                done[node as usize] = true;
                order.push(Step::Compute(node));
            } else {
                stack.push((node, true));
                // Pushed in reverse so that the first operand is computed first.
                for &operand in operands(n).iter().rev() {
                    stack.push((operand, false));
                }
            }
        }
        order.push(Step::Assert(constraint));
    }
    order
}

/// A node's operands.
fn operands(node: &Node) -> Vec<u32> {
    match *node {
        Node::Add(a, b) | Node::Sub(a, b) | Node::Mul(a, b) => vec![a, b],
        Node::Neg(a) => vec![a],
        Node::Leaf(_) | Node::Constant(_) => Vec::new(),
    }
}

/// Frees the registers of the `nodes` whose last reader is `step` (each once).
fn release(
    free: &mut Vec<u32>,
    register_of: &[Option<u32>],
    last_use: &[usize],
    step: usize,
    nodes: &[u32],
) {
    for (i, &node) in nodes.iter().enumerate() {
        if nodes[..i].contains(&node) || last_use[node as usize] != step {
            continue;
        }
        if let Some(r) = register_of[node as usize] {
            free.push(r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ConstraintBuilder, PeriodicColumn};
    use std::borrow::Cow;

    /// Squares, a periodic column, public inputs and a shared subexpression.
    struct Mixed;

    impl Air for Mixed {
        fn id(&self) -> &str {
            "test/mixed"
        }
        fn width(&self) -> usize {
            3
        }
        fn log_rows(&self) -> usize {
            4
        }
        fn num_public_inputs(&self) -> usize {
            2
        }
        fn periodic_columns(&self) -> Cow<'_, [PeriodicColumn]> {
            vec![PeriodicColumn {
                values: vec![Felt::new(3), Felt::new(5)],
            }]
            .into()
        }
        fn eval<B: ConstraintBuilder>(&self, f: &Frame<'_, B::Expr>, b: &mut B) {
            let (x, y, z) = (f.current[0], f.current[1], f.current[2]);
            let shared = x * y - f.periodic[0];
            b.every_row(shared * shared - z);
            b.transition(f.next[0] - shared * B::Expr::from(Felt::new(9)));
            b.first_row(-x + f.public_inputs[0]);
            b.last_row(y - f.public_inputs[1] * shared);
            b.every_row(z * z * z - x);
        }
    }

    fn frame_values(seed: u64) -> [Vec<Felt>; 4] {
        let mut state = seed;
        let mut next = |len: usize| -> Vec<Felt> {
            (0..len)
                .map(|_| {
                    state = state
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1);
                    Felt::new(state)
                })
                .collect()
        };
        [next(3), next(3), next(1), next(2)]
    }

    /// Each constraint's value, from the AIR evaluated directly.
    struct Values(Vec<Felt>);

    impl ConstraintBuilder for Values {
        type Expr = Felt;
        fn assert_zero(&mut self, _: Domain, value: Felt) {
            self.0.push(value);
        }
    }

    #[test]
    fn the_program_computes_what_eval_computes() {
        let program = ConstraintProgram::of(&Mixed).unwrap();
        assert_eq!(program.domains().len(), 5);
        for seed in 0..20 {
            let [current, next, periodic, public] = frame_values(seed);
            let frame = Frame {
                current: &current,
                next: &next,
                periodic: &periodic,
                public_inputs: &public,
            };
            let mut direct = Values(Vec::new());
            Mixed.eval(&frame, &mut direct);
            assert_eq!(program.evaluate(&frame), direct.0, "seed {seed}");
        }
    }

    /// Public inputs past what an operand addresses, its constraints reading input `read`.
    struct ManyInputs {
        read: usize,
    }

    impl Air for ManyInputs {
        fn id(&self) -> &str {
            "test/many-inputs"
        }
        fn width(&self) -> usize {
            1
        }
        fn log_rows(&self) -> usize {
            2
        }
        fn num_public_inputs(&self) -> usize {
            (1 << INDEX_BITS) + 2
        }
        fn eval<B: ConstraintBuilder>(&self, f: &Frame<'_, B::Expr>, b: &mut B) {
            b.first_row(f.current[0] - f.public_inputs[self.read]);
        }
    }

    #[test]
    fn only_the_leaves_read_must_fit_an_operand() {
        let max = 1 << INDEX_BITS;
        let program = ConstraintProgram::of(&ManyInputs { read: max - 1 }).unwrap();
        let public: Vec<Felt> = (0..max as u64 + 2).map(Felt::new).collect();
        let current = [Felt::new(max as u64 - 1)];
        let frame = Frame {
            current: &current,
            next: &current,
            periodic: &[],
            public_inputs: &public,
        };
        assert_eq!(program.evaluate(&frame), [Felt::ZERO]);
        assert_eq!(
            ConstraintProgram::of(&ManyInputs { read: max }),
            Err(ProgramError::TooLarge {
                what: "public inputs",
                count: max + 1,
                max,
            })
        );
    }

    #[test]
    fn registers_are_reused_once_their_values_are_dead() {
        let program = ConstraintProgram::of(&Mixed).unwrap();
        let computed = program
            .instructions()
            .iter()
            .filter(|i| !matches!(i, Instruction::Assert { .. }))
            .count();
        assert!(
            program.registers() < computed,
            "{} registers for {computed} values",
            program.registers()
        );
    }

    #[test]
    fn a_dropped_constraint_changes_the_fold() {
        let program = ConstraintProgram::of(&Mixed).unwrap();
        let [current, next, periodic, public] = frame_values(7);
        let frame = Frame {
            current: &current,
            next: &next,
            periodic: &periodic,
            public_inputs: &public,
        };
        let coefficients: Vec<Ext3> = Ext3::new([Felt::new(2), Felt::new(3), Felt::new(4)])
            .powers(5)
            .into_iter()
            .collect();
        let whole = program.fold(&frame, &coefficients);
        for index in 0..5 {
            let dropped = program.without_constraint(index);
            assert_ne!(
                dropped.fold(&frame, &coefficients),
                whole,
                "constraint {index}"
            );
            let caught = std::panic::catch_unwind(|| dropped.evaluate(&frame));
            assert!(caught.is_err(), "constraint {index}");
        }
    }

    #[test]
    fn words_encode_every_field() {
        let program = ConstraintProgram::of(&Mixed).unwrap();
        let words = program.words();
        assert_eq!(words.len(), program.instructions().len());
        for (&word, &instruction) in words.iter().zip(program.instructions()) {
            let operand = |bits: u64| -> (u64, u64) { (bits >> INDEX_BITS & 7, bits & 0x1_ffff) };
            match instruction {
                Instruction::Mul(dst, Operand::Register(a), Operand::Leaf(Leaf::Current(b))) => {
                    assert_eq!(word & 15, OP_MUL);
                    assert_eq!(operand(word >> 4 & 0xf_ffff), (0, u64::from(a)));
                    assert_eq!(operand(word >> 24 & 0xf_ffff), (1, u64::from(b)));
                    assert_eq!(word >> 44, u64::from(dst));
                }
                Instruction::Assert {
                    index,
                    domain,
                    value: Operand::Register(r),
                } => {
                    assert_eq!(word & 15, OP_ASSERT);
                    assert_eq!(operand(word >> 4 & 0xf_ffff), (0, u64::from(r)));
                    assert_eq!(word >> 24 & 3, domain.index() as u64);
                    assert_eq!(word >> 32, u64::from(index));
                }
                _ => {}
            }
        }
    }
}
