//! Every shipped AIR compiled into its constraint program (`ConstraintProgram`), checked
//! against the AIR's own `eval` on random rows: each constraint's value, and the α-folded
//! per-domain sums a device computes. Dropping any one constraint from the program must
//! make the comparison fail.

use ballast_air::{Air, ConstraintBuilder, ConstraintProgram, Domain, Frame, known_count};
use ballast_field::{Ext3, Felt};
use ballast_testkit::SplitMix64;
use ballast_workloads::{FibonacciAir, KeccakChainAir, Poseidon2ChainAir};

/// Each constraint's domain and value, from `eval` on field elements.
struct Direct(Vec<(Domain, Felt)>);

impl ConstraintBuilder for Direct {
    type Expr = Felt;
    fn assert_zero(&mut self, domain: Domain, value: Felt) {
        self.0.push((domain, value));
    }
}

/// Compares the program with `eval` on `rows` random rows (and rows of bits, which the
/// Keccak AIR's constraints are built around), then drops constraints one at a time.
fn check<A: Air>(air: &A, rows: usize) -> ConstraintProgram {
    let program = ConstraintProgram::of(air).expect("the AIR compiles");
    let mut sample = SplitMix64::new(air.width() as u64);
    let alpha = Ext3::new([Felt::new(11), Felt::new(13), Felt::new(17)]);
    let coefficients = alpha.powers(program.domains().len());
    let mut frames = Vec::new();
    for row in 0..rows {
        let bits = row % 2 == 1;
        let mut values = |len| {
            let v: Vec<Felt> = sample.by_ref().take(len).map(Felt::new).collect();
            if bits {
                v.iter().map(|f| Felt::new(f.as_u64() & 1)).collect()
            } else {
                v
            }
        };
        let frame = [
            values(air.width()),
            values(air.width()),
            values(known_count(air)),
            values(air.num_public_inputs()),
        ];
        frames.push(frame);
    }
    for [current, next, periodic, public] in &frames {
        let frame = Frame {
            current,
            next,
            periodic,
            public_inputs: public,
        };
        let mut direct = Direct(Vec::new());
        air.eval(&frame, &mut direct);
        let domains: Vec<Domain> = direct.0.iter().map(|&(d, _)| d).collect();
        let values: Vec<Felt> = direct.0.iter().map(|&(_, v)| v).collect();
        assert_eq!(program.domains(), domains, "{}", air.id());
        assert_eq!(program.evaluate(&frame), values, "{}", air.id());
        let mut sums = [Ext3::ZERO; Domain::COUNT];
        for (&(domain, value), coefficient) in direct.0.iter().zip(&coefficients) {
            sums[domain.index()] += coefficient.scale(value);
        }
        assert_eq!(program.fold(&frame, &coefficients), sums, "{}", air.id());
    }
    // Dropping any constraint is seen on a random row (the first frame's values are
    // random, so every constraint's value is non-zero there but with negligible chance).
    let [current, next, periodic, public] = &frames[0];
    let frame = Frame {
        current,
        next,
        periodic,
        public_inputs: public,
    };
    let whole = program.fold(&frame, &coefficients);
    let count = program.domains().len() as u32;
    let step = (count / 97).max(1);
    for index in (0..count).step_by(step as usize).chain([count - 1]) {
        let dropped = program.without_constraint(index);
        assert_ne!(
            dropped.fold(&frame, &coefficients),
            whole,
            "{}: dropping constraint {index} went unnoticed",
            air.id()
        );
    }
    program
}

#[test]
fn the_keccak_chain_program_computes_what_its_air_computes() {
    let program = check(&KeccakChainAir { log_rows: 6 }, 8);
    eprintln!(
        "keccak-chain: {} instructions, {} registers, {} constants, {} constraints",
        program.instructions().len(),
        program.registers(),
        program.constants().len(),
        program.domains().len()
    );
}

#[test]
fn the_fibonacci_program_computes_what_its_air_computes() {
    check(
        &FibonacciAir {
            sequences: 16,
            log_rows: 5,
        },
        16,
    );
}

#[test]
fn the_poseidon2_chain_program_computes_what_its_air_computes() {
    let program = check(&Poseidon2ChainAir { log_rows: 4 }, 8);
    eprintln!(
        "poseidon2-chain: {} instructions, {} registers, {} constants, {} constraints",
        program.instructions().len(),
        program.registers(),
        program.constants().len(),
        program.domains().len()
    );
}
