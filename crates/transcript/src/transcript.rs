//! Absorbing messages and squeezing challenges.

use ballast_field::{Ext3, Felt};
use ballast_keccak::{HashDomain, keccak256_concat};

/// A Fiat–Shamir transcript with a Keccak-256 chaining state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transcript {
    pub(crate) state: [u8; 32],
}

impl Transcript {
    /// A transcript whose state is bound to `domain`, the protocol's domain separator:
    /// state = H(0x02 ‖ |domain| ‖ domain) ([`HashDomain::TranscriptInit`]).
    pub fn new(domain: &[u8]) -> Self {
        Self {
            state: keccak256_concat(
                HashDomain::TranscriptInit,
                &[&(domain.len() as u64).to_le_bytes(), domain],
            ),
        }
    }

    /// The current chaining state.
    pub fn state(&self) -> [u8; 32] {
        self.state
    }

    /// Absorbs `bytes` under `label`:
    /// state ← H(0x03 ‖ state ‖ |label| ‖ label ‖ |bytes| ‖ bytes) ([`HashDomain::TranscriptAbsorb`]).
    pub fn absorb(&mut self, label: &str, bytes: &[u8]) {
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

    /// Absorbs a `u64` in little-endian encoding.
    pub fn absorb_u64(&mut self, label: &str, value: u64) {
        self.absorb(label, &value.to_le_bytes());
    }

    /// Absorbs base-field elements in canonical encoding.
    pub fn absorb_felts(&mut self, label: &str, values: &[Felt]) {
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.absorb(label, &bytes);
    }

    /// Absorbs extension-field elements in canonical encoding.
    pub fn absorb_ext(&mut self, label: &str, values: &[Ext3]) {
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.absorb(label, &bytes);
    }

    /// Advances the state for a challenge named `label`, state ← H(0x04 ‖ state ‖ label)
    /// ([`HashDomain::TranscriptSqueeze`]), and returns a stream of 64-bit words derived from
    /// the new state.
    fn squeeze(&mut self, label: &str) -> WordStream {
        self.state = keccak256_concat(
            HashDomain::TranscriptSqueeze,
            &[&self.state, label.as_bytes()],
        );
        WordStream::new(self.state)
    }

    /// A uniformly random extension-field element.
    pub fn challenge_ext(&mut self, label: &str) -> Ext3 {
        let mut words = self.squeeze(label);
        Ext3::new(std::array::from_fn(|_| words.next_felt()))
    }

    /// `count` uniformly random extension-field elements from one squeeze.
    pub fn challenge_exts(&mut self, label: &str, count: usize) -> Vec<Ext3> {
        let mut words = self.squeeze(label);
        (0..count)
            .map(|_| Ext3::new(std::array::from_fn(|_| words.next_felt())))
            .collect()
    }

    /// `count` uniformly random indices in `[0, 2^log_range)`.
    ///
    /// # Panics
    /// If `log_range >= 64`.
    pub fn challenge_indices(&mut self, label: &str, count: usize, log_range: usize) -> Vec<usize> {
        assert!(log_range < 64, "index range 2^{log_range} too large");
        let mut words = self.squeeze(label);
        let mask = (1u64 << log_range) - 1;
        (0..count)
            .map(|_| (words.next_word() & mask) as usize)
            .collect()
    }
}

/// 64-bit words read from H(0x05 ‖ seed ‖ counter) ([`HashDomain::TranscriptStream`]) for
/// counter = 0, 1, 2, …
struct WordStream {
    seed: [u8; 32],
    counter: u64,
    block: [u8; 32],
    used: usize,
}

impl WordStream {
    fn new(seed: [u8; 32]) -> Self {
        Self {
            seed,
            counter: 0,
            block: [0; 32],
            used: 4,
        }
    }

    fn next_word(&mut self) -> u64 {
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
    fn next_felt(&mut self) -> Felt {
        loop {
            if let Some(f) = Felt::from_canonical(self.next_word()) {
                return f;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_messages_give_same_challenges() {
        let mut a = Transcript::new(b"test");
        let mut b = Transcript::new(b"test");
        a.absorb("x", b"hello");
        b.absorb("x", b"hello");
        assert_eq!(a.challenge_ext("alpha"), b.challenge_ext("alpha"));
        assert_eq!(a, b);
    }

    #[test]
    fn every_input_changes_the_challenge() {
        let base = {
            let mut t = Transcript::new(b"test");
            t.absorb("x", b"hello");
            t.challenge_ext("alpha")
        };
        let variants = [
            (&b"other"[..], "x", &b"hello"[..], "alpha"),
            (b"test", "y", b"hello", "alpha"),
            (b"test", "x", b"hellp", "alpha"),
            (b"test", "x", b"hello", "beta"),
        ];
        for (domain, label, msg, challenge) in variants {
            let mut t = Transcript::new(domain);
            t.absorb(label, msg);
            assert_ne!(t.challenge_ext(challenge), base);
        }
        // Length prefixes: moving a byte between label and message changes the state.
        let mut t1 = Transcript::new(b"test");
        t1.absorb("xh", b"ello");
        let mut t2 = Transcript::new(b"test");
        t2.absorb("x", b"hello");
        assert_ne!(t1.state(), t2.state());
    }

    #[test]
    fn indices_stay_in_range_and_vary() {
        let mut t = Transcript::new(b"test");
        let indices = t.challenge_indices("queries", 200, 10);
        assert!(indices.iter().all(|&i| i < 1024));
        let distinct: std::collections::BTreeSet<_> = indices.iter().collect();
        assert!(
            distinct.len() > 150,
            "200 draws from 1024 should rarely collide"
        );
        assert!(t.challenge_indices("q", 5, 0).iter().all(|&i| i == 0));
    }
}
