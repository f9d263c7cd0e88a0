//! The Poseidon2 hash chain: h₀ is a digest (four Goldilocks elements), h_{i+1} =
//! Poseidon2(h_i), the leaf hash of ballast's Poseidon2 Merkle trees
//! ([`hash_elements`] of the four elements: one permutation).
//!
//! The statement is (h₀, n, h_n). It is the algebraic hash's counterpart of the Keccak
//! chain, and the hashing a verifier AIR repeats for every Merkle path and transcript step:
//! one permutation a row ([`ballast_poseidon2::air`]), 2^k steps a segment of 2^k rows;
//! the last segment proves what is left, its later rows dead.

use ballast_air::{Air, ConstraintBuilder, Frame};
use ballast_cpu::Kernels;
use ballast_field::{BLOCK_ROWS, Felt, RowBlocks};
use ballast_poseidon2::constants::WIDTH as STATE_CELLS;
use ballast_poseidon2::{
    DIGEST_BYTES, DIGEST_ELEMENTS, FeltDigest,
    air::{self, Sbox},
    digest_from_bytes, digest_to_bytes, hash_elements, leaf_start,
};
use ballast_stark::{MAX_LOG_ROWS, ParamsError, ProofFormatError, Workload, check_range};
use rayon::prelude::*;
use serde_json::{Map, Value};

use crate::chain::{Steps, steps_from_flags};
use crate::flags::{Flag, FlagError, FlagValues, FromFlags, parse_digest};
use crate::{Describe, thousands};

/// The embedded statement's seed is the Poseidon2 hash of this, a byte an element.
const DEFAULT_SEED: &[u8] = b"ballast";

/// `steps` Poseidon2 applications from `seed`, in segments of 2^`log_rows` rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Poseidon2Chain {
    /// h₀.
    pub seed: FeltDigest,
    /// n: how many times Poseidon2 is applied.
    pub steps: u64,
    /// log2 of the rows per segment.
    pub log_rows: usize,
}

impl Poseidon2Chain {
    /// Steps (permutations) one segment holds: one a row.
    pub fn steps_per_segment(&self) -> u64 {
        1 << self.log_rows
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

impl Workload for Poseidon2Chain {
    const TAG: u8 = 4;
    const NAME: &'static str = "poseidon2-chain";
    const ENCODED_LEN: usize = DIGEST_BYTES + 8 + 1;
    type Air = Poseidon2ChainAir;
    type State = FeltDigest;

    fn validate(&self) -> Result<(), ParamsError> {
        check_range("log_rows", self.log_rows, 1, MAX_LOG_ROWS)?;
        self.split().check()
    }

    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(Self::ENCODED_LEN);
        out.extend_from_slice(&digest_to_bytes(&self.seed));
        out.extend_from_slice(&self.steps.to_le_bytes());
        out.push(self.log_rows as u8);
        out
    }

    fn decode(bytes: &[u8]) -> Result<Self, ParamsError> {
        let seed = bytes[..DIGEST_BYTES].try_into().expect("a digest's bytes");
        let workload = Self {
            seed: digest_from_bytes(seed).ok_or(ParamsError::NonCanonical { name: "seed" })?,
            steps: u64::from_le_bytes(
                bytes[DIGEST_BYTES..DIGEST_BYTES + 8]
                    .try_into()
                    .expect("8 bytes"),
            ),
            log_rows: usize::from(bytes[DIGEST_BYTES + 8]),
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
        DIGEST_BYTES
    }

    fn encode_state(&self, state: &FeltDigest, out: &mut Vec<u8>) {
        out.extend_from_slice(&digest_to_bytes(state));
    }

    fn decode_state(&self, bytes: &[u8], offset: usize) -> Result<FeltDigest, ProofFormatError> {
        let bytes = bytes.try_into().expect("state_len bytes");
        digest_from_bytes(bytes).ok_or(ProofFormatError::NonCanonical { offset })
    }

    fn start(&self) -> FeltDigest {
        self.seed
    }

    fn air(&self, _segment: usize) -> Poseidon2ChainAir {
        Poseidon2ChainAir {
            log_rows: self.log_rows,
        }
    }

    fn public_inputs(&self, segment: usize, start: &FeltDigest, end: &FeltDigest) -> Vec<Felt> {
        let mut inputs = start.to_vec();
        inputs.extend(end);
        inputs.push(Felt::new(self.segment_steps(segment)));
        inputs
    }

    fn trace(&self, segment: usize, start: &FeltDigest, table: &mut RowBlocks) -> FeltDigest {
        // Each row's input digest, one after another (the chain is sequential); dead rows
        // repeat the last live one's. Then each block of rows is filled in parallel, its
        // permutations a register of rows at a time, straight into its column runs.
        let rows = 1usize << self.log_rows;
        let live = self.segment_steps(segment) as usize;
        let mut inputs = Vec::with_capacity(rows);
        let mut digest = *start;
        for _ in 0..live {
            inputs.push(digest);
            digest = hash_elements(&digest);
        }
        inputs.resize(rows, inputs[live - 1]);
        let kernels = Kernels::active();
        table.par_block_runs_mut(1).for_each(|(first, mut block)| {
            let count = block.rows();
            let runs = block.block_mut(0);
            let mut states = [[Felt::ZERO; STATE_CELLS]; BLOCK_ROWS];
            for (k, state) in states.iter_mut().enumerate().take(count) {
                let r = first + k;
                runs[LIVE * BLOCK_ROWS + k] = Felt::new(u64::from(r < live));
                runs[COUNT * BLOCK_ROWS + k] = Felt::new((r + 1).min(live) as u64);
                for (i, &element) in inputs[r].iter().enumerate() {
                    runs[(DIGEST + i) * BLOCK_ROWS + k] = element;
                }
                *state = step_input(inputs[r], Felt::ZERO);
            }
            air::fill_runs(
                kernels,
                SBOX,
                &states[..count],
                BLOCK_ROWS,
                &mut runs[PERMUTATION * BLOCK_ROWS..],
            );
        });
        digest
    }

    fn run(&self, segment: usize, start: &FeltDigest) -> FeltDigest {
        (0..self.segment_steps(segment)).fold(*start, |h, _| hash_elements(&h))
    }
}

/// The state a step permutes: the leaf of `digest`'s four elements.
#[inline(always)]
fn step_input<E: ballast_air::Algebra>(digest: [E; DIGEST_ELEMENTS], zero: E) -> [E; STATE_CELLS] {
    let mut state = leaf_start(DIGEST_ELEMENTS, zero);
    state[..DIGEST_ELEMENTS].copy_from_slice(&digest);
    state
}

/// Column: 1 on the rows of the segment's steps, then 0.
const LIVE: usize = 0;
/// Column: the steps up to this row (its own included), counting live rows only.
const COUNT: usize = 1;
/// Columns: the digest the row's step hashes.
const DIGEST: usize = 2;
/// The steps' S-boxes: cubed, for degree-3 constraints that any blowup proves.
const SBOX: Sbox = Sbox::Cubed;
/// Columns: the step's permutation ([`Sbox::columns`]), its output digest in the first four
/// of the last [`STATE_CELLS`].
const PERMUTATION: usize = DIGEST + DIGEST_ELEMENTS;
/// Columns of the table (242).
pub const WIDTH: usize = PERMUTATION + SBOX.columns();

/// One segment: a step a row. Public inputs: the digest the segment starts from (4), the
/// one it ends in (4), and its number of steps m.
///
/// Constraints: the row's permutation ([`air::eval`], degree 3); live is a bit, 1 on row 0
/// and never rises again, so the live rows are a prefix; count starts at 1 and grows by
/// the next row's live, so it ends at the prefix's length, which the last row equates to
/// m; the first row hashes the start; a live row hashes the digest the row before output;
/// and the last live row outputs the end (on the transition that leaves the prefix, or on
/// the last row when every row is live).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Poseidon2ChainAir {
    /// log2 of the rows.
    pub log_rows: usize,
}

impl Air for Poseidon2ChainAir {
    fn id(&self) -> &str {
        "ballast/poseidon2-chain/v1"
    }

    fn width(&self) -> usize {
        WIDTH
    }

    fn log_rows(&self) -> usize {
        self.log_rows
    }

    fn num_public_inputs(&self) -> usize {
        2 * DIGEST_ELEMENTS + 1
    }

    #[inline(always)]
    fn eval<B: ConstraintBuilder>(&self, f: &Frame<'_, B::Expr>, b: &mut B) {
        let one = B::Expr::from(Felt::ONE);
        let (cur, next) = (f.current, f.next);
        let digest: [B::Expr; DIGEST_ELEMENTS] = std::array::from_fn(|i| cur[DIGEST + i]);
        let input = step_input(digest, B::Expr::from(Felt::ZERO));
        let output = air::eval(b, SBOX, input, &cur[PERMUTATION..]);
        let (start, rest) = f.public_inputs.split_at(DIGEST_ELEMENTS);
        let (end, steps) = rest.split_at(DIGEST_ELEMENTS);

        let (live, next_live) = (cur[LIVE], next[LIVE]);
        b.every_row(live * (live - one));
        b.transition(next_live * (one - live));
        b.first_row(live - one);
        b.first_row(cur[COUNT] - one);
        b.transition(next[COUNT] - cur[COUNT] - next_live);
        b.last_row(cur[COUNT] - steps[0]);
        for i in 0..DIGEST_ELEMENTS {
            b.first_row(cur[DIGEST + i] - start[i]);
            b.transition(next_live * (next[DIGEST + i] - output[i]));
            b.transition((live - next_live) * (output[i] - end[i]));
            b.last_row(live * (output[i] - end[i]));
        }
    }
}

impl FromFlags for Poseidon2Chain {
    const ABOUT: &'static str = "\
h₀ = --seed, h_{i+1} = Poseidon2(h_i) (the Poseidon2 leaf hash of four Goldilocks elements:
one permutation), proven for --steps steps; public: h₀, n and h_n. Each segment of
2^--log-rows rows proves 2^log-rows steps, the last one what is left. The default: the seed
Poseidon2(\"ballast\"), 4 full segments of 2^14 rows (65,536 steps).";
    const FLAGS: &'static [Flag] = &[
        Flag {
            name: "seed",
            value_name: "HEX",
            help: "the seed h₀, 64 hexadecimal digits: four canonical little-endian elements \
                   [default: Poseidon2(\"ballast\")]",
        },
        Flag {
            name: "steps",
            value_name: "N",
            help: "the number of steps n [default: --segments full segments]",
        },
    ];

    fn from_flags(flags: &FlagValues) -> Result<Self, FlagError> {
        let seed = match flags.get("seed", parse_digest)? {
            Some(bytes) => digest_from_bytes(&bytes).ok_or_else(|| {
                FlagError::invalid(
                    "seed",
                    "an element is not below the Goldilocks prime (each 8 bytes, little-endian)",
                )
            })?,
            None => {
                let bytes: Vec<Felt> = DEFAULT_SEED.iter().map(|&b| Felt::new(b.into())).collect();
                hash_elements(&bytes)
            }
        };
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

impl Describe for Poseidon2Chain {
    fn summary(&self, end: &FeltDigest) -> String {
        format!(
            "poseidon2-chain: {} steps of Poseidon2 from seed {}, output {} ({} segments × 2^{} rows)",
            thousands(self.steps),
            hex::encode(digest_to_bytes(&self.seed)),
            hex::encode(digest_to_bytes(end)),
            self.segments(),
            self.log_rows
        )
    }

    fn json(&self, end: &FeltDigest) -> Map<String, Value> {
        let mut map = self.computation_json();
        map.insert("output".into(), hex::encode(digest_to_bytes(end)).into());
        map
    }

    fn computation(&self) -> String {
        format!(
            "poseidon2-chain: {} steps of Poseidon2 from seed {} ({} segments × 2^{} rows)",
            thousands(self.steps),
            hex::encode(digest_to_bytes(&self.seed)),
            self.segments(),
            self.log_rows
        )
    }

    fn computation_json(&self) -> Map<String, Value> {
        let mut map = Map::new();
        map.insert(
            "seed".into(),
            hex::encode(digest_to_bytes(&self.seed)).into(),
        );
        map.insert("steps".into(), self.steps.into());
        map.insert("log_rows".into(), self.log_rows.into());
        map.insert("segments".into(), self.segments().into());
        map
    }
}

#[cfg(test)]
mod tests;
