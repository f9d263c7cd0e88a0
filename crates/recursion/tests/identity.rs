//! The out-of-domain identity AIR against real children: their claims satisfy it, it proves
//! and verifies, and it is read from the child AIR's own constraint program. Each rule is its
//! own constraint: a changed operand, result, register, power or sum is refused at its row by
//! it; a claim, α or quotient value other than the child's has no trace; bad shapes are named.

// The identity AIR keeps no permutation, so this file leaves `common::has_layer_degrees`
// unused.
#[allow(dead_code)]
mod common;

use common::{
    any_security, assert_one_definition, fibonacci, layer_params, layer_proves, params,
    poseidon2_chain, proven, statement,
};

use std::borrow::Cow;

use ballast_air::{
    Air, AirError, ConstraintBuilder, ConstraintInfo, ConstraintProgram, Domain, Frame,
    Instruction, Leaf, Operand, PeriodicColumn, SymbolicAir, check_trace,
};
use ballast_field::{Ext3, Felt, RowBlocks};
use ballast_recursion::{Child, IdentityAir, IdentityError, OodClaims, TranscriptAir};
use ballast_stark::{CpuBackend, OodValues, PhaseTimes, SegmentProof, TableAir, Workload, prove};
use ballast_workloads::Poseidon2Chain;

/// A child's first segment, its identity AIR and its constraint program.
struct Segment {
    air: IdentityAir,
    program: ConstraintProgram,
}

impl Segment {
    fn of<W: Workload>(workload: &W) -> Self {
        let (proof, public) = proven(workload, &params());
        Self::proven(&workload.air(0), &proof, &public)
    }

    fn proven<A: Air>(air: &A, proof: &SegmentProof, public: &[Felt]) -> Self {
        let segment = Child::of_segment(air, proof, &statement(public), &params(), &any_security())
            .expect("the layer takes the child");
        Self {
            air: segment.identity,
            program: ConstraintProgram::of(air).unwrap(),
        }
    }

    /// A [`Stepped`] child of 2^5 rows.
    fn stepped() -> Self {
        let air = Stepped;
        let x: Vec<Felt> = (0..32u64)
            .map(|i| Felt::new(3 + 10 * (i / 4) + [0, 1, 3, 6][i as usize % 4]))
            .collect();
        let public = [x[0], x[31]];
        let mut table = RowBlocks::from_columns(&[x]);
        let proof = prove(
            &air,
            &mut table,
            &statement(&public),
            &params(),
            &CpuBackend::new(),
            &mut PhaseTimes::default(),
        )
        .expect("the child proves");
        Self::proven(&air, &proof, &public)
    }

    /// The first row whose instruction `pick` chooses.
    fn row(&self, pick: impl Fn(&Instruction) -> bool) -> usize {
        self.program.instructions().iter().position(pick).unwrap()
    }
}

/// A child whose constraints read a periodic column and constants: x' = x + k with k
/// cycling through 1, 2, 3, 4, x starting at public input 0 and ending at public input 1.
struct Stepped;

impl Air for Stepped {
    fn id(&self) -> &str {
        "recursion-test/stepped"
    }
    fn width(&self) -> usize {
        1
    }
    fn log_rows(&self) -> usize {
        5
    }
    fn num_public_inputs(&self) -> usize {
        2
    }
    fn periodic_columns(&self) -> Cow<'_, [PeriodicColumn]> {
        vec![PeriodicColumn {
            values: [1, 2, 3, 4].map(Felt::new).to_vec(),
        }]
        .into()
    }
    fn eval<B: ConstraintBuilder>(&self, f: &Frame<'_, B::Expr>, b: &mut B) {
        let x = f.current[0];
        b.transition(f.next[0] - x - f.periodic[0]);
        b.first_row(x - f.public_inputs[0]);
        b.last_row(x - f.public_inputs[1]);
    }
}

/// The first failing (row, constraint) of `table` under `air` with `public`, or none.
fn failure(air: &IdentityAir, table: &RowBlocks, public: &[Felt]) -> Option<(usize, usize)> {
    match check_trace(air, table, public) {
        Ok(()) => None,
        Err(AirError::Unsatisfied { row, constraint }) => Some((row, constraint)),
        Err(other) => panic!("not a constraint failure: {other}"),
    }
}

/// The columns and constraints of an AIR of `registers` registers: operand a's three
/// coordinates, operand b's, the result's, each register's carry on its three; then per
/// coordinate c the power's step and start and each domain's sum step and start; last, per
/// coordinate, the identity and 1/Z's check.
struct Layout {
    registers: usize,
}

impl Layout {
    fn of(air: &IdentityAir) -> Self {
        let layout = Self {
            registers: (air.width() - 27) / 3,
        };
        let total = ConstraintInfo::of(air).unwrap().constraints.len();
        assert_eq!(total, layout.identity() + 6);
        layout
    }
    fn own(&self) -> usize {
        3 * self.registers
    }
    // Columns.
    fn operand_a(&self) -> usize {
        self.own()
    }
    fn operand_b(&self) -> usize {
        self.own() + 3
    }
    fn result(&self) -> usize {
        self.own() + 6
    }
    fn power(&self) -> usize {
        self.own() + 9
    }
    fn sum(&self, d: Domain) -> usize {
        self.own() + 12 + 3 * d.index()
    }
    // Constraints: each operand's three coordinates, the result's, each register's carry's,
    // then for each coordinate the power's step and start and each domain's sum's. Those
    // below are coordinate 0's.
    const OPERAND_A: usize = 0;
    const OPERAND_B: usize = 3;
    const RESULT: usize = 6;
    fn carry(&self, r: usize) -> usize {
        9 + 3 * r
    }
    fn power_step(&self) -> usize {
        9 + 3 * self.registers
    }
    fn power_start(&self) -> usize {
        self.power_step() + 1
    }
    fn sum_step(&self, d: Domain) -> usize {
        self.power_step() + 2 + 2 * d.index()
    }
    fn sum_start(&self, d: Domain) -> usize {
        self.sum_step(d) + 1
    }
    fn identity(&self) -> usize {
        self.power_step() + 3 * 10
    }
    fn vanishing_inverse(&self) -> usize {
        self.identity() + 1
    }
}

/// `table` with `change` made to each cell at (row, column) it is given.
fn changed(table: &RowBlocks, change: impl Fn(usize, usize, &mut Felt)) -> RowBlocks {
    let mut rows: Vec<Felt> = (0..table.height())
        .flat_map(|r| table.row(r).to_vec())
        .collect();
    for (i, cell) in rows.iter_mut().enumerate() {
        change(i / table.width(), i % table.width(), cell);
    }
    RowBlocks::from_rows(table.width(), &rows)
}

/// `table` with one cell changed by one.
fn nudged(table: &RowBlocks, row: usize, column: usize) -> RowBlocks {
    changed(table, |r, c, cell| {
        if (r, c) == (row, column) {
            *cell += Felt::ONE;
        }
    })
}

#[test]
fn a_childs_claims_satisfy_its_identity_and_it_proves() {
    for child in [
        Segment::stepped(),
        Segment::of(&fibonacci(5)),
        Segment::of(&poseidon2_chain()),
    ] {
        let air = &child.air;
        let layout = Layout::of(air);
        assert_eq!(layout.registers, child.program.registers());
        assert!(1 << air.log_rows() > child.program.instructions().len());
        // Its constraints are of degree 3 at most (a selector is two periodic columns'
        // product), and an operand's selectors a grid's rows and columns: for the Poseidon2
        // chain's 19 registers 4 + 5, not 19; a register each below 6.
        let info = ConstraintInfo::of(air).unwrap();
        assert_eq!(info.max_degree(), 3);
        let selectors = match child.program.registers() {
            19 => 9,
            r if r < 6 => r,
            r => panic!("a child of {r} registers"),
        };
        assert_eq!(air.periodic_columns().len(), 3 * selectors + 14);
        let mut table = air.trace().unwrap();
        let public = air.public_inputs();
        assert_eq!(check_trace(air, &table, &public), Ok(()));
        assert_eq!(layer_proves(air, &mut table, &public), Ok(()));
        // Every constraint was asserted: each domain's sum holds its constraints.
        let last = table.height() - 1;
        for d in Domain::ALL {
            let used = child.program.domains().contains(&d);
            let sum = &table.row(last)[layout.sum(d)..layout.sum(d) + 3];
            assert_eq!(used, sum.iter().any(|&v| v != Felt::ZERO), "{d:?}");
        }
    }
}

#[test]
fn each_rule_is_its_own_constraint() {
    let child = Segment::of(&poseidon2_chain());
    let air = &child.air;
    let layout = Layout::of(air);
    let table = air.trace().unwrap();
    let public = air.public_inputs();
    let is_mul = |i: &Instruction| matches!(i, Instruction::Mul(..));
    let mul = child.row(is_mul);
    // Register 0 holds a value across some row (read on the next, not written on this one).
    let kept = (1..child.program.instructions().len())
        .find(|&k| {
            let writes = |i: &Instruction| match *i {
                Instruction::Add(d, ..) | Instruction::Sub(d, ..) | Instruction::Mul(d, ..) => {
                    d == 0
                }
                Instruction::Neg(d, _) => d == 0,
                Instruction::Assert { .. } => false,
            };
            let reads = match child.program.instructions()[k] {
                Instruction::Add(_, a, b)
                | Instruction::Sub(_, a, b)
                | Instruction::Mul(_, a, b) => {
                    a == Operand::Register(0) || b == Operand::Register(0)
                }
                Instruction::Neg(_, a) | Instruction::Assert { value: a, .. } => {
                    a == Operand::Register(0)
                }
            };
            reads && !writes(&child.program.instructions()[k - 1])
        })
        .unwrap();
    let assertion = child.row(|i| matches!(i, Instruction::Assert { .. }));
    let every_row = child
        .row(|i| matches!(i, Instruction::Assert { domain, .. } if *domain == Domain::EveryRow));
    let last = table.height() - 1;
    for (what, row, column, expected) in [
        (
            "operand a",
            mul,
            layout.operand_a(),
            (mul, Layout::OPERAND_A),
        ),
        (
            "operand b",
            mul,
            layout.operand_b(),
            (mul, Layout::OPERAND_B),
        ),
        ("a product", mul, layout.result(), (mul, Layout::RESULT)),
        ("a kept register", kept, 0, (kept - 1, layout.carry(0))),
        (
            "the power after an assertion",
            assertion + 1,
            layout.power(),
            (assertion, layout.power_step()),
        ),
        (
            "a sum after its assertion",
            every_row + 1,
            layout.sum(Domain::EveryRow),
            (every_row, layout.sum_step(Domain::EveryRow)),
        ),
        (
            "the last row's sum",
            last,
            layout.sum(Domain::EveryRow),
            (last - 1, layout.sum_step(Domain::EveryRow)),
        ),
    ] {
        let forged = nudged(&table, row, column);
        assert_eq!(failure(air, &forged, &public), Some(expected), "{what}");
    }
    // Whole columns shifted so that every step still holds: only a start refuses them.
    let every_row = layout.sum(Domain::EveryRow);
    let shifted = changed(&table, |_, c, cell| {
        if c == every_row {
            *cell += Felt::ONE;
        }
    });
    assert_eq!(
        failure(air, &shifted, &public),
        Some((0, layout.sum_start(Domain::EveryRow)))
    );
    let (power, sums) = (layout.power(), layout.sum(Domain::ALL[0]));
    let doubled = changed(&table, |_, c, cell| {
        if (power..power + 3).contains(&c) || (sums..sums + 12).contains(&c) {
            *cell = cell.double();
        }
    });
    assert_eq!(
        failure(air, &doubled, &public),
        Some((0, layout.power_start()))
    );
}

#[test]
fn claims_other_than_the_childs_have_no_trace() {
    let child = Segment::of(&poseidon2_chain());
    let honest = &child.air;
    let layout = Layout::of(honest);
    let last = honest.trace().unwrap().height() - 1;
    let changed_claims = |change: &dyn Fn(&mut OodClaims)| {
        let mut claims = honest.claims()[0].clone();
        change(&mut claims);
        IdentityAir::new(&poseidon2_chain().air(0), claims).unwrap()
    };
    for (what, change) in [
        (
            "a trace value at z",
            &(|c: &mut OodClaims| c.trace_z[3] += Ext3::ONE) as &dyn Fn(&mut OodClaims),
        ),
        ("a trace value at zω", &|c| c.trace_zw[0] += Ext3::ONE),
        ("a public input", &|c| c.public_inputs[0] += Felt::ONE),
        ("a quotient value", &|c| c.quotient_z[1] += Ext3::ONE),
        ("z", &|c| c.z += Ext3::ONE),
    ] {
        let air = changed_claims(change);
        let expected = Some((last, layout.identity()));
        assert_eq!(
            failure(&air, &air.trace().unwrap(), &air.public_inputs()),
            expected,
            "{what}"
        );
    }
    // A periodic value at z (the Poseidon2 chain has no periodic columns).
    let stepped = Segment::stepped();
    let mut claims = stepped.air.claims()[0].clone();
    claims.periodic_z[0] += Ext3::ONE;
    let air = IdentityAir::new(&Stepped, claims).unwrap();
    let table = air.trace().unwrap();
    assert_eq!(
        failure(&air, &table, &air.public_inputs()),
        Some((table.height() - 1, Layout::of(&air).identity()))
    );
    // z in the child's trace domain: every cleared term of the identity vanishes there, so
    // only 1/Z refuses it; and the trace has no such inverse.
    let mut public = honest.public_inputs();
    public[3..6].copy_from_slice(&Ext3::ONE.coeffs());
    assert_eq!(
        failure(honest, &honest.trace().unwrap(), &public),
        Some((last, layout.vanishing_inverse()))
    );
    let at_one = changed_claims(&|c| c.z = Ext3::ONE);
    assert_eq!(at_one.trace(), Err(IdentityError::OnTheDomain));
    // A claim changed in the public inputs alone, the trace the child's: the first row that
    // reads it refuses it, by its operand's constraint (a trace value at z is the first
    // claim after α, z and the quotient's values).
    let reads_claim = |operand: Operand| matches!(operand, Operand::Leaf(Leaf::Current(0)));
    let reading = child.row(|i| match *i {
        Instruction::Add(_, a, b) | Instruction::Sub(_, a, b) | Instruction::Mul(_, a, b) => {
            reads_claim(a) || reads_claim(b)
        }
        Instruction::Neg(_, a) | Instruction::Assert { value: a, .. } => reads_claim(a),
    });
    let first_claim = 6 + 3 * honest.claims()[0].quotient_z.len();
    for c in 0..3 {
        let mut public = honest.public_inputs();
        public[first_claim + c] += Felt::ONE;
        let (row, constraint) = failure(honest, &honest.trace().unwrap(), &public).unwrap();
        assert_eq!(row, reading, "coordinate {c}");
        assert!(
            [Layout::OPERAND_A, Layout::OPERAND_B]
                .map(|k| k + c)
                .contains(&constraint),
            "coordinate {c}: constraint {constraint}"
        );
    }
    // α other than the trace's: the power's first step.
    let mut public = honest.public_inputs();
    public[0] += Felt::ONE;
    let assertion = child.row(|i| matches!(i, Instruction::Assert { .. }));
    assert_eq!(
        failure(honest, &honest.trace().unwrap(), &public),
        Some((assertion, layout.power_step()))
    );
}

/// x' = x + c on transitions, over `width` columns of which the first alone is constrained,
/// with `public_inputs` that no constraint reads: children alike but for the constant c, or
/// for what their constraints do not read.
struct Shifted {
    c: u64,
    width: usize,
    public_inputs: usize,
}

impl Air for Shifted {
    fn id(&self) -> &str {
        "recursion-test/shifted"
    }
    fn width(&self) -> usize {
        self.width
    }
    fn log_rows(&self) -> usize {
        5
    }
    fn num_public_inputs(&self) -> usize {
        self.public_inputs
    }
    fn eval<B: ConstraintBuilder>(&self, f: &Frame<'_, B::Expr>, b: &mut B) {
        b.transition(f.next[0] - f.current[0] - B::Expr::from(Felt::new(self.c)));
    }
}

#[test]
fn the_key_binds_the_programs_and_claims_its_columns_are_built_from() {
    let identity = |air: &Shifted| {
        let chunks = 1 << ConstraintInfo::of(air).unwrap().log_quotient_chunks;
        let ood = OodValues {
            trace_z: vec![Ext3::ZERO; air.width],
            trace_zw: vec![Ext3::ZERO; air.width],
            quotient_z: vec![Ext3::ZERO; 3 * chunks],
        };
        let public_inputs = vec![Felt::ZERO; air.public_inputs];
        let claims = OodClaims::of(air, &public_inputs, Ext3::ONE, Ext3::ONE, ood);
        IdentityAir::new(air, claims).unwrap()
    };
    let key = |air: &IdentityAir| TableAir::key(air, &TableAir::info(air).unwrap());
    let shifted = |c, width, public_inputs| {
        identity(&Shifted {
            c,
            width,
            public_inputs,
        })
    };
    // Two children that differ in a constant alone: their periodic columns differ in the
    // constant's column, which their key binds by its source (the programs), not by the
    // columns' values.
    let [a, b] = [shifted(1, 1, 0), shifted(2, 1, 0)];
    assert_ne!(a.periodic_columns(), b.periodic_columns());
    assert_eq!(SymbolicAir::of(&a).encode(), SymbolicAir::of(&b).encode());
    assert_eq!(a.public_columns(), b.public_columns());
    assert_ne!(key(&a), key(&b));
    assert_eq!(key(&a), key(&shifted(1, 1, 0)));
    // Two children of one program and as many claims, but one with a trace column and the
    // other with six public inputs that it does not read: its leaves at zω sit elsewhere
    // among the public inputs, which their key binds by the claims' counts.
    let [wider, public] = [shifted(1, 2, 0), shifted(1, 1, 6)];
    assert_eq!(wider.num_public_inputs(), public.num_public_inputs());
    assert_eq!(wider.periodic_columns(), public.periodic_columns());
    let dag = |air: &IdentityAir| SymbolicAir::of(air).encode();
    assert_eq!(dag(&wider), dag(&public));
    assert_ne!(wider.public_columns(), public.public_columns());
    assert_ne!(key(&wider), key(&public));
}

#[test]
fn the_air_is_the_childs_shape() {
    // Two children of one shape, whose every claim differs: one AIR definition (name, rows,
    // width, periodic and public columns, constraints), other public inputs.
    let other = Poseidon2Chain {
        seed: [5, 6, 7, 8].map(Felt::new),
        ..poseidon2_chain()
    };
    let [a, b] = [poseidon2_chain(), other].map(|w| Segment::of(&w).air);
    assert_one_definition(&a, &b, [a.public_inputs(), b.public_inputs()]);
}

#[test]
fn claims_of_another_shape_are_named() {
    let child = Segment::of(&fibonacci(5));
    let workload = fibonacci(5);
    let air = workload.air(0);
    for (change, what) in [
        (
            &(|c: &mut OodClaims| {
                c.trace_z.pop();
            }) as &dyn Fn(&mut OodClaims),
            "trace values at z",
        ),
        (&|c| c.trace_zw.push(Ext3::ONE), "trace values at zω"),
        (&|c| c.periodic_z.push(Ext3::ONE), "periodic values at z"),
        (&|c| c.public_inputs.clear(), "public inputs"),
        (
            &|c| {
                c.quotient_z.pop();
            },
            "quotient values at z",
        ),
    ] {
        let mut claims = child.air.claims()[0].clone();
        change(&mut claims);
        match IdentityAir::new(&air, claims) {
            Err(IdentityError::Shape { what: got, .. }) => assert_eq!(got, what),
            other => panic!("{what}: {other:?}"),
        }
    }
}

#[test]
fn a_layers_tables_have_their_identities_in_one_table() {
    // A layer over a child, committed with Poseidon2, as a layer over it sees it: one α and
    // one z (drawn with the tallest table's sizes), read from the layer's transcript, and each
    // table's claims, which satisfy the identity built from that table's own AIR (its
    // zerofiers its own height's). Joined in one table (each program in its own rows, each
    // followed by its check row), they are `Child::of_layer`'s identity, which proves; a claim
    // of one table changed is refused on that table's check row, and identities at another
    // z are not joined.
    let workload = poseidon2_chain();
    let (proof, public) = proven(&workload, &params());
    let air = workload.air(0);
    let child = Child::of_segment(
        &air,
        &proof,
        &statement(&public),
        &params(),
        &any_security(),
    )
    .expect("the layer takes the child");
    let layer_params = layer_params();
    let layer = child.prove(&layer_params).expect("the layer proves");
    let transcript = child.layer_transcript(&layer, &layer_params).unwrap();
    let steps = transcript.expect("a Poseidon2 transcript").steps;
    let reads = TranscriptAir::new(&steps, layer_params.pow_bits)
        .unwrap()
        .public_inputs();
    let ext = |k: usize| Ext3::new([reads[3 * k], reads[3 * k + 1], reads[3 * k + 2]]);
    let (alpha, z) = (ext(0), ext(1));

    let query_inputs = child.query_inputs(&layer.inputs).unwrap();
    let identity_inputs = child.identity.public_inputs();
    let over = Child::of_layer(&child, &layer, &layer_params, &any_security()).unwrap();
    let heights = [
        child.transcript.log_rows(),
        child.identity.log_rows(),
        child.queries.air.log_rows(),
    ];
    // The proof's order: tallest first, ties in the layer's order (a stable sort).
    let mut order = [0, 1, 2];
    order.sort_by_key(|&k| std::cmp::Reverse(heights[k]));
    let identity = |k: usize, ood: OodValues, alpha: Ext3, z: Ext3| match k {
        0 => {
            let claims = OodClaims::of(&child.transcript, &layer.inputs, alpha, z, ood);
            IdentityAir::new(&child.transcript, claims)
        }
        1 => {
            let claims = OodClaims::of(&child.identity, &identity_inputs, alpha, z, ood);
            IdentityAir::new(&child.identity, claims)
        }
        _ => {
            let claims = OodClaims::of(&child.queries.air, &query_inputs, alpha, z, ood);
            IdentityAir::new(&child.queries.air, claims)
        }
    };
    let honest: Vec<IdentityAir> = (order.iter().enumerate())
        .map(|(at, &k)| identity(k, layer.tables.ood[at].clone(), alpha, z).unwrap())
        .collect();
    for (identity, k) in honest.iter().zip(order) {
        let table = identity.trace().unwrap();
        let inputs = identity.public_inputs();
        assert_eq!(check_trace(identity, &table, &inputs), Ok(()), "table {k}");
    }
    let joint = IdentityAir::joint(honest.clone()).unwrap();
    assert_eq!(
        over.identity.public_inputs(),
        joint.public_inputs(),
        "the layer child's identity"
    );
    // Each table's program: its AIR's constraints, compiled.
    let programs = [
        ConstraintProgram::of(&child.transcript),
        ConstraintProgram::of(&child.identity),
        ConstraintProgram::of(&child.queries.air),
    ];
    let lengths: Vec<usize> = (order.iter())
        .map(|&k| programs[k].as_ref().unwrap().instructions().len())
        .collect();
    let rows = (lengths.iter().sum::<usize>() + 3).next_power_of_two();
    assert_eq!(joint.log_rows(), rows.trailing_zeros() as usize);
    let mut table = joint.trace().unwrap();
    let inputs = joint.public_inputs();
    assert_eq!(check_trace(&joint, &table, &inputs), Ok(()));
    assert_eq!(layer_proves(&joint, &mut table, &inputs), Ok(()));

    // One table's claim changed: refused where that table's identity is checked (the row
    // after its program; the last row for the last table).
    let checks = [lengths[0], lengths[0] + 1 + lengths[1], rows - 1];
    // The restart is bound: the power or a sum not restarted after a check row, or 1/Z other
    // than that table's on its check row, is refused on that check row.
    let own = joint.width() - 27;
    let (power, sums, vanishing_inverse) = (own + 9, own + 12, own + 24);
    let honest_table = joint.trace().unwrap();
    for (row, column, refused_at) in [
        (checks[0] + 1, power, checks[0]),
        (checks[1] + 1, power + 2, checks[1]),
        (checks[0] + 1, sums, checks[0]),
        (checks[1] + 1, sums + 3 * Domain::LastRow.index(), checks[1]),
        (checks[0], vanishing_inverse, checks[0]),
        (checks[1], vanishing_inverse + 1, checks[1]),
    ] {
        let forged = nudged(&honest_table, row, column);
        let refused = failure(&joint, &forged, &inputs);
        assert_eq!(
            refused.map(|(row, _)| row),
            Some(refused_at),
            "column {column} changed on row {row}"
        );
    }
    for (at, &k) in order.iter().enumerate() {
        let mut ood = layer.tables.ood[at].clone();
        ood.trace_z[0] += Ext3::ONE;
        let mut parts = honest.clone();
        parts[at] = identity(k, ood, alpha, z).unwrap();
        let changed = IdentityAir::joint(parts).unwrap();
        let table = changed.trace().unwrap();
        let refused = failure(&changed, &table, &changed.public_inputs());
        assert_eq!(refused.map(|(row, _)| row), Some(checks[at]), "table {k}");
    }
    // One identity joined is itself: the same AIR, constraint for constraint.
    let alone = IdentityAir::joint(vec![honest[0].clone()]).unwrap();
    assert_eq!(
        SymbolicAir::of(&alone).encode(),
        SymbolicAir::of(&honest[0]).encode()
    );
    assert_eq!(alone.periodic_columns(), honest[0].periodic_columns());
    assert_eq!(alone.public_columns(), honest[0].public_columns());
    assert_eq!(alone.public_inputs(), honest[0].public_inputs());
    // Identities at another z or α, none, or one already joined are not joined.
    let ood = || layer.tables.ood[1].clone();
    for other in [
        identity(order[1], ood(), alpha, z + Ext3::ONE).unwrap(),
        identity(order[1], ood(), alpha + Ext3::ONE, z).unwrap(),
    ] {
        let mut parts = honest.clone();
        parts[1] = other;
        assert!(matches!(
            IdentityAir::joint(parts),
            Err(IdentityError::Joint)
        ));
    }
    assert!(matches!(
        IdentityAir::joint(Vec::new()),
        Err(IdentityError::Joint)
    ));
    assert!(matches!(
        IdentityAir::joint(vec![joint, honest[0].clone()]),
        Err(IdentityError::Joint)
    ));
}
