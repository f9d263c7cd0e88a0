//! Proof-of-work grinding with a canonical (smallest) nonce.

use ballast_cpu::Kernels;
use rayon::prelude::*;

use crate::Transcript;
use crate::transcript::Chain;

/// Nonces tried per parallel batch. Batches are searched in order and the first valid nonce
/// of the first batch holding one is returned: always the smallest valid nonce.
const BATCH: u64 = 1 << 14;
/// Nonces hashed together in one task of a batch (several per permutation on SIMD paths).
const CHUNK: u64 = 1 << 9;

/// True when a work word has at least `bits` leading zeros: the check
/// [`Transcript::check_pow`] makes, which a verifier AIR's native side repeats.
pub fn meets_work(word: u64, bits: u32) -> bool {
    bits == 0 || word.leading_zeros() >= bits
}

impl Transcript {
    /// True when `nonce`'s work word has at least `bits` leading zero bits. For Keccak-256
    /// the word is the first 8 bytes, big-endian, of H(0x06 ‖ state ‖ nonce)
    /// ([`ballast_keccak::HashDomain::ProofOfWork`]); for Poseidon2, the first element
    /// squeezed after the message `Work ‖ nonce`, on a copy of the duplex, whose permutations
    /// [`steps`](Transcript::steps) then lists. Does not change what the transcript draws.
    pub fn check_pow(&mut self, bits: u32, nonce: u64) -> bool {
        let word = match &mut self.chain {
            Chain::Keccak(chain) => chain.work(nonce),
            Chain::Poseidon2(chain) => chain.check_work(nonce),
        };
        meets_work(word, bits)
    }

    /// The smallest nonce passing [`check_pow`](Self::check_pow), on the process's CPU path.
    /// Expected work 2^bits hashes.
    ///
    /// # Panics
    /// If `bits > 63`, where a valid nonce may not exist.
    pub fn grind(&self, bits: u32) -> u64 {
        self.grind_on(Kernels::active(), bits)
    }

    pub(crate) fn grind_on(&self, kernels: Kernels, bits: u32) -> u64 {
        assert!(
            bits <= 63,
            "{bits} grinding bits is not a usable work factor"
        );
        (0..)
            .find_map(|batch: u64| {
                let start = batch * BATCH;
                (0..BATCH / CHUNK).into_par_iter().find_map_first(|chunk| {
                    self.first_in_chunk(kernels, bits, start + chunk * CHUNK)
                })
            })
            .expect("a nonce exists within 2^64 tries")
    }

    /// The smallest valid nonce among `first .. first + CHUNK`, if any.
    fn first_in_chunk(&self, kernels: Kernels, bits: u32, first: u64) -> Option<u64> {
        let mut words = [0; CHUNK as usize];
        self.work_state().words(kernels, first, &mut words);
        words
            .iter()
            .position(|&word| meets_work(word, bits))
            .map(|k| first + k as u64)
    }
}

#[cfg(test)]
mod tests {
    use ballast_merkle::MerkleHash;

    use super::*;
    use crate::WorkState;

    #[test]
    fn grinding_finds_the_smallest_valid_nonce() {
        for hash in MerkleHash::ALL {
            let mut t = Transcript::new(hash, b"pow");
            t.absorb("x", b"1");
            let bits = 10;
            let nonce = t.grind(bits);
            assert!(t.check_pow(bits, nonce), "{hash}");
            assert!((0..nonce).all(|n| !t.check_pow(bits, n)), "{hash}");
            // A wrong nonce fails with probability 1 − 2^-bits; pick one that does.
            let wrong = (nonce + 1..).find(|&n| !t.check_pow(bits, n)).unwrap();
            assert!(!t.check_pow(bits, wrong), "{hash}");
            assert_eq!(t.grind(0), 0, "{hash}");
        }
    }

    /// `nonce`'s work word, as `check_pow` judges it.
    fn word(t: &Transcript, nonce: u64) -> u64 {
        match &t.chain {
            Chain::Keccak(chain) => chain.work(nonce),
            Chain::Poseidon2(chain) => chain.work_duplex(nonce).0,
        }
    }

    #[test]
    fn the_work_state_gives_each_nonces_word() {
        // WorkState::word, as the device computes it, and WorkState::words, as grinding does,
        // against check_pow's word, with the nonce's low half landing in every rate cell.
        let mut t = Transcript::new(MerkleHash::Poseidon2, b"work");
        let mut seen = [false; 8];
        for step in 0..12 {
            let state = t.work_state();
            let WorkState::Poseidon2 { next, .. } = state else {
                panic!("a Poseidon2 transcript");
            };
            seen[next] = true;
            let nonce = 0x1234_5678_9abc_def0 + step;
            assert_eq!(
                state.word(nonce),
                word(&t, nonce),
                "step {step}, cell {next}"
            );
            // Many at once, on every path: 45 nonces are an odd number of register groups
            // of 4 and of 8, and a remainder on both.
            let expected: Vec<u64> = (nonce..nonce + 45).map(|n| state.word(n)).collect();
            for kernels in Kernels::supported() {
                let mut words = [0; 45];
                state.words(kernels, nonce, &mut words);
                assert_eq!(words.to_vec(), expected, "{}, cell {next}", kernels.path());
            }
            // Three elements (kind, empty label, no element): the next cell moves by 3.
            t.absorb_felts("", &[]);
        }
        assert_eq!(seen, [true; 8]);
        let keccak = Transcript::new(MerkleHash::Keccak256, b"work");
        assert_eq!(keccak.work_state().word(77), word(&keccak, 77));
        for kernels in Kernels::supported() {
            let mut words = [0; 45];
            keccak.work_state().words(kernels, 77, &mut words);
            let expected: Vec<u64> = (77..77 + 45).map(|n| word(&keccak, n)).collect();
            assert_eq!(words.to_vec(), expected, "{}", kernels.path());
        }
    }

    #[test]
    fn nonce_does_not_depend_on_thread_count() {
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let four = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        for hash in MerkleHash::ALL {
            let t = Transcript::new(hash, b"pow-threads");
            assert_eq!(
                one.install(|| t.grind(12)),
                four.install(|| t.grind(12)),
                "{hash}"
            );
        }
    }

    #[test]
    fn every_path_finds_the_same_nonce() {
        for hash in MerkleHash::ALL {
            let mut t = Transcript::new(hash, b"pow-paths");
            let scalar = t.grind_on(Kernels::Scalar, 13);
            assert!(t.check_pow(13, scalar), "{hash}");
            for kernels in Kernels::supported() {
                assert_eq!(
                    t.grind_on(kernels, 13),
                    scalar,
                    "{hash}, {} path",
                    kernels.path()
                );
            }
        }
    }
}
