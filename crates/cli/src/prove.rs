//! `cli prove`: prove a statement, write the proof atomically, summarise.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::IsTerminal;
use std::time::Instant;

use anyhow::{Context, Result, anyhow, bail};
use ballast_air::ConstraintProgram;
use ballast_cuda::{CudaBackend, CudaError};
use ballast_stark::{Backend, Circuit, CpuBackend, Geometry, PhaseTimes};
use ballast_workloads::{AnyProof, thousands};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::args::{BackendChoice, ProveArgs};
use crate::compress::{self, LayerJson, Layers};
use crate::output::{check_writable, print, write_atomic};
use crate::plan::{ProvePlan, StatementPlan, flag_error};
use crate::resources::{human_bytes, physical_memory, usage};
use crate::summary::{self, ParamsJson, PartJson, SecurityJson, soundcalc_json};

#[derive(Serialize)]
struct ProveReport {
    command: &'static str,
    /// The statement; for a part, the computation alone (its outcome is not known there).
    statement: serde_json::Value,
    /// For a part: which segments it covers, and which of --parts it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    part: Option<PartReport>,
    params: ParamsJson,
    /// With --compress: the compressed proof's layers in proving order, each with its
    /// parameters and security; the proof's is the weakest layer's.
    #[serde(skip_serializing_if = "Option::is_none")]
    layers: Option<Vec<LayerJson>>,
    /// With --compress: the seconds compressing took, after proving.
    #[serde(skip_serializing_if = "Option::is_none")]
    compress_seconds: Option<f64>,
    /// The security of each regime, round by round (of the segments, with --compress).
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

/// Runs `cli prove`.
pub fn run(args: &ProveArgs) -> Result<()> {
    let ProvePlan {
        statement: StatementPlan { statement, circuit },
        range,
        part,
        output,
        report: report_path,
        backend,
        compress: compress_plan,
    } = ProvePlan::lower(args, |name| std::env::var_os(name))?;
    let params = circuit.params;
    let estimate = statement.estimate_peak_bytes(&params, range.len());
    if let Some(memory) = physical_memory()
        && estimate > memory
    {
        bail!(
            "{} × 2^{} rows × {} segments would need about {} of memory (estimate), more than this machine's {}",
            statement.name(),
            statement.log_rows(),
            range.len(),
            human_bytes(estimate),
            human_bytes(memory)
        );
    }
    check_writable(&output)?;
    if let Some(report) = &report_path {
        check_writable(report)?;
    }
    if let Some(plan) = &compress_plan {
        statement
            .check_compression(&params, plan.last, plan.target, plan.regime)
            .map_err(|e| anyhow!("cannot compress: {e}"))?;
    }

    let chosen = choose_backend(backend, || {
        let geometry = statement.geometry(&params).map_err(flag_error)?;
        let program = statement
            .program(range.start)
            .map_err(|e| anyhow!("the statement cannot be proven on a GPU: {e}"))?;
        Ok((geometry, program))
    })?;

    let progress = progress_bar(range.len());
    let mut times = PhaseTimes::default();
    let started = Instant::now();
    let on_segment = &mut |done: usize| progress.set_position(done as u64);
    let proven = statement
        .prove(
            &params,
            range.clone(),
            &*chosen.backend,
            &mut times,
            on_segment,
        )
        .context("proving failed")?;
    let prove_seconds = started.elapsed().as_secs_f64();
    progress.finish_and_clear();
    let counters = chosen.backend.counters();

    let compressed = match compress_plan {
        None => None,
        Some(plan) => {
            let started = Instant::now();
            let (compressed, circuits) =
                compress::compress(&*proven, plan.last, plan.target, plan.regime)?;
            Some((compressed, circuits, started.elapsed().as_secs_f64()))
        }
    };
    let bytes = match &compressed {
        None => proven.to_bytes(),
        Some((compressed, ..)) => compressed.to_bytes(),
    };
    write_atomic(&output, &bytes)?;
    let digest = hex::encode(Sha256::digest(&bytes));
    let used = usage();
    let layers = compressed
        .as_ref()
        .map(|(_, circuits, _)| Layers::of(circuits));
    let report = ProveReport {
        command: "prove",
        statement: proven.json(),
        part: part.map(|choice| PartReport {
            range: PartJson::new(&*proven),
            index: choice.index,
            parts: choice.parts,
        }),
        params: ParamsJson::of_circuit(&circuit),
        layers: layers.as_ref().map(Layers::json),
        compress_seconds: compressed.as_ref().map(|(.., seconds)| *seconds),
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
    if let Some(path) = &report_path {
        let json = serde_json::to_vec_pretty(&report).context("cannot encode the report")?;
        write_atomic(path, &json)?;
    }
    let mut out = human_summary(&report, &*proven, &circuit, &times);
    if let (Some((.., seconds)), Some(layers)) = (&compressed, &layers) {
        let _ = writeln!(
            out,
            "compressed: in {seconds:.2} s, the proof above is the compressed one"
        );
        out.push_str(&layers.lines());
    }
    print(&out)
}

/// The backend the proof runs on, and the GPU's name when it is CUDA.
struct Chosen {
    backend: Box<dyn Backend>,
    device: Option<String>,
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
