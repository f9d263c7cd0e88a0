//! What one layer costs: a Poseidon2-chain segment of 2^`LOG_ROWS` rows (default 14) proven
//! with Poseidon2 trees at 128 bits provable (JBR), then a layer's proof of it at blowups 2
//! to 32, each layer's queries the fewest that give all three of its AIRs 128 bits provable.
//! Prints a Markdown table, a row a proof as it is made: each proof's time, the layer's
//! verifier's time (the median of 5) and each proof's bytes in the proof format, the layer's
//! by AIR (a row each, with its shape), and what they are spent on. Then the same three
//! tables as one proof (`ballast_stark::prove_tables`: mixed-height trees, one FRI with
//! roll-ins) at the same blowup and grinding and the fewest queries that give the one proof
//! 128 bits provable (`TablesCircuit`): its time, `verify_tables`' time and its bytes,
//! counted at the proof format's item sizes (it has no format of its own yet).
//!
//! `cargo run --release -p ballast-recursion --example layer_costs [-- LOG_ROWS]`
//! (`RAYON_NUM_THREADS` sets the threads).

use std::process::ExitCode;
use std::time::{Duration, Instant};

use ballast_air::Air;
use ballast_field::{Ext3, Felt};
use ballast_merkle::Digest;
use ballast_recursion::{ChildSegment, LAYER_AIRS, LAYER_CONTEXT, verify_layer};
use ballast_stark::{
    Circuit, CpuBackend, MerkleHash, ParamsError, PhaseTimes, Proof, Regime, SegmentPosition,
    SegmentProof, SegmentStatement, StarkParams, TableAir, TableStatement, TablesCircuit,
    TablesProof, VerifyPolicy, Workload, prove, prove_tables, verify_tables,
};
use ballast_workloads::Poseidon2Chain;

/// The security every proof here has, in bits provable (JBR).
const TARGET: u32 = 128;

/// The layers' (log2 blowup, grinding bits).
const LAYERS: [(usize, u32); 5] = [(1, 16), (2, 18), (3, 20), (4, 22), (5, 22)];

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
        timed(|| ChildSegment::of(&air, &child, &statement, &child_params, &policy));
    let segment = segment?;

    println!(
        "| proof | blowup / queries / grinding | prove | verify | bytes | {} | {} |",
        LAYER_AIRS.join(" | "),
        PARTS.join(" | "),
    );
    println!(
        "|---|---|---|---|---|---|---|---|{}",
        "---|".repeat(PARTS.len())
    );
    let child_bytes = bytes(&chain, &child_params, &child);
    println!(
        "| child, 2^{log_rows} × {} | {} | {} | | {} | | | | {} |",
        air.width(),
        shown(&child_params),
        seconds(child_time),
        kib(child_bytes.iter().sum()),
        child_bytes.map(kib).join(" | "),
    );
    for (log_blowup, pow_bits) in LAYERS {
        let params = layer_params(&segment, log_blowup, pow_bits)?;
        let (layer, prove_time) = timed(|| segment.prove(&params, &backend));
        let layer = layer?;
        let mut verify_times = (0..5)
            .map(|_| {
                let (verified, time) = timed(|| {
                    verify_layer(&air, &statement, &child_params, &layer, &params, &policy)
                });
                verified.map(|()| time)
            })
            .collect::<Result<Vec<_>, _>>()?;
        verify_times.sort();
        // Each AIR's parts, its public inputs among the other bytes.
        let by_air = [&layer.transcript, &layer.identity, &layer.queries]
            .map(|p| bytes(&chain, &params, p))
            .into_iter()
            .zip(layer.inputs.by_air())
            .map(|(mut parts, inputs)| {
                parts[PARTS.len() - 1] += 8 * inputs.len();
                parts
            })
            .collect::<Vec<_>>();
        let mut parts = [0; PARTS.len()];
        for air in &by_air {
            for (sum, n) in parts.iter_mut().zip(air) {
                *sum += n;
            }
        }
        println!(
            "| layer | {} | {} (replay {}) | {:.1} ms | {} | {} | {} |",
            shown(&params),
            seconds(prove_time),
            seconds(replay_time),
            verify_times[verify_times.len() / 2].as_secs_f64() * 1e3,
            kib(parts.iter().sum()),
            by_air
                .iter()
                .map(|air| kib(air.iter().sum()))
                .collect::<Vec<_>>()
                .join(" | "),
            parts.map(kib).join(" | "),
        );
        let shapes = [
            (segment.transcript.log_rows(), segment.transcript.width()),
            (segment.identity.log_rows(), segment.identity.width()),
            (segment.queries.air.log_rows(), segment.queries.air.width()),
        ];
        for ((name, (log_rows, width)), air) in LAYER_AIRS.iter().zip(shapes).zip(&by_air) {
            println!(
                "| {name} AIR, 2^{log_rows} × {width} | | | | {} | | | | {} |",
                kib(air.iter().sum()),
                air.map(kib).join(" | "),
            );
        }
        one_proof(&segment, &params, &policy)?;
    }
    Ok(())
}

/// Proves the layer's three tables as one proof at `layer`'s blowup and grinding and the
/// fewest queries that give it [`TARGET`] bits, verifies it five times and prints its row.
fn one_proof(
    segment: &ChildSegment,
    layer: &StarkParams,
    policy: &VerifyPolicy,
) -> Result<(), Box<dyn std::error::Error>> {
    let inputs = segment.public_inputs()?;
    let airs: [&dyn TableAir; 3] = [&segment.queries.air, &segment.identity, &segment.transcript];
    let public = [&inputs.queries, &inputs.identity, &inputs.transcript];
    let tables: Vec<TableStatement<'_>> = airs
        .into_iter()
        .zip(public)
        .map(|(air, public_inputs)| TableStatement { air, public_inputs })
        .collect();
    let params = &TablesCircuit::for_target(&airs, layer, TARGET, Regime::Jbr)?.tables[0].params;
    let mut traces = vec![
        segment.queries.trace()?,
        segment.identity.trace()?,
        segment.transcript.trace()?,
    ];
    let (proof, prove_time) = timed(|| prove_tables(LAYER_CONTEXT, &tables, &mut traces, params));
    let proof = proof?;
    let mut verify_times = (0..5)
        .map(|_| {
            let (verified, time) =
                timed(|| verify_tables(LAYER_CONTEXT, &tables, &proof, params, policy));
            verified.map(|()| time)
        })
        .collect::<Result<Vec<_>, _>>()?;
    verify_times.sort();
    let mut parts = tables_bytes(&proof);
    parts[PARTS.len() - 1] += 8 * public.iter().map(|p| p.len()).sum::<usize>();
    println!(
        "| layer, one proof of its tables | {} | {} | {:.1} ms | {} | | | | {} |",
        shown(params),
        seconds(prove_time),
        verify_times[verify_times.len() / 2].as_secs_f64() * 1e3,
        kib(parts.iter().sum()),
        parts.map(kib).join(" | "),
    );
    Ok(())
}

/// A tables proof's bytes by [`PARTS`], at the sizes the proof format gives its items: an
/// element's, a digest's, 8 the nonce, 2 the query count and 4 a position.
fn tables_bytes(proof: &TablesProof) -> [usize; PARTS.len()] {
    let (felt, ext, digest) = (Felt::BYTES, Ext3::BYTES, size_of::<Digest>());
    let q = &proof.queries;
    let fri_nodes: usize = q.fri.iter().map(|l| l.nodes.len()).sum();
    let fri_values: usize = q.fri.iter().map(|l| l.values.len()).sum();
    let claims: usize = proof
        .ood
        .iter()
        .map(|o| o.trace_z.len() + o.trace_zw.len() + o.quotient_z.len())
        .sum();
    [
        felt * q.trace_rows.len(),
        felt * q.quotient_rows.len(),
        digest * (q.trace_nodes.len() + q.quotient_nodes.len() + fri_nodes),
        ext * fri_values,
        digest * (2 + proof.fri_roots.len())
            + ext * (claims + proof.final_poly.len())
            + 8
            + 2
            + 4 * q.positions.len(),
    ]
}

/// The layer's parameters at this blowup and grinding: the fewest queries that give each of
/// its AIRs [`TARGET`] bits, and the final polynomial its shortest AIR takes.
fn layer_params(
    segment: &ChildSegment,
    log_blowup: usize,
    pow_bits: u32,
) -> Result<StarkParams, ParamsError> {
    let params = |log_rows: usize| StarkParams {
        log_blowup,
        num_queries: 1,
        pow_bits,
        log_final_poly_len: StarkParams::DEFAULT_LOG_FINAL_POLY_LEN.min(log_rows),
        hash: MerkleHash::Poseidon2,
    };
    fn queries<A: Air>(air: &A, params: &StarkParams) -> Result<usize, ParamsError> {
        Circuit::for_target(air, params, TARGET, Regime::Jbr).map(|c| c.params.num_queries)
    }
    let (transcript, identity, query) =
        (&segment.transcript, &segment.identity, &segment.queries.air);
    let num_queries = queries(transcript, &params(transcript.log_rows()))?
        .max(queries(identity, &params(identity.log_rows()))?)
        .max(queries(query, &params(query.log_rows()))?);
    let shortest = transcript
        .log_rows()
        .min(identity.log_rows())
        .min(query.log_rows());
    Ok(StarkParams {
        num_queries,
        ..params(shortest)
    })
}

/// What a proof's bytes are spent on, by the sections of the format that hold them.
const PARTS: [&str; 5] = [
    "trace rows",
    "quotient rows",
    "paths",
    "FRI values",
    "other",
];

/// `proof`'s bytes in the proof format, by [`PARTS`]: those of the segment sections of a
/// proof whose one segment it is (a layer's public inputs are its own, other).
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
    let mut parts = [0; PARTS.len()];
    for section in whole.sections().into_iter().filter(|s| s.segment.is_some()) {
        let part = match section.name {
            "trace rows" => 0,
            "quotient rows" => 1,
            name if name.ends_with("opening") => 2,
            "fri layer values" => 3,
            _ => 4,
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
