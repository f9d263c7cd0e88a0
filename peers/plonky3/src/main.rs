//! The Plonky3 0.8.0 peer of `ci/bench-prover.sh`: proves and verifies the statements ballast
//! is measured against, with Plonky3's own crates from crates.io, and prints one JSON line.
//!
//! `p3-bench --air keccak --perms N …`: `p3-keccak-air` over N Keccak-f permutations (24 rows
//! each, padded to a power of two). `p3-bench --air fib --log-rows K …`: 16 Fibonacci
//! sequences (32 columns, first-row, transition and last-row constraints), the statement of
//! ballast's Fibonacci workload. `p3-bench --air poseidon2 --perms N …`: `p3-poseidon2-air`
//! over N width-12 Poseidon2 permutations of pseudo-random states, one a row (248 columns:
//! x⁷ with x³ kept, degree 3; N a power of two), as many as ballast's poseidon2-chain
//! proves in one segment. All over Goldilocks with challenges from the cubic extension
//! X³ − X − 1, Keccak-256 Merkle commitments (Plonky3's u64-lane Keccak sponge, cap 3),
//! FRI with arity up to 8 and no proof of work anywhere.
//!
//! The phases are Plonky3's own tracing spans (`--phases` lists their names), summed per name.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use p3_air::{Air, AirBuilder, BaseAir, WindowAccess};
use p3_challenger::{HashChallenger, SerializingChallenger64};
use p3_commit::ExtensionMmcs;
use p3_dft::Radix2DitParallel;
use p3_field::extension::CubicTrinomialExtensionField;
use p3_field::PrimeCharacteristicRing;
use p3_fri::{FriParameters, TwoAdicFriPcs};
use p3_goldilocks::{GenericPoseidon2LinearLayersGoldilocks, Goldilocks};
use p3_keccak::{Keccak256Hash, KeccakF};
use p3_keccak_air::{KeccakAir, generate_trace_rows};
use p3_matrix::dense::RowMajorMatrix;
use p3_merkle_tree::MerkleTreeMmcs;
use p3_poseidon2_air::{Poseidon2Air, RoundConstants};
use p3_symmetric::{CompressionFunctionFromHasher, PaddingFreeSponge, SerializingHasher};
use p3_uni_stark::{StarkConfig, prove, verify};
use tracing::span::{Attributes, Id};
use tracing::{Subscriber, info_span};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

type Val = Goldilocks;
type Challenge = CubicTrinomialExtensionField<Val>;
type U64Hash = PaddingFreeSponge<KeccakF, 25, 17, 4>;
type FieldHash = SerializingHasher<U64Hash>;
type Compress = CompressionFunctionFromHasher<U64Hash, 2, 4>;
type ValMmcs = MerkleTreeMmcs<
    [Val; p3_keccak::VECTOR_LEN],
    [u64; p3_keccak::VECTOR_LEN],
    FieldHash,
    Compress,
    2,
    4,
>;
type ChallengeMmcs = ExtensionMmcs<Val, Challenge, ValMmcs>;
type Dft = Radix2DitParallel<Val>;
type Challenger = SerializingChallenger64<Val, HashChallenger<u8, Keccak256Hash, 32>>;
type Pcs = TwoAdicFriPcs<Val, Dft, ValMmcs, ChallengeMmcs>;
type Config = StarkConfig<Pcs, Challenge, Challenger>;

/// Sequences of the Fibonacci statement.
const SEQUENCES: usize = 16;

/// Width-12 Poseidon2 over Goldilocks: x⁷ with one register (x³), 4 + 4 full rounds, 22
/// partial ones (the instance ballast's `--hash poseidon2` uses).
type Poseidon2Goldilocks =
    Poseidon2Air<Val, GenericPoseidon2LinearLayersGoldilocks, 12, 7, 1, 4, 22>;
type Constants = RoundConstants<Val, 12, 4, 22>;

struct Args {
    air: String,
    perms: usize,
    log_rows: usize,
    log_blowup: usize,
    queries: usize,
}

fn usage(message: &str) -> ! {
    eprintln!("p3-bench: {message}");
    eprintln!(
        "usage: p3-bench --air keccak|poseidon2 --perms N | --air fib --log-rows K  [--log-blowup B] [--queries Q]"
    );
    std::process::exit(2)
}

fn parse() -> Args {
    let mut args = Args {
        air: "keccak".into(),
        perms: 0,
        log_rows: 0,
        log_blowup: 1,
        queries: 100,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| usage(&format!("{flag} needs a value")));
        let number = |v: String| -> usize {
            v.parse()
                .unwrap_or_else(|_| usage(&format!("{flag} takes a number, not {v}")))
        };
        match flag.as_str() {
            "--air" => args.air = value(),
            "--perms" => args.perms = number(value()),
            "--log-rows" => args.log_rows = number(value()),
            "--log-blowup" => args.log_blowup = number(value()),
            "--queries" => args.queries = number(value()),
            _ => usage(&format!("unknown flag {flag}")),
        }
    }
    match args.air.as_str() {
        "keccak" if args.perms > 0 => {}
        "poseidon2" if args.perms.is_power_of_two() => {}
        "fib" if (1..=24).contains(&args.log_rows) => {}
        _ => usage(
            "give --air keccak with --perms, --air poseidon2 with --perms a power of two, or --air fib with --log-rows",
        ),
    }
    if !(1..=4).contains(&args.log_blowup) || args.queries == 0 {
        usage("--log-blowup takes 1..4 and --queries a positive number");
    }
    args
}

fn config(log_blowup: usize, queries: usize) -> Config {
    let u64_hash = U64Hash::new(KeccakF {});
    let val_mmcs = ValMmcs::new(FieldHash::new(u64_hash), Compress::new(u64_hash), 3);
    let fri = FriParameters {
        log_blowup,
        log_final_poly_len: 0,
        max_log_arity: 3,
        num_queries: queries,
        batch_proof_of_work_bits: 0,
        commit_proof_of_work_bits: 0,
        query_proof_of_work_bits: 0,
        mmcs: ChallengeMmcs::new(val_mmcs.clone()),
    };
    let pcs = Pcs::new(Dft::default(), val_mmcs, fri);
    Config::new(pcs, Challenger::from_hasher(vec![], Keccak256Hash {}))
}

/// 16 independent Fibonacci sequences, two columns each: a' = b, b' = a + b; sequence j
/// starts at (j, j + 1); the first and last rows are public.
struct FibonacciAir;

impl<F> BaseAir<F> for FibonacciAir {
    fn width(&self) -> usize {
        2 * SEQUENCES
    }
    fn num_public_values(&self) -> usize {
        4 * SEQUENCES
    }
}

impl<AB: AirBuilder> Air<AB> for FibonacciAir {
    fn eval(&self, builder: &mut AB) {
        let main = builder.main();
        let public: Vec<AB::PublicVar> = builder.public_values().to_vec();
        let local: Vec<AB::Var> = main.current_slice().to_vec();
        let next: Vec<AB::Var> = main.next_slice().to_vec();
        let (first, last) = public.split_at(2 * SEQUENCES);
        for j in 0..SEQUENCES {
            let (a, b) = (local[2 * j], local[2 * j + 1]);
            let mut transition = builder.when_transition();
            transition.assert_eq(next[2 * j], b);
            transition.assert_eq(next[2 * j + 1], a + b);
        }
        for (c, (&f, &l)) in first.iter().zip(last).enumerate() {
            builder.when_first_row().assert_eq(local[c], f);
            builder.when_last_row().assert_eq(local[c], l);
        }
    }
}

fn fibonacci_trace(log_rows: usize) -> (RowMajorMatrix<Val>, Vec<Val>) {
    let width = 2 * SEQUENCES;
    let rows = 1usize << log_rows;
    let mut values = Val::zero_vec(rows * width);
    for j in 0..SEQUENCES {
        let (mut a, mut b) = (Val::from_u64(j as u64), Val::from_u64(j as u64 + 1));
        for r in 0..rows {
            values[r * width + 2 * j] = a;
            values[r * width + 2 * j + 1] = b;
            (a, b) = (b, a + b);
        }
    }
    let mut public = values[..width].to_vec();
    public.extend_from_slice(&values[(rows - 1) * width..]);
    (RowMajorMatrix::new(values, width), public)
}

/// A fixed pseudo-random sequence of words (SplitMix64).
fn split_mix() -> impl FnMut() -> u64 {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// The states `p3-keccak-air` permutes.
fn keccak_inputs(perms: usize) -> Vec<[u64; 25]> {
    let mut next = split_mix();
    (0..perms).map(|_| std::array::from_fn(|_| next())).collect()
}

/// The Poseidon2 AIR with pseudo-random round constants (the work does not depend on their
/// values), and the states it permutes.
fn poseidon2_instance(perms: usize) -> (Constants, Vec<[Val; 12]>) {
    let mut next = split_mix();
    let mut element = || Val::from_u64(next());
    let constants = RoundConstants::new(
        std::array::from_fn(|_| std::array::from_fn(|_| element())),
        std::array::from_fn(|_| element()),
        std::array::from_fn(|_| std::array::from_fn(|_| element())),
    );
    let inputs = (0..perms)
        .map(|_| std::array::from_fn(|_| element()))
        .collect();
    (constants, inputs)
}

/// Sums the time spent in each span name (outermost occurrence only: recursion is counted once).
#[derive(Clone, Default)]
struct PhaseTimes(Arc<Mutex<BTreeMap<String, f64>>>);

struct Started(Instant);

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for PhaseTimes {
    fn on_new_span(&self, _: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        if let Some(span) = ctx.span(id) {
            span.extensions_mut().insert(Started(Instant::now()));
        }
    }

    fn on_close(&self, id: Id, ctx: Context<'_, S>) {
        let Some(span) = ctx.span(&id) else { return };
        let name = span.name();
        if span.scope().skip(1).any(|parent| parent.name() == name) {
            return;
        }
        if let Some(Started(at)) = span.extensions().get::<Started>() {
            *self.0.lock().unwrap().entry(name.to_string()).or_default() +=
                at.elapsed().as_secs_f64();
        }
    }
}

fn peak_rss_bytes() -> u64 {
    // SAFETY: getrusage writes the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    usage.ru_maxrss as u64 * 1024
}

fn main() {
    let args = parse();
    let phases = PhaseTimes::default();
    let subscriber = tracing_subscriber::registry()
        .with(phases.clone().with_filter(tracing_subscriber::filter::LevelFilter::DEBUG));
    tracing::subscriber::set_global_default(subscriber).expect("one subscriber");

    let config = config(args.log_blowup, args.queries);
    let start = Instant::now();
    let (proof_bytes, trace_s, prove_s, verify_s, rows) = if args.air == "keccak" {
        let trace = info_span!("trace")
            .in_scope(|| generate_trace_rows::<Val>(keccak_inputs(args.perms), args.log_blowup));
        let trace_s = start.elapsed().as_secs_f64();
        let rows = trace.values.len() / p3_keccak_air::NUM_KECCAK_COLS;
        let proved = Instant::now();
        let proof = prove(&config, &KeccakAir {}, trace, &[]).expect("proves");
        let prove_s = proved.elapsed().as_secs_f64();
        let verified = Instant::now();
        verify(&config, &KeccakAir {}, &proof, &[]).expect("verifies");
        let verify_s = verified.elapsed().as_secs_f64();
        let bytes = postcard::to_allocvec(&proof).expect("serialises").len();
        (bytes, trace_s, prove_s, verify_s, rows)
    } else if args.air == "poseidon2" {
        let (constants, inputs) = info_span!("trace").in_scope(|| poseidon2_instance(args.perms));
        let air = Poseidon2Goldilocks::new(constants.clone());
        let trace = info_span!("trace").in_scope(|| {
            p3_poseidon2_air::generate_trace_rows::<
                Val,
                GenericPoseidon2LinearLayersGoldilocks,
                12,
                7,
                1,
                4,
                22,
            >(inputs, &constants, args.log_blowup)
        });
        let trace_s = start.elapsed().as_secs_f64();
        let proved = Instant::now();
        let proof = prove(&config, &air, trace, &[]).expect("proves");
        let prove_s = proved.elapsed().as_secs_f64();
        let verified = Instant::now();
        verify(&config, &air, &proof, &[]).expect("verifies");
        let verify_s = verified.elapsed().as_secs_f64();
        let bytes = postcard::to_allocvec(&proof).expect("serialises").len();
        (bytes, trace_s, prove_s, verify_s, args.perms)
    } else {
        let (trace, public) = info_span!("trace").in_scope(|| fibonacci_trace(args.log_rows));
        let trace_s = start.elapsed().as_secs_f64();
        let proved = Instant::now();
        let proof = prove(&config, &FibonacciAir, trace, &public).expect("proves");
        let prove_s = proved.elapsed().as_secs_f64();
        let verified = Instant::now();
        verify(&config, &FibonacciAir, &proof, &public).expect("verifies");
        let verify_s = verified.elapsed().as_secs_f64();
        let bytes = postcard::to_allocvec(&proof).expect("serialises").len();
        (bytes, trace_s, prove_s, verify_s, 1usize << args.log_rows)
    };
    let phases: BTreeMap<String, f64> = phases.0.lock().unwrap().clone();
    let phases: Vec<String> = phases
        .iter()
        .map(|(name, s)| format!("{name:?}: {s:.6}"))
        .collect();
    println!(
        "{{\"air\": {:?}, \"rows\": {rows}, \"log_blowup\": {}, \"queries\": {}, \"trace_s\": {trace_s:.6}, \"prove_s\": {prove_s:.6}, \"verify_s\": {verify_s:.6}, \"proof_bytes\": {proof_bytes}, \"peak_rss_bytes\": {}, \"phases\": {{{}}}}}",
        args.air,
        args.log_blowup,
        args.queries,
        peak_rss_bytes(),
        phases.join(", ")
    );
}

