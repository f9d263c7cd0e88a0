//! The Keccak-256 hash chain: h₀ is a 32-byte seed, h_{i+1} = Keccak-256(h_i).
//!
//! Keccak-256 as Ethereum uses it (original Keccak padding, rate 136 bytes): a 32-byte
//! message is one block, so each step is one Keccak-f\[1600\] permutation. The statement is
//! (h₀, n, h_n). Uses: proofs of sequential work, and the hashing that dominates proving
//! Ethereum data. A segment of 2^k rows proves up to ⌊2^k / 24⌋ steps ([`KeccakChainAir`]);
//! the last segment proves what is left.

mod air;
mod permutation;

use ballast_field::{BlockRunMut, Felt, RowBlocks};
use ballast_stark::{MAX_LOG_ROWS, ParamsError, ProofFormatError, Workload, check_range};
use rayon::prelude::*;
use serde_json::{Map, Value};

pub use air::{KeccakChainAir, STEP_ROWS, WIDTH};
pub use permutation::keccak_f;

use air::{
    COUNT, END, IOTA, LIVE, THIRD, a_limb, a_prime_bit, c_bit, c_prime_bit, limb_of, o_limb,
};
use permutation::{
    IOTA_BITS, ROUND_CONSTANTS, ROUNDS, absorb_digest, keccak256_of_digest, round, squeeze_digest,
};

use crate::chain::{Steps, steps_from_flags};
use crate::flags::{Flag, FlagError, FlagValues, FromFlags, parse_digest};
use crate::{Describe, thousands};

/// The smallest segment: one permutation and the rows after it (2^5 ≥ 24 + 1).
const MIN_LOG_ROWS: usize = 5;

/// The embedded statement's seed is Keccak-256 of this.
const DEFAULT_SEED: &str = "ballast";

/// `steps` Keccak-256 applications from `seed`, in segments of 2^`log_rows` rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeccakChain {
    /// h₀.
    pub seed: [u8; 32],
    /// n: how many times Keccak-256 is applied.
    pub steps: u64,
    /// log2 of the rows per segment.
    pub log_rows: usize,
}

impl KeccakChain {
    /// Steps (permutations) one segment holds.
    pub fn steps_per_segment(&self) -> u64 {
        (1u64 << self.log_rows) / STEP_ROWS as u64
    }

    /// Steps segment `segment` proves: a full segment, or what is left for the last one.
    pub fn segment_steps(&self, segment: usize) -> u64 {
        self.split().in_segment(segment)
    }

    /// The chain's steps, cut into segments.
    fn split(&self) -> Steps {
        Steps {
            total: self.steps,
            per_segment: self.steps_per_segment(),
        }
    }
}

impl Workload for KeccakChain {
    const TAG: u8 = 2;
    const NAME: &'static str = "keccak-chain";
    const ENCODED_LEN: usize = 32 + 8 + 1;
    type Air = KeccakChainAir;
    type State = [u8; 32];

    fn validate(&self) -> Result<(), ParamsError> {
        check_range("log_rows", self.log_rows, MIN_LOG_ROWS, MAX_LOG_ROWS)?;
        self.split().check()
    }

    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(Self::ENCODED_LEN);
        out.extend_from_slice(&self.seed);
        out.extend_from_slice(&self.steps.to_le_bytes());
        out.push(self.log_rows as u8);
        out
    }

    fn decode(bytes: &[u8]) -> Result<Self, ParamsError> {
        let workload = Self {
            seed: bytes[..32].try_into().expect("32 bytes"),
            steps: u64::from_le_bytes(bytes[32..40].try_into().expect("8 bytes")),
            log_rows: usize::from(bytes[40]),
        };
        workload.validate()?;
        Ok(workload)
    }

    fn segments(&self) -> usize {
        self.split().segments()
    }

    fn log_rows(&self) -> usize {
        self.log_rows
    }

    fn state_len(&self) -> usize {
        32
    }

    fn encode_state(&self, state: &[u8; 32], out: &mut Vec<u8>) {
        out.extend_from_slice(state);
    }

    fn decode_state(&self, bytes: &[u8], _offset: usize) -> Result<[u8; 32], ProofFormatError> {
        Ok(bytes.try_into().expect("state_len bytes"))
    }

    fn start(&self) -> [u8; 32] {
        self.seed
    }

    fn air(&self, _segment: usize) -> KeccakChainAir {
        KeccakChainAir {
            log_rows: self.log_rows,
        }
    }

    fn public_inputs(&self, segment: usize, start: &[u8; 32], end: &[u8; 32]) -> Vec<Felt> {
        let mut inputs = digest_limbs(start);
        inputs.extend(digest_limbs(end));
        inputs.push(Felt::new(self.segment_steps(segment)));
        inputs
    }

    fn trace(&self, segment: usize, start: &[u8; 32], table: &mut RowBlocks) -> [u8; 32] {
        // Every whole block of rows, and the partial one after them (2^k is never a multiple
        // of 24), which is dead.
        let blocks = (1usize << self.log_rows).div_ceil(STEP_ROWS);
        let live = self.segment_steps(segment) as usize;
        // Each block's input state: live blocks chain from the digest before them, dead
        // ones (after the segment's steps) hold the last live block's output.
        let mut inputs = Vec::with_capacity(blocks);
        let mut digest = *start;
        let mut last_output = [0u64; 25];
        for block in 0..blocks {
            if block < live {
                let input = absorb_digest(&digest);
                inputs.push(input);
                last_output = input;
                permutation::keccak_f(&mut last_output);
                digest = squeeze_digest(&last_output);
            } else {
                inputs.push(last_output);
            }
        }
        // One run of table blocks per permutation (24 rows: three table blocks of 8), the
        // last run partial.
        const TABLE_BLOCKS_PER_STEP: usize = STEP_ROWS / ballast_field::BLOCK_ROWS;
        table
            .par_block_runs_mut(TABLE_BLOCKS_PER_STEP)
            .zip(inputs.par_iter())
            .for_each(|((first, mut out), input)| {
                let block = first / STEP_ROWS;
                let is_live = block < live;
                let count = (block + 1).min(live) as u64;
                fill_block(&mut out, input, is_live, count);
            });
        digest
    }

    fn run(&self, segment: usize, start: &[u8; 32]) -> [u8; 32] {
        (0..self.segment_steps(segment)).fold(*start, |h, _| keccak256_of_digest(&h))
    }
}

/// A digest as the AIR reads it: lanes 0..4, low limb then high limb.
fn digest_limbs(digest: &[u8; 32]) -> Vec<Felt> {
    absorb_digest(digest)[..4]
        .iter()
        .flat_map(|&lane| [Felt::new(limb_of(lane, 0)), Felt::new(limb_of(lane, 1))])
        .collect()
}

/// The rows of one block (24, or fewer for the dead block that ends a segment): row r runs
/// round r on the state entering it; a live block's state advances, a dead one holds `input`
/// (the last live output) on every row.
fn fill_block(out: &mut BlockRunMut<'_>, input: &[u64; 25], live: bool, count: u64) {
    let bit = |v: u64, z: usize| Felt::new((v >> z) & 1);
    let mut state = *input;
    // A table block's rows at a time, row-major, then written into the block front to back.
    let mut rows = vec![Felt::ZERO; ballast_field::BLOCK_ROWS * WIDTH];
    for (r, &rc) in ROUND_CONSTANTS.iter().enumerate().take(out.rows()) {
        let k = r % ballast_field::BLOCK_ROWS;
        let row = &mut rows[k * WIDTH..(k + 1) * WIDTH];
        let step = round(&state, rc);
        for l in 0..25 {
            for half in 0..2 {
                row[a_limb(l, half)] = Felt::new(limb_of(state[l], half));
                row[o_limb(l, half)] = Felt::new(limb_of(step.output[l], half));
            }
            for z in 0..64 {
                row[a_prime_bit(l, z)] = bit(step.a_prime[l], z);
            }
        }
        for x in 0..5 {
            for z in 0..64 {
                row[c_bit(x, z)] = bit(step.c[x], z);
                row[c_prime_bit(x, z)] = bit(step.c_prime[x], z);
            }
        }
        for (j, &z) in IOTA_BITS.iter().enumerate() {
            row[IOTA + j] = bit(step.chi[0], z);
        }
        row[LIVE] = Felt::new(u64::from(live));
        row[COUNT] = Felt::new(count);
        for (a, slot) in row[THIRD..THIRD + 3].iter_mut().enumerate() {
            *slot = Felt::new(u64::from(a == r / ballast_field::BLOCK_ROWS));
        }
        row[END] = Felt::new(u64::from(r == ROUNDS - 1));
        if k == ballast_field::BLOCK_ROWS - 1 {
            out.write_block(r / ballast_field::BLOCK_ROWS, &rows);
        }
        if live {
            state = step.output;
        }
    }
}

impl FromFlags for KeccakChain {
    const ABOUT: &'static str = "\
h₀ = --seed, h_{i+1} = Keccak-256(h_i) (Ethereum's Keccak-256), proven for --steps steps;
public: h₀, n and h_n. Each segment of 2^--log-rows rows proves ⌊2^log-rows / 24⌋ steps (24
rows per Keccak-f permutation, 682 at 2^14). The default, `cli prove` with no flags: the seed
Keccak-256(\"ballast\"), 4 full segments of 2^14 rows (2,728 steps).";
    const FLAGS: &'static [Flag] = &[
        Flag {
            name: "seed",
            value_name: "HEX",
            help: "the seed h₀, 64 hexadecimal digits [default: Keccak-256(\"ballast\")]",
        },
        Flag {
            name: "steps",
            value_name: "N",
            help: "the number of steps n [default: --segments full segments]",
        },
    ];

    fn from_flags(flags: &FlagValues) -> Result<Self, FlagError> {
        let seed = flags.get("seed", parse_digest)?.unwrap_or_else(|| {
            use sha3::{Digest as _, Keccak256};
            Keccak256::digest(DEFAULT_SEED).into()
        });
        let mut chain = Self {
            seed,
            steps: 1,
            log_rows: flags.number("log-rows")?.unwrap_or(14),
        };
        chain.validate().map_err(|e| FlagError::of_params(&e))?;
        chain.steps = steps_from_flags(flags, chain.steps_per_segment(), 4)?;
        Ok(chain)
    }
}

impl Describe for KeccakChain {
    fn summary(&self, end: &[u8; 32]) -> String {
        format!(
            "keccak-chain: {} steps of Keccak-256 from seed {}, output {} ({} segments × 2^{} rows)",
            thousands(self.steps),
            hex::encode(self.seed),
            hex::encode(end),
            self.segments(),
            self.log_rows
        )
    }

    fn json(&self, end: &[u8; 32]) -> Map<String, Value> {
        let mut map = self.computation_json();
        map.insert("output".into(), hex::encode(end).into());
        map
    }

    fn computation(&self) -> String {
        format!(
            "keccak-chain: {} steps of Keccak-256 from seed {} ({} segments × 2^{} rows)",
            thousands(self.steps),
            hex::encode(self.seed),
            self.segments(),
            self.log_rows
        )
    }

    fn computation_json(&self) -> Map<String, Value> {
        let mut map = Map::new();
        map.insert("seed".into(), hex::encode(self.seed).into());
        map.insert("steps".into(), self.steps.into());
        map.insert("log_rows".into(), self.log_rows.into());
        map.insert("segments".into(), self.segments().into());
        map
    }
}

#[cfg(test)]
mod tests;
