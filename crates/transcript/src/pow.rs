//! Proof-of-work grinding with a canonical (smallest) nonce.

use rayon::prelude::*;
use sha3::{Digest as _, Keccak256};

use crate::Transcript;
use crate::transcript::tag;

/// Nonces tried per parallel batch. Batches are searched in order and the first valid nonce
/// of the first batch holding one is returned: always the smallest valid nonce.
const BATCH: u64 = 1 << 14;

impl Transcript {
    /// True when `nonce` gives H(4 ‖ state ‖ nonce) at least `bits` leading zero bits
    /// (read as a big-endian 64-bit prefix). Does not change the transcript.
    pub fn check_pow(&self, bits: u32, nonce: u64) -> bool {
        let mut hasher = Keccak256::new();
        hasher.update([tag::POW]);
        hasher.update(self.state);
        hasher.update(nonce.to_le_bytes());
        let digest: [u8; 32] = hasher.finalize().into();
        let prefix = u64::from_be_bytes(digest[..8].try_into().expect("8 bytes"));
        bits == 0 || prefix.leading_zeros() >= bits
    }

    /// The smallest nonce passing [`check_pow`](Self::check_pow). Expected work 2^bits hashes.
    ///
    /// # Panics
    /// If `bits > 63`, where a valid nonce may not exist.
    pub fn grind(&self, bits: u32) -> u64 {
        assert!(
            bits <= 63,
            "{bits} grinding bits is not a usable work factor"
        );
        (0..)
            .find_map(|batch: u64| {
                let start = batch * BATCH;
                (start..start + BATCH)
                    .into_par_iter()
                    .find_first(|&nonce| self.check_pow(bits, nonce))
            })
            .expect("a nonce exists within 2^64 tries")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grinding_finds_the_smallest_valid_nonce() {
        let mut t = Transcript::new(b"pow");
        t.absorb("x", b"1");
        let bits = 10;
        let nonce = t.grind(bits);
        assert!(t.check_pow(bits, nonce));
        assert!((0..nonce).all(|n| !t.check_pow(bits, n)));
        // A wrong nonce fails with probability 1 − 2^-bits; pick one that does.
        let wrong = (nonce + 1..).find(|&n| !t.check_pow(bits, n)).unwrap();
        assert!(!t.check_pow(bits, wrong));
        assert_eq!(t.grind(0), 0);
    }

    #[test]
    fn nonce_does_not_depend_on_thread_count() {
        let t = Transcript::new(b"pow-threads");
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let four = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        assert_eq!(one.install(|| t.grind(12)), four.install(|| t.grind(12)));
    }
}
