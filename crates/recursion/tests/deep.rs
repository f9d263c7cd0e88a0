//! The DEEP AIR against the verifier: each position's value is the one `ballast_stark`'s
//! verifier computes from the same openings and claims; the AIR proves and verifies; a
//! forged value, sum, power or point, or a claim other than the child's, is refused on its
//! row.

mod columns;
mod common;

use columns::{ext, get, set};
use common::{
    any_security, fibonacci, has_layer_degrees, layer_proves, params, poseidon2_chain, proven,
    statement,
};

use ballast_air::{AirError, ConstraintInfo, check_trace};
use ballast_field::{Ext3, Felt, RowBlocks};
use ballast_merkle::MerkleHash;
use ballast_ntt::LdePlan;
use ballast_poseidon2::{FeltDigest, RATE, digest_from_bytes};
use ballast_recursion::{DeepAir, DeepClaims, Opened, OpeningsError};
use ballast_stark::{Replay, Workload, replay};

/// A child's first segment proven and replayed: the DEEP AIR of its queries, their
/// witness, roots and claims, and what the verifier derived.
struct Child {
    air: DeepAir,
    opened: [Opened; 2],
    roots: [FeltDigest; 2],
    claims: DeepClaims,
    replay: Replay,
    /// Each tree's leaf rows, and the height of both.
    leaf_rows: [usize; 2],
    height: usize,
}

impl Child {
    fn of<W: Workload>(workload: &W) -> Self {
        let params = params();
        let child_air = workload.air(0);
        let (proof, public) = proven(workload, &params);
        let replay = replay(
            &child_air,
            &proof,
            &statement(&public),
            &params,
            &any_security(),
        )
        .expect("the child verifies");
        let q = &proof.queries;
        let widths = [q.trace_rows.len(), q.quotient_rows.len()].map(|n| n / q.positions.len());
        let height = workload.log_rows() + params.log_blowup;
        let air = DeepAir::new(
            widths[0],
            widths[1],
            workload.log_rows(),
            height,
            &replay.positions,
        )
        .expect("a valid child");
        let roots = [&proof.trace_root, &proof.quotient_root]
            .map(|root| digest_from_bytes(root).expect("a Poseidon2 root"));
        let opened = [
            air.openings()
                .open(0, &roots[0], &q.trace_rows, &q.trace_nodes),
            air.openings()
                .open(1, &roots[1], &q.quotient_rows, &q.quotient_nodes),
        ]
        .map(|opened| opened.expect("the child's openings verify"));
        let claims = DeepClaims {
            gamma: replay.gamma,
            z: replay.deep.z,
            at_z: replay.deep.at_z,
            at_zw: replay.deep.at_zw,
        };
        Self {
            air,
            opened,
            roots,
            claims,
            replay,
            leaf_rows: widths.map(|w| w.div_ceil(RATE).max(1)),
            height,
        }
    }

    fn table(&self) -> RowBlocks {
        self.air.trace(&self.opened, &self.claims).unwrap()
    }

    fn public(&self) -> Vec<Felt> {
        self.air.public_inputs(&self.roots, &self.claims).unwrap()
    }

    fn block_rows(&self) -> usize {
        (self.leaf_rows[0] + self.leaf_rows[1] + 2 * self.height + 1).next_power_of_two()
    }

    /// The row of block `k` that holds its DEEP value.
    fn deep_row(&self, k: usize) -> usize {
        k * self.block_rows() + self.leaf_rows[0] + self.height + self.leaf_rows[1]
    }
}

/// The value's columns: the last three.
const VALUE: usize = ballast_recursion::DEEP_WIDTH - 3;
/// The sum's columns: the first three after the openings'.
const SUM: usize = ballast_recursion::OPENINGS_WIDTH;

#[test]
fn each_value_is_the_verifiers_and_the_air_proves() {
    let chain = poseidon2_chain();
    for child in [Child::of(&fibonacci(5)), Child::of(&chain)] {
        let table = child.table();
        let zeta = Felt::two_adic_root(child.height);
        let widths = child
            .opened
            .clone()
            .map(|o| o.rows.len() / child.replay.positions.len());
        for (k, &p) in child.replay.positions.iter().enumerate() {
            let x = LdePlan::SHIFT * zeta.pow(p as u64);
            let trace_row = &child.opened[0].rows[k * widths[0]..(k + 1) * widths[0]];
            let quotient_row = &child.opened[1].rows[k * widths[1]..(k + 1) * widths[1]];
            let expected = child.replay.deep.evaluate(trace_row, quotient_row, x);
            assert_eq!(
                ext(&table.row(child.deep_row(k)), VALUE),
                expected,
                "position {p}"
            );
        }
        let public = child.public();
        assert_eq!(check_trace(&child.air, &table, &public), Ok(()));
        assert!(has_layer_degrees(&child.air));
        assert_eq!(
            layer_proves(&child.air, &mut table.clone(), &public),
            Ok(())
        );
    }
}

/// Columns of the extension values after the openings', 3 coordinates each.
const POWER: usize = SUM + 3;
const TRACE_SUM: usize = SUM + 6;
const INVERSE_Z: usize = SUM + 9;
const INVERSE_ZW: usize = SUM + 12;
/// The position's point, a base value.
const POINT: usize = SUM + 15;

impl Child {
    /// The rows of block `k`.
    fn block(&self, k: usize) -> std::ops::Range<usize> {
        k * self.block_rows()..(k + 1) * self.block_rows()
    }

    /// Block `k`'s DEEP value recomputed from its other columns, as an honest prover would
    /// from forged sums, powers or inverses.
    fn revalue(&self, table: &mut RowBlocks, k: usize) {
        let row = self.deep_row(k);
        let widths: usize = self.opened.iter().map(|o| o.rows.len()).sum();
        let next_row = self
            .claims
            .gamma
            .pow((widths / self.replay.positions.len()) as u64);
        let value = (get(table, row, SUM) - self.claims.at_z) * get(table, row, INVERSE_Z)
            + next_row
                * (get(table, row, TRACE_SUM) - self.claims.at_zw)
                * get(table, row, INVERSE_ZW);
        for r in self.block(k) {
            set(table, r, VALUE, value);
        }
    }
}

#[test]
fn each_rule_of_the_sums_is_its_own_constraint() {
    // Forgeries that break one rule and follow every other from there (later sums, the kept
    // trace sum, the value), each refused at its row by the constraint of that rule: the
    // openings' constraints first, then for coordinate 0 the block start, the sum's step,
    // the two leaves' first powers, the power's step, the kept sum's carry and its capture,
    // the two inverses and the value.
    let chain = poseidon2_chain();
    let child = Child::of(&chain);
    let honest = child.table();
    let public = child.public();
    let openings = ConstraintInfo::of(child.air.openings())
        .unwrap()
        .constraints
        .len();
    let constraint = |rule: usize| openings + rule;
    let k = 1;
    let rows = child.block(k);
    let first = rows.start;
    let [trace_leaf, quotient_leaf] = child.leaf_rows;
    let keep = first + trace_leaf;
    let quotient_start = keep + child.height;
    let deep = child.deep_row(k);
    let delta = Ext3::ONE;
    let lambda = Ext3::from(Felt::new(2));
    type Forgery<'a> = Box<dyn Fn(&mut RowBlocks) + 'a>;
    let shift = |table: &mut RowBlocks, from: usize, column: usize, by: Ext3| {
        for r in from..rows.end {
            let v = get(table, r, column);
            set(table, r, column, v + by);
        }
    };
    let cases: Vec<(&str, Forgery, (usize, usize))> = vec![
        (
            "a block's sum not starting at zero",
            Box::new(|t| {
                shift(t, first, SUM, delta);
                shift(t, first, TRACE_SUM, delta);
            }),
            (first, constraint(0)),
        ),
        (
            "a sum that jumps on a path row",
            Box::new(|t| shift(t, quotient_start, SUM, delta)),
            (quotient_start - 1, constraint(1)),
        ),
        (
            "the trace's powers from another start",
            Box::new(|t| {
                let a = get(t, keep, TRACE_SUM);
                for r in first..first + trace_leaf {
                    let (p, s) = (get(t, r, POWER), get(t, r, SUM));
                    set(t, r, POWER, p * lambda);
                    set(t, r, SUM, s * lambda);
                }
                shift(t, keep, SUM, a * (lambda - Ext3::ONE));
                shift(t, first, TRACE_SUM, a * (lambda - Ext3::ONE));
            }),
            (first, constraint(2)),
        ),
        (
            "the quotient's powers from another start",
            Box::new(|t| {
                let a = get(t, keep, TRACE_SUM);
                let b = get(t, deep, SUM) - a;
                for r in quotient_start..quotient_start + quotient_leaf {
                    let p = get(t, r, POWER);
                    set(t, r, POWER, p * lambda);
                }
                for r in quotient_start + 1..quotient_start + quotient_leaf {
                    let s = get(t, r, SUM);
                    set(t, r, SUM, a + (s - a) * lambda);
                }
                shift(t, deep, SUM, b * (lambda - Ext3::ONE));
            }),
            (quotient_start, constraint(3)),
        ),
        (
            "a power that does not step by γ^8",
            Box::new(|t| {
                let last = first + trace_leaf - 1;
                let (p, before) = (
                    get(t, last, POWER),
                    get(t, last + 1, SUM) - get(t, last, SUM),
                );
                set(t, last, POWER, p * lambda);
                let moved = before * (lambda - Ext3::ONE);
                shift(t, last + 1, SUM, moved);
                shift(t, first, TRACE_SUM, moved);
            }),
            (first + trace_leaf - 2, constraint(4)),
        ),
        (
            "a kept sum that changes",
            Box::new(|t| shift(t, keep + 1, TRACE_SUM, delta)),
            (keep, constraint(5)),
        ),
        (
            "a kept sum that is not the trace's",
            Box::new(|t| shift(t, first, TRACE_SUM, delta)),
            (keep, constraint(6)),
        ),
        (
            "a wrong 1/(x − z)",
            Box::new(|t| shift(t, first, INVERSE_Z, delta)),
            (deep, constraint(7)),
        ),
        (
            "a wrong 1/(x − zω)",
            Box::new(|t| shift(t, first, INVERSE_ZW, delta)),
            (deep, constraint(8)),
        ),
    ];
    for (what, forge, expected) in cases {
        let mut table = honest.clone();
        forge(&mut table);
        child.revalue(&mut table, k);
        let found = match check_trace(&child.air, &table, &public) {
            Err(AirError::Unsatisfied { row, constraint }) => (row, constraint),
            other => panic!("{what}: expected a failing constraint, got {other:?}"),
        };
        assert_eq!(found, expected, "{what}");
    }
    // The value itself, and claims other than the child's (the values were computed with
    // its own).
    let mut table = honest.clone();
    shift_one(&mut table, deep, VALUE, delta);
    assert_eq!(
        check_trace(&child.air, &table, &public),
        Err(AirError::Unsatisfied {
            row: deep,
            constraint: constraint(9)
        }),
        "a value"
    );
    let mut claims = child.claims;
    claims.at_zw += Ext3::ONE;
    let other = child.air.public_inputs(&child.roots, &claims).unwrap();
    assert_eq!(
        check_trace(&child.air, &honest, &other),
        Err(AirError::Unsatisfied {
            row: child.deep_row(0),
            constraint: constraint(9)
        }),
        "a claim"
    );
}

#[test]
fn the_point_is_the_paths_bits() {
    // The point column ends as SHIFT·ζ^p on each block's DEEP row; forgeries that follow
    // its rule everywhere else, with the inverses and the value recomputed from them, are
    // refused where they break it: the point's start (rule 10, after the sums' ten rules
    // for each of 3 coordinates), a level's step or the carry to the DEEP row (rule 11).
    let chain = poseidon2_chain();
    let child = Child::of(&chain);
    let honest = child.table();
    let public = child.public();
    let zeta = Felt::two_adic_root(child.height);
    for (k, &p) in child.replay.positions.iter().enumerate() {
        let x = LdePlan::SHIFT * zeta.pow(p as u64);
        assert_eq!(honest.row(child.deep_row(k))[POINT], x, "position {p}");
    }
    let openings = ConstraintInfo::of(child.air.openings())
        .unwrap()
        .constraints
        .len();
    let (start_rule, move_rule) = (openings + 30, openings + 31);
    let k = 1;
    let p = child.replay.positions[k];
    let path_start = child.block(k).start + child.leaf_rows[0] - 1;
    let path_end = path_start + child.height;
    let deep = child.deep_row(k);
    let level = (0..child.height)
        .find(|&i| p >> i & 1 == 1)
        .expect("a position with a bit set");
    // The point scaled from row `from` on, and the inverses and value an honest prover
    // would compute from it: only the point's own rule can refuse it.
    let zw = child.claims.z * Felt::two_adic_root(chain.log_rows());
    let scaled = |from: usize, by: Felt| {
        let mut table = honest.clone();
        for r in from..=deep {
            let x = table.row(r)[POINT];
            table.set(r, POINT, x * by);
        }
        let x = Ext3::from(table.row(deep)[POINT]);
        for r in child.block(k) {
            set(&mut table, r, INVERSE_Z, (x - child.claims.z).inverse());
            set(&mut table, r, INVERSE_ZW, (x - zw).inverse());
        }
        child.revalue(&mut table, k);
        table
    };
    let step_undone = zeta.pow(1 << level).inverse();
    for (what, table, expected) in [
        (
            "a point not starting at SHIFT",
            scaled(path_start, Felt::new(2)),
            (path_start, start_rule),
        ),
        (
            "a level's bit not taken",
            scaled(path_start + 1 + level, step_undone),
            (path_start + level, move_rule),
        ),
        (
            "a point changed on its way to the DEEP row",
            scaled(path_end + 1, Felt::new(3)),
            (path_end, move_rule),
        ),
    ] {
        assert_eq!(
            check_trace(&child.air, &table, &public),
            Err(AirError::Unsatisfied {
                row: expected.0,
                constraint: expected.1
            }),
            "{what}"
        );
    }
}

fn shift_one(table: &mut RowBlocks, row: usize, column: usize, by: Ext3) {
    let v = get(table, row, column);
    set(table, row, column, v + by);
}

#[test]
fn an_lde_no_taller_than_the_child_is_refused() {
    assert_eq!(
        DeepAir::new(4, 2, 5, 5, &[1]).unwrap_err(),
        OpeningsError::LdeTooShort {
            log_rows: 5,
            log_lde: 5
        }
    );
    assert!(DeepAir::new(4, 2, 5, 6, &[1]).is_ok());
}

#[test]
fn values_over_leaves_of_several_rows_are_the_verifiers() {
    // Synthetic trees whose quotient rows span two leaf rows (13 values), so the quotient's
    // powers step too, against DeepCoefficients built from random claims.
    let (log_rows, height, widths, positions) = (2, 4, [5, 13], [3, 9, 12]);
    let mut rng = ballast_testkit::SplitMix64::new(21);
    let mut felt = || Felt::new(rng.next().expect("an endless stream"));
    let tables = widths.map(|w| {
        let cells: Vec<Felt> = (0..w << height).map(|_| felt()).collect();
        RowBlocks::from_rows(w, &cells)
    });
    let mut ext3 = || Ext3::new([felt(), felt(), felt()]);
    let claims = DeepClaims {
        gamma: ext3(),
        z: ext3(),
        at_z: ext3(),
        at_zw: ext3(),
    };
    let air = DeepAir::new(widths[0], widths[1], log_rows, height, &positions).unwrap();
    let mut roots = [[Felt::ZERO; 4]; 2];
    let opened = [0, 1].map(|t| {
        let tree = ballast_merkle::MerkleTree::commit_rows(MerkleHash::Poseidon2, &tables[t]);
        roots[t] = digest_from_bytes(&tree.root()).unwrap();
        let rows: Vec<Felt> = positions.iter().flat_map(|&p| tables[t].row(p)).collect();
        air.openings()
            .open(t, &roots[t], &rows, &tree.open_batch(&positions))
            .unwrap()
    });
    let powers = claims.gamma.powers(widths[0] + widths[1] + 1);
    let deep = ballast_stark::DeepCoefficients {
        trace: powers[..widths[0]].to_vec(),
        quotient: powers[widths[0]..widths[0] + widths[1]].to_vec(),
        next_row: powers[widths[0] + widths[1]],
        at_z: claims.at_z,
        at_zw: claims.at_zw,
        z: claims.z,
        zw: claims.z * Felt::two_adic_root(log_rows),
    };
    let table = air.trace(&opened, &claims).unwrap();
    let public = air.public_inputs(&roots, &claims).unwrap();
    assert_eq!(check_trace(&air, &table, &public), Ok(()));
    let zeta = Felt::two_adic_root(height);
    let block_rows = (1 + 2 + 2 * height).next_power_of_two();
    for (k, &p) in positions.iter().enumerate() {
        let x = LdePlan::SHIFT * zeta.pow(p as u64);
        let expected = deep.evaluate(&tables[0].row(p), &tables[1].row(p), x);
        let row = k * block_rows + 1 + height + 2;
        assert_eq!(ext(&table.row(row), VALUE), expected, "position {p}");
    }
    // A z on the LDE's points has no DEEP quotient: refused, not a panic.
    let mut on_domain = claims;
    on_domain.z = Ext3::from(LdePlan::SHIFT * zeta.pow(positions[1] as u64));
    assert_eq!(
        air.trace(&opened, &on_domain).unwrap_err(),
        OpeningsError::OnTheDomain
    ); // One root short: named, not a statement of the wrong length.
    assert_eq!(
        air.public_inputs(&roots[..1], &claims).unwrap_err(),
        OpeningsError::Shape {
            what: "roots",
            expected: 2,
            got: 1
        }
    );
}
