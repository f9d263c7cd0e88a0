//! An AIR's constraints as data: `eval` traced over symbolic values into an expression DAG.
//!
//! [`Air::eval`] is written over any [`Algebra`](crate::Algebra); run on [`Symbolic`] values
//! it records, instead of computing, every sum, difference and product it makes, so the one
//! definition of the constraints yields their expressions. A device compiles them into a
//! program ([`ConstraintProgram`](crate::ConstraintProgram)); a recursive verifier would
//! read them the same way. Constraints may not branch on values (the sequence of domains
//! must not depend on them), which is what makes the trace the constraints themselves.
//!
//! Identical nodes are shared (hash-consing) and constants are folded, both exact in a
//! field: the DAG computes the very values `eval` computes.

use std::cell::RefCell;
use std::ops::{Add, AddAssign, Mul, MulAssign, Neg, Sub, SubAssign};

use ballast_field::{Felt, Halve};
use rustc_hash::FxHashMap;

use crate::{Air, ConstraintBuilder, Domain, Frame, known_count};

/// A value a constraint reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Leaf {
    /// Column `c` of the current row.
    Current(u32),
    /// Column `c` of the next row.
    Next(u32),
    /// Value `c` of [`Frame::periodic`]: a periodic column, or past them a public column.
    Periodic(u32),
    /// Public input `i`.
    Public(u32),
}

/// One node of the DAG; operands are indices of earlier nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Node {
    /// A value read from the row, the periodic columns or the public inputs.
    Leaf(Leaf),
    /// A constant.
    Constant(Felt),
    /// The sum of two nodes.
    Add(u32, u32),
    /// The difference of two nodes.
    Sub(u32, u32),
    /// The product of two nodes.
    Mul(u32, u32),
    /// The negation of a node.
    Neg(u32),
}

/// An AIR's constraints as an expression DAG: nodes in an order where every operand comes
/// before its use, and each constraint's domain and node, in assertion order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SymbolicAir {
    /// Every node, operands first.
    pub nodes: Vec<Node>,
    /// Constraint i: its domain and the node whose value must vanish there.
    pub constraints: Vec<(Domain, u32)>,
    /// Columns of the table.
    pub width: usize,
    /// Periodic columns, then public ones ([`Frame::periodic`]'s values).
    pub periodic: usize,
    /// Public inputs.
    pub public_inputs: usize,
}

impl SymbolicAir {
    /// Traces `air.eval` over symbolic values.
    ///
    /// # Panics
    /// If called while another AIR is being traced on this thread (from inside an `eval`).
    pub fn of<A: Air>(air: &A) -> Self {
        let width = air.width();
        let periodic = known_count(air);
        let public_inputs = air.num_public_inputs();
        DAG.with(|dag| {
            let mut dag = dag.borrow_mut();
            assert!(
                dag.is_none(),
                "an AIR is already being traced on this thread"
            );
            *dag = Some(Dag::default());
        });
        // Tracing ends (and the thread's DAG is cleared) even if `eval` panics.
        struct Finish;
        impl Drop for Finish {
            fn drop(&mut self) {
                DAG.with(|dag| dag.borrow_mut().take());
            }
        }
        let finish = Finish;
        let leaves = |leaf: fn(u32) -> Leaf, count: usize| -> Vec<Symbolic> {
            (0..count as u32)
                .map(|i| Symbolic::push(Node::Leaf(leaf(i))))
                .collect()
        };
        let current = leaves(Leaf::Current, width);
        let next = leaves(Leaf::Next, width);
        let periodic_values = leaves(Leaf::Periodic, periodic);
        let public = leaves(Leaf::Public, public_inputs);
        let frame = Frame {
            current: &current,
            next: &next,
            periodic: &periodic_values,
            public_inputs: &public,
        };
        let mut builder = Recorder(Vec::new());
        air.eval(&frame, &mut builder);
        let nodes = DAG.with(|dag| {
            dag.borrow_mut()
                .take()
                .expect("the DAG lives until tracing ends")
                .nodes
        });
        drop(finish);
        let (nodes, constraints) = read_by_constraints(nodes, builder.0);
        Self {
            nodes,
            constraints,
            width,
            periodic,
            public_inputs,
        }
    }

    /// Every constraint's value at one row, in assertion order: the DAG evaluated on
    /// `frame`'s values.
    pub fn evaluate(&self, frame: &Frame<'_, Felt>) -> Vec<Felt> {
        let mut values: Vec<Felt> = Vec::with_capacity(self.nodes.len());
        for node in &self.nodes {
            let at = |i: &u32| values[*i as usize];
            let value = match node {
                Node::Leaf(leaf) => frame.leaf(*leaf),
                Node::Constant(c) => *c,
                Node::Add(a, b) => at(a) + at(b),
                Node::Sub(a, b) => at(a) - at(b),
                Node::Mul(a, b) => at(a) * at(b),
                Node::Neg(a) => -at(a),
            };
            values.push(value);
        }
        self.constraints
            .iter()
            .map(|&(_, node)| values[node as usize])
            .collect()
    }

    /// The DAG's bytes: the width, the number of periodic and public columns together
    /// ([`Frame::periodic`]'s values) and the number of public inputs,
    /// then every node (a tag byte and its fields: a leaf's index, a constant's canonical
    /// value, an operation's operands), then each constraint's domain and node. Every
    /// field has a fixed length given by its tag and every list starts with its length, so
    /// two DAGs have the same bytes only if they are the same DAG.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16 * self.nodes.len());
        for count in [
            self.width,
            self.periodic,
            self.public_inputs,
            self.nodes.len(),
        ] {
            out.extend((count as u64).to_le_bytes());
        }
        for node in &self.nodes {
            let (tag, fields): (u8, [u32; 2]) = match *node {
                Node::Leaf(Leaf::Current(c)) => (0, [c, 0]),
                Node::Leaf(Leaf::Next(c)) => (1, [c, 0]),
                Node::Leaf(Leaf::Periodic(c)) => (2, [c, 0]),
                Node::Leaf(Leaf::Public(i)) => (3, [i, 0]),
                Node::Constant(c) => {
                    let value = c.as_u64();
                    (4, [value as u32, (value >> 32) as u32])
                }
                Node::Add(a, b) => (5, [a, b]),
                Node::Sub(a, b) => (6, [a, b]),
                Node::Mul(a, b) => (7, [a, b]),
                Node::Neg(a) => (8, [a, 0]),
            };
            out.push(tag);
            out.extend(fields[0].to_le_bytes());
            out.extend(fields[1].to_le_bytes());
        }
        out.extend((self.constraints.len() as u64).to_le_bytes());
        for &(domain, node) in &self.constraints {
            out.push(domain as u8);
            out.extend(node.to_le_bytes());
        }
        out
    }
}

impl<E: Copy> Frame<'_, E> {
    /// The value of `leaf` in this frame.
    pub fn leaf(&self, leaf: Leaf) -> E {
        match leaf {
            Leaf::Current(c) => self.current[c as usize],
            Leaf::Next(c) => self.next[c as usize],
            Leaf::Periodic(c) => self.periodic[c as usize],
            Leaf::Public(i) => self.public_inputs[i as usize],
        }
    }
}

/// The DAG being traced on this thread, shared and folded as it grows.
#[derive(Default)]
struct Dag {
    nodes: Vec<Node>,
    index: FxHashMap<Node, u32>,
}

thread_local! {
    static DAG: RefCell<Option<Dag>> = const { RefCell::new(None) };
}

impl Dag {
    fn constant(&self, i: u32) -> Option<Felt> {
        match self.nodes[i as usize] {
            Node::Constant(c) => Some(c),
            _ => None,
        }
    }

    /// The node's index: an existing equal node, a folded constant, or a new node.
    fn intern(&mut self, node: Node) -> u32 {
        if let Node::Leaf(_) = node {
            // Each leaf is made once, by `SymbolicAir::of`: nothing to share.
            return self.append(node);
        }
        let folded = match node {
            Node::Add(a, b) => match (self.constant(a), self.constant(b)) {
                (Some(x), Some(y)) => Node::Constant(x + y),
                (Some(Felt::ZERO), _) => return b,
                (_, Some(Felt::ZERO)) => return a,
                // Sums commute: one node for a + b and b + a.
                _ => Node::Add(a.min(b), a.max(b)),
            },
            Node::Sub(a, b) if a == b => Node::Constant(Felt::ZERO),
            Node::Sub(a, b) => match (self.constant(a), self.constant(b)) {
                (Some(x), Some(y)) => Node::Constant(x - y),
                (_, Some(Felt::ZERO)) => return a,
                (Some(Felt::ZERO), _) => Node::Neg(b),
                _ => node,
            },
            Node::Mul(a, b) => match (self.constant(a), self.constant(b)) {
                (Some(x), Some(y)) => Node::Constant(x * y),
                (Some(Felt::ZERO), _) | (_, Some(Felt::ZERO)) => Node::Constant(Felt::ZERO),
                (Some(Felt::ONE), _) => return b,
                (_, Some(Felt::ONE)) => return a,
                _ => Node::Mul(a.min(b), a.max(b)),
            },
            Node::Neg(a) => match self.constant(a) {
                Some(x) => Node::Constant(-x),
                None => node,
            },
            Node::Leaf(_) | Node::Constant(_) => node,
        };
        if let Some(&i) = self.index.get(&folded) {
            return i;
        }
        let i = self.append(folded);
        self.index.insert(folded, i);
        i
    }

    /// A new node's index.
    fn append(&mut self, node: Node) -> u32 {
        let i = u32::try_from(self.nodes.len()).expect("fewer than 2^32 nodes");
        self.nodes.push(node);
        i
    }
}

/// The `nodes` that `constraints` read, in their order, and the constraints on their new
/// indices. Tracing makes a leaf of every value the frame holds (every public input among
/// them) and may make nodes that no constraint reads (a value `eval` computes and drops);
/// neither is part of the constraints.
fn read_by_constraints(
    nodes: Vec<Node>,
    constraints: Vec<(Domain, u32)>,
) -> (Vec<Node>, Vec<(Domain, u32)>) {
    let mut read = vec![false; nodes.len()];
    for &(_, node) in &constraints {
        read[node as usize] = true;
    }
    for i in (0..nodes.len()).rev() {
        if read[i] {
            match nodes[i] {
                Node::Add(a, b) | Node::Sub(a, b) | Node::Mul(a, b) => {
                    read[a as usize] = true;
                    read[b as usize] = true;
                }
                Node::Neg(a) => read[a as usize] = true,
                Node::Leaf(_) | Node::Constant(_) => {}
            }
        }
    }
    // Kept nodes keep their order, so operands still come first (and a sum's or product's
    // smaller operand first).
    let mut index = vec![u32::MAX; nodes.len()];
    let mut kept = Vec::with_capacity(read.iter().filter(|&&r| r).count());
    for (i, node) in nodes.into_iter().enumerate() {
        if read[i] {
            let at = |j: u32| index[j as usize];
            let node = match node {
                Node::Add(a, b) => Node::Add(at(a), at(b)),
                Node::Sub(a, b) => Node::Sub(at(a), at(b)),
                Node::Mul(a, b) => Node::Mul(at(a), at(b)),
                Node::Neg(a) => Node::Neg(at(a)),
                leaf_or_constant => leaf_or_constant,
            };
            index[i] = kept.len() as u32;
            kept.push(node);
        }
    }
    let constraints = (constraints.into_iter())
        .map(|(domain, node)| (domain, index[node as usize]))
        .collect();
    (kept, constraints)
}

/// A value in an AIR being traced: a node of the thread's DAG. It exists only while
/// [`SymbolicAir::of`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Symbolic(u32);

impl Symbolic {
    fn push(node: Node) -> Self {
        DAG.with(|dag| {
            let mut dag = dag.borrow_mut();
            let dag = dag
                .as_mut()
                .expect("symbolic values exist only while SymbolicAir::of traces an AIR");
            Self(dag.intern(node))
        })
    }
}

impl From<Felt> for Symbolic {
    fn from(value: Felt) -> Self {
        Self::push(Node::Constant(value))
    }
}

macro_rules! binary {
    ($trait:ident, $method:ident, $assign:ident, $assign_method:ident, $node:ident) => {
        impl $trait for Symbolic {
            type Output = Self;
            fn $method(self, rhs: Self) -> Self {
                Self::push(Node::$node(self.0, rhs.0))
            }
        }
        impl $assign for Symbolic {
            fn $assign_method(&mut self, rhs: Self) {
                *self = $trait::$method(*self, rhs);
            }
        }
    };
}

binary!(Add, add, AddAssign, add_assign, Add);
binary!(Sub, sub, SubAssign, sub_assign, Sub);
binary!(Mul, mul, MulAssign, mul_assign, Mul);

impl Neg for Symbolic {
    type Output = Self;
    fn neg(self) -> Self {
        Self::push(Node::Neg(self.0))
    }
}

impl Halve for Symbolic {
    /// The product with the constant 1/2.
    fn halve(self) -> Self {
        self * Self::from(Felt::ONE.halve())
    }
}

/// Records each constraint's domain and node.
struct Recorder(Vec<(Domain, u32)>);

impl ConstraintBuilder for Recorder {
    type Expr = Symbolic;

    fn assert_zero(&mut self, domain: Domain, value: Symbolic) {
        self.0.push((domain, value.0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PeriodicColumn;
    use std::borrow::Cow;

    /// x' = x·y + 3 on transitions, (x − x)·y on every row (folds to 0), y = p on every
    /// row, x = public 0 on the first row.
    struct Small;

    impl Air for Small {
        fn id(&self) -> &str {
            "test/small"
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
            vec![PeriodicColumn {
                values: vec![Felt::ONE, Felt::new(2)],
            }]
            .into()
        }
        fn eval<B: ConstraintBuilder>(&self, f: &Frame<'_, B::Expr>, b: &mut B) {
            let (x, y) = (f.current[0], f.current[1]);
            let (same_x, same_xy) = (x, x * y);
            let three = B::Expr::from(Felt::new(3));
            b.transition(f.next[0] - (x * y + three));
            b.every_row((x - same_x) * y + y * x - same_xy);
            b.every_row(y - f.periodic[0]);
            b.first_row(x - f.public_inputs[0]);
        }
    }

    #[test]
    fn tracing_records_each_constraint_and_shares_nodes() {
        let dag = SymbolicAir::of(&Small);
        let domains: Vec<Domain> = dag.constraints.iter().map(|&(d, _)| d).collect();
        assert_eq!(
            domains,
            [
                Domain::Transition,
                Domain::EveryRow,
                Domain::EveryRow,
                Domain::FirstRow
            ]
        );
        // x·y and y·x are one node, so (x − x)·y + y·x − x·y folds to the constant 0.
        let products = dag
            .nodes
            .iter()
            .filter(|n| matches!(n, Node::Mul(..)))
            .count();
        assert_eq!(products, 1, "x·y alone: {:?}", dag.nodes);
        let zero = dag.constraints[1].1 as usize;
        assert_eq!(dag.nodes[zero], Node::Constant(Felt::ZERO));
        let frame_values = [Felt::new(5), Felt::new(7)];
        let next = [Felt::new(38), Felt::ZERO];
        let frame = Frame {
            current: &frame_values,
            next: &next,
            periodic: &[Felt::new(7)],
            public_inputs: &[Felt::new(5)],
        };
        assert_eq!(dag.evaluate(&frame), vec![Felt::ZERO; 4]);
    }

    #[test]
    fn the_dag_holds_only_what_its_constraints_read() {
        // x² = 0 on every row of three columns and three public inputs, a value computed
        // from the others and dropped: x and x² alone.
        struct Sparse;
        impl Air for Sparse {
            fn id(&self) -> &str {
                "test/sparse"
            }
            fn width(&self) -> usize {
                3
            }
            fn log_rows(&self) -> usize {
                3
            }
            fn num_public_inputs(&self) -> usize {
                3
            }
            fn eval<B: ConstraintBuilder>(&self, f: &Frame<'_, B::Expr>, b: &mut B) {
                let x = f.current[1];
                let _dropped = f.current[2] * f.public_inputs[1] + x;
                b.every_row(x * x);
            }
        }
        let dag = SymbolicAir::of(&Sparse);
        assert_eq!(dag.nodes, [Node::Leaf(Leaf::Current(1)), Node::Mul(0, 0)]);
        assert_eq!(dag.constraints, [(Domain::EveryRow, 1)]);
        assert_eq!((dag.width, dag.public_inputs), (3, 3));
        let frame = Frame {
            current: &[Felt::new(9), Felt::ZERO, Felt::new(9)],
            next: &[Felt::ONE; 3],
            periodic: &[],
            public_inputs: &[Felt::new(9); 3],
        };
        assert_eq!(dag.evaluate(&frame), [Felt::ZERO]);
    }

    #[test]
    fn the_encoding_tells_every_dag_apart() {
        let dag = SymbolicAir::of(&Small);
        let mut variants = vec![dag.clone()];
        let mut vary = |change: &dyn Fn(&mut SymbolicAir)| {
            let mut variant = dag.clone();
            change(&mut variant);
            assert_ne!(variant, dag);
            variants.push(variant);
        };
        let at = |d: &SymbolicAir, wanted: fn(&Node) -> bool| {
            d.nodes
                .iter()
                .position(wanted)
                .expect("the node kind is in the DAG")
        };
        vary(&|d| d.width += 1);
        vary(&|d| d.periodic += 1);
        vary(&|d| d.public_inputs += 1);
        vary(&|d| d.nodes.push(Node::Constant(Felt::ONE)));
        vary(&|d| {
            let i = at(d, |n| matches!(n, Node::Constant(_)));
            d.nodes[i] = Node::Constant(Felt::new(4));
        });
        // The same index read from each place, and each operation on the same operands.
        vary(&|d| d.nodes[0] = Node::Leaf(Leaf::Next(0)));
        vary(&|d| d.nodes[0] = Node::Leaf(Leaf::Periodic(0)));
        vary(&|d| d.nodes[0] = Node::Leaf(Leaf::Public(0)));
        vary(&|d| d.nodes[0] = Node::Leaf(Leaf::Current(1)));
        for op in [Node::Add(0, 1), Node::Sub(0, 1), Node::Neg(0)] {
            vary(&|d| {
                let i = at(d, |n| matches!(n, Node::Mul(..)));
                d.nodes[i] = op;
            });
        }
        vary(&|d| d.constraints[0].0 = Domain::EveryRow);
        vary(&|d| d.constraints[0].1 = 0);
        vary(&|d| {
            d.constraints.pop();
        });
        let encodings: Vec<Vec<u8>> = variants.iter().map(SymbolicAir::encode).collect();
        for (i, a) in encodings.iter().enumerate() {
            for (j, b) in encodings.iter().enumerate().skip(i + 1) {
                assert_ne!(a, b, "variants {i} and {j} encode alike");
            }
        }
        assert_eq!(SymbolicAir::of(&Small).encode(), encodings[0]);
    }

    #[test]
    fn symbolic_values_outside_a_trace_are_refused() {
        let result = std::panic::catch_unwind(|| Symbolic::from(Felt::ONE));
        assert!(result.is_err());
        // A panicking eval leaves the thread ready for the next trace.
        struct Panics;
        impl Air for Panics {
            fn id(&self) -> &str {
                "test/panics"
            }
            fn width(&self) -> usize {
                1
            }
            fn log_rows(&self) -> usize {
                1
            }
            fn num_public_inputs(&self) -> usize {
                0
            }
            fn eval<B: ConstraintBuilder>(&self, _: &Frame<'_, B::Expr>, _: &mut B) {
                panic!("eval failed");
            }
        }
        assert!(std::panic::catch_unwind(|| SymbolicAir::of(&Panics)).is_err());
        assert_eq!(SymbolicAir::of(&Small).constraints.len(), 4);
    }
}
