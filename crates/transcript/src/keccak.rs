//! The transcript of a Keccak-256 proof: a 32-byte chaining state, each message hashed into
//! it whole.

use ballast_field::Felt;
use ballast_keccak::{Digest, HashDomain, keccak256, keccak256_concat};

/// A Keccak-256 chaining state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct KeccakChain {
    pub(crate) state: Digest,
}

impl KeccakChain {
    /// state = H(0x02 ‖ |domain| ‖ domain) ([`HashDomain::TranscriptInit`]).
    pub(crate) fn new(domain: &[u8]) -> Self {
        Self {
            state: keccak256_concat(
                HashDomain::TranscriptInit,
                &[&(domain.len() as u64).to_le_bytes(), domain],
            ),
        }
    }

    /// state ← H(0x03 ‖ state ‖ |label| ‖ label ‖ |bytes| ‖ bytes)
    /// ([`HashDomain::TranscriptAbsorb`]).
    pub(crate) fn absorb(&mut self, label: &str, bytes: &[u8]) {
        self.state = keccak256_concat(
            HashDomain::TranscriptAbsorb,
            &[
                &self.state,
                &(label.len() as u64).to_le_bytes(),
                label.as_bytes(),
                &(bytes.len() as u64).to_le_bytes(),
                bytes,
            ],
        );
    }

    /// state ← H(0x04 ‖ state ‖ label) ([`HashDomain::TranscriptSqueeze`]), and a stream of
    /// 64-bit words derived from the new state.
    pub(crate) fn squeeze(&mut self, label: &str) -> WordStream {
        self.state = keccak256_concat(
            HashDomain::TranscriptSqueeze,
            &[&self.state, label.as_bytes()],
        );
        WordStream::new(self.state)
    }

    /// The first 8 bytes, big-endian, of H(0x06 ‖ state ‖ nonce) ([`HashDomain::ProofOfWork`]).
    pub(crate) fn work(&self, nonce: u64) -> u64 {
        prefix(&keccak256(
            HashDomain::ProofOfWork,
            &self.work_message(nonce),
        ))
    }

    /// The bytes [`work`](Self::work) hashes after the tag.
    pub(crate) fn work_message(&self, nonce: u64) -> [u8; WORK_MESSAGE] {
        let mut message = [0u8; WORK_MESSAGE];
        message[..32].copy_from_slice(&self.state);
        message[32..].copy_from_slice(&nonce.to_le_bytes());
        message
    }
}

/// Bytes of a proof-of-work message: the state and the nonce.
pub(crate) const WORK_MESSAGE: usize = 32 + 8;

/// A digest's first 8 bytes, read big-endian.
pub(crate) fn prefix(digest: &Digest) -> u64 {
    u64::from_be_bytes(digest[..8].try_into().expect("8 bytes"))
}

/// 64-bit words read from H(0x05 ‖ seed ‖ counter) ([`HashDomain::TranscriptStream`]) for
/// counter = 0, 1, 2, …
pub(crate) struct WordStream {
    seed: Digest,
    counter: u64,
    block: Digest,
    used: usize,
}

impl WordStream {
    fn new(seed: Digest) -> Self {
        Self {
            seed,
            counter: 0,
            block: [0; 32],
            used: 4,
        }
    }

    pub(crate) fn next_word(&mut self) -> u64 {
        if self.used == 4 {
            self.block = keccak256_concat(
                HashDomain::TranscriptStream,
                &[&self.seed, &self.counter.to_le_bytes()],
            );
            self.counter += 1;
            self.used = 0;
        }
        let word = &self.block[self.used * 8..self.used * 8 + 8];
        self.used += 1;
        u64::from_le_bytes(word.try_into().expect("8 bytes"))
    }

    /// A uniform field element: words ≥ p (probability 2^-32) are rejected.
    pub(crate) fn next_felt(&mut self) -> Felt {
        loop {
            if let Some(f) = Felt::from_canonical(self.next_word()) {
                return f;
            }
        }
    }
}
