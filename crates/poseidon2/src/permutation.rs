//! The Poseidon2 permutation of 12 Goldilocks elements, written once (`rounds`, over any
//! [`Halve`]: an [`Algebra`] that divides by two): on field elements, on SIMD registers
//! holding a state per lane (`crate::many`), and as an AIR's constraints and columns
//! (`crate::air`).

use ballast_field::{Algebra, Felt, Halve};

use crate::constants::{CONSTANTS, Constants, WIDTH};

/// The Poseidon2 permutation, in place.
pub fn permute(state: &mut [Felt; WIDTH]) {
    permute_over(state, &CONSTANTS);
}

/// The permutation over `A`, with the instance's constants lifted into `A`: the external
/// matrix, 4 full rounds, 22 partial rounds, 4 full rounds (a round adds its constants,
/// applies the S-box, then its matrix).
#[inline(always)]
pub fn permute_over<A: Halve>(state: &mut [A; WIDTH], constants: &Constants<A>) {
    rounds(state, constants, false, |value| value);
}

/// The permutation's one definition. Every value an AIR keeps in a column of its own passes
/// through `keep`, in column order, and the rounds go on with what `keep` returns: a
/// permutation keeps nothing (the identity), the AIR ([`crate::air`]) records each value,
/// or asserts its column equal to it and goes on from the column. Kept: each S-box input's
/// cube when `cubes`; the state after each full round; in a partial round, the first
/// cell's S-box output.
#[inline(always)]
pub(crate) fn rounds<A: Halve>(
    state: &mut [A; WIDTH],
    constants: &Constants<A>,
    cubes: bool,
    mut keep: impl FnMut(A) -> A,
) {
    external_matrix(state);
    for round in &constants.initial {
        full_round(state, round, cubes, &mut keep);
    }
    for &constant in &constants.partial {
        state[0] = sbox(state[0] + constant, cubes, &mut keep);
        state[0] = keep(state[0]);
        internal_matrix(state);
    }
    for round in &constants.terminal {
        full_round(state, round, cubes, &mut keep);
    }
}

#[inline(always)]
fn full_round<A: Algebra>(
    state: &mut [A; WIDTH],
    constants: &[A; WIDTH],
    cubes: bool,
    keep: &mut impl FnMut(A) -> A,
) {
    for (cell, &constant) in state.iter_mut().zip(constants) {
        *cell = sbox(*cell + constant, cubes, keep);
    }
    external_matrix(state);
    for cell in state.iter_mut() {
        *cell = keep(*cell);
    }
}

/// x⁷ (7 is the smallest exponent prime to p − 1), as x³·x³·x: with x³ kept when `cubes`
/// (degree 3 in an AIR's columns), else whole (degree 7).
#[inline(always)]
fn sbox<A: Algebra>(x: A, cubes: bool, keep: &mut impl FnMut(A) -> A) -> A {
    let cube = x * x * x;
    let cube = if cubes { keep(cube) } else { cube };
    cube * cube * x
}

/// `circ(2·M4, M4, M4)`: M4 on each group of 4 cells, then each cell plus the sum of the
/// cells in its position across the groups.
#[inline(always)]
fn external_matrix<A: Algebra>(state: &mut [A; WIDTH]) {
    for group in state.as_chunks_mut::<4>().0 {
        m4(group);
    }
    let sums: [A; 4] = std::array::from_fn(|k| {
        (k + 4..WIDTH)
            .step_by(4)
            .fold(state[k], |sum, i| sum + state[i])
    });
    for (k, cell) in state.iter_mut().enumerate() {
        *cell += sums[k % 4];
    }
}

/// The MDS matrix `[[2 3 1 1] [1 2 3 1] [1 1 2 3] [3 1 1 2]]`: row i is the sum of the
/// four cells, plus cell i, plus twice cell i + 1 (indices mod 4).
#[inline(always)]
fn m4<A: Algebra>(x: &mut [A; 4]) {
    let sum = x[0] + x[1] + x[2] + x[3];
    *x = std::array::from_fn(|i| {
        let next = x[(i + 1) % 4];
        sum + x[i] + next + next
    });
}

/// `1 + diag(μ)`: each cell times its μ, plus the sum of all cells, with Plonky3's width-12
/// Goldilocks μ = (−2, 1, 2, 1/2, 3, 4, −1/2, −3, −4, 1/4, −1/4, 1/8). The entries are small
/// dyadic fractions, so each cell takes additions and halvings, not a multiplication. (This
/// is μ's one definition: the tests read it back from the layer.)
#[inline(always)]
fn internal_matrix<A: Halve>(state: &mut [A; WIDTH]) {
    let sum = state[1..].iter().fold(state[0], |sum, &cell| sum + cell);
    let double = |x: A| x + x;
    let [x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11] = *state;
    *state = [
        sum - double(x0),
        sum + x1,
        sum + double(x2),
        sum + x3.halve(),
        sum + (double(x4) + x4),
        sum + double(double(x5)),
        sum - x6.halve(),
        sum - (double(x7) + x7),
        sum - double(double(x8)),
        sum + x9.halve().halve(),
        sum - x10.halve().halve(),
        sum + x11.halve().halve().halve(),
    ];
}

#[cfg(test)]
mod tests {
    use super::*;

    fn felts(values: [u64; WIDTH]) -> [Felt; WIDTH] {
        values.map(Felt::new)
    }

    #[test]
    fn the_published_known_answer() {
        // Plonky3 0.8.0, p3-goldilocks: the width-12 permutation of 0..12.
        let mut state = felts(std::array::from_fn(|i| i as u64));
        permute(&mut state);
        assert_eq!(
            state,
            felts([
                0xf292_ab67_c0f1_4b03,
                0x0a32_f1b3_7656_544c,
                0x053c_61ab_8954_98de,
                0x02ff_92e5_5b19_6ffb,
                0x5817_6e8f_6f58_cab2,
                0xb0aa_1206_e7ae_c0f8,
                0xe90c_13f3_dce8_3ca4,
                0xf4da_1533_3edf_39c2,
                0x23b7_01c0_53c2_ca6c,
                0xd233_d593_dcdf_bf58,
                0x4eff_a5f9_516f_b52e,
                0x0aaf_4489_f1f4_0166,
            ])
        );
    }

    #[test]
    fn the_internal_diagonal_is_the_reference_instances() {
        // μ as Plonky3's p3-goldilocks writes it, field elements in hex; μ_i is read back
        // from the layer as its image of the i-th unit vector, at i, minus 1.
        let reference: [u64; WIDTH] = [
            0xffff_fffe_ffff_ffff, // −2
            1,
            2,
            0x7fff_ffff_8000_0001, // 1/2
            3,
            4,
            0x7fff_ffff_8000_0000, // −1/2
            0xffff_fffe_ffff_fffe, // −3
            0xffff_fffe_ffff_fffd, // −4
            0xbfff_ffff_4000_0001, // 1/4
            0x3fff_ffff_c000_0000, // −1/4
            0xdfff_ffff_2000_0001, // 1/8
        ];
        for (i, reference) in reference.into_iter().enumerate() {
            let mut unit = [Felt::ZERO; WIDTH];
            unit[i] = Felt::ONE;
            internal_matrix(&mut unit);
            for (j, &entry) in unit.iter().enumerate() {
                let expected = if j == i {
                    Felt::new(reference) + Felt::ONE
                } else {
                    Felt::ONE
                };
                assert_eq!(entry, expected, "row {j}, column {i}");
            }
        }
    }

    #[test]
    fn m4_is_the_papers_matrix() {
        const M4: [[u64; 4]; 4] = [[2, 3, 1, 1], [1, 2, 3, 1], [1, 1, 2, 3], [3, 1, 1, 2]];
        let x = [3u64, 1_000_003, Felt::MODULUS - 5, 1 << 40].map(Felt::new);
        let mut y = x;
        m4(&mut y);
        for (row, &out) in M4.iter().zip(&y) {
            let expected = row
                .iter()
                .zip(&x)
                .fold(Felt::ZERO, |sum, (&m, &v)| sum + Felt::new(m) * v);
            assert_eq!(out, expected);
        }
    }
}
