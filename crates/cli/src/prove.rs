//! `cli prove`: prove a statement, write the proof atomically, summarise.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::IsTerminal;
use std::ops::Range;
use std::time::Instant;

use anyhow::{Context, Result, anyhow, bail};
use ballast_air::ConstraintProgram;
use ballast_cuda::{CudaBackend, CudaError};
use ballast_stark::{
    Backend, Circuit, CpuBackend, Geometry, PhaseTimes, StarkParams, Workload, estimate_peak_bytes,
    geometry, part_range, prove_part,
};
use ballast_workloads::{AnyProof, Describe, thousands};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::args::{BackendChoice, ProveArgs, WorkloadChoice};
use crate::output::{check_writable, print, write_atomic};
use crate::resources::{human_bytes, physical_memory, usage};
use crate::statement::{fibonacci, flag_error, keccak_chain, params};
use crate::summary::{self, ParamsJson, PartJson, SecurityJson, soundcalc_json};

/// The environment variables a scheduler sets to a worker's index: a Kubernetes Indexed
/// Job's, then a Slurm job array's.
const INDEX_VARIABLES: [&str; 2] = ["JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID"];

#[derive(Serialize)]
struct ProveReport {
    command: &'static str,
    /// The statement; for a part, the computation alone (its outcome is not known there).
    statement: serde_json::Value,
    /// For a part: which segments it covers, and which of --parts it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    part: Option<PartReport>,
    params: ParamsJson,
    /// The security of each regime, round by round.
    security: SecurityJson,
    /// The statement's parameters in soundcalc's circuit configuration (its TOML keys).
    soundcalc: serde_json::Value,
    backend: &'static str,
    /// The GPU's name when the backend is CUDA.
    device: Option<String>,
    /// The most device memory the backend held at once (null on the CPU).
    device_peak_bytes: Option<u64>,
    /// Bytes the backend copied from the host to the device (null on the CPU).
    pcie_up_bytes: Option<u64>,
    /// Bytes the backend copied from the device to the host (null on the CPU).
    pcie_down_bytes: Option<u64>,
    threads: usize,
    /// The CPU kernels' SIMD path (`BALLAST_CPU`, or the best this CPU supports).
    cpu_path: &'static str,
    phases_seconds: BTreeMap<&'static str, f64>,
    prove_seconds: f64,
    proof_path: String,
    proof_bytes: usize,
    proof_sha256: String,
    /// The most bytes live in the allocator at once (requested sizes, exact).
    peak_heap_bytes: u64,
    peak_rss_bytes: u64,
    minor_faults: u64,
    major_faults: u64,
    user_seconds: f64,
    system_seconds: f64,
}

/// Where a part sits: its range, and its index among --parts.
#[derive(Serialize)]
struct PartReport {
    #[serde(flatten)]
    range: PartJson,
    index: usize,
    parts: usize,
}

/// Which of --parts a worker proves.
#[derive(Clone, Copy)]
struct PartChoice {
    index: usize,
    parts: usize,
}

/// Runs `cli prove`.
pub fn run(args: &ProveArgs) -> Result<()> {
    let part = part_choice(args, |name| std::env::var_os(name))?;
    match args.statement.workload {
        WorkloadChoice::KeccakChain => prove(args, &keccak_chain(&args.statement)?, part),
        WorkloadChoice::Fibonacci => prove(args, &fibonacci(&args.statement)?, part),
    }
}

/// The part --parts asks for: its index from --part-index, else from the scheduler's
/// environment ([`INDEX_VARIABLES`], read through `var`).
fn part_choice(
    args: &ProveArgs,
    var: impl Fn(&str) -> Option<std::ffi::OsString>,
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

fn prove<W: Describe + Send + 'static>(
    args: &ProveArgs,
    workload: &W,
    part: Option<PartChoice>,
) -> Result<()> {
    let circuit = params(&args.statement, workload)?;
    let params = circuit.params;
    let range = match part {
        None => 0..workload.segments(),
        Some(PartChoice { index, parts }) => {
            if parts > workload.segments() {
                bail!(
                    "invalid --parts: {parts} parts of a statement of {} segments; each part needs at least one",
                    workload.segments()
                );
            }
            part_range(workload.segments(), parts, index).map_err(flag_error)?
        }
    };
    let estimate = estimate_peak_bytes(workload, &params, range.len());
    if let Some(memory) = physical_memory()
        && estimate > memory
    {
        bail!(
            "{} × 2^{} rows × {} segments would need about {} of memory (estimate), more than this machine's {}",
            W::NAME,
            workload.log_rows(),
            range.len(),
            human_bytes(estimate),
            human_bytes(memory)
        );
    }
    let output = match (&args.output, part) {
        (Some(path), _) => path.clone(),
        (None, None) => "proof.bin".into(),
        (None, Some(p)) => format!("part-{}.bin", p.index).into(),
    };
    check_writable(&output)?;
    if let Some(report) = &args.report {
        check_writable(report)?;
    }

    let chosen = choose_backend(args.backend, || device_need(workload, &params, &range))?;

    let progress = progress_bar(range.len());
    let mut times = PhaseTimes::default();
    let started = Instant::now();
    let on_segment = &mut |done: usize| progress.set_position(done as u64);
    let proven: Box<dyn AnyProof> = Box::new(
        prove_part(
            workload,
            &params,
            range,
            &*chosen.backend,
            &mut times,
            on_segment,
        )
        .context("proving failed")?,
    );
    let prove_seconds = started.elapsed().as_secs_f64();
    progress.finish_and_clear();
    let counters = chosen.backend.counters();

    let bytes = proven.to_bytes();
    write_atomic(&output, &bytes)?;
    let digest = hex::encode(Sha256::digest(&bytes));
    let used = usage();
    let report = ProveReport {
        command: "prove",
        statement: proven.json(),
        part: part.map(|choice| PartReport {
            range: PartJson::new(&*proven),
            index: choice.index,
            parts: choice.parts,
        }),
        params: ParamsJson::of(&*proven),
        security: SecurityJson::of(&circuit),
        soundcalc: soundcalc_json(&circuit),
        backend: chosen.backend.name(),
        device: chosen.device,
        device_peak_bytes: counters.map(|c| c.device_peak_bytes),
        pcie_up_bytes: counters.map(|c| c.pcie_up_bytes),
        pcie_down_bytes: counters.map(|c| c.pcie_down_bytes),
        threads: rayon::current_num_threads(),
        cpu_path: ballast_cpu::active().name(),
        phases_seconds: times
            .iter()
            .map(|(phase, d)| (phase.name(), d.as_secs_f64()))
            .collect(),
        prove_seconds,
        proof_path: output.display().to_string(),
        proof_bytes: bytes.len(),
        proof_sha256: digest,
        peak_heap_bytes: ballast_allocator::heap_peak() as u64,
        peak_rss_bytes: used.peak_rss_bytes,
        minor_faults: used.minor_faults,
        major_faults: used.major_faults,
        user_seconds: used.user.as_secs_f64(),
        system_seconds: used.system.as_secs_f64(),
    };
    if let Some(path) = &args.report {
        let json = serde_json::to_vec_pretty(&report).context("cannot encode the report")?;
        write_atomic(path, &json)?;
    }
    print(&human_summary(&report, &*proven, &circuit, &times))
}

/// The backend the proof runs on, and the GPU's name when it is CUDA.
struct Chosen {
    backend: Box<dyn Backend>,
    device: Option<String>,
}

/// What the statement asks of a device: its segments' geometry and constraint program.
fn device_need<W: Workload>(
    workload: &W,
    params: &StarkParams,
    range: &Range<usize>,
) -> Result<(Geometry, ConstraintProgram)> {
    let geometry = geometry(workload, params).map_err(flag_error)?;
    let program = ConstraintProgram::of(&workload.air(range.start))
        .map_err(|e| anyhow!("the statement cannot be proven on a GPU: {e}"))?;
    Ok((geometry, program))
}

/// The backend --backend asks for. `auto` takes CUDA when a device is usable and its free
/// memory holds a segment (the backend's own sizing), and otherwise the CPU, saying why on
/// stderr unless there is simply no driver or no device. `cuda` refuses, with the reason,
/// what `auto` would run on the CPU.
fn choose_backend(
    choice: BackendChoice,
    need: impl FnOnce() -> Result<(Geometry, ConstraintProgram)>,
) -> Result<Chosen> {
    let cpu = || Chosen {
        backend: Box::new(CpuBackend::new()),
        device: None,
    };
    let cuda = |b: CudaBackend| Chosen {
        device: Some(b.device().name.clone()),
        backend: Box::new(b),
    };
    match choice {
        BackendChoice::Cpu => Ok(cpu()),
        BackendChoice::Cuda => {
            let b = CudaBackend::new()
                .map_err(|err| anyhow!("--backend cuda: no usable CUDA device: {err}"))?;
            let (geometry, program) = need()?;
            b.check_fits(&geometry, &program)
                .map_err(|err| anyhow!("--backend cuda: {err}"))?;
            Ok(cuda(b))
        }
        BackendChoice::Auto => match CudaBackend::new() {
            Ok(b) => {
                let (geometry, program) = need()?;
                match b.check_fits(&geometry, &program) {
                    Ok(()) => Ok(cuda(b)),
                    Err(err) => {
                        eprintln!("cli: proving on the CPU: {err}");
                        Ok(cpu())
                    }
                }
            }
            Err(CudaError::NoDriver | CudaError::NoDevice) => Ok(cpu()),
            Err(err) => {
                eprintln!("cli: proving on the CPU: the CUDA device is not usable: {err}");
                Ok(cpu())
            }
        },
    }
}

fn progress_bar(segments: usize) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(segments as u64);
    bar.set_style(
        ProgressStyle::with_template(
            "proving segment {pos}/{len} {wide_bar} {elapsed} (eta {eta})",
        )
        .expect("a valid template"),
    );
    bar.tick();
    bar
}

fn human_summary(
    r: &ProveReport,
    proven: &dyn AnyProof,
    circuit: &Circuit,
    times: &PhaseTimes,
) -> String {
    let mut out = String::new();
    let index_of = r.part.as_ref().map(|c| (c.index, c.parts));
    out.push_str(&summary::covered(proven, index_of));
    let _ = writeln!(out, "parameters: {}", summary::params(&r.params));
    out.push_str(&summary::security(circuit));
    let device = r
        .device
        .as_ref()
        .map_or(String::new(), |d| format!(" ({d})"));
    let _ = writeln!(
        out,
        "backend:    {}{device}, {} threads, {} CPU path",
        r.backend, r.threads, r.cpu_path
    );
    let phases: Vec<String> = times
        .iter()
        .map(|(p, d)| format!("{} {:.2}s", p.name(), d.as_secs_f64()))
        .collect();
    let _ = writeln!(out, "phases:     {}", phases.join(", "));
    if let (Some(peak), Some(up), Some(down)) =
        (r.device_peak_bytes, r.pcie_up_bytes, r.pcie_down_bytes)
    {
        let _ = writeln!(
            out,
            "device:     peak {}, {} up, {} down",
            human_bytes(peak),
            human_bytes(up),
            human_bytes(down)
        );
    }
    let _ = writeln!(out, "prove time: {:.2} s", r.prove_seconds);
    let _ = writeln!(
        out,
        "proof:      {} ({}, sha256 {})",
        r.proof_path,
        human_bytes(r.proof_bytes as u64),
        &r.proof_sha256[..16]
    );
    let _ = writeln!(
        out,
        "resources:  peak heap {}, peak RSS {}, {} minor page faults, user {:.2} s, system {:.2} s",
        human_bytes(r.peak_heap_bytes),
        human_bytes(r.peak_rss_bytes),
        thousands(r.minor_faults),
        r.user_seconds,
        r.system_seconds
    );
    out
}
