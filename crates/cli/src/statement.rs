//! The statement and the parameters the flags describe, for `prove` and `security`.

use anyhow::{Result, bail};
use ballast_stark::{Circuit, ParamsError, StarkParams, Workload};
use ballast_workloads::{Fibonacci, KeccakChain};

use crate::args::StatementArgs;

/// The security target when neither --queries nor --security-bits is given: 128 bits in the
/// default regime, provable up to the Johnson bound.
pub const DEFAULT_SECURITY_BITS: u32 = 128;

/// The embedded statement's seed: Keccak-256("ballast").
const DEFAULT_SEED: &str = "ballast";

/// The chain the flags describe.
pub fn keccak_chain(args: &StatementArgs) -> Result<KeccakChain> {
    if args.sequences.is_some() {
        bail!(
            "--sequences is a fibonacci flag; keccak-chain takes --seed, --steps, --log-rows, --segments"
        );
    }
    let seed = args.seed.unwrap_or_else(|| {
        use sha3::{Digest as _, Keccak256};
        Keccak256::digest(DEFAULT_SEED).into()
    });
    let log_rows = args.log_rows.unwrap_or(14);
    let mut chain = KeccakChain {
        seed,
        steps: 1,
        log_rows,
    };
    chain.validate().map_err(flag_error)?;
    chain.steps = match (args.steps, args.segments) {
        (Some(_), Some(_)) => bail!("give --steps or --segments, not both"),
        (Some(steps), None) => steps,
        (None, segments) => {
            let segments = segments.unwrap_or(4);
            if segments == 0 {
                bail!("invalid --segments: 0, must be at least 1");
            }
            (segments as u64).saturating_mul(chain.steps_per_segment())
        }
    };
    chain.validate().map_err(flag_error)?;
    Ok(chain)
}

/// The Fibonacci run the flags describe.
pub fn fibonacci(args: &StatementArgs) -> Result<Fibonacci> {
    if args.seed.is_some() || args.steps.is_some() {
        bail!(
            "--seed and --steps are keccak-chain flags; fibonacci takes --sequences, --log-rows, --segments"
        );
    }
    let w = Fibonacci {
        sequences: args.sequences.unwrap_or(16),
        log_rows: args.log_rows.unwrap_or(19),
        segments: args.segments.unwrap_or(4),
    };
    w.validate().map_err(flag_error)?;
    Ok(w)
}

/// The circuit of the workload's segments with the parameters the flags ask for (its
/// `params`): --queries as given, or the fewest queries with which the segments reach
/// --security-bits in --regime.
pub fn params<W: Workload>(args: &StatementArgs, workload: &W) -> Result<Circuit> {
    let log_rows = workload.log_rows();
    let params = StarkParams {
        log_blowup: args.blowup,
        num_queries: args.queries.unwrap_or(1),
        pow_bits: args.pow_bits,
        log_final_poly_len: StarkParams::DEFAULT_LOG_FINAL_POLY_LEN.min(log_rows),
    };
    let air = workload.air(0);
    if args.queries.is_some() {
        return Circuit::of(&air, &params).map_err(flag_error);
    }
    let target = args.security_bits.unwrap_or(DEFAULT_SECURITY_BITS);
    Circuit::for_target(&air, &params, target, args.regime).map_err(flag_error)
}

/// Names the flag behind a parameter error.
pub fn flag_error(err: ParamsError) -> anyhow::Error {
    let flag = match &err {
        ParamsError::OutOfRange { name, .. } => match *name {
            "sequences" => "--sequences",
            "segments" => "--segments",
            "steps" => "--steps or --segments",
            "log_rows" => "--log-rows",
            "num_queries" => "--queries",
            "pow_bits" => "--pow-bits",
            "log_blowup" => "--blowup",
            "log_rows + log_blowup" => "--log-rows with --blowup",
            _ => "parameters",
        },
        ParamsError::DegreeTooHigh { .. } => "--blowup",
        ParamsError::TargetTooHigh { .. } | ParamsError::Unreachable { .. } => "--security-bits",
        ParamsError::Air(_) => "workload",
    };
    anyhow::anyhow!("invalid {flag}: {err}")
}
