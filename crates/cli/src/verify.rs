//! `cli verify`: check a proof and say what it proves.

use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use ballast_stark::VerifyPolicy;
use ballast_workloads::{AnyPart, AnyProof};
use serde::Serialize;

use crate::args::VerifyArgs;
use crate::output::{check_writable, print, write_atomic};
use crate::read::{Decoded, read};
use crate::summary::{self, ParamsJson, PartJson};

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
    verify_seconds: f64,
    /// The CPU kernels' SIMD path.
    cpu_path: &'static str,
}

/// Runs `cli verify`: exit 0 for a valid proof, 1 for an invalid one.
pub fn run(args: &VerifyArgs) -> Result<ExitCode> {
    if let Some(report) = &args.report {
        check_writable(report)?;
    }
    let path = args.proof.display().to_string();
    let started = Instant::now();
    let policy = VerifyPolicy {
        min_security_bits: args.min_security_bits,
        max_proof_bytes: args.max_proof_bytes,
        ..VerifyPolicy::default()
    };
    let decoded = read(&args.proof, policy.max_proof_bytes)?;
    let is_part = match &decoded {
        Ok((decoded, _)) => matches!(decoded, Decoded::Part(_)),
        Err(invalid) => invalid.is_part,
    };
    let kind = if is_part { "part" } else { "proof" };
    let verdict = match decoded {
        Err(invalid) => Err(invalid.reason),
        Ok((Decoded::Proof(proof), bytes)) => {
            check(&proof, &policy, args).map(|()| (Decoded::Proof(proof), bytes))
        }
        Ok((Decoded::Part(part), bytes)) => {
            if args.expect_statement.is_some() {
                Err(format!(
                    "it is a part of a statement (segments {}..{}), not a whole proof: \
                     --expect-statement needs the bundled proof",
                    part.range().start,
                    part.range().end
                ))
            } else {
                check_part(&part, &policy).map(|()| (Decoded::Part(part), bytes))
            }
        }
    };
    let verify_seconds = started.elapsed().as_secs_f64();
    let valid = verdict.as_ref().ok();
    let report = VerifyReport {
        command: "verify",
        kind,
        proof_path: path.clone(),
        proof_bytes: valid.map(|(_, bytes)| *bytes),
        valid: valid.is_some(),
        reason: verdict.as_ref().err().cloned(),
        statement: valid.map(|(d, _)| match d {
            Decoded::Proof(p) => p.statement_json(),
            Decoded::Part(p) => p.computation_json(),
        }),
        part: valid.and_then(|(d, _)| match d {
            Decoded::Proof(_) => None,
            Decoded::Part(p) => Some(PartJson::new(p)),
        }),
        params: valid.map(|(d, _)| match d {
            Decoded::Proof(p) => ParamsJson::of_proof(p),
            Decoded::Part(p) => ParamsJson::of_part(p),
        }),
        verify_seconds,
        cpu_path: ballast_cpu::active().name(),
    };
    if let Some(out) = &args.report {
        let json = serde_json::to_vec_pretty(&report).context("cannot encode the report")?;
        write_atomic(out, &json)?;
    }
    match verdict {
        Err(reason) => {
            eprintln!("cli: invalid {kind} {path}: {reason}");
            Ok(ExitCode::from(1))
        }
        Ok((decoded, _)) => {
            let mut out = String::new();
            let _ = writeln!(out, "valid {kind}: {path}");
            match &decoded {
                Decoded::Proof(p) => out.push_str(&summary::statement(p)),
                Decoded::Part(p) => {
                    out.push_str(&summary::part(p, None));
                    out.push_str(&start_note(p));
                }
            }
            let params = report.params.as_ref().expect("a valid file has parameters");
            let _ = writeln!(out, "parameters: {}", summary::params(params));
            let _ = writeln!(out, "verified in {:.1} ms", verify_seconds * 1e3);
            print(&out)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// What a valid part proves about where it starts.
fn start_note(part: &AnyPart) -> String {
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

/// Verifies a part on its own.
fn check_part(part: &AnyPart, policy: &VerifyPolicy) -> Result<(), String> {
    part.verify(policy).map_err(|e| e.to_string())
}

/// Verifies the proof and the statement the user expects.
fn check(proof: &AnyProof, policy: &VerifyPolicy, args: &VerifyArgs) -> Result<(), String> {
    proof.verify(policy).map_err(|e| e.to_string())?;
    let digest = proof.statement_digest();
    match args.expect_statement {
        Some(expected) if expected != digest => Err(format!(
            "it proves statement {}, not the expected {}",
            hex::encode(digest),
            hex::encode(expected)
        )),
        _ => Ok(()),
    }
}
