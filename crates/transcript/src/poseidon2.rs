//! The transcript of a Poseidon2 proof: messages encoded as field elements and absorbed
//! into a [`Duplex`], challenges squeezed from it.
//!
//! Every message is self-delimiting: its kind, its label (length, then 7 bytes an element),
//! then a payload whose length its kind fixes or whose first element gives. So the
//! elements absorbed before any squeeze decode to exactly one sequence of messages, and
//! each challenge is the duplex's output on a different input (`docs/protocol.md` §6,
//! item 12).

use ballast_field::Felt;
use ballast_keccak::Digest;
use ballast_poseidon2::Duplex;
use ballast_poseidon2::constants::WIDTH;

/// A message's first element, so that messages of different kinds never read alike.
#[derive(Clone, Copy)]
enum Kind {
    /// The protocol's domain separator, first of all.
    Domain = 1,
    /// Bytes: their length, then 7 a element.
    Bytes = 2,
    /// A 64-bit word: its low and high 32 bits.
    Word = 3,
    /// Field elements: their number, then each.
    Felts = 4,
    /// A Merkle root: its 4 elements.
    Digest = 5,
    /// A challenge: the number of elements drawn; the duplex is squeezed after it.
    Challenge = 6,
    /// A proof-of-work nonce (a word), squeezed after it on a copy of the duplex.
    Work = 7,
}

/// Bytes packed into one element (7 · 8 = 56 bits < 64: every packing is canonical).
const BYTES_PER_ELEMENT: usize = 7;

/// A duplex fed with the transcript's messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DuplexChain {
    duplex: Duplex,
}

impl DuplexChain {
    pub(crate) fn new(domain: &[u8]) -> Self {
        let mut chain = Self {
            duplex: Duplex::new(),
        };
        chain.absorb_kind(Kind::Domain);
        chain.duplex.absorb(&bytes(domain));
        chain
    }

    pub(crate) fn absorb_bytes(&mut self, label: &str, payload: &[u8]) {
        self.message(Kind::Bytes, label, &bytes(payload));
    }

    pub(crate) fn absorb_word(&mut self, label: &str, value: u64) {
        self.message(Kind::Word, label, &word(value));
    }

    pub(crate) fn absorb_felts(&mut self, label: &str, values: &[Felt]) {
        let mut payload = Vec::with_capacity(values.len() + 1);
        payload.push(Felt::new(values.len() as u64));
        payload.extend_from_slice(values);
        self.message(Kind::Felts, label, &payload);
    }

    /// A root's 4 little-endian words as elements. A word that is not canonical is reduced:
    /// such a root is no Poseidon2 digest (a proof carrying one is refused when decoded, and
    /// no opening against it verifies).
    pub(crate) fn absorb_digest(&mut self, label: &str, root: &Digest) {
        let elements = root
            .as_chunks::<8>()
            .0
            .iter()
            .map(|w| Felt::new(u64::from_le_bytes(*w)))
            .collect::<Vec<_>>();
        self.message(Kind::Digest, label, &elements);
    }

    /// `count` elements for the challenge named `label`.
    pub(crate) fn squeeze(&mut self, label: &str, count: usize) -> Vec<Felt> {
        self.message(Kind::Challenge, label, &[Felt::new(count as u64)]);
        self.duplex.squeeze(count)
    }

    /// The first element squeezed after the message `Work ‖ nonce`, as a word; the chain
    /// itself is left as it is.
    pub(crate) fn work(&self, nonce: u64) -> u64 {
        let mut duplex = self.duplex.clone();
        duplex.absorb(&[Felt::new(Kind::Work as u64)]);
        duplex.absorb(&word(nonce));
        duplex.squeeze(1)[0].as_u64()
    }

    /// The duplex once the work message's kind is absorbed, as cells and the rate cell the
    /// nonce's low half is added to ([`Duplex::continuation`]).
    pub(crate) fn work_state(&self) -> ([Felt; WIDTH], usize) {
        let mut duplex = self.duplex.clone();
        duplex.absorb(&[Felt::new(Kind::Work as u64)]);
        duplex.continuation()
    }

    fn message(&mut self, kind: Kind, label: &str, payload: &[Felt]) {
        self.absorb_kind(kind);
        self.duplex.absorb(&bytes(label.as_bytes()));
        self.duplex.absorb(payload);
    }

    fn absorb_kind(&mut self, kind: Kind) {
        self.duplex.absorb(&[Felt::new(kind as u64)]);
    }
}

/// Bytes as elements: their length, then 7 bytes an element, little-endian, the last one
/// short.
fn bytes(bytes: &[u8]) -> Vec<Felt> {
    std::iter::once(Felt::new(bytes.len() as u64))
        .chain(bytes.chunks(BYTES_PER_ELEMENT).map(|chunk| {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            Felt::new(u64::from_le_bytes(word))
        }))
        .collect()
}

/// A word as two elements, its low then its high 32 bits.
fn word(value: u64) -> [Felt; 2] {
    [Felt::new(value & 0xffff_ffff), Felt::new(value >> 32)]
}
