//! The query-phase AIR against real children: the openings of all their trees, the DEEP
//! values and FRI's folds down to the final polynomial satisfy it, it proves and verifies,
//! and each rule of the folds is its own constraint: a forgery that breaks only that rule is
//! refused at its row by it, and a dishonest layer opened at another leaf than the
//! position's is refused by the slot. A claim or a challenge other than the child's is
//! refused, and so is a child the layer cannot take: committed with Keccak-256, below the
//! layer's security floor, a proof of another statement, invalid, or too long a final
//! polynomial.

mod columns;
mod common;

use columns::{get, set};
use common::{
    any_security, fibonacci, has_layer_degrees, layer_params, layer_proves, params,
    poseidon2_chain, proven, statement,
};

use ballast_air::{AirError, ConstraintInfo, check_trace};
use ballast_field::{Ext3, Felt, RowBlocks};
use ballast_merkle::MerkleTree;
use ballast_ntt::LdePlan;
use ballast_poseidon2::{RATE, digest_from_bytes, leaf_start, node_start};
use ballast_recursion::{
    Child, ChildError, ChildQueries, ChildShape, DEEP_WIDTH, DeepAir, DeepClaims, OpeningsError,
    QueriesAir,
};
use ballast_stark::{
    MerkleHash, SegmentProof, SegmentStatement, StarkParams, VerifierError, VerifyPolicy, Workload,
};

/// A child's first segment proven with a final polynomial of 2^`log_final` coefficients,
/// taken into its query AIR, with its shape.
struct Proven {
    q: ChildQueries,
    shape: ChildShape,
}

impl Proven {
    fn of<W: Workload>(workload: &W, log_final: usize) -> Self {
        let params = StarkParams {
            log_final_poly_len: log_final,
            ..params()
        };
        let (proof, public) = proven(workload, &params);
        let q = Child::of_segment(
            &workload.air(0),
            &proof,
            &statement(&public),
            &params,
            &any_security(),
        )
        .expect("the child's queries")
        .queries;
        let per_position = |len: usize| len / proof.queries.positions.len();
        let shape = ChildShape {
            trace_width: per_position(proof.queries.trace_rows.len()),
            quotient_width: per_position(proof.queries.quotient_rows.len()),
            log_rows: workload.log_rows(),
            log_lde: workload.log_rows() + params.log_blowup,
            log_final_poly_len: log_final,
        };
        Self { q, shape }
    }

    fn table(&self) -> RowBlocks {
        self.q.trace().unwrap()
    }

    fn public(&self) -> Vec<Felt> {
        self.q.public_inputs().unwrap()
    }

    fn public_with(&self, claims: &DeepClaims, betas: &[Ext3], final_poly: &[Ext3]) -> Vec<Felt> {
        self.q
            .air
            .public_inputs(&self.q.roots, claims, betas, final_poly)
            .unwrap()
    }

    /// log2 of each FRI round's arity.
    fn log_arities(&self) -> Vec<usize> {
        ballast_fri::round_arities(self.shape.log_rows - self.shape.log_final_poly_len)
    }

    /// Block rows: each tree's leaf rows and path rows, and the chain's row, to a power of
    /// two.
    fn block_rows(&self) -> usize {
        self.segments()
            .last()
            .map(|(s, l, h)| s + l + h + 1)
            .unwrap()
            .next_power_of_two()
    }

    /// Each tree's (first row, leaf rows, height) in a block.
    fn segments(&self) -> Vec<(usize, usize, usize)> {
        let lde = self.shape.log_lde;
        let mut trees = vec![
            (self.shape.trace_width, lde),
            (self.shape.quotient_width, lde),
        ];
        let mut log_len = lde;
        for a in self.log_arities() {
            trees.push((3 << a, log_len - a));
            log_len -= a;
        }
        let mut start = 0;
        trees
            .into_iter()
            .map(|(width, height)| {
                let leaf = width.div_ceil(RATE).max(1);
                let segment = (start, leaf, height);
                start += leaf + height;
                segment
            })
            .collect()
    }

    /// Round i's fold row in block `k`: its leaf's last row.
    fn fold_row(&self, k: usize, i: usize) -> usize {
        let (start, leaf, _) = self.segments()[2 + i];
        k * self.block_rows() + start + leaf - 1
    }
}

/// The child the rule tests forge: rounds of 8 then 4, a final polynomial of 2
/// coefficients; its honest table and inputs, its rules, and block k = 1's two fold rows.
struct EightThenFour {
    child: Proven,
    honest: RowBlocks,
    public: Vec<Felt>,
    rules: Rules,
    k: usize,
    first: usize,
    second: usize,
}

fn eight_then_four() -> EightThenFour {
    let child = Proven::of(&fibonacci(6), 1);
    let k = 1;
    EightThenFour {
        honest: child.table(),
        public: child.public(),
        rules: Rules::of(&child),
        k,
        first: child.fold_row(k, 0),
        second: child.fold_row(k, 1),
        child,
    }
}

// The columns of the end remainder, the slot weights, the coset's point and the inverses,
// after the challenges.
const ENDS: usize = BETAS + 9;
const WEIGHTS: usize = ENDS + 1;
const POINT: usize = WEIGHTS + 8;
const INVERSES: usize = POINT + 1;

#[test]
fn each_slot_is_read_off_the_paths_ends() {
    // Rounds of 8 then 4. The trace path's end remainder (0: p < 2^h), carried to the first
    // fold row, then the first round's tree's (p >> h₀, the first slot) carried to the
    // second fold row, whose slot is the second tree's less 4 times it.
    let EightThenFour {
        child,
        honest,
        public,
        rules,
        k,
        first,
        second,
    } = eight_then_four();
    let (start, leaf, height) = child.segments()[0];
    let trace_end = k * child.block_rows() + start + leaf + height - 1;
    let slot = |row: usize| {
        let weights = &honest.row(row)[WEIGHTS..WEIGHTS + 8];
        assert_eq!(weights.iter().filter(|&&w| w == Felt::ONE).count(), 1);
        weights.iter().position(|&w| w == Felt::ONE).unwrap() as u64
    };
    let ends = |row: usize| honest.row(row)[ENDS].as_u64();
    assert_eq!(ends(first), 0);
    assert_eq!(slot(first), ends(first + 1));
    assert_eq!(slot(second), ends(second + 1) - 4 * ends(second));
    let shifted = |from: usize, to: usize| {
        let mut table = honest.clone();
        for r in from..=to {
            table.set(r, ENDS, table.row(r)[ENDS] + Felt::ONE);
        }
        table
    };
    for (what, table, expected) in [
        (
            "an end remainder other than the path's",
            shifted(trace_end, first),
            (trace_end, Rules::ENDS_PIN),
        ),
        (
            "an end remainder that changes between paths",
            shifted(trace_end + 1, first),
            (trace_end, Rules::ENDS_CARRY),
        ),
        (
            "a slot other than the remainders give",
            shifted(first + 1, second),
            (first, Rules::ROUND_SLOT),
        ),
    ] {
        assert_eq!(
            failure(&child, &table, &public),
            Some((expected.0, rules.at(expected.1))),
            "{what}"
        );
    }
    // Weights at another slot: the coset does not hold the value there.
    let s = slot(first) as usize;
    let mut table = honest.clone();
    table.set(first, WEIGHTS + s, Felt::ZERO);
    table.set(first, WEIGHTS + (s + 1) % 8, Felt::ONE);
    assert_eq!(
        failure(&child, &table, &public),
        Some((first, rules.at(Rules::SLOT)))
    );
    // No weight at all would clear the slot's check: their sum must be 1.
    let mut table = honest.clone();
    table.set(first, WEIGHTS + s, Felt::ZERO);
    assert_eq!(
        failure(&child, &table, &public),
        Some((first, rules.at(Rules::WEIGHT_SUM)))
    );
    // Weights that are not bits: the one-hot weights plus a vector that keeps their sum,
    // their weighted slot and the coset's weighted value (a null vector of those five
    // equations over the base field), which every rule but the bits' accepts.
    let coset: Vec<Ext3> = (0..8).map(|j| get(&honest, first, COSET + 3 * j)).collect();
    let value = get(&honest, first, VALUE);
    let mut equations: Vec<[Felt; 8]> = (0..3)
        .map(|c| std::array::from_fn(|j| (coset[j] - value).coeffs()[c]))
        .collect();
    equations.push([Felt::ONE; 8]);
    equations.push(std::array::from_fn(|j| Felt::new(j as u64)));
    let null = null_vector(equations);
    let mut table = honest.clone();
    for (j, n) in null.iter().enumerate() {
        table.set(first, WEIGHTS + j, table.row(first)[WEIGHTS + j] + *n);
    }
    let not_a_bit = (0..8)
        .find(|&j| {
            let w = table.row(first)[WEIGHTS + j];
            w != Felt::ZERO && w != Felt::ONE
        })
        .expect("a weight that is not a bit");
    assert_eq!(
        failure(&child, &table, &public),
        Some((first, rules.at(Rules::WEIGHT_BITS + not_a_bit)))
    );
}

#[test]
fn a_layer_opened_at_another_leaf_is_refused_by_the_slot() {
    // The openings leave a FRI tree's path end to the slots. A dishonest first layer whose
    // leaf l' (the position's leaf with bit 0 flipped) holds a coset with the DEEP value at
    // the position's slot and folding to the honest next value, opened in block 0 with l''s
    // bits, point and inverses: its leaf, path, coset, folds and point all hold, and only
    // the slot refuses the path's end (p − l')/2^h, which is no small integer.
    let child = Proven::of(&fibonacci(6), 1);
    let rules = Rules::of(&child);
    let mut table = child.table();
    let mut public = child.public();
    let first = child.fold_row(0, 0);
    let second = child.fold_row(0, 1);
    let (start, leaf_rows, height) = child.segments()[2];
    assert_eq!(start + leaf_rows - 1, first);
    let p = table.row(first)[POSITION];
    let leaf = ((p.as_u64() & ((1 << height) - 1)) ^ 1) as usize;
    let omega = Felt::two_adic_root(child.shape.log_lde);
    let x = LdePlan::SHIFT * omega.pow(leaf as u64);
    let beta = get(&table, first, BETAS);
    let folds = |coset: &[Ext3]| ballast_fri::fold_coset(&mut coset.to_vec(), x, beta);
    let slot = (0..8)
        .find(|&s| table.row(first)[WEIGHTS + s] == Felt::ONE)
        .unwrap();
    let target = get(&table, first + 1, VALUE);
    let mut coset: Vec<Ext3> = (0..8).map(|j| get(&table, first, COSET + 3 * j)).collect();
    coset[slot] = get(&table, first, VALUE);
    let other = (slot + 1) % 8;
    coset[other] = Ext3::ZERO;
    let mut unit = vec![Ext3::ZERO; 8];
    unit[other] = Ext3::ONE;
    coset[other] = (target - folds(&coset)) * folds(&unit).inverse();
    assert_eq!(folds(&coset), target);
    let row = ballast_fri::layer_row(&coset);

    // The layer's tree: that coset at leaf l', other leaves of counting numbers.
    let cells: Vec<Felt> = (0..(1usize << height) * row.len())
        .map(|c| {
            if c / row.len() == leaf {
                row[c % row.len()]
            } else {
                Felt::new(c as u64)
            }
        })
        .collect();
    let tree = MerkleTree::commit_rows(MerkleHash::Poseidon2, &RowBlocks::from_rows(24, &cells));
    let node =
        |level: usize, index: usize| digest_from_bytes(&tree.levels()[level][index]).unwrap();
    public[8..12].copy_from_slice(&node(height, 0));

    // Block 0's first round: the leaf's rows and the coset, the path, the point, the
    // inverses, the folds and the end remainder, all for l'.
    let permute = |table: &mut RowBlocks, r: usize, input: [Felt; 12], bit: u64, rest: Felt| {
        let mut values = table.row(r);
        values[..12].copy_from_slice(&input);
        let output = ballast_poseidon2::air::fill(
            ballast_recursion::SBOX,
            input,
            &mut values[12..OPENINGS_BIT],
        );
        values[OPENINGS_BIT] = Felt::new(bit);
        values[OPENINGS_BIT + 1] = rest;
        table.write_row(r, &values);
        output
    };
    let mut state = leaf_start(row.len(), Felt::ZERO);
    for (j, block) in row.chunks(RATE).enumerate() {
        state[..RATE].copy_from_slice(block);
        let rest = if start + j == first { p } else { Felt::ZERO };
        state = permute(&mut table, start + j, state, 0, rest);
        for (c, &v) in row.iter().enumerate() {
            table.set(start + j, COSET + c, v);
        }
    }
    let (mut rest, mut point) = (p, x);
    let half = Felt::new(2).inverse();
    for level in 0..height {
        let bit = (leaf >> level) as u64 & 1;
        let mut input = node_start(Felt::ZERO);
        let sibling = node(level, (leaf >> level) ^ 1);
        let (left, right) = if bit == 0 { (0, 4) } else { (4, 0) };
        input[left..left + 4].copy_from_slice(&state[..4]);
        input[right..right + 4].copy_from_slice(&sibling);
        rest = (rest - Felt::new(bit)) * half;
        state = permute(&mut table, first + 1 + level, input, bit, rest);
    }
    assert_eq!(state[..4], node(height, 0));
    for level in 0..=height {
        table.set(first + level, POINT, point);
        if level < height && (leaf >> level) & 1 == 1 {
            point *= omega.pow(1 << level).inverse();
        }
    }
    assert_eq!(point, LdePlan::SHIFT);
    let mut inverse = (x + x).inverse();
    for level in 0..4 {
        table.set(first, INVERSES + level, inverse);
        inverse = inverse * inverse + inverse * inverse;
    }
    refold(&mut table, first, first);
    for r in first + 1..=second {
        table.set(r, ENDS, rest);
    }
    assert_eq!(
        failure(&child, &table, &public),
        Some((first, rules.at(Rules::ROUND_SLOT)))
    );
}

/// A nonzero vector that every row of `equations` (fewer than N) maps to zero.
fn null_vector<const N: usize>(mut equations: Vec<[Felt; N]>) -> [Felt; N] {
    let mut pivots = Vec::new();
    for column in 0..N {
        let row = pivots.len();
        let Some(found) = (row..equations.len()).find(|&r| equations[r][column] != Felt::ZERO)
        else {
            continue;
        };
        equations.swap(row, found);
        let inverse = equations[row][column].inverse();
        equations[row] = equations[row].map(|v| v * inverse);
        for other in 0..equations.len() {
            let factor = equations[other][column];
            if other != row && factor != Felt::ZERO {
                let pivot = equations[row];
                for (v, p) in equations[other].iter_mut().zip(pivot) {
                    *v -= factor * p;
                }
            }
        }
        pivots.push(column);
    }
    let free = (0..N)
        .find(|c| !pivots.contains(c))
        .expect("more unknowns than equations");
    let mut vector = [Felt::ZERO; N];
    vector[free] = Felt::ONE;
    for (row, &column) in pivots.iter().enumerate() {
        vector[column] = -equations[row][free];
    }
    vector
}

#[test]
fn every_round_folds_as_the_verifier_and_the_air_proves() {
    // Rounds of 8; of 4; of 8, 8 and 2; of 8 then 4; of 8 then 2; and none, with final
    // polynomials of 4, 4, 1, 2, 4 and 16 coefficients.
    let children = [
        (Proven::of(&fibonacci(5), 2), vec![3]),
        (Proven::of(&poseidon2_chain(), 2), vec![2]),
        (Proven::of(&fibonacci(7), 0), vec![3, 3, 1]),
        (Proven::of(&fibonacci(6), 1), vec![3, 2]),
        (Proven::of(&fibonacci(6), 2), vec![3, 1]),
        (Proven::of(&poseidon2_chain(), 4), vec![]),
    ];
    for (child, arities) in children {
        assert_eq!(child.log_arities(), arities);
        assert!(has_layer_degrees(&child.q.air));
        let mut table = child.table();
        let public = child.public();
        assert_eq!(check_trace(&child.q.air, &table, &public), Ok(()));
        assert_eq!(layer_proves(&child.q.air, &mut table, &public), Ok(()));
    }
}

/// The first failing (row, constraint), or none.
fn failure(child: &Proven, table: &RowBlocks, public: &[Felt]) -> Option<(usize, usize)> {
    match check_trace(&child.q.air, table, public) {
        Ok(()) => None,
        Err(AirError::Unsatisfied { row, constraint }) => Some((row, constraint)),
        Err(other) => panic!("not a constraint failure: {other}"),
    }
}

// The query AIR's columns after the DEEP AIR's.
const VALUE: usize = DEEP_WIDTH - 3;
const COSET: usize = DEEP_WIDTH;
const HALVES: usize = COSET + 24;
const QUARTERS: usize = HALVES + 12;
const BETAS: usize = QUARTERS + 6;
/// The DEEP point, the last DEEP column before the value.
const DEEP_POINT: usize = VALUE - 1;
/// The openings' bit column, then the remainder, the position and the digest's four.
const OPENINGS_BIT: usize = ballast_recursion::OPENINGS_WIDTH - 7;
/// The openings' position column: p all down the block.
const POSITION: usize = OPENINGS_BIT + 2;

/// Where each rule's constraints start, for a child whose rounds fold at every binary fold
/// and copy a round of 4 in: after the DEEP AIR's, the coset's binding (24) and carry (24),
/// the slot (3), the three challenges (9), the copy (12), the three folds (12, 6, 3), the
/// value's carry and the final polynomial, interleaved by coordinate (6), then the end
/// remainder's pin and carry, the weights' (8 bits, their sum) and each round's slot (2),
/// the point's pin and move, the inverse at each entry (2), the squares (3) and the final
/// point.
struct Rules {
    deep: usize,
}

impl Rules {
    /// The rules of `child`'s query AIR, after its DEEP AIR's.
    fn of(child: &Proven) -> Self {
        Rules {
            deep: ConstraintInfo::of(child.q.air.deep())
                .unwrap()
                .constraints
                .len(),
        }
    }

    const COSET_BINDING: usize = 0;
    const COSET_CARRY: usize = 24;
    const SLOT: usize = 48;
    const CHALLENGES: usize = 51;
    const COPY: usize = 60;
    const FIRST_FOLD: usize = 72;
    const SECOND_FOLD: usize = 84;
    const THIRD_FOLD: usize = 90;
    const VALUE_CARRY: usize = 93;
    const FINAL: usize = 94;
    const ENDS_PIN: usize = 99;
    const ENDS_CARRY: usize = 100;
    const WEIGHT_BITS: usize = 101;
    const WEIGHT_SUM: usize = 109;
    const ROUND_SLOT: usize = 110;
    const POINT_PIN: usize = 112;
    const POINT_MOVE: usize = 113;
    const INVERSE: usize = 114;
    const SQUARE: usize = 116;
    const FINAL_POINT: usize = 119;

    fn at(&self, rule: usize) -> usize {
        self.deep + rule
    }
}

#[test]
fn each_rule_of_the_folds_is_its_own_constraint() {
    // Rounds of 8 then 4, a final polynomial of 2 coefficients.
    let EightThenFour {
        child,
        honest,
        public,
        rules,
        k,
        first,
        second,
    } = eight_then_four();
    assert_eq!(failure(&child, &honest, &public), None);
    let leaf_start = first - 2;
    let delta = Ext3::ONE;
    type Forgery<'a> = Box<dyn Fn(&mut RowBlocks) + 'a>;
    let add = |t: &mut RowBlocks, row: usize, at: usize| {
        let v = get(t, row, at);
        set(t, row, at, v + delta);
    };
    let cases: Vec<(&str, Forgery, (usize, usize))> = vec![
        (
            "a coset other than the leaf's, all down the leaf",
            Box::new(|t| {
                for r in leaf_start..=first {
                    add(t, r, COSET);
                }
            }),
            (leaf_start, rules.at(Rules::COSET_BINDING)),
        ),
        (
            "a coset that changes down the leaf",
            Box::new(|t| add(t, leaf_start, COSET + RATE)),
            (leaf_start, rules.at(Rules::COSET_CARRY + RATE)),
        ),
        (
            "a first fold's challenge other than β",
            Box::new(|t| add(t, first, BETAS)),
            (first, rules.at(Rules::CHALLENGES)),
        ),
        (
            "a round of 4's coset not copied into the second fold",
            Box::new(|t| add(t, second, HALVES)),
            (second, rules.at(Rules::COPY)),
        ),
        (
            "a first fold's value off",
            Box::new(|t| add(t, first, HALVES)),
            (first, rules.at(Rules::FIRST_FOLD)),
        ),
        (
            "a second fold's value off",
            Box::new(|t| add(t, first, QUARTERS)),
            (first, rules.at(Rules::SECOND_FOLD)),
        ),
        (
            "a third fold's value off, carried on",
            Box::new(|t| {
                for r in first + 1..child.fold_row(k + 1, 0) {
                    add(t, r, VALUE);
                }
            }),
            (first, rules.at(Rules::THIRD_FOLD)),
        ),
        (
            "a value that jumps between folds",
            Box::new(|t| add(t, first + 2, VALUE)),
            (first + 1, rules.at(Rules::VALUE_CARRY)),
        ),
    ];
    // The first fold's values 0 and 2 changed so that the second fold's value is the
    // same: everything after it holds, the first fold alone breaks.
    let second_inverse = honest.row(first)[INVERSES + 1];
    let beta_squared = get(&honest, first, BETAS + 3);
    let paired = move |t: &mut RowBlocks| {
        // QUARTERS[0] = (h0 + h2)/2 + β²·(h0 − h2)·inverse: h0 += d0, h2 += d2 with
        // d0·(1/2 + β²·inverse) = −d2·(1/2 − β²·inverse).
        let spread = beta_squared.scale(second_inverse);
        let half = Ext3::from(Felt::new(2)).inverse();
        let d2 = delta;
        let d0 = -(d2 * (half - spread)) * (half + spread).inverse();
        let (h0, h2) = (get(t, first, HALVES), get(t, first, HALVES + 6));
        set(t, first, HALVES, h0 + d0);
        set(t, first, HALVES + 6, h2 + d2);
    };
    let mut cases = cases;
    cases.push((
        "a first fold whose values still fold to the same second",
        Box::new(paired),
        (first, rules.at(Rules::FIRST_FOLD)),
    ));
    for (what, forge, expected) in cases {
        let mut table = honest.clone();
        forge(&mut table);
        assert_eq!(failure(&child, &table, &public), Some(expected), "{what}");
    }

    // Inputs other than the child's. A claim: the DEEP value follows it, and the first
    // round's coset does not hold it at the position's slot.
    let block0 = child.fold_row(0, 0);
    let mut claims = child.q.claims.clone();
    claims.sums[0].at_z += delta;
    let forged = child
        .q
        .air
        .trace(&child.q.opened, &claims, &child.q.betas)
        .unwrap();
    let public_of = |claims: &DeepClaims, betas: &[Ext3], final_poly: &[Ext3]| {
        child.public_with(claims, betas, final_poly)
    };
    assert_eq!(
        failure(
            &child,
            &forged,
            &public_of(&claims, &child.q.betas, &child.q.final_poly)
        ),
        Some((block0, rules.at(Rules::SLOT)))
    );
    // A challenge: the fold row's challenge is not the public one.
    let mut betas = child.q.betas.clone();
    betas[0] += delta;
    assert_eq!(
        failure(
            &child,
            &honest,
            &public_of(&child.q.claims, &betas, &child.q.final_poly)
        ),
        Some((block0, rules.at(Rules::CHALLENGES)))
    );
    // A final polynomial: the last value is not on it.
    let mut final_poly = child.q.final_poly.clone();
    final_poly[1] += delta;
    let final_row = child.fold_row(0, 1) + 1;
    assert_eq!(
        failure(
            &child,
            &honest,
            &public_of(&child.q.claims, &child.q.betas, &final_poly)
        ),
        Some((final_row, rules.at(Rules::FINAL)))
    );
}

#[test]
fn each_fold_constant_is_built_from_the_path_bits() {
    // Rounds of 8 then 4, a final polynomial of 2 coefficients. The first round's point
    // runs from its fold row down its path to the layer's shift at the path's end.
    let EightThenFour {
        child,
        honest,
        public,
        rules,
        k,
        first,
        second,
    } = eight_then_four();
    let path_end = first + child.segments()[2].2;
    let honest_inverses: [Felt; 4] = std::array::from_fn(|l| honest.row(first)[INVERSES + l]);
    // The honest columns hold the native verifier's values: x = s·ω^l on the fold row (l
    // the position's low bits, p held in the openings' remainder before the trace path),
    // its inverse, and the final point on the final row.
    let position = honest.row(k * child.block_rows())[POSITION].as_u64();
    let native = |log_len: usize, height: usize| {
        let shift = LdePlan::SHIFT.pow(1 << (child.shape.log_lde - log_len));
        shift * Felt::two_adic_root(log_len).pow(position & ((1 << height) - 1))
    };
    let (h0, h1) = (child.segments()[2].2, child.segments()[3].2);
    let x = native(child.shape.log_lde, h0);
    assert_eq!(honest.row(first)[POINT], x);
    assert_eq!(honest_inverses[0], (x + x).inverse());
    assert_eq!(honest.row(second + 1)[COSET], native(h1, h1));
    // The inverses `inverses` on the first fold row, its folds redone with them and the
    // value carried to the second fold row.
    let with_inverses = |mut t: RowBlocks, inverses: [Felt; 4]| {
        for (l, v) in inverses.into_iter().enumerate() {
            t.set(first, INVERSES + l, v);
        }
        refold(&mut t, first, second);
        t
    };
    // A point other than the bits give, with the inverses and folds that fit it: 2x all
    // down the path, refused where the path ends by the shift.
    let mut doubled = honest.clone();
    for r in first..=path_end {
        doubled.set(r, POINT, doubled.row(r)[POINT].double());
    }
    let halved = honest_inverses.map(|v| v * Felt::new(2).inverse());
    let squared = |mut i: [Felt; 4]| {
        for l in 1..4 {
            i[l] = (i[l - 1] * i[l - 1]).double();
        }
        i
    };
    let doubled = with_inverses(doubled, squared(halved));
    // A point that jumps on the path, below the fold row.
    let mut jumped = honest.clone();
    jumped.set(first + 1, POINT, jumped.row(first + 1)[POINT] + Felt::ONE);
    // An inverse other than 1/(2x), its squares and folds following it.
    let tripled = squared([
        honest_inverses[0] * Felt::new(3),
        Felt::ZERO,
        Felt::ZERO,
        Felt::ZERO,
    ]);
    // A second inverse other than the first's 2·square, the folds following it.
    let mut skewed = honest_inverses;
    skewed[1] += Felt::ONE;
    // The next layer's 1/(2y), read by no fold of this round: bound by its square alone.
    let mut last = honest_inverses;
    last[3] += Felt::ONE;
    // The final point other than 1/(2·(1/(2y))).
    let mut moved = honest.clone();
    let final_row = second + 1;
    moved.set(final_row, COSET, moved.row(final_row)[COSET] + Felt::ONE);
    for (what, table, expected) in [
        (
            "a point that is not the bits'",
            doubled,
            (path_end, Rules::POINT_PIN),
        ),
        ("a point that jumps", jumped, (first, Rules::POINT_MOVE)),
        (
            "an inverse not 1/(2x)",
            with_inverses(honest.clone(), tripled),
            (first, Rules::INVERSE),
        ),
        (
            "an inverse not 2·square",
            with_inverses(honest.clone(), skewed),
            (first, Rules::SQUARE),
        ),
        (
            "a last inverse not 2·square",
            with_inverses(honest.clone(), last),
            (first, Rules::SQUARE + 2),
        ),
        (
            "a final point not the last fold's",
            moved,
            (second, Rules::FINAL_POINT),
        ),
    ] {
        assert_eq!(
            failure(&child, &table, &public),
            Some((expected.0, rules.at(expected.1))),
            "{what}"
        );
    }

    // A final polynomial of 8 coefficients: its point's powers on the final row, each the
    // one before times y. Powers 2 to 7 moved by a null vector of the final value's three
    // coordinates keep the value on the polynomial: only the powers' rules (the AIR's last
    // six) refuse them.
    let child = Proven::of(&fibonacci(6), 3);
    let honest = child.table();
    let public = child.public();
    let final_row = child.fold_row(k, 0) + 1;
    let coefficients = &child.q.final_poly;
    let equations: Vec<[Felt; 6]> = (0..3)
        .map(|c| std::array::from_fn(|j| coefficients[j + 2].coeffs()[c]))
        .collect();
    let null = null_vector(equations);
    let mut table = honest.clone();
    for (j, n) in null.iter().enumerate() {
        table.set(
            final_row,
            COSET + 1 + j,
            table.row(final_row)[COSET + 1 + j] + *n,
        );
    }
    let constraints = ConstraintInfo::of(&child.q.air).unwrap().constraints.len();
    let first_moved = null.iter().position(|&n| n != Felt::ZERO).unwrap();
    assert_eq!(
        failure(&child, &table, &public),
        Some((final_row, constraints - 6 + first_moved))
    );
    // With no round, the final point is the DEEP point: powers 1 to 15 moved the same way
    // are refused by that rule, the one before the powers'.
    let child = Proven::of(&poseidon2_chain(), 4);
    let mut table = child.table();
    let deep_row = child.segments()[1].0 + child.segments()[1].1 + child.block_rows();
    assert_eq!(table.row(deep_row)[COSET], table.row(deep_row)[DEEP_POINT]);
    let coefficients = &child.q.final_poly;
    let equations: Vec<[Felt; 15]> = (0..3)
        .map(|c| std::array::from_fn(|j| coefficients[j + 1].coeffs()[c]))
        .collect();
    let null = null_vector(equations);
    assert_ne!(null[0], Felt::ZERO);
    for (j, n) in null.iter().enumerate() {
        table.set(deep_row, COSET + j, table.row(deep_row)[COSET + j] + *n);
    }
    let constraints = ConstraintInfo::of(&child.q.air).unwrap().constraints.len();
    assert_eq!(
        failure(&child, &table, &child.public()),
        Some((deep_row, constraints - 15))
    );
}

/// Redoes the binary folds of the round of 8 that folds on `row` with the table's
/// challenges and inverses there, and carries the value it gives down to row `to`.
fn refold(table: &mut RowBlocks, row: usize, to: usize) {
    let mut values: Vec<Ext3> = (0..8).map(|j| get(table, row, COSET + 3 * j)).collect();
    for (level, outputs) in [(0, HALVES), (1, QUARTERS), (2, VALUE)] {
        let half = values.len() / 2;
        let beta = get(table, row, BETAS + 3 * level);
        let twiddle = Felt::two_adic_root(3 - level).inverse();
        let inverse = table.row(row)[INVERSES + level];
        values = (0..half)
            .map(|i| {
                let inv = inverse * twiddle.pow(i as u64);
                ballast_fri::fold_pair(values[i], values[i + half], beta, inv)
            })
            .collect();
        if level < 2 {
            for (i, v) in values.iter().enumerate() {
                set(table, row, outputs + 3 * i, *v);
            }
        }
    }
    for r in row + 1..=to {
        set(table, r, VALUE, values[0]);
    }
}

#[test]
fn a_round_of_two_is_copied_into_the_last_fold() {
    // Rounds of 8, 8 and 2: the last round's coset enters at the third fold.
    let child = Proven::of(&fibonacci(7), 0);
    let honest = child.table();
    let public = child.public();
    let deep = ConstraintInfo::of(child.q.air.deep())
        .unwrap()
        .constraints
        .len();
    // After the coset (48), the slot (3), the challenges (9): the copy of 2 values.
    let copy = deep + 60;
    let last = child.fold_row(2, 2);
    let mut table = honest.clone();
    let v = get(&table, last, QUARTERS);
    set(&mut table, last, QUARTERS, v + Ext3::ONE);
    assert_eq!(failure(&child, &table, &public), Some((last, copy)));
}

#[test]
fn bad_shapes_are_refused_by_name() {
    let shape = ChildShape {
        trace_width: 4,
        quotient_width: 3,
        log_rows: 6,
        log_lde: 7,
        log_final_poly_len: 5,
    };
    assert_eq!(
        QueriesAir::new(&shape, &[1]).unwrap_err(),
        OpeningsError::FinalPolynomial { log_len: 5 }
    );
    let too_long = ChildShape {
        log_final_poly_len: 7,
        ..shape
    };
    assert_eq!(
        QueriesAir::new(&too_long, &[1]).unwrap_err(),
        OpeningsError::FinalPolynomial { log_len: 7 }
    );
    let flat = ChildShape {
        log_lde: 6,
        log_final_poly_len: 2,
        ..shape
    };
    assert_eq!(
        QueriesAir::new(&flat, &[1]).unwrap_err(),
        OpeningsError::LdeTooShort {
            log_rows: 6,
            log_lde: 6
        }
    );
    let tall = ChildShape {
        log_rows: 32,
        log_lde: 33,
        log_final_poly_len: 2,
        ..shape
    };
    assert_eq!(
        QueriesAir::new(&tall, &[1]).unwrap_err(),
        OpeningsError::LdeTooTall { log_lde: 33 }
    );
    let child = Proven::of(&fibonacci(5), 2);
    assert_eq!(
        child
            .q
            .air
            .trace(&child.q.opened, &child.q.claims, &[])
            .unwrap_err(),
        OpeningsError::Shape {
            what: "folding challenges",
            expected: 1,
            got: 0
        }
    );
    assert!(matches!(
        child
            .q
            .air
            .trace(&child.q.opened[..2], &child.q.claims, &child.q.betas)
            .unwrap_err(),
        OpeningsError::Shape { .. }
    ));
    assert_eq!(
        child
            .q
            .air
            .public_inputs(
                &child.q.roots[..2],
                &child.q.claims,
                &child.q.betas,
                &child.q.final_poly
            )
            .unwrap_err(),
        OpeningsError::Shape {
            what: "roots",
            expected: 3,
            got: 2
        }
    );
    assert_eq!(
        child
            .q
            .air
            .public_inputs(&child.q.roots, &child.q.claims, &child.q.betas, &[])
            .unwrap_err(),
        OpeningsError::Shape {
            what: "final coefficients",
            expected: 4,
            got: 0
        }
    );
    // The DEEP AIR alone stays what it was: no FRI trees.
    assert!(DeepAir::new(4, 3, 6, 7, &[1]).is_ok());
}

#[test]
fn a_child_the_layer_cannot_take_is_refused_by_name() {
    let workload = fibonacci(5);
    let air = workload.air(0);
    let keccak = StarkParams {
        hash: MerkleHash::Keccak256,
        ..params()
    };
    let (proof, public) = proven(&workload, &keccak);
    let refused = |proof: &SegmentProof, params: &StarkParams| {
        Child::of_segment(&air, proof, &statement(&public), params, &any_security()).unwrap_err()
    };
    assert_eq!(refused(&proof, &keccak), ChildError::NotPoseidon2);
    let params = params();
    let (mut proof, public_inputs) = proven(&workload, &params);
    assert_eq!(public_inputs, public);
    // Below the layer's floor: refused with its figure.
    let floor = VerifyPolicy {
        min_security_bits: 128,
        ..VerifyPolicy::default()
    };
    assert!(matches!(
        Child::of_segment(&air, &proof, &statement(&public), &params, &floor),
        Err(ChildError::Invalid(VerifierError::InsufficientSecurity {
            required: 128,
            ..
        }))
    ));
    // A proof of another statement: its transcript is another, so it does not verify.
    let other = SegmentStatement {
        context: b"another statement",
        ..statement(&public)
    };
    assert!(matches!(
        Child::of_segment(&air, &proof, &other, &params, &any_security()),
        Err(ChildError::Invalid(_))
    ));
    proof.final_poly[0] += Ext3::ONE;
    assert!(matches!(
        refused(&proof, &params),
        ChildError::Invalid(VerifierError::QueryPositions { .. })
    ));
    // A final polynomial of 2^5 coefficients: the child verifies, the AIR does not take it.
    let long_final = StarkParams {
        log_final_poly_len: 5,
        ..params
    };
    let wide = fibonacci(6);
    let (proof, public) = proven(&wide, &long_final);
    assert_eq!(
        Child::of_segment(
            &wide.air(0),
            &proof,
            &statement(&public),
            &long_final,
            &any_security()
        )
        .unwrap_err(),
        ChildError::Queries(OpeningsError::FinalPolynomial { log_len: 5 })
    );
}

/// A layer's proof of a Poseidon2-chain child (its three tables, committed with Poseidon2 at
/// blowup 8), as a layer over it takes it, and the transcript AIR's public inputs.
fn a_layer() -> (Child, Vec<Felt>) {
    let workload = poseidon2_chain();
    let (proof, public) = proven(&workload, &params());
    let child = Child::of_segment(
        &workload.air(0),
        &proof,
        &statement(&public),
        &params(),
        &any_security(),
    )
    .expect("the layer takes the child");
    let layer_params = layer_params();
    let layer = child.prove(&layer_params).expect("the layer proves");
    let over = Child::of_layer(&child, &layer, &layer_params, &any_security())
        .expect("a layer over it takes it");
    let inputs = over.transcript.public_inputs();
    (over, inputs)
}

#[test]
fn a_layers_query_phase_rolls_each_shorter_height_in_and_proves() {
    // A layer's tables proof, verified by a layer over it: its three tables of 2 heights or
    // more, each height's DEEP value at its own point, and FRI's folds with each shorter
    // height rolled in after the round that folds to its size, down to the final
    // polynomial. It satisfies the AIR and proves, and its public inputs are the ones the
    // layer's transcript AIR's give; a shorter height's claim changed moves its value,
    // which the next round's coset does not hold.
    let (layer, inputs) = a_layer();
    let q = &layer.queries;
    let heights = q.claims.sums.len();
    assert!(heights >= 2, "a layer's tables are of several heights");
    let table = q.trace().unwrap();
    let public = q.public_inputs().unwrap();
    assert_eq!(layer.query_inputs(&inputs).unwrap(), public);
    assert_eq!(check_trace(&q.air, &table, &public), Ok(()));
    assert!(has_layer_degrees(&q.air));
    assert_eq!(layer_proves(&q.air, &mut table.clone(), &public), Ok(()));

    // Block 1's roll-ins: a value changed after its DEEP row is refused by its carry there;
    // the fold's output without the roll-in term (a prover that leaves it out) is refused
    // by that fold. Each by the query AIR's rules, not the DEEP AIR's.
    let deep_rules = ConstraintInfo::of(q.air.deep()).unwrap().constraints.len();
    let draws = q.opened[0].paths.len();
    let block_rows = table.height() / draws.next_power_of_two();
    let start = block_rows;
    let deep = q.air.deep();
    let refused_at = |forged: &RowBlocks| match check_trace(&q.air, forged, &public) {
        Err(AirError::Unsatisfied { row, constraint }) if constraint >= deep_rules => Some(row),
        _ => None,
    };
    let roll_ins = q.air.roll_ins();
    assert_eq!(
        roll_ins.len(),
        heights - 1,
        "each shorter height rolls in once"
    );
    for (t, round, fold_row) in roll_ins {
        let (at, deep_row) = (deep.value_column(t), start + deep.deep_rows()[t]);
        let mut forged = table.clone();
        for r in deep_row + 1..=start + fold_row {
            let v = get(&forged, r, at);
            set(&mut forged, r, at, v + Ext3::ONE);
        }
        assert_eq!(
            refused_at(&forged),
            Some(deep_row),
            "height {t}'s value carried"
        );

        let arity = q.opened[2 + round].rows.len() / draws / 3;
        let rolled = q.betas[round].pow(arity as u64) * get(&table, deep_row, at);
        let value = deep.value_column(0);
        let mut forged = table.clone();
        for r in start + fold_row + 1..start + block_rows {
            let v = get(&forged, r, value);
            set(&mut forged, r, value, v - rolled);
        }
        assert_eq!(
            refused_at(&forged),
            Some(start + fold_row),
            "height {t} not rolled in"
        );
    }

    // Refused by a fold's rule, not the DEEP AIR's: the value follows the claim.
    for t in 1..heights {
        let mut claims = q.claims.clone();
        claims.sums[t].at_z += Ext3::ONE;
        let forged = q.air.trace(&q.opened, &claims, &q.betas).unwrap();
        let other = (q.air)
            .public_inputs(&q.roots, &claims, &q.betas, &q.final_poly)
            .unwrap();
        let refused = check_trace(&q.air, &forged, &other);
        assert!(
            matches!(refused, Err(AirError::Unsatisfied { constraint, .. }) if constraint >= deep_rules),
            "height {t}'s value moved: {refused:?}"
        );
    }
}
