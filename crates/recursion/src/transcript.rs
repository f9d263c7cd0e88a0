//! A child proof's Fiat–Shamir transcript as an AIR: every permutation of its Poseidon2
//! duplex, one a row ([`ballast_poseidon2::air`]), in the order its verifier made them
//! (`ballast_transcript::Transcript::steps`), the work word's among them.
//!
//! Its **public inputs** are what changes from one child proof to another: what the
//! transcript's own squeezes read (the challenges: α, z, γ, each β, the query draws), in
//! the order it read them, then the data its own duplex absorbed (the messages' payloads:
//! the version, the statement, the child AIR's key, the parameters, the position, the
//! public inputs, the roots, the out-of-domain values, the final polynomial, the nonce), in
//! the order it absorbed them (where `ballast_transcript::Message` places each message),
//! then the work copies' (the data pending when a copy forked, then its nonce), then each
//! work word (cell 0 of a work copy's read), which the layer's verifier holds to the
//! grinding bits itself ([`TranscriptAir::check_words`]). These are only as bound as the
//! layer's verifier makes them (`Child::check_links`). The rest
//! of what was added (each message's kind and label, a challenge's count, the domain) is
//! the framing the protocol's order fixes: periodic columns, with the schedule's flags and,
//! for each rate cell, a flag on the rows that read it. The inputs enter by public columns
//! (`ballast_air::PublicColumn`), a rate cell's reads on their rows and its data on the row
//! before the step that adds them, so the AIR's definition, and its key, is the child's
//! shape: where each input sits, not what it is. The constraints make each row's input the
//! state it continues from plus what it added, and its output's read cells the challenges:
//!
//! - row 0 starts from the duplex's start state plus its framing and its data;
//! - a row continues from the row above's output, or from the transcript's last output
//!   (kept in 12 columns that follow the transcript's own rows) where a work word's copy
//!   of the duplex starts or the transcript resumes after it, plus its framing and the
//!   data the public columns hold on the row above;
//! - a reading row's read cells equal the public columns' reads there, and a work word's
//!   row its word's.
//!
//! Rows past the last step continue the transcript, adding and reading nothing. The
//! permutation's constraints have [`SBOX`]'s degree (7), every other one degree at most 3.

use std::borrow::Cow;
use std::sync::OnceLock;

use ballast_air::{Air, ConstraintBuilder, Frame, PeriodicColumn, PublicCell, PublicColumn};
use ballast_field::{Felt, RowBlocks};
use ballast_poseidon2::constants::WIDTH as STATE_CELLS;
use ballast_poseidon2::{Duplex, DuplexStep, RATE, air};
use ballast_transcript::{StepKind, TranscriptStep, meets_work, step_inputs};
use rayon::prelude::*;

use crate::SBOX;

/// Columns: the state the row's permutation starts from.
const INPUT: usize = 0;
/// Columns: the permutation's kept values ([`SBOX`]`.columns()`), its output state
/// last.
const PERMUTATION: usize = INPUT + STATE_CELLS;
/// Columns: the transcript's last output before this row (the start state on row 0), the
/// last ones of the table.
pub const SAVED: usize = PERMUTATION + SBOX.columns();
/// The table's columns.
const WIDTH: usize = SAVED + STATE_CELLS;

/// The most grinding bits a word can be held to: a word of 64 leading zeros is zero.
const MAX_POW_BITS: u32 = 63;

/// Why a transcript cannot be proven as given.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TranscriptError {
    /// No permutation to prove.
    #[error("a transcript without permutations")]
    NoSteps,
    /// More grinding bits than a word holds.
    #[error("{bits} grinding bits: at most {MAX_POW_BITS}")]
    TooManyBits {
        /// The bits asked for.
        bits: u32,
    },
    /// A step reading more than the rate.
    #[error("step {step} reads {read} cells of a rate of {RATE}")]
    LongRead {
        /// The step.
        step: usize,
        /// The cells it reads.
        read: usize,
    },
    /// Grinding bits without a work word to hold to them.
    #[error("{bits} grinding bits but no work word in the transcript")]
    NoWork {
        /// The bits asked for.
        bits: u32,
    },
    /// A step whose recorded read is not its permutation's output: no duplex's log.
    #[error("step {step} reads other values than its permutation gives")]
    Read {
        /// The step.
        step: usize,
    },
    /// A work word with fewer leading zeros than the grinding bits.
    #[error("the work word of step {step} has fewer than {bits} leading zeros")]
    Work {
        /// The step.
        step: usize,
        /// The bits asked for.
        bits: u32,
    },
    /// A work word among the public inputs with fewer leading zeros than the grinding bits.
    #[error("the work word of public input {input} has fewer than {bits} leading zeros")]
    WorkInput {
        /// The public input.
        input: usize,
        /// The bits asked for.
        bits: u32,
    },
}

/// A Poseidon2 transcript's permutations: an [`Air`] whose public inputs are what the
/// transcript read, the data it absorbed and each work word
/// ([`public_inputs`](Self::public_inputs)), the words to be held to `pow_bits` leading
/// zeros by [`check_words`](Self::check_words).
#[derive(Clone, Debug)]
pub struct TranscriptAir {
    /// The steps, then idle ones to fill the table.
    steps: Vec<TranscriptStep>,
    pow_bits: u32,
    schedule: Schedule,
    /// Its periodic columns, written at the first read and lent to the others.
    periodic: OnceLock<Vec<PeriodicColumn>>,
}

/// Where the public inputs enter, from the steps' shape: for each rate cell the inputs it
/// reads and takes as data, each at its row.
#[derive(Clone, Debug)]
struct Schedule {
    /// Each cell's reads, the work words' among cell 0's: the reading row and the input, in
    /// row order.
    reads: [Vec<PublicCell>; RATE],
    /// Each cell's data in a step after the first: the row before the step and the input,
    /// in row order.
    data: [Vec<PublicCell>; RATE],
    /// Each cell's data in the first step: the input.
    first: [Option<usize>; RATE],
    /// How many public inputs: the reads, then the data, then the work words.
    inputs: usize,
    /// How many of them are reads.
    read_inputs: usize,
    /// How many of them are reads or the transcript's own data: the work copies' data follow.
    own_inputs: usize,
    /// How many of them come before the work words, the last ones.
    word_inputs: usize,
}

impl Schedule {
    fn of(steps: &[TranscriptStep]) -> Self {
        let reads_on = |row: usize| match steps[row].kind {
            StepKind::Transcript => steps[row].step.read.len(),
            _ => 0,
        };
        let mut schedule = Self {
            reads: Default::default(),
            data: Default::default(),
            first: [None; RATE],
            inputs: 0,
            read_inputs: 0,
            own_inputs: 0,
            word_inputs: 0,
        };
        for row in 0..steps.len() {
            for cell in 0..reads_on(row) {
                schedule.reads[cell].push(PublicCell {
                    row,
                    input: schedule.inputs,
                });
                schedule.inputs += 1;
            }
        }
        schedule.read_inputs = schedule.inputs;
        let own = |row: &usize| steps[*row].kind == StepKind::Transcript;
        let (transcript, work): (Vec<usize>, Vec<usize>) = (0..steps.len()).partition(own);
        let data_cells = |row: &usize| steps[*row].step.data.iter().filter(|&&d| d).count();
        schedule.own_inputs = schedule.inputs + transcript.iter().map(data_cells).sum::<usize>();
        for row in transcript.into_iter().chain(work) {
            let step = &steps[row];
            for cell in (0..RATE).filter(|&i| step.step.data[i]) {
                match row {
                    0 => schedule.first[cell] = Some(schedule.inputs),
                    _ => schedule.data[cell].push(PublicCell {
                        row: row - 1,
                        input: schedule.inputs,
                    }),
                }
                schedule.inputs += 1;
            }
        }
        schedule.word_inputs = schedule.inputs;
        for row in (0..steps.len()).filter(|&r| is_word(&steps[r])) {
            schedule.reads[0].push(PublicCell {
                row,
                input: schedule.inputs,
            });
            schedule.inputs += 1;
        }
        // The work copies' rows come after the transcript's in input order, not in rows.
        for cells in schedule.reads.iter_mut().chain(&mut schedule.data) {
            cells.sort_unstable_by_key(|cell| cell.row);
        }
        schedule
    }
}

impl TranscriptAir {
    /// The AIR of `steps` (what [`ballast_stark::Replay::transcript`] lists), its work
    /// words to be held to `pow_bits` leading zeros.
    ///
    /// # Errors
    /// No steps, a read longer than the rate, more than 63 bits, or bits without a word.
    pub fn new(steps: &[TranscriptStep], pow_bits: u32) -> Result<Self, TranscriptError> {
        if steps.is_empty() {
            return Err(TranscriptError::NoSteps);
        }
        if pow_bits > MAX_POW_BITS {
            return Err(TranscriptError::TooManyBits { bits: pow_bits });
        }
        if let Some((step, s)) = steps
            .iter()
            .enumerate()
            .find(|(_, s)| s.step.read.len() > RATE)
        {
            return Err(TranscriptError::LongRead {
                step,
                read: s.step.read.len(),
            });
        }
        if pow_bits > 0 && !steps.iter().any(is_word) {
            return Err(TranscriptError::NoWork { bits: pow_bits });
        }
        // At least 2^2 rows, so parameters with a final polynomial of 4 coefficients (the
        // fewest `StarkParams::testing` has) prove it.
        let rows = steps.len().next_power_of_two().max(4);
        let idle = TranscriptStep {
            step: DuplexStep {
                added: [Felt::ZERO; RATE],
                data: [false; RATE],
                read: Vec::new(),
            },
            kind: StepKind::Transcript,
        };
        let mut all = steps.to_vec();
        all.resize(rows, idle);
        Ok(Self {
            schedule: Schedule::of(&all),
            steps: all,
            pow_bits,
            periodic: OnceLock::new(),
        })
    }

    /// The trace: each step's permutation from the state it continues from.
    ///
    /// # Errors
    /// A step that reads other values than its permutation's, or a work word short of the
    /// grinding bits: steps no honest transcript made.
    pub fn trace(&self) -> Result<RowBlocks, TranscriptError> {
        let width = WIDTH;
        let inputs = step_inputs(&self.steps);
        let mut table = vec![Felt::ZERO; self.steps.len() * width];
        let outputs: Vec<[Felt; STATE_CELLS]> = table
            .par_chunks_mut(width)
            .zip(&inputs)
            .map(|(row, input)| {
                row[INPUT..PERMUTATION].copy_from_slice(input);
                air::fill(SBOX, *input, &mut row[PERMUTATION..SAVED])
            })
            .collect();
        let mut saved = Duplex::start();
        for (k, (row, step)) in table.chunks_exact_mut(width).zip(&self.steps).enumerate() {
            let read = &step.step.read;
            if outputs[k][..read.len()] != read[..] {
                return Err(TranscriptError::Read { step: k });
            }
            if is_word(step) && !meets_work(outputs[k][0].as_u64(), self.pow_bits) {
                return Err(TranscriptError::Work {
                    step: k,
                    bits: self.pow_bits,
                });
            }
            row[SAVED..].copy_from_slice(&saved);
            if step.kind == StepKind::Transcript {
                saved = outputs[k];
            }
        }
        Ok(RowBlocks::from_row_vec(width, table))
    }

    /// The public inputs: what the transcript's own squeezes read, in order (α, z, γ, each
    /// β, then the query draws, for a child proof; [`reads`](Self::reads) of them), then
    /// the data its own steps added, in order, then the work copies', then the work words
    /// ([`word_inputs`](Self::word_inputs)).
    pub fn public_inputs(&self) -> Vec<Felt> {
        let schedule = &self.schedule;
        let step = |s: usize| &self.steps[s].step;
        let mut inputs = vec![Felt::ZERO; schedule.inputs];
        for cell in 0..RATE {
            for &PublicCell { row, input } in &schedule.reads[cell] {
                inputs[input] = step(row).read[cell];
            }
            for &PublicCell { row, input } in &schedule.data[cell] {
                inputs[input] = step(row + 1).added[cell];
            }
            if let Some(k) = schedule.first[cell] {
                inputs[k] = step(0).added[cell];
            }
        }
        inputs
    }

    /// How many of the public inputs are reads, the first ones.
    pub fn reads(&self) -> usize {
        self.schedule.read_inputs
    }

    /// Which public inputs are the work copies' data: what each copy's first permutation
    /// took pending from the transcript, then its nonce.
    pub fn work_inputs(&self) -> std::ops::Range<usize> {
        self.schedule.own_inputs..self.schedule.word_inputs
    }

    /// Which public inputs are the work words, the last ones: cell 0 of each work copy's
    /// read, in row order.
    pub fn word_inputs(&self) -> std::ops::Range<usize> {
        self.schedule.word_inputs..self.schedule.inputs
    }

    /// Checks that each work word in `inputs`, the AIR's public inputs, has the grinding
    /// bits' leading zeros: the child verifier's check of the work, which the AIR leaves to
    /// the layer's verifier.
    ///
    /// # Errors
    /// The first word short of the bits, or missing from `inputs`, named by its input.
    pub fn check_words(&self, inputs: &[Felt]) -> Result<(), TranscriptError> {
        match self.word_inputs().find(|&k| {
            !inputs
                .get(k)
                .is_some_and(|w| meets_work(w.as_u64(), self.pow_bits))
        }) {
            Some(input) => Err(TranscriptError::WorkInput {
                input,
                bits: self.pow_bits,
            }),
            None => Ok(()),
        }
    }

    /// Its periodic columns: what each row's next adds to each rate cell (its framing), where
    /// the next row continues from, where the transcript saves, and each cell's reading rows.
    fn write_periodic(&self) -> Vec<PeriodicColumn> {
        let steps = &self.steps;
        let flag = |b: bool| Felt::new(u64::from(b));
        let next = |k: usize| steps.get(k + 1);
        let framing = |s: &TranscriptStep, i: usize| {
            if s.step.data[i] {
                Felt::ZERO
            } else {
                s.step.added[i]
            }
        };
        let mut columns: Vec<PeriodicColumn> = (0..RATE)
            .map(|i| self.column(|k| next(k).map_or(Felt::ZERO, |s| framing(s, i))))
            .collect();
        columns.push(self.column(|k| {
            flag(
                steps[k].kind == StepKind::Transcript
                    || next(k).is_some_and(|s| s.kind == StepKind::Work),
            )
        }));
        columns.push(self.column(|k| flag(steps[k].kind == StepKind::Transcript)));
        for reads in &self.schedule.reads {
            let mut reading = vec![Felt::ZERO; steps.len()];
            for cell in reads {
                reading[cell.row] = Felt::ONE;
            }
            columns.push(PeriodicColumn { values: reading });
        }
        columns
    }

    /// A periodic column of `value(step)` on each step's row.
    fn column(&self, value: impl Fn(usize) -> Felt) -> PeriodicColumn {
        PeriodicColumn {
            values: (0..self.steps.len()).map(value).collect(),
        }
    }
}

/// A step that reads a work word.
fn is_word(step: &TranscriptStep) -> bool {
    step.kind != StepKind::Transcript && !step.step.read.is_empty()
}

// The periodic columns, in `periodic_columns`'s order.
/// What the next row adds to each rate cell.
const NEXT_ADDED: usize = 0;
/// 1 where the next row continues from this row's output, 0 from the saved columns.
const FROM_OUTPUT: usize = NEXT_ADDED + RATE;
/// 1 where this row is the transcript's own: the next row saves its output.
const SAVE: usize = FROM_OUTPUT + 1;
/// 1 where this row reads each rate cell (a work word's row reads cell 0).
const READS: usize = SAVE + 1;
/// The periodic columns; the public ones follow in [`Frame::periodic`].
const PERIODIC: usize = READS + RATE;
// The public columns, in `public_columns`'s order.
/// What each rate cell reads on its reading rows.
const READ: usize = PERIODIC;
/// What the next row takes as data in each rate cell.
const NEXT_DATA: usize = READ + RATE;

impl Air for TranscriptAir {
    fn id(&self) -> &str {
        "ballast/poseidon2-transcript"
    }

    fn width(&self) -> usize {
        WIDTH
    }

    fn log_rows(&self) -> usize {
        self.steps.len().trailing_zeros() as usize
    }

    fn num_public_inputs(&self) -> usize {
        self.schedule.inputs
    }

    fn periodic_columns(&self) -> Cow<'_, [PeriodicColumn]> {
        Cow::Borrowed(self.periodic.get_or_init(|| self.write_periodic()))
    }

    /// What `periodic_columns` and `public_columns` build the columns from: each row's step,
    /// as a word of its kind, its read count and its data cells (a bit each), then the
    /// framing it adds to each of its other rate cells (the data's values are inputs).
    fn columns_source(&self) -> Option<Vec<u8>> {
        let mut words = Vec::with_capacity(self.steps.len() * (RATE + 1));
        for s in &self.steps {
            let kind: u64 = match s.kind {
                StepKind::Transcript => 0,
                StepKind::WorkStart => 1,
                StepKind::Work => 2,
            };
            let data = (0..RATE).fold(0u64, |mask, i| mask | u64::from(s.step.data[i]) << i);
            words.push(kind | (s.step.read.len() as u64) << 8 | data << 16);
            let framing = (0..RATE).filter(|&i| !s.step.data[i]);
            words.extend(framing.map(|i| s.step.added[i].as_u64()));
        }
        Some(words.iter().flat_map(|w| w.to_le_bytes()).collect())
    }

    fn public_columns(&self) -> Cow<'_, [PublicColumn]> {
        let schedule = &self.schedule;
        schedule
            .reads
            .iter()
            .chain(&schedule.data)
            .map(|cells| PublicColumn {
                cells: cells.clone(),
            })
            .collect::<Vec<_>>()
            .into()
    }

    #[inline(always)]
    fn eval<B: ConstraintBuilder>(&self, f: &Frame<'_, B::Expr>, b: &mut B) {
        let (zero, one) = (B::Expr::from(Felt::ZERO), B::Expr::from(Felt::ONE));
        let (cur, next, p) = (f.current, f.next, f.periodic);
        let input: [B::Expr; STATE_CELLS] = std::array::from_fn(|i| cur[INPUT + i]);
        let output = air::eval(b, SBOX, input, &cur[PERMUTATION..SAVED]);
        let (schedule, public) = (&self.schedule, f.public_inputs);
        let start = Duplex::start();
        let first = &self.steps[0].step;
        for i in 0..STATE_CELLS {
            let saved = cur[SAVED + i];
            // Row 0: the start state, plus its framing or its data.
            let (mut first_input, mut next_added) = (B::Expr::from(start[i]), zero);
            if i < RATE {
                first_input += match schedule.first[i] {
                    Some(k) => public[k],
                    None => B::Expr::from(first.added[i]),
                };
                // The next row's: its framing, plus its data.
                next_added = p[NEXT_ADDED + i] + p[NEXT_DATA + i];
            }
            b.first_row(input[i] - first_input);
            b.first_row(saved - B::Expr::from(start[i]));
            let from = p[FROM_OUTPUT] * output[i] + (one - p[FROM_OUTPUT]) * saved;
            b.transition(next[INPUT + i] - from - next_added);
            let kept = p[SAVE] * output[i] + (one - p[SAVE]) * saved;
            b.transition(next[SAVED + i] - kept);
        }
        // Each read cell: on each row that reads it, its public input (a cell no row reads
        // has a flag and a public column of zeros, and no constraint).
        for (i, &cell) in output[..RATE].iter().enumerate() {
            if !schedule.reads[i].is_empty() {
                b.every_row(p[READS + i] * (cell - p[READ + i]));
            }
        }
    }
}
