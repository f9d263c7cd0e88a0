//! Proof-of-work grinding with a canonical (smallest) nonce.

use ballast_cpu::Kernels;
use ballast_keccak::{HashDomain, keccak256, keccak256_many};
use rayon::prelude::*;

use crate::Transcript;

/// Nonces tried per parallel batch. Batches are searched in order and the first valid nonce
/// of the first batch holding one is returned: always the smallest valid nonce.
const BATCH: u64 = 1 << 14;
/// Nonces hashed together in one task of a batch (several per permutation on SIMD paths).
const CHUNK: u64 = 1 << 9;
/// Bytes hashed after the tag: the state and the nonce.
const MESSAGE: usize = 32 + 8;

/// True when a digest's first 8 bytes, read big-endian, have at least `bits` leading zeros.
fn meets(digest: &[u8; 32], bits: u32) -> bool {
    let prefix = u64::from_be_bytes(digest[..8].try_into().expect("8 bytes"));
    bits == 0 || prefix.leading_zeros() >= bits
}

impl Transcript {
    /// True when `nonce` gives H(0x06 ‖ state ‖ nonce) ([`HashDomain::ProofOfWork`]) at least `bits` leading zero bits
    /// (read as a big-endian 64-bit prefix). Does not change the transcript.
    pub fn check_pow(&self, bits: u32, nonce: u64) -> bool {
        let mut message = [0u8; MESSAGE];
        message[..32].copy_from_slice(&self.state);
        message[32..].copy_from_slice(&nonce.to_le_bytes());
        meets(&keccak256(HashDomain::ProofOfWork, &message), bits)
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
        let mut messages = Vec::with_capacity(CHUNK as usize * MESSAGE);
        for nonce in first..first + CHUNK {
            messages.extend_from_slice(&self.state);
            messages.extend_from_slice(&nonce.to_le_bytes());
        }
        let mut digests = vec![[0u8; 32]; CHUNK as usize];
        keccak256_many(
            kernels,
            HashDomain::ProofOfWork,
            &messages,
            MESSAGE,
            &mut digests,
        );
        digests
            .iter()
            .position(|d| meets(d, bits))
            .map(|k| first + k as u64)
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

    #[test]
    fn every_path_finds_the_same_nonce() {
        let t = Transcript::new(b"pow-paths");
        let scalar = t.grind_on(Kernels::Scalar, 13);
        assert!(t.check_pow(13, scalar));
        for kernels in Kernels::supported() {
            assert_eq!(t.grind_on(kernels, 13), scalar, "{} path", kernels.path());
        }
    }
}
