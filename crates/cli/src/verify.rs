//! `cli verify`: check a proof and say what it proves.

use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use ballast_stark::VerifyPolicy;
use ballast_workloads::{AnyCompressed, AnyProof};
use serde::Serialize;

use crate::args::VerifyArgs;
use crate::compress::{LayerJson, Layers, statement_lines};
use crate::output::{check_writable, print, write_atomic};
use crate::read::{Cap, ProofFile, read};
use crate::summary::{self, ParamsJson, PartJson, SecurityJson, soundcalc_json};

#[derive(Serialize)]
struct VerifyReport {
    command: &'static str,
    /// `proof` or `part`: a valid part is not a proof of a statement.
    kind: &'static str,
    proof_path: String,
    proof_bytes: Option<usize>,
    valid: bool,
    reason: Option<String>,
    /// The statement; for a part, the computation alone.
    statement: Option<serde_json::Value>,
    /// For a part: the segments it covers.
    #[serde(skip_serializing_if = "Option::is_none")]
    part: Option<PartJson>,
    params: Option<ParamsJson>,
    /// The security of each regime, round by round.
    #[serde(skip_serializing_if = "Option::is_none")]
    security: Option<SecurityJson>,
    /// The proof's parameters in soundcalc's circuit configuration (its TOML keys).
    #[serde(skip_serializing_if = "Option::is_none")]
    soundcalc: Option<serde_json::Value>,
    verify_seconds: f64,
    /// The CPU kernels' SIMD path.
    cpu_path: &'static str,
}

/// Runs `cli verify`: exit 0 for a valid proof (or, with `--part`, a valid part), 1 for an
/// invalid one or a part without `--part`.
pub fn run(args: &VerifyArgs) -> Result<ExitCode> {
    if let Some(report) = &args.report {
        check_writable(report)?;
    }
    let path = args.proof.display().to_string();
    let started = Instant::now();
    let policy = VerifyPolicy {
        min_security_bits: args.min_security_bits,
        regime: args.regime,
        hash: args.hash,
        max_proof_bytes: args.max_proof_bytes,
        ..VerifyPolicy::default()
    };
    let (kind, verdict) = match read(
        &args.proof,
        Cap {
            bytes: policy.max_proof_bytes,
            set_by: "--max-proof-bytes",
        },
    )? {
        Err(reason) => ("proof", Err(Refusal::Invalid(reason))),
        Ok((ProofFile::Compressed(compressed), bytes)) => {
            return run_compressed(args, &policy, &*compressed, bytes, started);
        }
        Ok((ProofFile::Proof(proof), bytes)) => {
            let kind = if proof.is_whole() { "proof" } else { "part" };
            (kind, check(&*proof, &policy, args).map(|()| (proof, bytes)))
        }
    };
    let verify_seconds = started.elapsed().as_secs_f64();
    let valid = verdict.as_ref().ok();
    let circuit = valid.and_then(|(p, _)| p.circuit().ok());
    let report = VerifyReport {
        command: "verify",
        kind,
        proof_path: path.clone(),
        proof_bytes: valid.map(|(_, bytes)| *bytes),
        valid: valid.is_some(),
        reason: verdict.as_ref().err().map(Refusal::reason),
        statement: valid.map(|(p, _)| p.json()),
        part: valid
            .filter(|(p, _)| !p.is_whole())
            .map(|(p, _)| PartJson::new(&**p)),
        params: valid.map(|(p, _)| ParamsJson::of(&**p)),
        security: circuit.as_ref().map(SecurityJson::of),
        soundcalc: circuit.as_ref().map(soundcalc_json),
        verify_seconds,
        cpu_path: ballast_cpu::active().name(),
    };
    if let Some(out) = &args.report {
        let json = serde_json::to_vec_pretty(&report).context("cannot encode the report")?;
        write_atomic(out, &json)?;
    }
    match verdict {
        Err(Refusal::Invalid(reason)) => {
            eprintln!("cli: invalid {kind} {path}: {reason}");
            Ok(ExitCode::from(1))
        }
        Err(Refusal::Part(reason)) => {
            eprintln!("cli: {path} {reason}");
            Ok(ExitCode::from(1))
        }
        Ok((proof, _)) => {
            let mut out = String::new();
            let _ = writeln!(out, "valid {kind}: {path}");
            out.push_str(&summary::covered(&*proof, None));
            if !proof.is_whole() {
                out.push_str(&start_note(&*proof));
            }
            let params = report.params.as_ref().expect("a valid file has parameters");
            let _ = writeln!(out, "parameters: {}", summary::params(params));
            if let Some(circuit) = &circuit {
                out.push_str(&summary::security(circuit));
            }
            let _ = writeln!(out, "verified in {:.1} ms", verify_seconds * 1e3);
            print(&out)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// What `cli verify --report` writes for a compressed proof.
#[derive(Serialize)]
struct CompressedReport {
    command: &'static str,
    /// `compressed`.
    kind: &'static str,
    proof_path: String,
    proof_bytes: usize,
    valid: bool,
    reason: Option<String>,
    /// The statement, for a valid proof: the uncompressed proof's, with its digest.
    statement: Option<serde_json::Value>,
    /// Each layer, in proving order, with its parameters and security.
    layers: Option<Vec<LayerJson>>,
    /// The weakest layer's security, each regime round by round: the proof's.
    #[serde(skip_serializing_if = "Option::is_none")]
    security: Option<SecurityJson>,
    verify_seconds: f64,
    cpu_path: &'static str,
}

/// `cli verify` of a compressed proof of `bytes` bytes: exit 0 if it verifies under
/// `policy` and proves the statement expected, 1 otherwise. It proves a whole statement,
/// so `--part` changes nothing.
fn run_compressed(
    args: &VerifyArgs,
    policy: &VerifyPolicy,
    compressed: &dyn AnyCompressed,
    bytes: usize,
    started: Instant,
) -> Result<ExitCode> {
    let path = args.proof.display().to_string();
    let digest = compressed.statement_digest();
    let verdict = compressed
        .verify(policy)
        .map_err(|e| e.to_string())
        .and_then(|circuits| match args.expect_statement {
            Some(expected) if expected != digest => Err(not_expected(digest, expected)),
            _ => Ok(circuits),
        });
    let verify_seconds = started.elapsed().as_secs_f64();
    let verdict = verdict.map(|circuits| Layers::of(&circuits));
    let layers = verdict.as_ref().ok();
    let report = CompressedReport {
        command: "verify",
        kind: "compressed",
        proof_path: path.clone(),
        proof_bytes: bytes,
        valid: layers.is_some(),
        reason: verdict.as_ref().err().cloned(),
        statement: layers.map(|_| compressed.json()),
        layers: layers.map(Layers::json),
        security: layers.map(Layers::security),
        verify_seconds,
        cpu_path: ballast_cpu::active().name(),
    };
    if let Some(out) = &args.report {
        let json = serde_json::to_vec_pretty(&report).context("cannot encode the report")?;
        write_atomic(out, &json)?;
    }
    match verdict {
        Err(reason) => {
            eprintln!("cli: invalid compressed proof {path}: {reason}");
            Ok(ExitCode::from(1))
        }
        Ok(layers) => {
            let mut out = format!("valid compressed proof: {path} ({bytes} bytes)\n");
            out.push_str(&statement_lines(compressed));
            out.push_str(&layers.lines());
            let _ = writeln!(out, "verified in {:.1} ms", verify_seconds * 1e3);
            print(&out)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// What a valid part proves about where it starts.
fn start_note(part: &dyn AnyProof) -> String {
    let first = part.range().start;
    if first == 0 {
        "            from the statement's start; `cli bundle` joins it with the other parts\n"
            .to_owned()
    } else {
        format!(
            "            from the state it names for segment {first}'s start: valid if segment \
             {} ends there, which `cli bundle` checks\n",
            first - 1
        )
    }
}

/// Why `cli verify` says no.
enum Refusal {
    /// The file is no valid proof or part, or not of the expected statement.
    Invalid(String),
    /// A valid part, without `--part`: it proves no statement.
    Part(String),
}

impl Refusal {
    fn reason(&self) -> String {
        match self {
            Self::Invalid(reason) | Self::Part(reason) => reason.clone(),
        }
    }
}

/// Verifies the proof, and what the user asked of it: a whole proof (unless `--part`), of the
/// statement they expect. A part has no statement to compare.
fn check(proof: &dyn AnyProof, policy: &VerifyPolicy, args: &VerifyArgs) -> Result<(), Refusal> {
    let verify = || {
        proof
            .verify(policy)
            .map_err(|e| Refusal::Invalid(e.to_string()))
    };
    let range = proof.range();
    let Some(expected) = args.expect_statement else {
        verify()?;
        if !proof.is_whole() && !args.part {
            return Err(Refusal::Part(format!(
                "is a valid part of {} (segments {}..{} of {}), not a whole proof: a part \
                 proves no statement; `cli bundle` joins the parts, `--part` accepts one",
                proof.summary(),
                range.start,
                range.end,
                proof.statement_segments()
            )));
        }
        return Ok(());
    };
    let Some(digest) = proof.statement_digest() else {
        return Err(Refusal::Invalid(format!(
            "it is a part of a statement (segments {}..{}), not a whole proof: \
             --expect-statement needs the bundled proof",
            range.start, range.end
        )));
    };
    verify()?;
    if digest != expected {
        return Err(Refusal::Invalid(not_expected(digest, expected)));
    }
    Ok(())
}

/// Why a proof of statement `digest` is not the one `--expect-statement` names.
fn not_expected(digest: [u8; 32], expected: [u8; 32]) -> String {
    format!(
        "it proves statement {}, not the expected {}",
        hex::encode(digest),
        hex::encode(expected)
    )
}
