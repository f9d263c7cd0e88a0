//! The transcript AIR against real children: every permutation their verifier made
//! satisfies it, it proves and verifies, and its public inputs are the child's challenges in
//! the order it read them (α, z, γ, each β, then the query draws, whose low bits are the
//! positions). Each rule is its own constraint: a step that adds other values, a public
//! input other than the value read or the work word, the transcript's step taken for the
//! work copy's, or its state kept across the copy changed are refused at their row by it; a
//! work word short of the grinding bits is refused by the links; no periodic column holds a
//! read; steps no honest transcript made have no trace, a work word checked before the transcript's first permutation or over
//! two permutations is taken, and bad shapes are named.

mod common;

use common::{
    any_security, assert_one_definition, fibonacci, has_layer_degrees, layer_params, layer_proves,
    params, poseidon2_chain, proven, statement,
};

use ballast_air::{Air, AirError, ConstraintInfo, check_trace};
use ballast_field::{Ext3, Felt, RowBlocks};
use ballast_poseidon2::RATE;
use ballast_poseidon2::constants::WIDTH as STATE_CELLS;
use ballast_recursion::{
    Child, LayerError, LinkError, TRANSCRIPT_SAVED, TranscriptAir, TranscriptError,
};
use ballast_stark::{MerkleHash, Replay, StarkParams, TableAir, Workload, label, replay};
use ballast_transcript::{StepKind, Transcript, TranscriptStep};
use ballast_workloads::Poseidon2Chain;

/// A child's first segment proven with `pow_bits` of grinding, and its verifier's replay.
struct Proven {
    log_rows: usize,
    params: StarkParams,
    replay: Replay,
    steps: Vec<TranscriptStep>,
    segment: Child,
}

impl Proven {
    fn of<W: Workload>(workload: &W, pow_bits: u32) -> Self {
        let params = StarkParams {
            pow_bits,
            ..params()
        };
        let (proof, public) = proven(workload, &params);
        let air = workload.air(0);
        let replay = replay(&air, &proof, &statement(&public), &params, &any_security())
            .expect("the child verifies");
        let steps = replay.transcript.clone().expect("a Poseidon2 transcript");
        let segment =
            Child::of_segment(&air, &proof, &statement(&public), &params, &any_security())
                .expect("the layer takes the child");
        assert_eq!(segment.transcript.trace(), air_of(&steps, pow_bits).trace());
        Self {
            log_rows: workload.log_rows(),
            params,
            replay,
            steps,
            segment,
        }
    }

    fn air(&self) -> TranscriptAir {
        air_of(&self.steps, self.params.pow_bits)
    }

    /// Everything the transcript's own duplex read, in order.
    fn reads(&self) -> Vec<Felt> {
        self.steps
            .iter()
            .filter(|s| s.kind == StepKind::Transcript)
            .flat_map(|s| s.step.read.clone())
            .collect()
    }

    /// The steps of the (one) work word's copy.
    fn work(&self) -> std::ops::Range<usize> {
        let start = self.kind_at(StepKind::WorkStart);
        let end = (start + 1..self.steps.len())
            .find(|&k| self.steps[k].kind != StepKind::Work)
            .unwrap();
        start..end
    }

    fn kind_at(&self, kind: StepKind) -> usize {
        self.steps.iter().position(|s| s.kind == kind).unwrap()
    }
}

fn air_of(steps: &[TranscriptStep], pow_bits: u32) -> TranscriptAir {
    TranscriptAir::new(steps, pow_bits).expect("the AIR takes the steps")
}

/// The first failing (row, constraint) of `table` under `air` and its public inputs, or none.
fn failure(air: &TranscriptAir, table: &RowBlocks) -> Option<(usize, usize)> {
    failure_with(air, table, &air.public_inputs())
}

/// The first failing (row, constraint) of `table` under `air` and `public`, or none.
fn failure_with(air: &TranscriptAir, table: &RowBlocks, public: &[Felt]) -> Option<(usize, usize)> {
    match check_trace(air, table, public) {
        Ok(()) => None,
        Err(AirError::Unsatisfied { row, constraint }) => Some((row, constraint)),
        Err(other) => panic!("not a constraint failure: {other}"),
    }
}

/// Where each rule's constraints start: after the permutation's, per state cell its first
/// row's input and saved state, then its transition's; then each read cell's (as many as
/// the longest read, the work words' among cell 0's).
struct Rules {
    permutation: usize,
}

/// Each state cell's four link constraints come in turn.
const LINKS: usize = 4 * STATE_CELLS;

impl Rules {
    fn of(air: &TranscriptAir, steps: &[TranscriptStep]) -> Self {
        let total = ConstraintInfo::of(air).unwrap().constraints.len();
        let read_cells = steps
            .iter()
            .filter(|s| s.kind == StepKind::Transcript)
            .map(|s| s.step.read.len())
            .max()
            .unwrap_or(0);
        Self {
            permutation: total - LINKS - read_cells,
        }
    }
    fn first_input(&self, cell: usize) -> usize {
        self.permutation + 4 * cell
    }
    fn first_saved(&self, cell: usize) -> usize {
        self.permutation + 4 * cell + 1
    }
    fn next_input(&self, cell: usize) -> usize {
        self.permutation + 4 * cell + 2
    }
    fn next_saved(&self, cell: usize) -> usize {
        self.permutation + 4 * cell + 3
    }
    fn read(&self, cell: usize) -> usize {
        self.permutation + LINKS + cell
    }
}

#[test]
fn a_childs_transcript_proves_and_reads_its_challenges() {
    for child in [
        Proven::of(&fibonacci(5), 0),
        Proven::of(&poseidon2_chain(), 8),
    ] {
        let air = child.air();
        let mut table = air.trace().unwrap();
        let public = air.public_inputs();
        assert_eq!(check_trace(&air, &table, &public), Ok(()));
        assert!(has_layer_degrees(&air));
        assert_eq!(layer_proves(&air, &mut table, &public), Ok(()));
        // The reads, then the data: every cell the duplex logged as data, in order, the
        // transcript's own, then the work copy's; then the work words, cell 0 of each work
        // copy's read.
        let (reads, rest) = public.split_at(air.reads());
        let (data, words) = rest.split_at(air.word_inputs().start - air.reads());
        let work_words: Vec<Felt> = (child.steps.iter())
            .filter(|s| s.kind != StepKind::Transcript && !s.step.read.is_empty())
            .map(|s| s.step.read[0])
            .collect();
        assert_eq!(words, work_words);
        assert_eq!(reads, child.reads());
        let own = |s: &&TranscriptStep| s.kind == StepKind::Transcript;
        let logged: Vec<Felt> = (child.steps.iter().filter(own))
            .chain(child.steps.iter().filter(|s| !own(s)))
            .flat_map(|s| {
                (0..RATE)
                    .filter(|&i| s.step.data[i])
                    .map(|i| s.step.added[i])
            })
            .collect();
        assert_eq!(data, logged);
        // α, z, γ, each β, then the query draws: their low bits are the positions, in the
        // order the query AIR opens them.
        let ext = |k: usize| Ext3::new(reads[3 * k..3 * k + 3].try_into().unwrap());
        assert_eq!(ext(0), child.replay.alpha);
        assert_eq!(ext(1), child.replay.deep.z);
        assert_eq!(ext(2), child.replay.gamma);
        let betas: Vec<Ext3> = (0..child.replay.betas.len()).map(|k| ext(3 + k)).collect();
        assert_eq!(betas, child.replay.betas);
        let challenges = 3 * (3 + betas.len());
        assert_eq!(reads.len(), challenges + child.params.num_queries);
        // No periodic column holds a read or a datum of 32 bits or more (a root, a claim):
        // only the schedule's flags and the framing.
        let periodic = air.periodic_columns();
        for value in public.iter().filter(|v| v.as_u64() >> 32 != 0) {
            assert!(!periodic.iter().any(|c| c.values.contains(value)));
        }
        let log_lde = child.log_rows + child.params.log_blowup;
        let draws = &reads[challenges..];
        let positions: Vec<usize> = draws
            .iter()
            .map(|d| (d.as_u64() & ((1 << log_lde) - 1)) as usize)
            .collect();
        assert_eq!(positions, child.replay.draws);
    }
}

#[test]
fn a_layers_transcript_proves_as_a_childs_does() {
    // The transcript of a layer's verifier (one proof of its tables, committed with
    // Poseidon2), for a layer over it: every permutation satisfies the AIR, which proves;
    // its reads are α, z, γ, each β, then the draws, whose low bits are the layer's
    // positions; and the AIR built from the layer's shape alone is this one's definition.
    let child = Proven::of(&poseidon2_chain(), 8);
    let params = StarkParams {
        pow_bits: 4,
        ..layer_params()
    };
    let layer = child.segment.prove(&params).expect("the layer proves");
    let transcript = child.segment.layer_transcript(&layer, &params).unwrap();
    let steps = transcript.expect("a Poseidon2 transcript").steps;
    let air = air_of(&steps, params.pow_bits);
    let mut table = air.trace().unwrap();
    let public = air.public_inputs();
    assert_eq!(check_trace(&air, &table, &public), Ok(()));
    assert_eq!(layer_proves(&air, &mut table, &public), Ok(()));

    let reads = &public[..air.reads()];
    let rounds = (reads.len() - params.num_queries) / 3 - 3;
    assert!(rounds >= 1, "FRI folds the layer's tables");
    assert_eq!(reads.len(), 3 * (3 + rounds) + params.num_queries);
    let tallest = [
        child.segment.transcript.log_rows(),
        child.segment.identity.log_rows(),
        child.segment.queries.air.log_rows(),
    ];
    let log_lde = tallest.into_iter().max().unwrap() + params.log_blowup;
    let mut positions: Vec<usize> = reads[reads.len() - params.num_queries..]
        .iter()
        .map(|d| (d.as_u64() & ((1 << log_lde) - 1)) as usize)
        .collect();
    positions.sort_unstable();
    positions.dedup();
    assert_eq!(positions, layer.tables.queries.positions);

    let shape = child.segment.layer_transcript_layout(&params).unwrap();
    let shape = air_of(
        &shape.expect("a Poseidon2 transcript").steps,
        params.pow_bits,
    );
    assert_one_definition(&air, &shape, [public, shape.public_inputs()]);
    // A layer committed with Keccak-256 has no such transcript.
    let keccak = StarkParams {
        hash: MerkleHash::Keccak256,
        ..params
    };
    let layer = child.segment.prove(&keccak).expect("the layer proves");
    assert_eq!(
        child.segment.layer_transcript(&layer, &keccak).unwrap(),
        None
    );
}

#[test]
fn the_query_airs_inputs_are_what_the_transcript_read_and_absorbed() {
    // A child of two FRI rounds.
    let child = Proven::of(&fibonacci(8), 0);
    let segment = &child.segment;
    let honest = segment.transcript.public_inputs();
    assert_eq!(segment.check_links(&honest), Ok(()));
    let rounds = child.replay.betas.len();
    assert_eq!(rounds, 2);
    // Built from the transcript AIR's inputs, the query AIR's are the ones the child's
    // proof gives.
    let built = |inputs: &[Felt]| segment.query_inputs(inputs);
    let from_honest = built(&honest).unwrap();
    assert_eq!(from_honest, segment.queries.public_inputs().unwrap());
    // Where they hold each value: a root a tree (the trace's, the quotient's, each
    // round's), the positions' digest, then γ, z, the DEEP sums a and b, each β and the
    // final polynomial.
    let digest = 4 * (2 + rounds);
    let (gamma, z, sums, betas) = (digest + 4, digest + 7, digest + 10, digest + 16);
    // Each read or datum the query AIR takes, changed in the transcript's inputs: the
    // values built from it move, and no other.
    let moved = |at: usize| -> Vec<usize> {
        let mut inputs = honest.clone();
        inputs[at] += Felt::ONE;
        let changed = built(&inputs).unwrap();
        (0..from_honest.len())
            .filter(|&k| changed[k] != from_honest[k])
            .collect()
    };
    let only = |at: usize, first: usize, within: std::ops::Range<usize>, what: &str| {
        let moved = moved(at);
        assert!(moved.contains(&first), "{what}: {moved:?}");
        assert!(
            moved.iter().all(|k| within.contains(k)),
            "{what}: {moved:?}"
        );
    };
    let datum = |label: &str, k: usize| {
        let message = segment.messages.iter().find(|m| m.label == label).unwrap();
        segment.transcript.reads() + message.data.start + k
    };
    // γ and z (reads 6 and 3) move themselves and the sums they weigh; each β itself.
    for c in 0..3 {
        only(6 + c, gamma + c, gamma..sums + 6, "γ");
        only(3 + c, z + c, gamma..sums + 6, "z");
    }
    for k in 0..rounds {
        let beta = betas + 3 * k + 1;
        only(9 + 3 * k + 1, beta, beta..beta + 1, "β");
    }
    // The roots, a claim of each list (the DEEP sums alone) and the final polynomial's last
    // coefficient.
    only(datum(label::TRACE_ROOT, 3), 3, 3..4, "trace root");
    only(datum(label::QUOTIENT_ROOT, 0), 4, 4..5, "quotient root");
    let fri_root = segment
        .messages
        .iter()
        .filter(|m| m.label == ballast_fri::label::LAYER_ROOT)
        .nth(1)
        .unwrap();
    let second = segment.transcript.reads() + fri_root.data.start + 2;
    only(second, 4 * 3 + 2, 14..15, "second FRI root");
    // A trace value at z and a quotient value weigh into a, a trace value at zω into b.
    for (label, k, first) in [
        (label::OOD_TRACE_Z, 1, sums),
        (label::OOD_TRACE_ZW, 5, sums + 3),
        (label::OOD_QUOTIENT_Z, 2, sums),
    ] {
        only(datum(label, k), first, sums..sums + 6, label);
    }
    let last = from_honest.len() - 1;
    let final_poly = segment
        .messages
        .iter()
        .find(|m| m.label == ballast_fri::label::FINAL_POLY)
        .unwrap();
    let final_at = segment.transcript.reads() + final_poly.data.end - 1;
    only(final_at, last, last..last + 1, "final polynomial");
    // A list whose length is not the one it leads with, or a layout without its message.
    let mut inputs = honest.clone();
    inputs[datum(label::OOD_TRACE_Z, 0)] += Felt::ONE;
    assert!(matches!(
        built(&inputs),
        Err(LayerError::Links(LinkError::ListLength {
            label: label::OOD_TRACE_Z
        }))
    ));
    let mut other = segment.clone();
    other.messages.retain(|m| m.label != label::OOD_QUOTIENT_Z);
    assert!(matches!(
        other.query_inputs(&honest),
        Err(LayerError::Links(LinkError::NoMessage {
            label: label::OOD_QUOTIENT_Z
        }))
    ));
}

#[test]
fn the_transcripts_inputs_link_to_the_statement_and_the_layout() {
    let child = Proven::of(&fibonacci(8), 0);
    let segment = &child.segment;
    let honest = segment.transcript.public_inputs();
    assert_eq!(segment.check_links(&honest), Ok(()));
    let changed = |at: usize| {
        let mut inputs = honest.clone();
        inputs[at] += Felt::ONE;
        segment.check_links(&inputs)
    };
    let statement = Err(LinkError::Differs {
        air: "transcript",
        what: "statement",
    });
    // The statement's data: the protocol's version, the first datum, and its public inputs.
    let first = segment.transcript.reads();
    assert_eq!(changed(first), statement);
    let public = segment
        .messages
        .iter()
        .find(|m| m.label == label::PUBLIC_INPUTS)
        .unwrap();
    assert_eq!(changed(first + public.data.start + 2), statement);
    // Inputs of another length.
    let mut short = honest.clone();
    short.pop();
    assert_eq!(
        segment.check_links(&short),
        Err(LinkError::Length {
            what: "the transcript AIR's public inputs",
            expected: honest.len(),
            got: honest.len() - 1,
        })
    );
    // A layout whose message no link checks, or that places fewer data than there are.
    let mut renamed = segment.clone();
    let trace_root = renamed
        .messages
        .iter_mut()
        .find(|m| m.label == label::TRACE_ROOT)
        .unwrap();
    trace_root.label = "another root".into();
    assert_eq!(
        renamed.check_links(&honest),
        Err(LinkError::Unlinked {
            label: "another root".into()
        })
    );
    let mut short = segment.clone();
    let last = short.messages.pop().unwrap();
    assert_eq!(
        short.check_links(&honest),
        Err(LinkError::Length {
            what: "the data the transcript's layout places",
            expected: last.data.end,
            got: short.messages.last().unwrap().data.end,
        })
    );
}

#[test]
fn the_work_copy_takes_the_transcripts_data_and_its_nonce() {
    // The copy's data: the transcript's data pending when it forked (the final
    // polynomial's last), then the nonce, which the transcript absorbs next.
    let child = Proven::of(&poseidon2_chain(), 8);
    let segment = &child.segment;
    let honest = segment.transcript.public_inputs();
    assert_eq!(segment.check_links(&honest), Ok(()));
    let work = segment.transcript.work_inputs();
    assert!(work.len() > 2, "pending data and the nonce's halves");
    let differs = |what| {
        Err(LinkError::Differs {
            air: "transcript",
            what,
        })
    };
    let changed = |k: usize| {
        let mut inputs = honest.clone();
        inputs[k] += Felt::ONE;
        segment.check_links(&inputs)
    };
    assert_eq!(changed(work.start), differs("work copy's pending data"));
    assert_eq!(changed(work.end - 1), differs("work nonce"));
    let nonce = segment
        .messages
        .iter()
        .find(|m| m.label == label::POW_NONCE)
        .unwrap();
    let own_nonce = segment.transcript.reads() + nonce.data.start;
    assert_eq!(changed(own_nonce), differs("work nonce"));
}

#[test]
fn the_air_is_the_childs_shape() {
    // Two children of one shape, whose every root, claim and challenge differ: one AIR
    // definition (name, rows, width, periodic and public columns, constraints), other public
    // inputs.
    let other = Poseidon2Chain {
        seed: [5, 6, 7, 8].map(Felt::new),
        ..poseidon2_chain()
    };
    let [a, b] = [poseidon2_chain(), other].map(|w| Proven::of(&w, 8).air());
    assert_one_definition(&a, &b, [a.public_inputs(), b.public_inputs()]);
}

#[test]
fn the_key_binds_the_steps_shape_by_its_source() {
    // Its columns are built from each step's kind, reads, data cells and framing alone: the
    // key binds those by its source, and not the data or the reads, which are inputs.
    let steps = |data: u64, label: &str| {
        let mut t = Transcript::new(MerkleHash::Poseidon2, b"keyed");
        t.absorb_felts(label, &[Felt::new(data); 11]);
        t.challenge_ext("c");
        assert!(t.check_pow(0, data));
        t.absorb_u64("after", data);
        t.challenge_indices("q", 3, 5);
        t.steps().unwrap()
    };
    let key = |steps: &[TranscriptStep]| {
        let air = air_of(steps, 0);
        TableAir::key(&air, &TableAir::info(&air).unwrap())
    };
    // A label long enough that one step adds framing alone.
    let label = "a label long enough to fill a block of the rate with framing";
    let base = steps(1, label);
    let other = steps(2, label);
    assert_ne!(
        air_of(&base, 0).public_inputs(),
        air_of(&other, 0).public_inputs()
    );
    assert_eq!(key(&base), key(&other));
    let relabelled = label.replace("rate", "rats");
    assert_ne!(key(&base), key(&steps(1, &relabelled)), "a label's framing");
    // Changes that keep every column's length and count of cells.
    let changed = |change: &dyn Fn(&mut [TranscriptStep])| {
        let mut changed = base.clone();
        change(&mut changed);
        let counts = |steps: &[TranscriptStep]| -> (Vec<usize>, usize) {
            let air = air_of(steps, 0);
            let cells = air.public_columns().iter().map(|c| c.cells.len()).collect();
            (cells, air.num_public_inputs())
        };
        assert_eq!(counts(&changed), counts(&base));
        key(&changed)
    };
    let reading = base.iter().position(|s| !s.step.read.is_empty()).unwrap();
    let unread = |s: &TranscriptStep| s.kind == StepKind::Transcript && s.step.read.is_empty();
    let later = reading + base[reading..].iter().position(unread).unwrap();
    let silent = |s: &TranscriptStep| s.step.read.is_empty() && !s.step.data.contains(&true);
    let quiet = base.iter().position(silent).unwrap();
    assert_ne!(
        key(&base),
        changed(&|s| {
            let read = std::mem::take(&mut s[reading].step.read);
            s[later].step.read = read;
        }),
        "a read on another row"
    );
    assert_ne!(
        key(&base),
        changed(&|s| s[quiet].kind = StepKind::Work),
        "a step's kind"
    );
    assert_ne!(
        key(&base),
        changed(&|s| s[quiet].step.added[7] += Felt::ONE),
        "a step's framing"
    );
}

#[test]
fn a_work_word_short_of_the_bits_has_no_trace() {
    let child = Proven::of(&poseidon2_chain(), 8);
    let word_step = child.work().end - 1;
    let word = child.steps[word_step].step.read[0].as_u64();
    let bits = word.leading_zeros() + 1;
    assert_eq!(
        air_of(&child.steps, bits).trace().unwrap_err(),
        TranscriptError::Work {
            step: word_step,
            bits
        }
    );
}

#[test]
fn each_rule_is_its_own_constraint() {
    let child = Proven::of(&poseidon2_chain(), 8);
    let air = child.air();
    let honest = air.trace().unwrap();
    let rules = Rules::of(&air, &child.steps);
    // The saved state is the last of the columns: the work word is a public input.
    assert_eq!(air.width(), TRANSCRIPT_SAVED + STATE_CELLS);
    let refused = |steps: &[TranscriptStep]| failure(&air_of(steps, 8), &honest);

    // A public input other than the challenge read: refused where it is read; and a step
    // that reads another value than its permutation's has no trace.
    let gamma = child.replay.gamma.coeffs()[0];
    let (gamma_step, cell) = child
        .steps
        .iter()
        .enumerate()
        .find_map(|(k, s)| s.step.read.iter().position(|&v| v == gamma).map(|c| (k, c)))
        .unwrap();
    let mut public = air.public_inputs();
    public[6] += Felt::ONE;
    assert_eq!(
        failure_with(&air, &honest, &public),
        Some((gamma_step, rules.read(cell)))
    );
    // The last draw, read in another cell of another row.
    let mut public = air.public_inputs();
    public[air.reads() - 1] += Felt::ONE;
    let (last_step, last) = child
        .steps
        .iter()
        .enumerate()
        .rev()
        .find(|(_, s)| s.kind == StepKind::Transcript && !s.step.read.is_empty())
        .unwrap();
    assert_eq!(
        failure_with(&air, &honest, &public),
        Some((last_step, rules.read(last.step.read.len() - 1)))
    );
    let mut steps = child.steps.clone();
    steps[gamma_step].step.read[cell] += Felt::ONE;
    assert_eq!(
        air_of(&steps, 8).trace().unwrap_err(),
        TranscriptError::Read { step: gamma_step }
    );

    // A message other than the child's, its framing (a periodic column) or its data (a
    // public input): refused on the row before the step that adds it (the first row's own
    // for step 0).
    // Step 0 holds the domain's framing; step `mixed`, the first after it that does, holds
    // framing in one cell and data in another.
    let flags = |step: usize| child.steps[step].step.data;
    let mixed = (1..child.steps.len())
        .find(|&k| flags(k).contains(&true) && flags(k).contains(&false))
        .unwrap();
    let framing = flags(mixed).iter().position(|&d| !d).unwrap();
    let datum = flags(mixed).iter().position(|&d| d).unwrap();
    for (step, cell) in [(0, 0), (mixed, framing), (mixed, datum)] {
        let mut steps = child.steps.clone();
        steps[step].step.added[cell] += Felt::ONE;
        let expected = if step == 0 {
            (0, rules.first_input(cell))
        } else {
            (step - 1, rules.next_input(cell))
        };
        assert_eq!(refused(&steps), Some(expected), "step {step}, cell {cell}");
    }
    // The same datum changed in the public inputs alone.
    assert!(
        child.steps[..=mixed]
            .iter()
            .all(|s| s.kind == StepKind::Transcript)
    );
    let input = air.reads()
        + (0..mixed)
            .map(|k| flags(k).iter().filter(|&&d| d).count())
            .sum::<usize>();
    let mut public = air.public_inputs();
    public[input] += Felt::ONE;
    assert_eq!(
        failure_with(&air, &honest, &public),
        Some((mixed - 1, rules.next_input(datum)))
    );

    // The transcript's next permutation taken for the work copy's: it would continue from
    // the work word's state, not the transcript's.
    let work = child.work();
    let mut steps = child.steps.clone();
    steps[work.end].kind = StepKind::Work;
    assert_eq!(refused(&steps), Some((work.end - 1, rules.next_input(0))));

    // The transcript's state kept across the work copy, changed: refused where it is kept.
    let mut kept = honest.clone();
    let saved = kept.get(work.end, TRANSCRIPT_SAVED);
    kept.set(work.end, TRANSCRIPT_SAVED, saved + Felt::ONE);
    assert_eq!(
        failure(&air, &kept),
        Some((work.end - 1, rules.next_saved(0)))
    );

    // The work word: another in the public inputs is refused at its row, by cell 0's read.
    let word_row = work.end - 1;
    let words = air.word_inputs();
    assert_eq!(words.len(), 1);
    let mut public = air.public_inputs();
    assert_eq!(public[words.start], child.steps[word_row].step.read[0]);
    public[words.start] += Felt::ONE;
    assert_eq!(
        failure_with(&air, &honest, &public),
        Some((word_row, rules.read(0)))
    );
}

#[test]
fn a_work_word_short_of_the_bits_is_refused_by_the_links() {
    let child = Proven::of(&poseidon2_chain(), 8);
    let segment = &child.segment;
    let honest = segment.transcript.public_inputs();
    let words = segment.transcript.word_inputs();
    let word = honest[words.start];
    assert!(word.as_u64().leading_zeros() >= 8);
    let mut short = honest.clone();
    // 2^56 has 7 leading zeros, one short of the 8 bits.
    short[words.start] = Felt::new(1 << 56);
    assert_eq!(
        segment.check_links(&short),
        Err(LinkError::Work(TranscriptError::WorkInput {
            input: words.start,
            bits: 8
        }))
    );
    short[words.start] = Felt::new((1 << 56) - 1);
    assert_eq!(segment.check_links(&short), Ok(()));
}

#[test]
fn a_work_word_before_any_permutation_starts_from_the_start_state() {
    // The domain's few elements fill no block: the work copy permutes first, and the
    // transcript resumes from the start state the first row keeps.
    let mut t = Transcript::new(MerkleHash::Poseidon2, b"early");
    assert!(t.check_pow(0, 5));
    t.absorb("x", b"after the work");
    t.challenge_ext("c");
    let steps = t.steps().unwrap();
    assert_eq!(steps[0].kind, StepKind::WorkStart);
    let air = air_of(&steps, 0);
    let honest = air.trace().unwrap();
    assert_eq!(check_trace(&air, &honest, &air.public_inputs()), Ok(()));
    let mut moved = honest.clone();
    moved.set(
        0,
        TRANSCRIPT_SAVED,
        moved.get(0, TRANSCRIPT_SAVED) + Felt::ONE,
    );
    let rules = Rules::of(&air, &steps);
    assert_eq!(failure(&air, &moved), Some((0, rules.first_saved(0))));
    // The first step's data (the nonce, the first work datum, after the transcript's own)
    // is the first row's: changed in the public inputs, refused there.
    let cell = steps[0].step.data.iter().position(|&d| d).unwrap();
    let own: usize = (steps.iter().filter(|s| s.kind == StepKind::Transcript))
        .map(|s| s.step.data.iter().filter(|&&d| d).count())
        .sum();
    let mut public = air.public_inputs();
    public[air.reads() + own] += Felt::ONE;
    assert_eq!(
        failure_with(&air, &honest, &public),
        Some((0, rules.first_input(cell)))
    );
}

#[test]
fn a_work_word_of_two_permutations_continues_from_the_first() {
    // 7 elements pending: the work message's kind fills the block, so the nonce's halves
    // permute again; then a second word at once, from the transcript's state.
    let mut t = Transcript::new(MerkleHash::Poseidon2, b"x");
    t.absorb_u64("", 1);
    assert!(t.check_pow(0, 5) && t.check_pow(0, 6));
    t.challenge_ext("c");
    let steps = t.steps().unwrap();
    let kinds: Vec<StepKind> = steps.iter().map(|s| s.kind).collect();
    use StepKind::{Work, WorkStart};
    assert_eq!(kinds[..4], [WorkStart, Work, WorkStart, Work]);
    let air = air_of(&steps, 0);
    let honest = air.trace().unwrap();
    assert_eq!(check_trace(&air, &honest, &air.public_inputs()), Ok(()));
    assert_eq!(
        layer_proves(&air, &mut honest.clone(), &air.public_inputs()),
        Ok(())
    );
    // The second permutation taken for a new word's start: it would start from the
    // transcript's state, not the first's output.
    let mut restarted = steps.clone();
    restarted[1].kind = WorkStart;
    let rules = Rules::of(&air, &steps);
    assert_eq!(
        failure(&air_of(&restarted, 0), &honest),
        Some((0, rules.next_input(0)))
    );
}

#[test]
fn bad_shapes_are_named() {
    let child = Proven::of(&fibonacci(5), 0);
    assert_eq!(
        TranscriptAir::new(&[], 0).unwrap_err(),
        TranscriptError::NoSteps
    );
    assert_eq!(
        TranscriptAir::new(&child.steps, 64).unwrap_err(),
        TranscriptError::TooManyBits { bits: 64 }
    );
    let mut long = child.steps.clone();
    long[2].step.read = vec![Felt::ZERO; 9];
    assert_eq!(
        TranscriptAir::new(&long, 0).unwrap_err(),
        TranscriptError::LongRead { step: 2, read: 9 }
    );
    let no_work: Vec<TranscriptStep> = child
        .steps
        .iter()
        .filter(|s| s.kind == StepKind::Transcript)
        .cloned()
        .collect();
    assert_eq!(
        TranscriptAir::new(&no_work, 3).unwrap_err(),
        TranscriptError::NoWork { bits: 3 }
    );
    // A Keccak-256 child has no duplex to record.
    let keccak = StarkParams {
        hash: MerkleHash::Keccak256,
        ..params()
    };
    let workload = fibonacci(5);
    let (proof, public) = proven(&workload, &keccak);
    let replayed = replay(
        &workload.air(0),
        &proof,
        &statement(&public),
        &keccak,
        &any_security(),
    )
    .unwrap();
    assert_eq!(replayed.transcript, None);
}
