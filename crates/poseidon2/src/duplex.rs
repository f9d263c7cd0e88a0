//! A duplex sponge over the permutation: a Fiat–Shamir transcript's state when a proof
//! hashes with Poseidon2.
//!
//! Input is added into the [`RATE`] cells a block at a time, the permutation applied between
//! blocks; a squeeze ends the current block (its unwritten cells count as zeros), permutes,
//! and reads the rate, permuting again for each further block. So every block of output is
//! the rate after absorbing one block string: what was absorbed, zero-filled to a block
//! boundary at each squeeze, plus a zero block per further output block. The duplex starts
//! with 1 in a capacity cell that no Merkle leaf or node starts with, so (the permutation
//! modelled as ideal) it is independent of the tree hashes (`docs/protocol.md` §6, item 12).
//! Its input must be self-delimiting (the transcript's messages are): trailing zeros of a
//! block are not told apart from the fill.
//!
//! A duplex keeps a log of its permutations: what each added to the rate (and which of it
//! was data, [`Duplex::absorb_data`], rather than a message's framing) and read from it,
//! all a verifier AIR needs to recompute the transcript without the permutation's states.
//! A [`shape`](Duplex::shape) duplex keeps that log and permutes nothing: what a layout needs.

use ballast_field::Felt;

use crate::constants::WIDTH;
use crate::permutation::permute;
use crate::sponge::RATE;

/// The capacity cell that marks a duplex, set in its initial state.
const DUPLEX_CELL: usize = RATE + 2;

/// A duplex sponge's state: the permutation's cells and how far the current block is
/// filled, and its log.
#[derive(Clone, Debug)]
pub struct Duplex {
    state: [Felt; WIDTH],
    /// Rate cells of the current block written so far (the next one written is this one).
    filled: usize,
    /// What was added to each rate cell since the last permutation.
    added: [Felt; RATE],
    /// Which of those cells hold data.
    data: [bool; RATE],
    log: Vec<DuplexStep>,
    /// Whether a step permutes; a [`shape`](Self::shape) duplex's zeroes the state instead.
    permutes: bool,
}

/// One permutation of a duplex, as its log keeps it: the input is the previous output (or
/// the start state) with `added` added to the rate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DuplexStep {
    /// What was added to each rate cell since the previous permutation.
    pub added: [Felt; RATE],
    /// Which cells of `added` came from [`Duplex::absorb_data`].
    pub data: [bool; RATE],
    /// The rate cells read from its output, in order (a squeeze's; none for an absorb's).
    pub read: Vec<Felt>,
}

/// Duplexes are equal when their states are, so that they draw alike; the log is a record
/// of how they got there.
impl PartialEq for Duplex {
    fn eq(&self, other: &Self) -> bool {
        (self.state, self.filled) == (other.state, other.filled)
    }
}

impl Eq for Duplex {}

impl Default for Duplex {
    fn default() -> Self {
        Self::new()
    }
}

impl Duplex {
    /// A duplex with nothing absorbed.
    pub fn new() -> Self {
        let mut state = [Felt::ZERO; WIDTH];
        state[DUPLEX_CELL] = Felt::ONE;
        Self {
            state,
            filled: 0,
            added: [Felt::ZERO; RATE],
            data: [false; RATE],
            log: Vec::new(),
            permutes: true,
        }
    }

    /// A duplex that logs every step as [`new`](Self::new)'s does (what was added, which of
    /// it was data, how many cells were read) but permutes nothing: each step zeroes the
    /// state, so every read is zero. What any input of the same shape logs, at no
    /// permutation's cost.
    pub fn shape() -> Self {
        Self {
            permutes: false,
            ..Self::new()
        }
    }

    /// The state a duplex starts from.
    pub fn start() -> [Felt; WIDTH] {
        Self::new().state
    }

    /// A duplex that continues from this one's state with an empty log.
    pub fn fork(&self) -> Self {
        Self {
            state: self.state,
            filled: self.filled,
            added: self.added,
            data: self.data,
            log: Vec::new(),
            permutes: self.permutes,
        }
    }

    /// The permutations so far, in order.
    pub fn log(&self) -> &[DuplexStep] {
        &self.log
    }

    /// Adds `elements` into the rate in order, permuting whenever a block is full and more
    /// input follows.
    pub fn absorb(&mut self, elements: &[Felt]) {
        self.absorb_marked(elements, false);
    }

    /// [`absorb`](Self::absorb), its cells logged as data: what changes from one proof to
    /// another (a message's payload), where the rest is framing its shape fixes.
    pub fn absorb_data(&mut self, elements: &[Felt]) {
        self.absorb_marked(elements, true);
    }

    fn absorb_marked(&mut self, elements: &[Felt], data: bool) {
        for &element in elements {
            if self.filled == RATE {
                self.step(0);
                self.filled = 0;
            }
            self.state[self.filled] += element;
            self.added[self.filled] += element;
            self.data[self.filled] = data;
            self.filled += 1;
        }
    }

    /// The cells, and the rate cell the next element is added to, with a full block
    /// permuted first as the next absorb would: what a device continues the duplex from.
    pub fn continuation(&self) -> ([Felt; WIDTH], usize) {
        let mut state = self.state;
        if self.filled == RATE {
            self.permute(&mut state);
            return (state, 0);
        }
        (state, self.filled)
    }

    /// Ends the current block and reads `count` elements, [`RATE`] a block, permuting before
    /// each block (at least once, so a squeeze of nothing still ends the block).
    pub fn squeeze(&mut self, count: usize) -> Vec<Felt> {
        let mut out = Vec::with_capacity(count);
        loop {
            let take = RATE.min(count - out.len());
            out.extend_from_slice(self.step(take));
            if out.len() == count {
                break;
            }
        }
        self.filled = 0;
        out
    }

    /// Permutes, logging what was added and the first `read` rate cells of the output,
    /// which it returns.
    fn step(&mut self, read: usize) -> &[Felt] {
        let mut state = self.state;
        self.permute(&mut state);
        self.state = state;
        let read = &self.state[..read];
        self.log.push(DuplexStep {
            added: std::mem::replace(&mut self.added, [Felt::ZERO; RATE]),
            data: std::mem::replace(&mut self.data, [false; RATE]),
            read: read.to_vec(),
        });
        read
    }

    /// The permutation, or for a [`shape`](Self::shape) duplex the zero state.
    fn permute(&self, state: &mut [Felt; WIDTH]) {
        if self.permutes {
            permute(state);
        } else {
            *state = [Felt::ZERO; WIDTH];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{compress, hash_elements};

    fn felts(values: impl IntoIterator<Item = u64>) -> Vec<Felt> {
        values.into_iter().map(Felt::new).collect()
    }

    #[test]
    fn absorbing_in_pieces_is_absorbing_at_once() {
        let input = felts(1..=21);
        let mut whole = Duplex::new();
        whole.absorb(&input);
        let mut pieces = Duplex::new();
        for piece in input.chunks(5) {
            pieces.absorb(piece);
        }
        assert_eq!(whole, pieces);
        assert_eq!(whole.squeeze(20), pieces.squeeze(20));
    }

    #[test]
    fn every_element_and_every_squeeze_changes_the_output() {
        let output = |input: &[Felt], first: usize| {
            let mut d = Duplex::new();
            d.absorb(&input[..first]);
            d.squeeze(3);
            d.absorb(&input[first..]);
            d.squeeze(3)
        };
        let input = felts(1..=10);
        let base = output(&input, 4);
        for k in 0..input.len() {
            let mut changed = input.clone();
            changed[k] += Felt::ONE;
            assert_ne!(output(&changed, 4), base, "element {k}");
        }
        assert_ne!(output(&input, 5), base, "the squeeze's position");
        // A block that fills exactly, then a squeeze, is not a full block and a zero block.
        let mut exact = Duplex::new();
        exact.absorb(&felts(1..=8));
        let mut padded = Duplex::new();
        padded.absorb(&felts(1..=8));
        padded.absorb(&[Felt::ZERO]);
        assert_ne!(exact.squeeze(1), padded.squeeze(1));
    }

    #[test]
    fn the_log_marks_data_and_the_state_does_not() {
        let mut marked = Duplex::new();
        marked.absorb(&felts(1..=3));
        marked.absorb_data(&felts(4..=10));
        marked.absorb(&felts([11]));
        let mut plain = Duplex::new();
        plain.absorb(&felts(1..=11));
        assert_eq!(marked, plain);
        assert_eq!(marked.squeeze(1), plain.squeeze(1));
        let data: Vec<[bool; RATE]> = marked.log().iter().map(|s| s.data).collect();
        let (t, f) = (true, false);
        assert_eq!(data, [[f, f, f, t, t, t, t, t], [t, t, f, f, f, f, f, f]]);
        assert!(plain.log().iter().all(|s| s.data == [false; RATE]));
    }

    #[test]
    fn a_long_squeeze_reads_block_after_block() {
        let mut long = Duplex::new();
        long.absorb(&felts([5]));
        let read = long.squeeze(20);
        let mut short = Duplex::new();
        short.absorb(&felts([5]));
        assert_eq!(read[..8], short.squeeze(8)[..]);
        assert_eq!(
            read[8..16],
            short.squeeze(8)[..],
            "a second squeeze is the next block"
        );
        let distinct: std::collections::BTreeSet<u64> = read.iter().map(|f| f.as_u64()).collect();
        assert_eq!(distinct.len(), 20);
    }

    #[test]
    fn the_duplex_starts_apart_from_the_tree_hashes() {
        // The same input through a leaf, a node and the duplex: three different states.
        let input = felts(1..=8);
        let mut d = Duplex::new();
        d.absorb(&input);
        let out = d.squeeze(4);
        assert_ne!(out[..], hash_elements(&input)[..]);
        let (left, right) = input.split_at(4);
        assert_ne!(
            out[..],
            compress(&left.try_into().unwrap(), &right.try_into().unwrap())[..]
        );
    }

    #[test]
    fn a_shape_duplex_logs_as_a_real_one_and_reads_zeros() {
        let run = |mut d: Duplex| {
            d.absorb(&felts(1..=11));
            d.absorb_data(&felts(12..=14));
            let first = d.squeeze(9);
            let fork = d.fork();
            d.absorb(&felts(20..=22));
            let second = d.squeeze(2);
            (d, fork, [first, second].concat())
        };
        let (real, real_fork, real_reads) = run(Duplex::new());
        let (shape, shape_fork, shape_reads) = run(Duplex::shape());
        assert_eq!(shape.log().len(), real.log().len());
        for (s, r) in shape.log().iter().zip(real.log()) {
            assert_eq!(
                (s.added, s.data, s.read.len()),
                (r.added, r.data, r.read.len())
            );
        }
        assert!(shape_reads.iter().all(|&f| f == Felt::ZERO));
        assert!(real_reads.iter().all(|&f| f != Felt::ZERO));
        // A fork of a shape duplex permutes nothing either.
        assert_eq!(
            shape_fork.continuation().0[RATE..],
            [Felt::ZERO; WIDTH - RATE]
        );
        assert_ne!(
            real_fork.continuation().0[RATE..],
            [Felt::ZERO; WIDTH - RATE]
        );
    }

    #[test]
    fn the_log_recomputes_every_read() {
        let mut d = Duplex::new();
        d.absorb(&felts(1..=11));
        let first = d.squeeze(9);
        let fork = d.fork();
        d.absorb(&felts(20..=22));
        let second = d.squeeze(2);
        // 11 elements permute once (at the 9th), 9 read twice, 2 once.
        assert_eq!(d.log().len(), 4);
        let mut state = Duplex::start();
        let mut read = Vec::new();
        for step in d.log() {
            for (cell, added) in state.iter_mut().zip(step.added) {
                *cell += added;
            }
            permute(&mut state);
            assert_eq!(step.read[..], state[..step.read.len()]);
            read.extend_from_slice(&step.read);
        }
        assert_eq!(read, [first, second].concat());
        assert!(fork.log().is_empty());
        assert_eq!(fork.continuation(), {
            let mut again = Duplex::new();
            again.absorb(&felts(1..=11));
            again.squeeze(9);
            again.continuation()
        });
    }

    #[test]
    fn the_duplex_is_pinned() {
        // Guards the construction (start cell, block order, output order) against silent
        // change: challenges that went into proofs must stay the same.
        let mut d = Duplex::new();
        d.absorb(&felts(1..=11));
        let out: Vec<u64> = d.squeeze(9).iter().map(|f| f.as_u64()).collect();
        assert_eq!(
            out,
            [
                380279322286714988,
                1066918079623836393,
                907976019014067385,
                1494791985486496992,
                5074424291571659526,
                2685349077436706663,
                6069819452037434956,
                5867520573392717092,
                9779979855193172060,
            ]
        );
    }
}
