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

use ballast_air::{Air, AirError, ConstraintInfo, check_trace};
use ballast_field::{Ext3, Felt, RowBlocks};
use ballast_merkle::{MerkleHash, MixedTree};
use ballast_ntt::LdePlan;
use ballast_poseidon2::{FeltDigest, RATE, digest_from_bytes};
use ballast_recursion::{ClaimedSums, DeepAir, DeepClaims, Opened, OpeningsError};
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
        let claims = DeepClaims::of(replay.gamma, std::slice::from_ref(&replay.deep));
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
        let ClaimedSums { at_z, at_zw } = self.claims.sums[0];
        let value = (get(table, row, SUM) - at_z) * get(table, row, INVERSE_Z)
            + next_row * (get(table, row, TRACE_SUM) - at_zw) * get(table, row, INVERSE_ZW);
        for r in self.block(k) {
            set(table, r, VALUE, value);
        }
    }
}

#[test]
fn each_rule_of_the_sums_is_its_own_constraint() {
    // Forgeries that break one rule and follow every other from there (later sums, the kept
    // trace sum, the value), each refused at its row by the constraint of that rule: the
    // openings' constraints first, then for coordinate 0 the trace leaf's start (sum and
    // power), the sum's step and the power's (4 rules for each of 3 coordinates), then the
    // height's (one, a segment's): for coordinate 0 the quotient leaf's start (sum and
    // power), the kept sum's carry and its capture, the two inverses and the value.
    let chain = poseidon2_chain();
    let child = Child::of(&chain);
    let honest = child.table();
    let public = child.public();
    let openings = ConstraintInfo::of(child.air.openings())
        .unwrap()
        .constraints
        .len();
    let constraint = |rule: usize| openings + rule;
    let height_rule = |rule: usize| constraint(12 + rule);
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
            Box::new(|t| shift(t, keep + 1, SUM, delta)),
            (keep, constraint(2)),
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
            (first, constraint(1)),
        ),
        (
            "a quotient leaf's sum not starting at the trace sum",
            Box::new(|t| shift(t, quotient_start, SUM, delta)),
            (quotient_start, height_rule(0)),
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
            (quotient_start, height_rule(1)),
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
            (first + trace_leaf - 2, constraint(3)),
        ),
        (
            "a kept sum that changes",
            Box::new(|t| shift(t, keep + 1, TRACE_SUM, delta)),
            (keep, height_rule(2)),
        ),
        (
            "a kept sum that is not the trace's",
            Box::new(|t| shift(t, first, TRACE_SUM, delta)),
            (keep, height_rule(3)),
        ),
        (
            "a wrong 1/(x − z)",
            Box::new(|t| shift(t, first, INVERSE_Z, delta)),
            (deep, height_rule(4)),
        ),
        (
            "a wrong 1/(x − zω)",
            Box::new(|t| shift(t, first, INVERSE_ZW, delta)),
            (deep, height_rule(5)),
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
            constraint: height_rule(6)
        }),
        "a value"
    );
    let mut claims = child.claims.clone();
    claims.sums[0].at_zw += Ext3::ONE;
    let other = child.air.public_inputs(&child.roots, &claims).unwrap();
    assert_eq!(
        check_trace(&child.air, &honest, &other),
        Err(AirError::Unsatisfied {
            row: child.deep_row(0),
            constraint: height_rule(6)
        }),
        "a claim"
    );
}

#[test]
fn the_point_is_the_paths_bits() {
    // The point column ends as SHIFT·ζ^p on each block's DEEP row; forgeries that follow
    // its rule everywhere else, with the inverses and the value recomputed from them, are
    // refused where they break it: the point's start (rule 33, after the sums' 4 rules and
    // the height's 7, for each of 3 coordinates), a level's step or the carry to the DEEP
    // row (rule 34).
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
    let (start_rule, move_rule) = (openings + 33, openings + 34);
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
    let (gamma, z) = (ext3(), ext3());
    let sums = ClaimedSums {
        at_z: ext3(),
        at_zw: ext3(),
    };
    let claims = DeepClaims {
        gamma,
        z,
        sums: vec![sums],
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
        at_z: sums.at_z,
        at_zw: sums.at_zw,
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
    let mut on_domain = claims.clone();
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

/// The block row after each height's leaf in a mixed tree of these heights' row widths
/// (tallest first) and `log_lde` levels whose rows start at `start`, and the row after the
/// tree's: its own leaf, then a row a level, a shorter height's leaf and its join row
/// after the level below its rows' nodes.
fn after_leaves(
    start: usize,
    widths: &[usize],
    depths: &[usize],
    log_lde: usize,
) -> (Vec<usize>, usize) {
    let leaf = |w: usize| w.div_ceil(RATE).max(1);
    let mut row = start + leaf(widths[0]);
    let mut ends = vec![row];
    for level in 0..log_lde {
        row += 1;
        if let Some(t) = depths.iter().position(|&d| d == level + 1) {
            row += leaf(widths[t]);
            ends.push(row);
            row += 1;
        }
    }
    (ends, row)
}

#[test]
fn a_tables_proofs_trees_give_each_heights_value() {
    // A tables proof's mixed trees at blowup 4: trace tables of 2^6 LDE rows (two, of 3 and
    // 2 columns), 2^4 (10) and 2^3 (5), quotients of 3, 3, 6 and 3 columns, with random
    // claims. Each height's value is its DEEP function's (its tables' columns concatenated)
    // at its own point g·ζ_t^(p mod M_t), on the row after its quotient leaf; the AIR
    // proves; a shorter height's value, point or claim forged is refused on that row.
    let (log_blowup, log_lde) = (2, 6);
    let heights = [6, 6, 4, 3];
    let widths = [[3, 2, 10, 5], [3, 3, 6, 3]];
    let positions = [2, 5, 17, 21, 33, 60];
    let mut rng = ballast_testkit::SplitMix64::new(5);
    let mut felt = || Felt::new(rng.next().expect("an endless stream"));
    let tables = widths.map(|widths| {
        (heights.iter().zip(widths))
            .map(|(&h, w)| {
                let cells: Vec<Felt> = (0..w << h).map(|_| felt()).collect();
                RowBlocks::from_rows(w, &cells)
            })
            .collect::<Vec<_>>()
    });
    let trees = tables
        .each_ref()
        .map(|t| MixedTree::commit(MerkleHash::Poseidon2, &t.iter().collect::<Vec<_>>()).unwrap());
    let air = DeepAir::mixed(trees[0].shape(), trees[1].shape(), log_blowup, &positions).unwrap();
    let mut roots = [[Felt::ZERO; 4]; 2];
    let opened = [0, 1].map(|k| {
        let shape = trees[k].shape();
        let rows: Vec<Vec<Felt>> = (positions.iter())
            .flat_map(|&p| (0..heights.len()).map(move |t| (t, p)))
            .map(|(t, p)| tables[k][t].row(shape.row_of(t, p)))
            .collect();
        let rows: Vec<&[Felt]> = rows.iter().map(Vec::as_slice).collect();
        let nodes = trees[k].open_batch(&positions, |_| unreachable!());
        roots[k] = digest_from_bytes(&trees[k].root()).unwrap();
        (air.openings())
            .open_mixed(k, &roots[k], shape, &positions, &rows, &nodes)
            .unwrap()
    });
    let mut ext3 = || Ext3::new([felt(), felt(), felt()]);
    let (gamma, z) = (ext3(), ext3());
    let sums: Vec<ClaimedSums> = (0..3)
        .map(|_| ClaimedSums {
            at_z: ext3(),
            at_zw: ext3(),
        })
        .collect();
    let claims = DeepClaims { gamma, z, sums };
    let table = air.trace(&opened, &claims).unwrap();
    let public = air.public_inputs(&roots, &claims).unwrap();
    assert_eq!(check_trace(&air, &table, &public), Ok(()));
    assert!(has_layer_degrees(&air));
    assert_eq!(layer_proves(&air, &mut table.clone(), &public), Ok(()));

    // The heights: their tables, summed widths and depths below the root.
    let groups = [0..2, 2..3, 3..4];
    let depths = [0, 2, 3];
    let summed = |k: usize| groups.clone().map(|g| widths[k][g].iter().sum::<usize>());
    let (trace_ends, trace_rows) = after_leaves(0, &summed(0), &depths, log_lde);
    let (deep_rows, quotient_end) = after_leaves(trace_rows, &summed(1), &depths, log_lde);
    let block_rows = (quotient_end + 1).next_power_of_two();
    assert_eq!(table.height(), 8 * block_rows);
    // The DEEP columns follow the openings' (4 more over mixed trees): the point 15 on,
    // the tallest height's value 16 on, a shorter height's trace sum and value 6 a height
    // from 19 on.
    let base = air.openings().width();
    assert_eq!(base, ballast_recursion::OPENINGS_WIDTH + 4);
    let point = base + 15;
    let value_column = |t: usize| match t {
        0 => base + 16,
        _ => base + 19 + 6 * (t - 1) + 3,
    };
    for (t, group) in groups.iter().enumerate() {
        let (w, c) = (summed(0)[t], summed(1)[t]);
        let log_height = heights[group.start];
        let powers = gamma.powers(w + c + 1);
        let deep = ballast_stark::DeepCoefficients {
            trace: powers[..w].to_vec(),
            quotient: powers[w..w + c].to_vec(),
            next_row: powers[w + c],
            at_z: claims.sums[t].at_z,
            at_zw: claims.sums[t].at_zw,
            z,
            zw: z * Felt::two_adic_root(log_height - log_blowup),
        };
        let zeta = Felt::two_adic_root(log_height);
        for (k, &p) in positions.iter().enumerate() {
            let y = p % (1 << log_height);
            let row = |k: usize| -> Vec<Felt> {
                group.clone().flat_map(|g| tables[k][g].row(y)).collect()
            };
            let x = LdePlan::SHIFT * zeta.pow(y as u64);
            let expected = deep.evaluate(&row(0), &row(1), x);
            let at = k * block_rows + deep_rows[t];
            assert_eq!(table.row(at)[point], x, "height {t}, position {p}");
            assert_eq!(
                ext(&table.row(at), value_column(t)),
                expected,
                "height {t}, position {p}"
            );
        }
    }

    // Forgeries on block 1's rows: the 2^3 height's (the last) value, its point (with its
    // inverses recomputed from it) and its claim b; the point's squaring; the 2^4 height's
    // kept trace sum.
    let openings = ConstraintInfo::of(air.openings())
        .unwrap()
        .constraints
        .len();
    let rule = |t: usize, k: usize| openings + 12 + 21 * t + k;
    let deep_row = block_rows + deep_rows[2];
    let mut forged = table.clone();
    shift_one(&mut forged, deep_row, value_column(2), Ext3::ONE);
    assert_eq!(
        check_trace(&air, &forged, &public),
        Err(AirError::Unsatisfied {
            row: deep_row,
            constraint: rule(2, 6)
        }),
        "a value"
    );
    let mut forged = table.clone();
    let x = forged.row(deep_row)[point];
    let (x, wrong) = (Ext3::from(x), Ext3::from(x * Felt::new(2)));
    forged.set(deep_row, point, wrong.coeffs()[0]);
    let zw = z * Felt::two_adic_root(heights[3] - log_blowup);
    let inverse_z = base + 9;
    set(&mut forged, deep_row, inverse_z, (wrong - z).inverse());
    set(&mut forged, deep_row, inverse_z + 3, (wrong - zw).inverse());
    assert_ne!(x, wrong);
    // Refused on the join leaf's last row, whose point must go on unchanged (the point's
    // second rule, after every height's).
    assert_eq!(
        check_trace(&air, &forged, &public),
        Err(AirError::Unsatisfied {
            row: deep_row - 1,
            constraint: rule(3, 1)
        }),
        "a point"
    );
    // The point scaled from the row after the tallest height's DEEP row on: the square
    // there (the point's third rule) refuses it.
    let mut forged = table.clone();
    let first_square = block_rows + deep_rows[0];
    for r in first_square + 1..2 * block_rows {
        let x = forged.row(r)[point];
        forged.set(r, point, x * Felt::new(3));
    }
    assert_eq!(
        check_trace(&air, &forged, &public),
        Err(AirError::Unsatisfied {
            row: first_square,
            constraint: rule(3, 2)
        }),
        "a point not squared"
    );
    // The 2^4 height's kept trace sum moved all down the block: its capture (rule 3 of
    // the height's) refuses it on the row after its trace leaf.
    let mut forged = table.clone();
    let kept = base + 19;
    for r in block_rows..2 * block_rows {
        let v = get(&forged, r, kept);
        set(&mut forged, r, kept, v + Ext3::ONE);
    }
    assert_eq!(
        check_trace(&air, &forged, &public),
        Err(AirError::Unsatisfied {
            row: block_rows + trace_ends[1],
            constraint: rule(1, 3)
        }),
        "a kept trace sum"
    );
    let mut claims = claims;
    claims.sums[2].at_zw += Ext3::ONE;
    let other = air.public_inputs(&roots, &claims).unwrap();
    assert_eq!(
        check_trace(&air, &table, &other),
        Err(AirError::Unsatisfied {
            row: deep_rows[2],
            constraint: rule(2, 6)
        }),
        "a claim"
    );
}

#[test]
fn a_table_below_the_blowup_is_refused() {
    // A shorter table's LDE of 2^1 points at blowup 4 would have half a row.
    let shape = |widths: [usize; 2]| {
        let tables = [(6, widths[0]), (1, widths[1])]
            .map(|(log_height, width)| ballast_merkle::TableShape { log_height, width });
        ballast_merkle::MixedShape::new(tables.to_vec()).unwrap()
    };
    assert_eq!(
        DeepAir::mixed(&shape([3, 2]), &shape([3, 3]), 2, &[1]).unwrap_err(),
        OpeningsError::BelowBlowup {
            log_lde: 1,
            log_blowup: 2
        }
    );
    assert!(DeepAir::mixed(&shape([3, 2]), &shape([3, 3]), 1, &[1]).is_ok());
}
