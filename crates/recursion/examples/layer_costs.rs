//! What one layer costs: a Poseidon2-chain segment of 2^`LOG_ROWS` rows (default 14) proven
//! with Poseidon2 trees at 128 bits provable (JBR), then a layer's proof of it (one proof of
//! its three AIRs' tables) at blowups 8 to 32 as a layer another verifies (Poseidon2), then
//! at 8 to 64 as the last (Keccak-256), each with the fewest queries that give it 128 bits
//! provable (`Child::layer_params`, [`LAYERS`]). Prints the tables' shapes, then a
//! Markdown table, a row a proof as it is made: each proof's time, the layer's verifier's
//! time (`verify_layer`, the median of 5) and each proof's bytes in the proof format (the
//! layer's: `Child::layer_record`, a `TablesRecord`), in all and by what they are
//! spent on.
//!
//! `cargo run --release -p ballast-recursion --example layer_costs [-- LOG_ROWS]`
//! (`RAYON_NUM_THREADS` sets the threads).

use std::process::ExitCode;
use std::time::{Duration, Instant};

use ballast_air::Air;
use ballast_field::Felt;
use ballast_recursion::{Child, LAYER_AIRS, LayerRole, verify_layer};
use ballast_stark::{
    CpuBackend, MerkleHash, PhaseTimes, Proof, Regime, Section, SegmentPosition, SegmentProof,
    SegmentStatement, StarkParams, TablesRecord, VerifyPolicy, Workload, prove,
};
use ballast_workloads::Poseidon2Chain;

/// The security every proof here has, in bits provable (JBR).
const TARGET: u32 = 128;

/// The layers' roles, log2 blowups and grinding bits: from blowup 8, the smallest their
/// degree-7 constraints take, as a layer another verifies (Poseidon2), then as the last,
/// committed with Keccak-256 (it is verified natively alone), whose cheap hashing also
/// affords blowup 64 and grinding to `MAX_POW_BITS`.
const LAYERS: [(LayerRole, usize, u32); 11] = [
    (LayerRole::Inner, 3, 20),
    (LayerRole::Inner, 4, 22),
    (LayerRole::Inner, 5, 22),
    (LayerRole::Last(MerkleHash::Keccak256), 3, 20),
    (LayerRole::Last(MerkleHash::Keccak256), 4, 22),
    (LayerRole::Last(MerkleHash::Keccak256), 5, 22),
    (LayerRole::Last(MerkleHash::Keccak256), 5, 30),
    (LayerRole::Last(MerkleHash::Keccak256), 6, 22),
    (LayerRole::Last(MerkleHash::Keccak256), 6, 26),
    (LayerRole::Last(MerkleHash::Keccak256), 6, 28),
    (LayerRole::Last(MerkleHash::Keccak256), 6, 30),
];

fn main() -> ExitCode {
    let log_rows = match std::env::args().nth(1).map(|a| a.parse::<usize>()) {
        None => 14,
        Some(Ok(n)) if (4..=20).contains(&n) => n,
        Some(_) => {
            eprintln!("layer_costs: LOG_ROWS is a whole number from 4 to 20");
            return ExitCode::from(2);
        }
    };
    match run(log_rows) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("layer_costs: {err}");
            ExitCode::FAILURE
        }
    }
}

fn run(log_rows: usize) -> Result<(), Box<dyn std::error::Error>> {
    let chain = Poseidon2Chain {
        seed: [1, 2, 3, 4].map(Felt::new),
        steps: 1 << log_rows,
        log_rows,
    };
    let air = chain.air(0);
    let start = chain.start();
    let (mut table, end) = chain.trace_table(0, &start);
    let public = chain.public_inputs(0, &start, &end);
    let statement = SegmentStatement {
        context: b"ballast layer example",
        position: SegmentPosition { index: 0, count: 1 },
        public_inputs: &public,
    };
    let child_params = StarkParams {
        hash: MerkleHash::Poseidon2,
        ..StarkParams::for_security(&air, TARGET, Regime::Jbr)?
    };
    let policy = VerifyPolicy::default();
    let backend = CpuBackend::new();

    let (child, child_time) = timed(|| {
        prove(
            &air,
            &mut table,
            &statement,
            &child_params,
            &backend,
            &mut PhaseTimes::default(),
        )
    });
    let child = child?;
    let (segment, replay_time) =
        timed(|| Child::of_segment(&air, &child, &statement, &child_params, &policy));
    let segment = segment?;

    let (transcript, identity, queries) =
        (&segment.transcript, &segment.identity, &segment.queries.air);
    let shapes = [
        (transcript.log_rows(), transcript.width()),
        (identity.log_rows(), identity.width()),
        (queries.log_rows(), queries.width()),
    ];
    let shapes: Vec<String> = LAYER_AIRS
        .iter()
        .zip(shapes)
        .map(|(name, (log_rows, width))| format!("{name} 2^{log_rows} × {width}"))
        .collect();
    println!("The layer's tables: {}.\n", shapes.join(", "));
    println!(
        "| proof | blowup / queries / grinding | prove | verify | bytes | {} |",
        PARTS.join(" | "),
    );
    println!("|---|---|---|---|---|{}", "---|".repeat(PARTS.len()));
    let child_bytes = bytes(&chain, &child_params, &child);
    println!(
        "| child, 2^{log_rows} × {} | {} | {} | | {} | {} |",
        air.width(),
        shown(&child_params),
        seconds(child_time),
        total(child_bytes.iter().sum()),
        child_bytes.map(kib).join(" | "),
    );
    for (role, log_blowup, pow_bits) in LAYERS {
        let params = segment.layer_params(log_blowup, pow_bits, TARGET, Regime::Jbr, role)?;
        let (layer, prove_time) = timed(|| segment.prove(&params));
        let layer = layer?;
        let mut verify_times = (0..5)
            .map(|_| {
                let (verified, time) = timed(|| {
                    verify_layer(&air, &statement, &child_params, &layer, &params, &policy)
                });
                verified.map(|_| time)
            })
            .collect::<Result<Vec<_>, _>>()?;
        verify_times.sort();
        let encoded = segment.layer_record(&layer, &params)?.to_bytes();
        let parts = parts(TablesRecord::from_bytes(&encoded)?.sections());
        println!(
            "| layer, {} | {} | {} (replay {}) | {:.1} ms | {} | {} |",
            params.hash,
            shown(&params),
            seconds(prove_time),
            seconds(replay_time),
            verify_times[verify_times.len() / 2].as_secs_f64() * 1e3,
            total(parts.iter().sum()),
            parts.map(kib).join(" | "),
        );
    }
    Ok(())
}

/// What a proof's bytes are spent on, by the sections of the format that hold them.
const PARTS: [&str; 7] = [
    "trace rows",
    "quotient rows",
    "paths",
    "FRI values",
    "public inputs",
    "claims at z, zω",
    "other",
];

/// `proof`'s bytes in the proof format, by [`PARTS`]: those of the segment sections of a
/// proof whose one segment it is.
fn bytes(
    chain: &Poseidon2Chain,
    params: &StarkParams,
    proof: &SegmentProof,
) -> [usize; PARTS.len()] {
    let whole = Proof {
        params: *params,
        workload: *chain,
        first: 0,
        states: vec![chain.start(); 2],
        segments: vec![proof.clone()],
    };
    parts(whole.sections().into_iter().filter(|s| s.segment.is_some()))
}

/// The bytes of `sections` by [`PARTS`].
fn parts(sections: impl IntoIterator<Item = Section>) -> [usize; PARTS.len()] {
    let mut parts = [0; PARTS.len()];
    for section in sections {
        let part = match section.name {
            "trace rows" => 0,
            "quotient rows" => 1,
            name if name.ends_with("opening") => 2,
            "fri layer values" => 3,
            "public inputs" => 4,
            "ood trace z" | "ood trace zw" | "ood quotient z" => 5,
            _ => 6,
        };
        parts[part] += section.range.len();
    }
    parts
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let out = f();
    (out, start.elapsed())
}

fn shown(params: &StarkParams) -> String {
    format!(
        "{} / {} / {}",
        1 << params.log_blowup,
        params.num_queries,
        params.pow_bits
    )
}

fn seconds(time: Duration) -> String {
    format!("{:.2} s", time.as_secs_f64())
}

fn kib(bytes: usize) -> String {
    format!("{:.0} KiB", bytes as f64 / 1024.0)
}

/// A proof's whole size: in KiB, and in bytes, against a bound in KiB.
fn total(bytes: usize) -> String {
    format!("{} ({bytes} B)", kib(bytes))
}
