//! The instance's round constants, drawn from its Grain LFSR at compile time.

use ballast_field::{Algebra, Felt};

/// Field elements in the state.
pub const WIDTH: usize = 12;
/// Full rounds (every cell through the S-box), half before and half after the partial ones.
pub const FULL_ROUNDS: usize = 8;
/// Partial rounds (the first cell through the S-box).
pub const PARTIAL_ROUNDS: usize = 22;
/// Full rounds on each side of the partial ones.
const HALF_FULL: usize = FULL_ROUNDS / 2;

/// The instance's constants, in the order the rounds use them, as elements of `A`: the
/// field itself ([`CONSTANTS`]), or what a permutation over another [`Algebra`] computes in
/// ([`Constants::lift`]: SIMD registers, a constraint's symbolic form).
#[derive(Clone, Debug)]
pub struct Constants<A> {
    /// One per cell for each of the first full rounds.
    pub initial: [[A; WIDTH]; HALF_FULL],
    /// One (added to the first cell) for each partial round.
    pub partial: [A; PARTIAL_ROUNDS],
    /// One per cell for each of the last full rounds.
    pub terminal: [[A; WIDTH]; HALF_FULL],
}

impl Constants<Felt> {
    /// The same constants as elements of `A`.
    pub fn lift<A: Algebra>(&self, lift: impl Fn(Felt) -> A) -> Constants<A> {
        Constants {
            initial: self.initial.map(|round| round.map(&lift)),
            partial: self.partial.map(&lift),
            terminal: self.terminal.map(|round| round.map(&lift)),
        }
    }
}

/// The instance's constants. The round constants come from the Grain LFSR of the Poseidon
/// papers seeded with the instance (prime field, S-box x^α, 64-bit field, width 12, 8 full
/// and 22 partial rounds), read 64 bits at a time with values `≥ p` skipped:
/// `FULL_ROUNDS · WIDTH + PARTIAL_ROUNDS` of them, the first and last `HALF_FULL · WIDTH` for
/// the full rounds.
pub const CONSTANTS: Constants<Felt> = constants();

/// The Grain LFSR: 80 bits, the oldest in bit 0.
struct Grain(u128);

impl Grain {
    /// The generator seeded with the instance, its 160 first outputs discarded.
    const fn new() -> Self {
        // (value, bits), written most significant bit first: a prime field (1), the S-box
        // x^α (0), the field's bits, the width, the full and the partial rounds, 30 ones.
        let fields: [(u128, u32); 7] = [
            (1, 2),
            (0, 4),
            (64, 12),
            (WIDTH as u128, 12),
            (FULL_ROUNDS as u128, 10),
            (PARTIAL_ROUNDS as u128, 10),
            ((1 << 30) - 1, 30),
        ];
        let mut state = 0u128;
        let mut at = 0;
        let mut f = 0;
        while f < fields.len() {
            let (value, bits) = fields[f];
            let mut b = bits;
            while b > 0 {
                b -= 1;
                state |= ((value >> b) & 1) << at;
                at += 1;
            }
            f += 1;
        }
        let mut grain = Self(state);
        let mut i = 0;
        while i < 160 {
            grain.step();
            i += 1;
        }
        grain
    }

    /// Shifts in the next bit (taps 62, 51, 38, 23, 13, 0) and returns it.
    const fn step(&mut self) -> u128 {
        let s = self.0;
        let bit = ((s >> 62) ^ (s >> 51) ^ (s >> 38) ^ (s >> 23) ^ (s >> 13) ^ s) & 1;
        self.0 = (s >> 1) | (bit << 79);
        bit
    }

    /// The shrinking generator's next bit: of each pair, the second when the first is 1.
    const fn bit(&mut self) -> u64 {
        loop {
            if self.step() == 1 {
                return self.step() as u64;
            }
            self.step();
        }
    }

    /// The next field element: 64 bits, most significant first, drawn again while `≥ p`.
    const fn element(&mut self) -> Felt {
        loop {
            let mut value = 0u64;
            let mut i = 0;
            while i < 64 {
                value = (value << 1) | self.bit();
                i += 1;
            }
            if let Some(element) = Felt::from_canonical(value) {
                return element;
            }
        }
    }

    const fn row(&mut self) -> [Felt; WIDTH] {
        let mut row = [Felt::ZERO; WIDTH];
        let mut i = 0;
        while i < WIDTH {
            row[i] = self.element();
            i += 1;
        }
        row
    }
}

const fn constants() -> Constants<Felt> {
    let mut grain = Grain::new();
    let mut initial = [[Felt::ZERO; WIDTH]; HALF_FULL];
    let mut r = 0;
    while r < HALF_FULL {
        initial[r] = grain.row();
        r += 1;
    }
    let mut partial = [Felt::ZERO; PARTIAL_ROUNDS];
    let mut r = 0;
    while r < PARTIAL_ROUNDS {
        partial[r] = grain.element();
        r += 1;
    }
    let mut terminal = [[Felt::ZERO; WIDTH]; HALF_FULL];
    let mut r = 0;
    while r < HALF_FULL {
        terminal[r] = grain.row();
        r += 1;
    }
    Constants {
        initial,
        partial,
        terminal,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grain_draws_the_reference_instances_round_constants() {
        // The first, the first and last partial, and the last constant of the table that the
        // instance generator prints (HorizenLabs/poseidon2; Plonky3 carries the same).
        assert_eq!(CONSTANTS.initial[0][0].as_u64(), 0x13dc_f33a_ba21_4f46);
        assert_eq!(CONSTANTS.partial[0].as_u64(), 0x4adf_842a_a75d_4316);
        assert_eq!(CONSTANTS.partial[21].as_u64(), 0xf7bb_62a8_da4c_961b);
        assert_eq!(CONSTANTS.terminal[3][11].as_u64(), 0x962d_eba3_e9a2_cd94);
    }
}
