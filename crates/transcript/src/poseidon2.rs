//! The transcript of a Poseidon2 proof: messages encoded as field elements and absorbed
//! into a [`Duplex`], challenges squeezed from it.
//!
//! Every message is self-delimiting: its kind, its label (length, then 7 bytes an element),
//! then a payload whose length its kind fixes or whose first element gives. So the
//! elements absorbed before any squeeze decode to exactly one sequence of messages, and
//! each challenge is the duplex's output on a different input (`docs/protocol.md` §6,
//! item 12). A message's kind and label are framing, fixed by the protocol's order, and so
//! is a challenge's count; a message's payload (and a work word's nonce) is absorbed as
//! data ([`Duplex::absorb_data`]), so a verifier AIR can take the data as inputs and the
//! framing as its shape.

use ballast_field::Felt;
use ballast_keccak::Digest;
use ballast_poseidon2::constants::WIDTH;
use ballast_poseidon2::{Duplex, DuplexStep, permute};

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

/// A duplex fed with the transcript's messages, and the work words checked on copies of it.
#[derive(Clone, Debug)]
pub(crate) struct DuplexChain {
    duplex: Duplex,
    /// Each message absorbed, and where its payload is among the data.
    messages: Vec<Message>,
    /// The data absorbed so far: the messages' payloads, in order.
    data: Vec<Felt>,
    /// Each work word checked: the duplex's permutations before it, and its copy's own.
    work: Vec<(usize, Vec<DuplexStep>)>,
}

/// Chains are equal when their duplexes are: the work words checked are a record of what
/// was asked of the chain, not its state (a prover grinds, a verifier checks).
impl PartialEq for DuplexChain {
    fn eq(&self, other: &Self) -> bool {
        self.duplex == other.duplex
    }
}

impl Eq for DuplexChain {}

/// A message of a Poseidon2 transcript, as [`Transcript::messages`](crate::Transcript::messages)
/// lists them: its label and where its payload is among the data the transcript's own
/// duplex absorbed, in order (the cells its log marks as data; a work word's nonce, on a
/// copy, is not among them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// The label it was absorbed under.
    pub label: String,
    /// Its payload's place among the data.
    pub data: std::ops::Range<usize>,
}

/// A permutation of a Poseidon2 transcript, as [`Transcript::steps`](crate::Transcript::steps)
/// lists them: what it added and read, and which duplex it permuted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TranscriptStep {
    /// What the permutation added to the rate and read from it.
    pub step: DuplexStep,
    /// Which duplex it permuted.
    pub kind: StepKind,
}

/// Which duplex a [`TranscriptStep`] permuted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepKind {
    /// The transcript's own: its input is the previous such step's output.
    Transcript,
    /// A copy of the transcript's, for a nonce's work word: its input is the transcript's
    /// last output (the start state before any).
    WorkStart,
    /// The same copy again: its input is the previous step's output.
    Work,
}

/// The state each step permuted: the start state or the output it continues from (its
/// kind says which), with what it added in the rate.
pub fn step_inputs(steps: &[TranscriptStep]) -> Vec<[Felt; WIDTH]> {
    let mut inputs = Vec::with_capacity(steps.len());
    let (mut transcript, mut previous) = (Duplex::start(), Duplex::start());
    for step in steps {
        let mut input = match step.kind {
            StepKind::Transcript | StepKind::WorkStart => transcript,
            StepKind::Work => previous,
        };
        for (cell, added) in input.iter_mut().zip(step.step.added) {
            *cell += added;
        }
        inputs.push(input);
        previous = input;
        permute(&mut previous);
        if step.kind == StepKind::Transcript {
            transcript = previous;
        }
    }
    inputs
}

impl DuplexChain {
    /// A chain bound to `domain` on `duplex`, a new one ([`Duplex::new`] or
    /// [`Duplex::shape`]).
    pub(crate) fn new(domain: &[u8], duplex: Duplex) -> Self {
        let mut chain = Self {
            duplex,
            messages: Vec::new(),
            data: Vec::new(),
            work: Vec::new(),
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
        self.frame(Kind::Challenge, label);
        self.duplex.absorb(&[Felt::new(count as u64)]);
        self.duplex.squeeze(count)
    }

    /// The first element squeezed after the message `Work ‖ nonce`, as a word, and the
    /// copy of the duplex that squeezed it; the chain itself is left as it is.
    pub(crate) fn work_duplex(&self, nonce: u64) -> (u64, Duplex) {
        let mut duplex = self.duplex.fork();
        duplex.absorb(&[Felt::new(Kind::Work as u64)]);
        duplex.absorb_data(&word(nonce));
        (duplex.squeeze(1)[0].as_u64(), duplex)
    }

    /// `nonce`'s work word, recorded for [`steps`](Self::steps).
    pub(crate) fn check_work(&mut self, nonce: u64) -> u64 {
        let (word, duplex) = self.work_duplex(nonce);
        self.work
            .push((self.duplex.log().len(), duplex.log().to_vec()));
        word
    }

    /// Every permutation so far, the work words' in the order they were checked.
    pub(crate) fn steps(&self) -> Vec<TranscriptStep> {
        let log = self.duplex.log();
        let mut steps = Vec::with_capacity(log.len());
        let mut done = 0;
        let transcript = |step: &DuplexStep| TranscriptStep {
            step: step.clone(),
            kind: StepKind::Transcript,
        };
        for (before, work) in &self.work {
            steps.extend(log[done..*before].iter().map(transcript));
            done = *before;
            steps.extend(work.iter().enumerate().map(|(k, step)| TranscriptStep {
                step: step.clone(),
                kind: if k == 0 {
                    StepKind::WorkStart
                } else {
                    StepKind::Work
                },
            }));
        }
        steps.extend(log[done..].iter().map(transcript));
        steps
    }

    /// Every message absorbed so far, in order.
    pub(crate) fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// The data absorbed so far.
    pub(crate) fn data(&self) -> &[Felt] {
        &self.data
    }

    /// The duplex once the work message's kind is absorbed, as cells and the rate cell the
    /// nonce's low half is added to ([`Duplex::continuation`]).
    pub(crate) fn work_state(&self) -> ([Felt; WIDTH], usize) {
        let mut duplex = self.duplex.fork();
        duplex.absorb(&[Felt::new(Kind::Work as u64)]);
        duplex.continuation()
    }

    fn message(&mut self, kind: Kind, label: &str, payload: &[Felt]) {
        self.frame(kind, label);
        self.duplex.absorb_data(payload);
        let start = self.data.len();
        self.data.extend_from_slice(payload);
        self.messages.push(Message {
            label: label.to_owned(),
            data: start..self.data.len(),
        });
    }

    /// A message's framing: its kind and label.
    fn frame(&mut self, kind: Kind, label: &str) {
        self.absorb_kind(kind);
        self.duplex.absorb(&bytes(label.as_bytes()));
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

#[cfg(test)]
mod tests {
    use super::*;
    use ballast_poseidon2::RATE;

    /// Each step's output, from [`step_inputs`].
    fn outputs(steps: &[TranscriptStep]) -> Vec<[Felt; WIDTH]> {
        step_inputs(steps)
            .into_iter()
            .map(|mut state| {
                permute(&mut state);
                state
            })
            .collect()
    }

    #[test]
    fn each_message_is_placed_among_the_data_the_log_marks() {
        let mut chain = DuplexChain::new(b"messages", Duplex::new());
        chain.absorb_word("w", 7);
        chain.absorb_felts("f", &[Felt::new(5); 9]);
        chain.squeeze("c", 2);
        chain.check_work(3);
        chain.absorb_bytes("b", b"sixteen bytes..!");
        chain.squeeze("d", 1);
        let placed: Vec<(&str, std::ops::Range<usize>)> = chain
            .messages()
            .iter()
            .map(|m| (m.label.as_str(), m.data.clone()))
            .collect();
        // A challenge's count is framing: no message of its own.
        assert_eq!(placed, [("w", 0..2), ("f", 2..12), ("b", 12..16)]);
        // The data cells of the transcript's own steps, in order, are the payloads; the work
        // copy's are the nonce's halves.
        let steps = chain.steps();
        let data = |own: bool| -> Vec<u64> {
            let kind = |s: &&TranscriptStep| (s.kind == StepKind::Transcript) == own;
            let cells = steps.iter().filter(kind).flat_map(|s| {
                (0..RATE)
                    .filter(|&i| s.step.data[i])
                    .map(|i| s.step.added[i].as_u64())
            });
            cells.collect()
        };
        let mut expected = vec![7, 0, 9];
        expected.extend([5; 9]);
        expected.extend(bytes(b"sixteen bytes..!").iter().map(|f| f.as_u64()));
        assert_eq!(data(true), expected);
        let kept: Vec<u64> = chain.data().iter().map(|f| f.as_u64()).collect();
        assert_eq!(kept, expected);
        assert_eq!(data(false), [3, 0]);
    }

    #[test]
    fn the_steps_recompute_every_read_and_work_word() {
        let mut chain = DuplexChain::new(b"steps", Duplex::new());
        chain.absorb_felts("a", &[Felt::new(3); 13]);
        let first = chain.squeeze("c", 11);
        let word = chain.check_work(98);
        // A second word checked at once starts from the transcript, not the first word.
        let word = [word, chain.check_work(99)];
        chain.absorb_word("n", 99);
        let second = chain.squeeze("d", 2);
        let steps = chain.steps();
        let kinds: Vec<StepKind> = steps.iter().map(|s| s.kind).collect();
        let work = kinds
            .iter()
            .position(|&k| k == StepKind::WorkStart)
            .unwrap();
        assert_eq!(
            kinds.iter().filter(|&&k| k == StepKind::WorkStart).count(),
            2
        );
        let out = outputs(&steps);
        let mut read = Vec::new();
        for (k, step) in steps.iter().enumerate() {
            assert_eq!(
                step.step.read[..],
                out[k][..step.step.read.len()],
                "step {k}"
            );
            if step.kind == StepKind::Transcript {
                read.extend_from_slice(&step.step.read);
            }
        }
        assert_eq!(read, [first, second].concat());
        let words: Vec<Felt> = steps
            .iter()
            .filter(|s| s.kind != StepKind::Transcript)
            .flat_map(|s| s.step.read.clone())
            .collect();
        assert_eq!(words, word.map(Felt::new));
        // A step's kind matters: the work's first step read as the transcript's own.
        let mut wrong = steps.clone();
        wrong[work].kind = StepKind::Transcript;
        assert_ne!(outputs(&wrong).last(), outputs(&steps).last());
    }
}
