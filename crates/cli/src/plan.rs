//! The flags lowered once, before anything runs, into what a command does: the statement
//! and its circuit (`prove` and `security`), and for `prove` the segments to prove, where
//! the proof goes and the backend. Every flag error is found here.

use std::ffi::OsString;
use std::ops::Range;
use std::path::PathBuf;

use anyhow::{Result, anyhow, bail};
use ballast_recursion::ChildError;
use ballast_stark::{Circuit, MerkleHash, ParamsError, Regime, StarkParams, part_range};
use ballast_workloads::{AnyStatement, named};

use crate::args::{BackendChoice, ProveArgs, StatementArgs};

/// The security target when neither --queries nor --security-bits is given: 128 bits in the
/// default regime, provable up to the Johnson bound.
pub const DEFAULT_SECURITY_BITS: u32 = 128;

/// The environment variables a scheduler sets to a worker's index: a Kubernetes Indexed
/// Job's, then a Slurm job array's.
const INDEX_VARIABLES: [&str; 2] = ["JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID"];

/// A statement and the circuit of its segments: what the statement flags describe.
pub struct StatementPlan {
    /// The statement, of whichever workload --workload names.
    pub statement: Box<dyn AnyStatement>,
    /// Its segments' circuit with the parameters asked for (`circuit.params`).
    pub circuit: Circuit,
}

impl StatementPlan {
    /// The statement and parameters `args` describe: --queries as given, or the fewest
    /// queries with which the segments reach --security-bits in --regime.
    pub fn lower(args: &StatementArgs) -> Result<Self> {
        let row = named(&args.workload)
            .ok_or_else(|| anyhow!("invalid --workload: {:?}", args.workload))?;
        let statement = row.statement(&args.shape.0)?;
        let params = StarkParams {
            log_blowup: args.log_blowup,
            num_queries: args.queries.unwrap_or(1),
            pow_bits: args.pow_bits,
            log_final_poly_len: StarkParams::DEFAULT_LOG_FINAL_POLY_LEN.min(statement.log_rows()),
            hash: args.hash,
        };
        let circuit = match args.queries {
            Some(_) => statement.circuit(&params),
            None => statement.circuit_for_target(
                &params,
                args.security_bits.unwrap_or(DEFAULT_SECURITY_BITS),
                args.regime,
            ),
        }
        .map_err(flag_error)?;
        Ok(Self { statement, circuit })
    }
}

/// Which of --parts a worker proves.
#[derive(Clone, Copy)]
pub struct PartChoice {
    /// Its index, from 0.
    pub index: usize,
    /// How many parts the statement is split into.
    pub parts: usize,
}

/// What `cli prove` does.
pub struct ProvePlan {
    /// The statement and its circuit.
    pub statement: StatementPlan,
    /// The segments to prove: all of them, or a part's.
    pub range: Range<usize>,
    /// The part, with --parts.
    pub part: Option<PartChoice>,
    /// Where the proof goes.
    pub output: PathBuf,
    /// Where the JSON report goes, if anywhere.
    pub report: Option<PathBuf>,
    /// Where the proving runs.
    pub backend: BackendChoice,
    /// With --compress: the compressed proof's last layer.
    pub compress: Option<CompressPlan>,
}

/// The last layer `prove --compress` makes: its log2 blowup and grinding bits, and the
/// bits it must reach in its regime (the statement's --security-bits and --regime).
#[derive(Clone, Copy)]
pub struct CompressPlan {
    /// Log2 blowup and grinding bits.
    pub last: (usize, u32),
    /// The bits to reach.
    pub target: u32,
    /// Where they are judged.
    pub regime: Regime,
}

impl ProvePlan {
    /// Lowers `cli prove`'s flags, reading a part's index from the scheduler's environment
    /// through `var` when --part-index is not given.
    pub fn lower(args: &ProveArgs, var: impl Fn(&str) -> Option<OsString>) -> Result<Self> {
        let part = part_choice(args, var)?;
        let statement = StatementPlan::lower(&args.statement)?;
        let segments = statement.statement.segments();
        let range = match part {
            None => 0..segments,
            Some(PartChoice { index, parts }) => {
                if parts > segments {
                    bail!(
                        "invalid --parts: {parts} parts of a statement of {segments} segments; each part needs at least one"
                    );
                }
                part_range(segments, parts, index).map_err(flag_error)?
            }
        };
        let compress = args.compress.then_some(CompressPlan {
            last: args.layer.last(),
            target: args
                .statement
                .security_bits
                .unwrap_or(DEFAULT_SECURITY_BITS),
            regime: args.statement.regime,
        });
        if compress.is_none() && args.layer.given() {
            bail!("--layer-blowup and --layer-pow-bits shape a compressed proof: give --compress");
        }
        if compress.is_some() {
            // What compressing refuses, before the proving it would waste.
            if statement.circuit.params.hash != MerkleHash::Poseidon2 {
                bail!("cannot compress: {}", ChildError::NotPoseidon2);
            }
        }
        let output = match (&args.output, part) {
            (Some(path), _) => path.clone(),
            (None, None) => "proof.bin".into(),
            (None, Some(p)) => format!("part-{}.bin", p.index).into(),
        };
        Ok(Self {
            statement,
            range,
            part,
            output,
            report: args.report.clone(),
            backend: args.backend,
            compress,
        })
    }
}

/// The part --parts asks for: its index from --part-index, else from the scheduler's
/// environment ([`INDEX_VARIABLES`], read through `var`).
fn part_choice(
    args: &ProveArgs,
    var: impl Fn(&str) -> Option<OsString>,
) -> Result<Option<PartChoice>> {
    let Some(parts) = args.parts else {
        return Ok(None);
    };
    let parts = parts as usize;
    let (index, source) = match args.part_index {
        Some(i) => (i as usize, "--part-index".to_owned()),
        None => {
            let mut found: Option<(usize, String)> = None;
            for name in INDEX_VARIABLES {
                let Some(value) = var(name) else { continue };
                let text = value.to_str().unwrap_or_default();
                let index = text
                    .parse::<usize>()
                    .ok()
                    .filter(|_| text.bytes().all(|b| b.is_ascii_digit()))
                    .ok_or_else(|| {
                        anyhow!("{name}={value:?} is not a part index (a number from 0)")
                    })?;
                match &found {
                    Some((other, first)) if *other != index => bail!(
                        "{first} and {name}={index} disagree on the part index; give --part-index"
                    ),
                    Some(_) => {}
                    None => found = Some((index, format!("{name}={index}"))),
                }
            }
            found.ok_or_else(|| {
                anyhow!(
                    "--parts {parts} needs --part-index, or {} (a Kubernetes Indexed Job) or {} \
                     (a Slurm job array) in the environment",
                    INDEX_VARIABLES[0],
                    INDEX_VARIABLES[1]
                )
            })?
        }
    };
    if index >= parts {
        bail!("part index {index} (from {source}) is not below --parts {parts}");
    }
    Ok(Some(PartChoice { index, parts }))
}

/// Names the flag behind a parameter error.
pub fn flag_error(err: ParamsError) -> anyhow::Error {
    let flag = match &err {
        ParamsError::OutOfRange { name, .. } => match *name {
            "num_queries" => "--queries",
            "pow_bits" => "--pow-bits",
            "log_blowup" => "--blowup",
            "log_rows + log_blowup" => "--log-rows with --blowup",
            "log_rows" => "--log-rows",
            "parts" => "--parts",
            "part_index" => "--part-index",
            _ => "parameters",
        },
        ParamsError::DegreeTooHigh { .. } => "--blowup",
        ParamsError::TargetTooHigh { .. } | ParamsError::Unreachable { .. } => "--security-bits",
        ParamsError::Air(_) | ParamsError::NonCanonical { .. } | ParamsError::TablesOrder => {
            "workload"
        }
    };
    anyhow!("invalid {flag}: {err}")
}
