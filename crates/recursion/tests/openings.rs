//! The openings AIR against real trees and real child proofs: honest openings prove and
//! verify; a changed row, sibling or root is refused on the row that computes the root, a
//! changed position by the positions' digest, each rule of the path's bits and of the
//! positions' chain by its own constraint, and each link of the schedule is its own
//! constraint.

mod common;

use common::{
    any_security, fibonacci, has_layer_degrees, layer_params, layer_proves, params,
    poseidon2_chain, proven, statement,
};

use ballast_air::{AirError, check_trace};
use ballast_field::{Felt, RowBlocks};
use ballast_merkle::{Digest, MerkleHash, MerkleTree, MixedTree};
use ballast_poseidon2::{FeltDigest, compress, digest_from_bytes, hash_elements};
use ballast_recursion::{Join, Opened, OpeningsAir, OpeningsError, Tree, TreeShape};
use ballast_stark::{
    CpuBackend, PhaseTimes, ProverError, VerifierError, Workload, prove, prove_unchecked, verify,
};
use ballast_testkit::SplitMix64;

/// Trees of these row widths, all of `height` levels.
fn same_height(row_widths: &[usize], height: usize) -> Vec<TreeShape> {
    row_widths
        .iter()
        .map(|&row_width| TreeShape { row_width, height })
        .collect()
}

/// One tree's openings: what the AIR is built from and the witness it hashes.
#[derive(Clone)]
struct Openings {
    row_width: usize,
    height: usize,
    positions: Vec<usize>,
    nodes: Vec<Digest>,
    opened: Opened,
    root: FeltDigest,
}

impl Openings {
    /// The openings at `positions` of a random table of 2^`height` rows of `row_width`.
    fn random(row_width: usize, height: usize, positions: &[usize], seed: u64) -> Self {
        let mut rng = SplitMix64::new(seed);
        let cells: Vec<Felt> = (0..row_width << height)
            .map(|_| Felt::new(rng.next().expect("an endless stream")))
            .collect();
        let table = RowBlocks::from_rows(row_width, &cells);
        let tree = MerkleTree::commit_rows(MerkleHash::Poseidon2, &table);
        let rows: Vec<Felt> = positions.iter().flat_map(|&p| table.row(p)).collect();
        let root = digest_from_bytes(&tree.root()).expect("a Poseidon2 root");
        let nodes = tree.open_batch(positions);
        let opened = OpeningsAir::new(&same_height(&[row_width], height), positions)
            .and_then(|air| air.open(0, &root, &rows, &nodes))
            .expect("an honest opening");
        Self {
            row_width,
            height,
            positions: positions.to_vec(),
            nodes,
            opened,
            root,
        }
    }

    fn air(&self) -> OpeningsAir {
        OpeningsAir::new(
            &same_height(&[self.row_width], self.height),
            &self.positions,
        )
        .expect("valid openings")
    }

    fn check(&self) -> Result<(), AirError> {
        let air = self.air();
        let trace = air
            .trace(std::slice::from_ref(&self.opened))
            .expect("the witness's shape");
        check_trace(&air, &trace, &air.public_inputs(&[self.root]))
    }
}

/// The row of `air`'s table that computes the root for the `k`-th position.
fn root_row(openings: &Openings, k: usize) -> usize {
    let leaf_rows = openings.row_width.div_ceil(8).max(1);
    let block_rows = (leaf_rows + openings.height + 1).next_power_of_two();
    k * block_rows + leaf_rows + openings.height - 1
}

fn failing_row(result: Result<(), AirError>) -> usize {
    match result {
        Err(AirError::Unsatisfied { row, .. }) => row,
        other => panic!("expected a failing row, got {other:?}"),
    }
}

#[test]
fn honest_openings_satisfy_the_air_at_every_shape() {
    for (row_width, height) in [
        (1, 0),
        (2, 2),
        (1, 3),
        (7, 3),
        (8, 1),
        (9, 4),
        (16, 3),
        (17, 2),
    ] {
        let leaves = 1usize << height;
        let positions: Vec<usize> = [0, leaves / 2, leaves - 1]
            .into_iter()
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        let openings = Openings::random(row_width, height, &positions, 7);
        assert_eq!(openings.check(), Ok(()), "{row_width} × {height}");
        assert!(has_layer_degrees(&openings.air()));
    }
}

#[test]
fn a_changed_row_sibling_position_or_root_is_refused_where_it_breaks() {
    let honest = Openings::random(11, 4, &[1, 6, 9, 14], 3);
    assert_eq!(honest.check(), Ok(()));

    let mut bad = honest.clone();
    bad.opened.rows[2 * 11 + 10] += Felt::ONE;
    assert_eq!(
        failing_row(bad.check()),
        root_row(&honest, 2),
        "a row value"
    );

    let mut bad = honest.clone();
    bad.opened.paths[1][3][0] += Felt::ONE;
    assert_eq!(failing_row(bad.check()), root_row(&honest, 1), "a sibling");

    // The honest trace against the digest of another position (14 with bit 2 cleared): the
    // table's last row (the fourth block's chain row) gives the honest digest.
    let mut bad = honest.clone();
    bad.positions[3] ^= 1 << 2;
    let trace = honest
        .air()
        .trace(std::slice::from_ref(&honest.opened))
        .unwrap();
    let public = bad.air().public_inputs(&[honest.root]);
    assert_eq!(
        first_failure_against(&honest.air(), &trace, &public),
        (4 * 8 - 1, chain_constraint(0, LAST)),
        "a position"
    );

    let mut bad = honest.clone();
    bad.root[3] += Felt::ONE;
    assert_eq!(failing_row(bad.check()), root_row(&honest, 0), "the root");
}

// The constraints' order: the permutation's, then for each capacity cell the leaf's start,
// the sponge's link and the node's capacity, then the padding (five cells for rows of 11),
// then for each digest element the links into a left and a right half and the root.
const PERMUTATION: usize = ballast_recursion::SBOX.columns();

/// The index of digest element `element`'s link into a left (`which` 0) or right (1) half,
/// or its root check (2), in an AIR of rows of 11 elements.
const fn digest_constraint(element: usize, which: usize) -> usize {
    PERMUTATION + 12 + 5 + 3 * element + which
}

// The rules of the position's bits, after the digests': a path row's bit is 0 or 1, each
// link halves the remainder, which starts at the position and ends at 0.
const BOOLEAN: usize = 0;
const HALVING: usize = 1;
const PATH_START: usize = 2;
const TALL_END: usize = 3;

/// The index of the bits' rule `rule`, in an AIR of rows of 11 elements.
const fn bits_constraint(rule: usize) -> usize {
    digest_constraint(4, 0) + rule
}

// The rules of the positions' chain, after the bits': the position held down the block, then
// for each digest element the chain row's input, the cell it chains (the position, zeros),
// the carry to the next row, the start at zero and the public digest.
const POSITION_HELD: usize = bits_constraint(TALL_END) + 1;
const CHAIN_INPUT: usize = 0;
const CHAINED: usize = 1;
const CHAIN_CARRY: usize = 2;
const CHAIN_START: usize = 3;
const LAST: usize = 4;

/// The index of the chain's rule `rule` for digest element `element`, in an AIR of rows
/// of 11 elements.
fn chain_constraint(element: usize, rule: usize) -> usize {
    POSITION_HELD + 1 + 5 * element + rule
}

/// Columns: a path row's bit, then the remainder, the position and the digest so far,
/// after the permutation's.
const BIT: usize = 12 + PERMUTATION;
const REST: usize = BIT + 1;
const POSITION: usize = REST + 1;
const CHAIN: usize = POSITION + 1;

/// `row` of `table` with its input changed by `change` and its permutation's columns
/// refilled: every constraint of that row's permutation still holds.
fn forge(table: &mut RowBlocks, row: usize, change: impl FnOnce(&mut [Felt])) {
    let mut values = table.row(row);
    change(&mut values[..12]);
    let input: [Felt; 12] = std::array::from_fn(|i| values[i]);
    ballast_poseidon2::air::fill(ballast_recursion::SBOX, input, &mut values[12..BIT]);
    table.write_row(row, &values);
}

/// Block `block` (of 8 rows) of `table` given `position`: held down the block and chained on
/// its last row (the following blocks' digests are left as they are).
fn set_position(table: &mut RowBlocks, block: usize, position: u64) {
    for row in 8 * block..8 * block + 8 {
        table.set(row, POSITION, Felt::new(position));
    }
    forge(table, 8 * block + 7, |s| s[4] = Felt::new(position));
}

#[test]
fn the_path_bits_are_the_positions() {
    // Rows of 11 elements (two leaf rows, four path rows, 8 rows a block); positions 1 and
    // 6. A true opening of leaf 7 of the same tree, its bits and remainders honest for 7,
    // with the block's position 6 as the digest asks, is refused where its remainder starts
    // (the leaf's last row, 9).
    let honest = Openings::random(11, 4, &[1, 6], 9);
    let air = honest.air();
    let seven = Openings::random(11, 4, &[1, 7], 9);
    assert_eq!(seven.root, honest.root);
    let mut table = seven
        .air()
        .trace(std::slice::from_ref(&seven.opened))
        .unwrap();
    set_position(&mut table, 1, 6);
    assert_eq!(
        first_failure(&air, &table, &honest.root),
        (9, bits_constraint(PATH_START))
    );
    // Started from 6, the first level's halving refuses 7's bit 1.
    table.set(9, REST, Felt::new(6));
    assert_eq!(
        first_failure(&air, &table, &honest.root),
        (9, bits_constraint(HALVING))
    );
    // Every level halved in the field from 6 with 7's bits: the path's end is not 0.
    let half = Felt::new(2).inverse();
    let mut rest = Felt::new(6);
    for (level, bit) in [1, 1, 1, 0].into_iter().enumerate() {
        rest = (rest - Felt::new(bit)) * half;
        table.set(10 + level, REST, rest);
    }
    assert_eq!(
        first_failure(&air, &table, &honest.root),
        (13, bits_constraint(TALL_END))
    );
    // A position past the tree, 6 + 2^4 = 22 with 6's bits (the same leaf): the halving
    // holds down to 22 >> 4 = 1 at the path's end, which only the end's rule refuses.
    let mut table = air.trace(std::slice::from_ref(&honest.opened)).unwrap();
    set_position(&mut table, 1, 22);
    for row in 9..14 {
        table.set(row, REST, Felt::new(22 >> (row - 9)));
    }
    assert_eq!(
        first_failure(&air, &table, &honest.root),
        (13, bits_constraint(TALL_END))
    );

    // Bits other than 0 and 1 whose weighted sum is still the position: −15 at level 0 and 2
    // at level 3 make 1 (−15 + 2·8), the remainders halve to 0 as they must, and a bit
    // that is neither 0 nor 1 takes the digest from below in both halves, so the path is
    // rebuilt with the digest for its sibling at those levels and its root made public.
    // Only the rule that a bit is 0 or 1 refuses it, at level 0 (row 2).
    let single = Openings::random(11, 4, &[1], 9);
    let air = single.air();
    let mut table = air.trace(std::slice::from_ref(&single.opened)).unwrap();
    let bits = [-Felt::new(15), Felt::ZERO, Felt::ZERO, Felt::new(2)];
    let mut rest = Felt::ONE;
    for (level, &bit) in bits.iter().enumerate() {
        let row = 2 + level;
        let below: [Felt; 4] = std::array::from_fn(|i| table.row(row - 1)[BIT - 12 + i]);
        forge(&mut table, row, |s| {
            if bit == Felt::ZERO {
                s[..4].copy_from_slice(&below);
            } else {
                s[..4].copy_from_slice(&below);
                s[4..8].copy_from_slice(&below);
            }
        });
        rest = (rest - bit) * Felt::new(2).inverse();
        table.set(row, BIT, bit);
        table.set(row, REST, rest);
    }
    assert_eq!(rest, Felt::ZERO);
    let root: FeltDigest = std::array::from_fn(|i| table.row(5)[BIT - 12 + i]);
    assert_ne!(root, single.root);
    assert_eq!(
        first_failure(&air, &table, &root),
        (2, bits_constraint(BOOLEAN))
    );
}

/// The first failing (row, constraint) of `table` against `root` and the table's own
/// positions' digest (its last row's output): only the rules before the public digest's.
fn first_failure(air: &OpeningsAir, table: &RowBlocks, root: &FeltDigest) -> (usize, usize) {
    let last = table.row(table.height() - 1);
    let mut public = root.to_vec();
    public.extend_from_slice(&last[BIT - 12..BIT - 8]);
    first_failure_against(air, table, &public)
}

/// The first failing (row, constraint) of `table` against `public`.
fn first_failure_against(air: &OpeningsAir, table: &RowBlocks, public: &[Felt]) -> (usize, usize) {
    match check_trace(air, table, public) {
        Err(AirError::Unsatisfied { row, constraint }) => (row, constraint),
        other => panic!("expected a failing constraint, got {other:?}"),
    }
}

/// The digest columns and chain rows' digest cells of `table` (blocks of 8 rows) from block
/// `from` on, chained again from the chain row before it (zero for block 0) with what each
/// chain row chains as it stands.
fn rechain(table: &mut RowBlocks, from: usize) {
    let output = |table: &RowBlocks, row: usize| -> [Felt; 4] {
        std::array::from_fn(|i| table.row(row)[BIT - 12 + i])
    };
    let mut digest = match from {
        0 => [Felt::ZERO; 4],
        _ => output(table, 8 * from - 1),
    };
    for block in from..table.height() / 8 {
        for row in 8 * block..8 * block + 8 {
            for (i, &d) in digest.iter().enumerate() {
                table.set(row, CHAIN + i, d);
            }
        }
        forge(table, 8 * block + 7, |s| s[..4].copy_from_slice(&digest));
        digest = output(table, 8 * block + 7);
    }
}

#[test]
fn each_rule_of_the_positions_chain_is_its_own_constraint() {
    // Rows of 11 elements, 8 rows a block (the last the chain's), positions 1 and 6: each
    // forgery has its later digests chained again, so it is refused only by its own rule
    // (`first_failure` takes the table's own digest for the public one).
    let honest = Openings::random(11, 4, &[1, 6], 9);
    let air = honest.air();
    let table = air.trace(std::slice::from_ref(&honest.opened)).unwrap();
    assert_eq!(
        check_trace(&air, &table, &air.public_inputs(&[honest.root])),
        Ok(())
    );
    let capacity = |cell: usize, which: usize| PERMUTATION + 3 * (cell - 8) + which;
    type Case = (&'static str, fn(&mut RowBlocks), (usize, usize));
    let cases: [Case; 7] = [
        (
            "a position changed down the block, chained as changed",
            |t| {
                for row in 3..8 {
                    t.set(row, POSITION, Felt::new(5));
                }
                forge(t, 7, |s| s[4] = Felt::new(5));
                rechain(t, 1);
            },
            (2, POSITION_HELD),
        ),
        (
            "another position chained",
            |t| {
                forge(t, 7, |s| s[4] = Felt::new(5));
                rechain(t, 1);
            },
            (7, chain_constraint(0, CHAINED)),
        ),
        (
            "a nonzero cell chained beside it",
            |t| {
                forge(t, 7, |s| s[6] = Felt::ONE);
                rechain(t, 1);
            },
            (7, chain_constraint(2, CHAINED)),
        ),
        (
            "the chain row hashed as a leaf",
            |t| {
                forge(t, 7, |s| s[9] = Felt::ZERO);
                rechain(t, 1);
            },
            (7, capacity(9, 2)),
        ),
        (
            "the chain row started from another digest",
            |t| {
                forge(t, 7, |s| s[1] += Felt::ONE);
                rechain(t, 1);
            },
            (7, chain_constraint(1, CHAIN_INPUT)),
        ),
        (
            "a digest changed down the block",
            |t| {
                for row in 4..8 {
                    t.set(row, CHAIN + 3, Felt::new(9));
                }
                forge(t, 7, |s| s[3] = Felt::new(9));
                rechain(t, 1);
            },
            (3, chain_constraint(3, CHAIN_CARRY)),
        ),
        (
            "a chain started from another digest",
            |t| {
                for row in 0..8 {
                    t.set(row, CHAIN, Felt::ONE);
                }
                forge(t, 7, |s| s[0] = Felt::ONE);
                rechain(t, 1);
            },
            (0, chain_constraint(0, CHAIN_START)),
        ),
    ];
    for (what, change, expected) in cases {
        let mut forged = table.clone();
        change(&mut forged);
        assert_eq!(
            first_failure(&air, &forged, &honest.root),
            expected,
            "{what}"
        );
    }
    // The next block's digest other than the chain row's output: the carry across blocks.
    let mut forged = table.clone();
    for row in 8..16 {
        forged.set(row, CHAIN + 2, Felt::new(4));
    }
    forge(&mut forged, 15, |s| s[2] = Felt::new(4));
    assert_eq!(
        first_failure(&air, &forged, &honest.root),
        (7, chain_constraint(2, CHAIN_CARRY))
    );
}

#[test]
fn each_link_of_the_schedule_is_its_own_constraint() {
    // Rows of 11 elements: two leaf rows (the second padded with five zeros), then four
    // path rows; positions 1 (the leaf a right child) and 6 (a left child).
    let honest = Openings::random(11, 4, &[1, 6], 9);
    let air = honest.air();
    let table = air.trace(std::slice::from_ref(&honest.opened)).unwrap();
    let capacity = |cell: usize, which: usize| PERMUTATION + 3 * (cell - 8) + which;
    let padding = |cell: usize| PERMUTATION + 12 + (cell - 3);
    let digest = |element: usize, which: usize| digest_constraint(element, which);
    let block = 8;
    type Case = (&'static str, usize, fn(&mut [Felt]), (usize, usize));
    let cases: [Case; 6] = [
        (
            "a leaf of another length",
            0,
            |s| s[8] += Felt::ONE,
            (0, capacity(8, 0)),
        ),
        (
            "a carried capacity changed",
            1,
            |s| s[9] += Felt::ONE,
            (0, capacity(9, 1)),
        ),
        (
            "a node hashed as a leaf",
            2,
            |s| s[9] = Felt::ZERO,
            (2, capacity(9, 2)),
        ),
        ("a nonzero pad", 1, |s| s[5] = Felt::ONE, (1, padding(5))),
        (
            "a right child moved left",
            2,
            |s| s.swap(4, 0),
            (1, digest(0, 1)),
        ),
        (
            "a left child moved right",
            block + 2,
            |s| s.swap(1, 5),
            (block + 1, digest(1, 0)),
        ),
    ];
    for (what, row, change, expected) in cases {
        let mut forged = table.clone();
        forge(&mut forged, row, change);
        assert_eq!(
            first_failure(&air, &forged, &honest.root),
            expected,
            "{what}"
        );
    }

    // A second tree's leaf starts from its own length: rows of 3 after the rows of 11
    // (block rows 0..6 the first tree's, 6..11 the second's), the second leaf given the
    // first's length.
    let row_widths = [11, 3];
    let positions = [1, 6];
    let second = Openings::random(3, 4, &positions, 10);
    let air = OpeningsAir::new(&same_height(&row_widths, 4), &positions).unwrap();
    let opened = [honest.opened.clone(), second.opened.clone()];
    let roots = [honest.root, second.root];
    let mut table = air.trace(&opened).unwrap();
    let public = air.public_inputs(&roots);
    assert_eq!(check_trace(&air, &table, &public), Ok(()));
    forge(&mut table, 6, |s| s[8] = Felt::new(11));
    assert_eq!(
        check_trace(&air, &table, &public),
        Err(AirError::Unsatisfied {
            constraint: capacity(8, 0),
            row: 6
        }),
        "a leaf of the other tree's length"
    );
}

/// A child proof's first segment, made with Poseidon2 trees: the AIR of its trace and
/// quotient openings, their witness, and their roots.
fn child_openings<W: Workload>(workload: &W) -> (OpeningsAir, [Opened; 2], [FeltDigest; 2]) {
    let params = params();
    let (segment, _) = proven(workload, &params);
    let q = &segment.queries;
    let height = workload.log_rows() + params.log_blowup;
    let widths = [q.trace_rows.len(), q.quotient_rows.len()].map(|len| len / q.positions.len());
    let air =
        OpeningsAir::new(&same_height(&widths, height), &q.positions).expect("valid openings");
    let roots = [&segment.trace_root, &segment.quotient_root]
        .map(|root| digest_from_bytes(root).expect("a Poseidon2 root"));
    let opened = [
        air.open(0, &roots[0], &q.trace_rows, &q.trace_nodes),
        air.open(1, &roots[1], &q.quotient_rows, &q.quotient_nodes),
    ]
    .map(|opened| opened.expect("the child's openings verify"));
    (air, opened, roots)
}

fn prove_openings(
    air: &OpeningsAir,
    opened: &[Opened],
    roots: &[FeltDigest],
) -> Result<(), String> {
    let mut trace = air.trace(opened).unwrap();
    layer_proves(air, &mut trace, &air.public_inputs(roots))
}

#[test]
fn a_child_proofs_openings_prove_and_verify() {
    for (air, opened, roots) in [
        child_openings(&fibonacci(5)),
        child_openings(&poseidon2_chain()),
    ] {
        assert_eq!(prove_openings(&air, &opened, &roots), Ok(()));
        // The two trees' roots swapped are refused.
        let trace = air.trace(&opened).unwrap();
        let swapped = air.public_inputs(&[roots[1], roots[0]]);
        assert!(check_trace(&air, &trace, &swapped).is_err());
    }
}

#[test]
fn a_forced_proof_against_another_root_is_rejected() {
    let honest = Openings::random(5, 3, &[2, 5], 11);
    let mut bad = honest.clone();
    bad.root[0] += Felt::ONE;
    let air = bad.air();
    let mut trace = air.trace(&[bad.opened.clone()]).unwrap();
    let public = air.public_inputs(&[bad.root]);
    let statement = statement(&public);
    let params = layer_params();
    let backend = CpuBackend::new();
    let refused = prove(
        &air,
        &mut trace.clone(),
        &statement,
        &params,
        &backend,
        &mut PhaseTimes::default(),
    );
    assert!(
        matches!(refused, Err(ProverError::Unsatisfied(_))),
        "{refused:?}"
    );
    let forced = prove_unchecked(
        &air,
        &mut trace,
        &statement,
        &params,
        &backend,
        &mut PhaseTimes::default(),
    )
    .expect("a forced proof");
    assert!(matches!(
        verify(&air, &forced, &statement, &params, &any_security()),
        Err(VerifierError::OodMismatch { .. })
    ));
}

#[test]
fn bad_openings_are_refused_by_name() {
    let refused = |widths: &[usize], height: usize, positions: &[usize]| {
        OpeningsAir::new(&same_height(widths, height), positions).unwrap_err()
    };
    assert_eq!(refused(&[], 3, &[1]), OpeningsError::NoTrees);
    assert_eq!(refused(&[4], 3, &[]), OpeningsError::NoPositions);
    assert_eq!(
        refused(&[4, 2], 3, &[1, 8]),
        OpeningsError::PositionOutsideTree {
            position: 8,
            leaves: 8
        }
    );
    assert!(matches!(
        refused(&[4], 64, &[0]),
        OpeningsError::TooLarge { .. }
    ));
    // A lower tree's path ends at p >> h, which only an AIR that embeds the openings binds
    // (the query AIR's, through FRI's slots).
    let trees = [
        TreeShape {
            row_width: 5,
            height: 5,
        },
        TreeShape {
            row_width: 24,
            height: 2,
        },
    ];
    assert_eq!(
        OpeningsAir::new(&trees, &[1]).unwrap_err(),
        OpeningsError::LowerTree {
            height: 2,
            tallest: 5
        }
    );
    let honest = Openings::random(4, 3, &[1, 6], 5);
    let air = honest.air();
    let shape = |what, expected, got| OpeningsError::Shape {
        what,
        expected,
        got,
    };
    let with = |change: fn(&mut Opened)| {
        let mut opened = honest.opened.clone();
        change(&mut opened);
        air.trace(&[opened]).unwrap_err()
    };
    assert_eq!(air.trace(&[]).unwrap_err(), shape("opened trees", 1, 0));
    assert_eq!(with(|o| o.rows.truncate(7)), shape("opened elements", 8, 7));
    assert_eq!(with(|o| o.paths.truncate(1)), shape("paths", 2, 1));
    assert_eq!(
        with(|o| o.paths[1].truncate(2)),
        shape("siblings in a path", 3, 2)
    );
    let (rows, nodes) = (&honest.opened.rows, &honest.nodes);
    assert_eq!(
        air.open(0, &honest.root, &rows[..7], nodes),
        Err(shape("opened elements", 8, 7))
    );
    assert_eq!(
        air.open(1, &honest.root, rows, nodes),
        Err(shape("tree index past the trees", 1, 1))
    );
    // The positions as drawn, out of order and repeated: each gets its leaf's row and path
    // from the same batch opening, and the openings prove.
    let drawn = OpeningsAir::new(&same_height(&[4], 3), &[6, 1, 6]).unwrap();
    let opened = drawn.open(0, &honest.root, rows, nodes).unwrap();
    let row = |opened: &Opened, k: usize| opened.rows[4 * k..4 * (k + 1)].to_vec();
    for (k, at) in [(0, 1), (1, 0), (2, 1)] {
        assert_eq!(row(&opened, k), row(&honest.opened, at), "position {k}");
        assert_eq!(opened.paths[k], honest.opened.paths[at], "position {k}");
    }
    let mut table = drawn.trace(&[opened]).unwrap();
    let public = drawn.public_inputs(&[honest.root]);
    assert_eq!(check_trace(&drawn, &table, &public), Ok(()));
    assert_eq!(layer_proves(&drawn, &mut table, &public), Ok(()));
    let mut changed = rows.clone();
    changed[0] += Felt::ONE;
    assert_eq!(
        air.open(0, &honest.root, &changed, nodes),
        Err(OpeningsError::Rejected)
    );
}

#[test]
fn rows_of_no_elements_open_too() {
    // Every leaf is the empty leaf's digest, every node at a level the same: a tree built
    // here without a table, its paths read off level by level.
    let height = 3;
    let mut level = hash_elements(&[]);
    let mut path = Vec::new();
    for _ in 0..height {
        path.push(level);
        level = compress(&level, &level);
    }
    let air = OpeningsAir::new(&same_height(&[0], height), &[2, 5]).unwrap();
    let opened = Opened {
        rows: Vec::new(),
        paths: vec![path.clone(), path],
    };
    let trace = air.trace(&[opened]).unwrap();
    assert_eq!(
        check_trace(&air, &trace, &air.public_inputs(&[level])),
        Ok(())
    );
    let mut other = level;
    other[0] += Felt::ONE;
    assert!(check_trace(&air, &trace, &air.public_inputs(&[other])).is_err());
}

#[test]
fn a_tree_of_one_leaf_has_its_leaf_for_root() {
    // Height 0: the last leaf row's digest is the root; no path rows.
    let row: Vec<Felt> = (1..=5).map(Felt::new).collect();
    let root = hash_elements(&row);
    let air = OpeningsAir::new(&same_height(&[5], 0), &[0]).unwrap();
    let opened = Opened {
        rows: row,
        paths: vec![Vec::new()],
    };
    let trace = air.trace(&[opened]).unwrap();
    let public = air.public_inputs(&[root]);
    assert_eq!(check_trace(&air, &trace, &public), Ok(()));
    let mut other = root;
    other[3] += Felt::ONE;
    assert!(check_trace(&air, &trace, &air.public_inputs(&[other])).is_err());
}

/// A mixed tree's openings (a tables proof's trees): the tree of tables of heights 2^6
/// (twice), 2^4 and 2^1, the positions its batch opening carries (strictly increasing) and
/// the rows it carries there, table after table.
struct Mixed {
    tree: MixedTree,
    positions: Vec<usize>,
    rows: Vec<Vec<Felt>>,
    nodes: Vec<Digest>,
    root: FeltDigest,
}

impl Mixed {
    fn new() -> Self {
        let mut rng = SplitMix64::new(7);
        let tables: Vec<RowBlocks> = [(6, 3), (6, 2), (4, 10), (1, 1)]
            .into_iter()
            .map(|(log_height, width)| {
                let cells: Vec<Felt> = (0..width << log_height)
                    .map(|_| Felt::new(rng.next().expect("an endless stream")))
                    .collect();
                RowBlocks::from_rows(width, &cells)
            })
            .collect();
        let tree = MixedTree::commit(MerkleHash::Poseidon2, &tables.iter().collect::<Vec<_>>())
            .expect("tallest first");
        let positions = vec![2, 5, 17, 21, 33, 60];
        let shape = tree.shape();
        let rows = positions
            .iter()
            .flat_map(|&p| (0..tables.len()).map(move |t| (t, p)))
            .map(|(t, p)| tables[t].row(shape.row_of(t, p)))
            .collect();
        let nodes = tree.open_batch(&positions, |_| unreachable!());
        let root = digest_from_bytes(&tree.root()).expect("a Poseidon2 root");
        Self {
            tree,
            positions,
            rows,
            nodes,
            root,
        }
    }

    /// The openings AIR of the tree at `draws` (any order, repeated) and its witness.
    fn air(&self, draws: &[usize]) -> (OpeningsAir, Opened) {
        let air = OpeningsAir::with_trees(&[Tree::mixed(self.tree.shape())], draws).unwrap();
        let opened = self.open(&air, &self.rows).expect("an honest opening");
        (air, opened)
    }

    fn open(&self, air: &OpeningsAir, rows: &[Vec<Felt>]) -> Result<Opened, OpeningsError> {
        let rows: Vec<&[Felt]> = rows.iter().map(Vec::as_slice).collect();
        let shape = self.tree.shape();
        air.open_mixed(0, &self.root, shape, &self.positions, &rows, &self.nodes)
    }
}

#[test]
fn a_mixed_trees_openings_prove() {
    // A tables proof's tree: the tallest height's rows (3 + 2 values) the leaf at br(p),
    // the 2^4 table's 10 values joining two levels up and the 2^1 table's five.
    let mixed = Mixed::new();
    let tree = Tree::mixed(mixed.tree.shape());
    assert_eq!(
        tree.shape,
        TreeShape {
            row_width: 5,
            height: 6
        }
    );
    assert!(tree.reversed);
    let joins = [(2, 10), (5, 1)].map(|(depth, row_width)| Join { depth, row_width });
    assert_eq!(tree.joins, joins);
    let draws = [33, 2, 60, 5, 2, 17, 21];
    let (air, opened) = mixed.air(&draws);
    let mut table = air.trace(std::slice::from_ref(&opened)).unwrap();
    let public = air.public_inputs(&[mixed.root]);
    assert_eq!(check_trace(&air, &table, &public), Ok(()));
    assert!(has_layer_degrees(&air));
    assert_eq!(layer_proves(&air, &mut table, &public), Ok(()));

    // A joining table's row changed: the batch opening refuses it, and hashed anyway the
    // path ends elsewhere than the root.
    assert_eq!(opened.rows.len(), draws.len() * 16);
    let mut rows = mixed.rows.clone();
    rows[2][3] += Felt::ONE;
    assert_eq!(mixed.open(&air, &rows), Err(OpeningsError::Rejected));
    // A position opens 3 + 2 values of the 2^6 tables, 10 of the 2^4 one and 1 of the 2^1
    // one: a value of each changed fails.
    for at in [0, 3, 5 + 3, 15] {
        let mut changed = opened.clone();
        changed.rows[16 + at] += Felt::ONE;
        let table = air.trace(&[changed]).unwrap();
        assert!(check_trace(&air, &table, &public).is_err(), "value {at}");
    }
    // So is the path of another position.
    let mut changed = opened.clone();
    changed.paths.swap(0, 1);
    assert!(check_trace(&air, &air.trace(&[changed]).unwrap(), &public).is_err());
}

#[test]
fn a_mixed_trees_held_node_and_remainder_are_bound() {
    let mixed = Mixed::new();
    let (air, opened) = mixed.air(&[21, 2]);
    let table = air.trace(&[opened]).unwrap();
    let public = air.public_inputs(&[mixed.root]);
    let width = table.width();
    assert_eq!(width, ballast_recursion::OPENINGS_WIDTH + 4);
    // Block 0's schedule: the leaf's row (1), two path rows, the join's leaf (2 rows) and
    // the join, three path rows, the join's leaf (1 row) and the join, one path row.
    let held = ballast_recursion::OPENINGS_WIDTH;
    let nudged = |row: usize, column: usize| {
        let mut cells: Vec<Felt> = (0..table.height()).flat_map(|r| table.row(r)).collect();
        cells[row * width + column] += Felt::ONE;
        RowBlocks::from_rows(width, &cells)
    };
    for (row, column, what) in [
        (4, held, "the held node on the join's leaf"),
        (5, held + 3, "the held node on the join row"),
        (4, REST, "the remainder on the join's leaf"),
        (5, REST, "the remainder on the join row"),
        (2, BIT, "the bit of a path row"),
    ] {
        let got = check_trace(&air, &nudged(row, column), &public);
        assert!(
            matches!(got, Err(AirError::Unsatisfied { .. })),
            "{what}: {got:?}"
        );
    }
    // Joins lie inside a mixed tree's path, lowest first.
    let mut tree = Tree::mixed(mixed.tree.shape());
    tree.joins.reverse();
    let err = OpeningsAir::with_trees(&[tree.clone()], &[1]).unwrap_err();
    assert!(
        matches!(
            err,
            OpeningsError::Join {
                depth: 2,
                height: 6
            }
        ),
        "{err}"
    );
    tree.reversed = false;
    tree.joins.truncate(1);
    let err = OpeningsAir::with_trees(&[tree], &[1]).unwrap_err();
    assert!(matches!(err, OpeningsError::Join { .. }), "{err}");
    // A mixed tree is not opened as a plain one.
    assert_eq!(
        air.open(0, &mixed.root, &[], &mixed.nodes),
        Err(OpeningsError::Kind {
            tree: 0,
            mixed: true
        })
    );
}
