//! Absorbing messages and squeezing challenges, with the proof's hash.

use ballast_cpu::Kernels;
use ballast_field::{Ext3, Felt};
use ballast_keccak::{Digest, HashDomain, keccak256_many};
use ballast_merkle::MerkleHash;
use ballast_poseidon2::constants::WIDTH;
use ballast_poseidon2::{Duplex, RATE, permute, permute_many};

use crate::keccak::{KeccakChain, WORK_MESSAGE, prefix};
use crate::poseidon2::{DuplexChain, Message, TranscriptStep};

/// A Fiat–Shamir transcript. It hashes with the proof's [`MerkleHash`]: a Keccak-256
/// chaining state, or a Poseidon2 duplex sponge over field elements (what a verifier AIR
/// recomputes with the permutation its Merkle paths already need).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transcript {
    pub(crate) chain: Chain,
}

/// The state a nonce's work word ([`Transcript::check_pow`]) is computed from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkState {
    /// Keccak-256: the chaining state; the word is the first 8 bytes, big-endian, of
    /// H(0x06 ‖ state ‖ nonce).
    Keccak(Digest),
    /// Poseidon2: the duplex's cells once the work message's kind is absorbed, and the rate
    /// cell (below 8) the nonce's low half is added to; its high half goes to the next cell
    /// (after a permutation, when `next` is the last), and the word is cell 0 after one
    /// more permutation.
    Poseidon2 {
        /// The cells.
        cells: [Felt; WIDTH],
        /// Where the nonce's low half is added.
        next: usize,
    },
}

impl WorkState {
    /// `nonce`'s work word from this state: what [`Transcript::check_pow`] judges, computed
    /// as a device does, without replaying the work message's kind for every nonce.
    pub fn word(&self, nonce: u64) -> u64 {
        match *self {
            Self::Keccak(state) => KeccakChain { state }.work(nonce),
            Self::Poseidon2 { mut cells, next } => {
                let (low, high) = (Felt::new(nonce & 0xffff_ffff), Felt::new(nonce >> 32));
                cells[next] += low;
                if next + 1 == RATE {
                    permute(&mut cells);
                    cells[0] += high;
                } else {
                    cells[next + 1] += high;
                }
                permute(&mut cells);
                cells[0].as_u64()
            }
        }
    }

    /// The work words of nonces `first`, `first + 1`, … into `out`, each the one
    /// [`word`](Self::word) gives, computed on `kernels`' SIMD lanes: many messages hashed
    /// at once for Keccak-256, many states permuted at once for Poseidon2.
    pub fn words(&self, kernels: Kernels, first: u64, out: &mut [u64]) {
        let nonces = (first..).take(out.len());
        match *self {
            Self::Keccak(state) => {
                let chain = KeccakChain { state };
                let messages: Vec<u8> = nonces.flat_map(|n| chain.work_message(n)).collect();
                let mut digests = vec![[0u8; 32]; out.len()];
                keccak256_many(
                    kernels,
                    HashDomain::ProofOfWork,
                    &messages,
                    WORK_MESSAGE,
                    &mut digests,
                );
                for (word, digest) in out.iter_mut().zip(&digests) {
                    *word = prefix(digest);
                }
            }
            Self::Poseidon2 { cells, next } => {
                let halves = |n: u64| (Felt::new(n & 0xffff_ffff), Felt::new(n >> 32));
                let mut states: Vec<[Felt; WIDTH]> = nonces
                    .clone()
                    .map(|n| {
                        let mut state = cells;
                        state[next] += halves(n).0;
                        if next + 1 != RATE {
                            state[next + 1] += halves(n).1;
                        }
                        state
                    })
                    .collect();
                if next + 1 == RATE {
                    permute_many(kernels, &mut states);
                    for (state, n) in states.iter_mut().zip(nonces) {
                        state[0] += halves(n).1;
                    }
                }
                permute_many(kernels, &mut states);
                for (word, state) in out.iter_mut().zip(&states) {
                    *word = state[0].as_u64();
                }
            }
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Chain {
    Keccak(KeccakChain),
    // Boxed: a duplex chain keeps its log and where each message is.
    Poseidon2(Box<DuplexChain>),
}

impl Transcript {
    /// A transcript hashing with `hash`, bound to `domain`, the protocol's domain separator.
    pub fn new(hash: MerkleHash, domain: &[u8]) -> Self {
        let chain = match hash {
            MerkleHash::Keccak256 => Chain::Keccak(KeccakChain::new(domain)),
            MerkleHash::Poseidon2 => {
                Chain::Poseidon2(Box::new(DuplexChain::new(domain, Duplex::new())))
            }
        };
        Self { chain }
    }

    /// A transcript that absorbs, frames and logs as [`new`](Self::new)'s does but permutes
    /// nothing, so that every challenge is zero ([`Duplex::shape`]): its
    /// [`steps`](Self::steps) but for what they read, its [`messages`](Self::messages) and
    /// [`data`](Self::data) are those of a transcript that absorbed the same, at no
    /// permutation's cost. A Keccak-256 one, which has no log, is [`new`](Self::new)'s.
    pub fn shape(hash: MerkleHash, domain: &[u8]) -> Self {
        match hash {
            MerkleHash::Keccak256 => Self::new(hash, domain),
            MerkleHash::Poseidon2 => Self {
                chain: Chain::Poseidon2(Box::new(DuplexChain::new(domain, Duplex::shape()))),
            },
        }
    }

    /// The hash the transcript hashes with.
    pub fn hash(&self) -> MerkleHash {
        match self.chain {
            Chain::Keccak(_) => MerkleHash::Keccak256,
            Chain::Poseidon2(_) => MerkleHash::Poseidon2,
        }
    }

    /// What grinding starts from, on the CPU's lanes or a device: the state a nonce's work
    /// word is computed from.
    pub fn work_state(&self) -> WorkState {
        match &self.chain {
            Chain::Keccak(chain) => WorkState::Keccak(chain.state),
            Chain::Poseidon2(chain) => {
                let (cells, next) = chain.work_state();
                WorkState::Poseidon2 { cells, next }
            }
        }
    }

    /// Absorbs `bytes` under `label`. Labels and lengths are part of every message, so no
    /// two different message sequences are absorbed alike.
    pub fn absorb(&mut self, label: &str, bytes: &[u8]) {
        match &mut self.chain {
            Chain::Keccak(chain) => chain.absorb(label, bytes),
            Chain::Poseidon2(chain) => chain.absorb_bytes(label, bytes),
        }
    }

    /// Absorbs a `u64` (little-endian bytes for Keccak-256; two 32-bit halves for Poseidon2).
    pub fn absorb_u64(&mut self, label: &str, value: u64) {
        match &mut self.chain {
            Chain::Keccak(chain) => chain.absorb(label, &value.to_le_bytes()),
            Chain::Poseidon2(chain) => chain.absorb_word(label, value),
        }
    }

    /// Absorbs base-field elements (their canonical encodings for Keccak-256).
    pub fn absorb_felts(&mut self, label: &str, values: &[Felt]) {
        match &mut self.chain {
            Chain::Keccak(chain) => {
                let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
                chain.absorb(label, &bytes);
            }
            Chain::Poseidon2(chain) => chain.absorb_felts(label, values),
        }
    }

    /// Absorbs extension-field elements: their coordinates, in order, as base-field elements.
    pub fn absorb_ext(&mut self, label: &str, values: &[Ext3]) {
        let coeffs: Vec<Felt> = values.iter().flat_map(|v| v.coeffs()).collect();
        self.absorb_felts(label, &coeffs);
    }

    /// Absorbs a Merkle root (its bytes for Keccak-256; its 4 elements for Poseidon2).
    pub fn absorb_root(&mut self, label: &str, root: &Digest) {
        match &mut self.chain {
            Chain::Keccak(chain) => chain.absorb(label, root),
            Chain::Poseidon2(chain) => chain.absorb_digest(label, root),
        }
    }

    /// Every permutation of a Poseidon2 transcript so far, in order, with those of each
    /// work word [`check_pow`](Self::check_pow) checked where it checked it: what a
    /// verifier AIR recomputes. None for Keccak-256.
    pub fn steps(&self) -> Option<Vec<TranscriptStep>> {
        match &self.chain {
            Chain::Keccak(_) => None,
            Chain::Poseidon2(chain) => Some(chain.steps()),
        }
    }

    /// Every message of a Poseidon2 transcript so far, with its payload's place among the
    /// data its duplex absorbed. None for Keccak-256.
    pub fn messages(&self) -> Option<Vec<Message>> {
        match &self.chain {
            Chain::Keccak(_) => None,
            Chain::Poseidon2(chain) => Some(chain.messages().to_vec()),
        }
    }

    /// The data a Poseidon2 transcript's duplex absorbed so far: every message's payload,
    /// in order, where [`messages`](Self::messages) places them. None for Keccak-256.
    pub fn data(&self) -> Option<Vec<Felt>> {
        match &self.chain {
            Chain::Keccak(_) => None,
            Chain::Poseidon2(chain) => Some(chain.data().to_vec()),
        }
    }

    /// A uniformly random extension-field element.
    pub fn challenge_ext(&mut self, label: &str) -> Ext3 {
        self.challenge_exts(label, 1)[0]
    }

    /// `count` uniformly random extension-field elements from one squeeze.
    pub fn challenge_exts(&mut self, label: &str, count: usize) -> Vec<Ext3> {
        match &mut self.chain {
            Chain::Keccak(chain) => {
                let mut words = chain.squeeze(label);
                (0..count)
                    .map(|_| Ext3::new(std::array::from_fn(|_| words.next_felt())))
                    .collect()
            }
            Chain::Poseidon2(chain) => chain
                .squeeze(label, 3 * count)
                .as_chunks::<3>()
                .0
                .iter()
                .map(|&coeffs| Ext3::new(coeffs))
                .collect(),
        }
    }

    /// `count` uniformly random indices in `[0, 2^log_range)`: the low bits of a word (of a
    /// squeezed element, for Poseidon2).
    ///
    /// # Panics
    /// If `log_range >= 64`.
    pub fn challenge_indices(&mut self, label: &str, count: usize, log_range: usize) -> Vec<usize> {
        assert!(log_range < 64, "index range 2^{log_range} too large");
        let mask = (1u64 << log_range) - 1;
        let words: Vec<u64> = match &mut self.chain {
            Chain::Keccak(chain) => {
                let mut words = chain.squeeze(label);
                (0..count).map(|_| words.next_word()).collect()
            }
            Chain::Poseidon2(chain) => chain
                .squeeze(label, count)
                .iter()
                .map(|f| f.as_u64())
                .collect(),
        };
        words.iter().map(|w| (w & mask) as usize).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn each_hash(check: impl Fn(MerkleHash)) {
        for hash in MerkleHash::ALL {
            check(hash);
        }
    }

    #[test]
    fn same_messages_give_same_challenges() {
        each_hash(|hash| {
            let mut a = Transcript::new(hash, b"test");
            let mut b = Transcript::new(hash, b"test");
            a.absorb("x", b"hello");
            b.absorb("x", b"hello");
            assert_eq!(a.challenge_ext("alpha"), b.challenge_ext("alpha"));
            assert_eq!(a, b);
        });
    }

    #[test]
    fn every_input_changes_the_challenge() {
        each_hash(|hash| {
            let challenge = |domain: &[u8], label: &str, message: &[u8], name: &str| {
                let mut t = Transcript::new(hash, domain);
                t.absorb(label, message);
                t.challenge_ext(name)
            };
            let base = challenge(b"test", "x", b"hello", "alpha");
            let variants = [
                (&b"other"[..], "x", &b"hello"[..], "alpha"),
                (b"test", "y", b"hello", "alpha"),
                (b"test", "x", b"hellp", "alpha"),
                (b"test", "x", b"hello", "beta"),
                // Length prefixes: a byte moved between label and message.
                (b"test", "xh", b"ello", "alpha"),
                // A trailing zero byte.
                (b"test", "x", b"hello\0", "alpha"),
            ];
            for (domain, label, message, name) in variants {
                assert_ne!(challenge(domain, label, message, name), base, "{hash}");
            }
        });
    }

    #[test]
    fn a_duplex_transcript_tells_every_kind_of_message_apart() {
        // The same value absorbed as a word, as an element, as bytes: three transcripts.
        // (Keccak-256's transcript is one of bytes: there the three are the same message.)
        let hash = MerkleHash::Poseidon2;
        let mut word = Transcript::new(hash, b"test");
        word.absorb_u64("v", 5);
        let mut felt = Transcript::new(hash, b"test");
        felt.absorb_felts("v", &[Felt::new(5)]);
        let mut bytes = Transcript::new(hash, b"test");
        bytes.absorb("v", &5u64.to_le_bytes());
        let mut root = Transcript::new(hash, b"test");
        root.absorb_root("v", &[0; 32]);
        let mut zeros = Transcript::new(hash, b"test");
        zeros.absorb_felts("v", &[Felt::ZERO; 4]);
        let drawn = [word, felt, bytes, root, zeros].map(|mut t| t.challenge_ext("c"));
        for (i, a) in drawn.iter().enumerate() {
            for b in &drawn[i + 1..] {
                assert_ne!(a, b);
            }
        }
    }

    #[test]
    fn the_two_hashes_draw_different_challenges() {
        let [a, b] = MerkleHash::ALL.map(|hash| Transcript::new(hash, b"test").challenge_ext("c"));
        assert_ne!(a, b);
    }

    #[test]
    fn indices_stay_in_range_and_vary() {
        each_hash(|hash| {
            let mut t = Transcript::new(hash, b"test");
            let indices = t.challenge_indices("queries", 200, 10);
            assert!(indices.iter().all(|&i| i < 1024));
            let distinct: std::collections::BTreeSet<_> = indices.iter().collect();
            assert!(
                distinct.len() > 150,
                "200 draws from 1024 should rarely collide ({hash})"
            );
            assert!(t.challenge_indices("q", 5, 0).iter().all(|&i| i == 0));
        });
    }

    #[test]
    fn a_shape_transcript_logs_a_proofs_but_for_what_it_reads() {
        let run = |mut t: Transcript| {
            t.absorb("bytes", b"ballast");
            t.absorb_u64("word", 7);
            t.absorb_felts("felts", &[Felt::new(7), Felt::new(11)]);
            t.absorb_root("root", &[0x5a; 32]);
            let alpha = t.challenge_ext("alpha");
            let queries = t.challenge_indices("queries", 3, 20);
            t.check_pow(3, 5);
            (t, alpha, queries)
        };
        let (real, alpha, queries) = run(Transcript::new(MerkleHash::Poseidon2, b"shape"));
        let (shape, zero, none) = run(Transcript::shape(MerkleHash::Poseidon2, b"shape"));
        assert_eq!((zero, &none[..]), (Ext3::ZERO, &[0, 0, 0][..]));
        assert_ne!((alpha, queries), (zero, none));
        assert_eq!(shape.messages(), real.messages());
        assert_eq!(shape.data(), real.data());
        let (real, shape) = (real.steps().unwrap(), shape.steps().unwrap());
        assert_eq!(shape.len(), real.len());
        for (s, r) in shape.iter().zip(&real) {
            assert_eq!(s.kind, r.kind);
            assert_eq!(
                (s.step.added, s.step.data, s.step.read.len()),
                (r.step.added, r.step.data, r.step.read.len())
            );
        }
        // Keccak-256 keeps no log: its shape is a proof's transcript.
        assert_eq!(
            run(Transcript::shape(MerkleHash::Keccak256, b"shape")).1,
            run(Transcript::new(MerkleHash::Keccak256, b"shape")).1
        );
    }

    /// A sequence of every step, for the pinned values below.
    fn every_step(hash: MerkleHash) -> (Ext3, Vec<usize>, u64) {
        let mut t = Transcript::new(hash, b"pin");
        t.absorb("bytes", b"ballast");
        t.absorb_u64("word", 0x0123_4567_89ab_cdef);
        t.absorb_felts("felts", &[Felt::new(7), Felt::new(11)]);
        t.absorb_ext(
            "ext",
            &[Ext3::new([Felt::new(1), Felt::new(2), Felt::new(3)])],
        );
        t.absorb_root("root", &[0x5a; 32]);
        let e = t.challenge_ext("alpha");
        let i = t.challenge_indices("queries", 3, 20);
        (e, i, t.grind(8))
    }

    #[test]
    fn the_transcripts_are_pinned() {
        // Guards both constructions against silent change. The Keccak-256 values are those
        // of the transcript before it took a hash (protocol version 6): its bytes unchanged.
        let pinned = |hash| {
            let (e, i, nonce) = every_step(hash);
            (e.coeffs().map(|c| c.as_u64()), i, nonce)
        };
        assert_eq!(
            pinned(MerkleHash::Keccak256),
            (
                [
                    10235811299076077007,
                    16235190246682607708,
                    17327767534639733768
                ],
                vec![529988, 499843, 182138],
                353
            )
        );
        assert_eq!(
            pinned(MerkleHash::Poseidon2),
            (
                [
                    13829645760628363526,
                    2370182130383080052,
                    13251607628611044578
                ],
                vec![849342, 523372, 456577],
                198
            )
        );
    }
}
