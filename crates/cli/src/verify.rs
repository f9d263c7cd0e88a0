//! `cli verify`: check a proof and say what it proves.

use std::fmt::Write as _;
use std::fs::File;
use std::io::Read as _;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use ballast_stark::{ProofFormatError, VerifyPolicy};
use ballast_workloads::{AnyProof, MAX_HEADER_LEN};
use serde::Serialize;

use crate::args::VerifyArgs;
use crate::output::{check_writable, print, write_atomic};
use crate::summary::{self, ParamsJson};

#[derive(Serialize)]
struct VerifyReport {
    command: &'static str,
    proof_path: String,
    proof_bytes: Option<usize>,
    valid: bool,
    reason: Option<String>,
    statement: Option<serde_json::Value>,
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
    let verdict = match read_proof(&args.proof, &policy)? {
        Err(reason) => Err(reason),
        Ok((proof, bytes)) => check(&proof, &policy, args).map(|()| (proof, bytes)),
    };
    let verify_seconds = started.elapsed().as_secs_f64();
    let valid = verdict.as_ref().ok();
    let report = VerifyReport {
        command: "verify",
        proof_path: path.clone(),
        proof_bytes: valid.map(|(_, bytes)| *bytes),
        valid: valid.is_some(),
        reason: verdict.as_ref().err().cloned(),
        statement: valid.map(|(p, _)| p.statement_json()),
        params: valid.map(|(p, _)| ParamsJson::new(p)),
        verify_seconds,
        cpu_path: ballast_cpu::active().name(),
    };
    if let Some(out) = &args.report {
        let json = serde_json::to_vec_pretty(&report).context("cannot encode the report")?;
        write_atomic(out, &json)?;
    }
    match verdict {
        Err(reason) => {
            eprintln!("cli: invalid proof {path}: {reason}");
            Ok(ExitCode::from(1))
        }
        Ok((proof, _)) => {
            let mut out = String::new();
            let _ = writeln!(out, "valid proof: {path}");
            out.push_str(&summary::statement(&proof));
            let _ = writeln!(out, "parameters: {}", summary::params(&proof));
            let _ = writeln!(out, "verified in {:.1} ms", verify_seconds * 1e3);
            print(&out)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Reads and decodes a proof. The header alone bounds the proof's size, so a header that
/// allows more than the policy's cap, or a file larger than its header allows, is refused
/// before the rest is loaded. `Err` for unreadable input (I/O, not a ballast
/// proof, another format version); `Ok(Err(reason))` for an invalid proof.
fn read_proof(path: &Path, policy: &VerifyPolicy) -> Result<Result<(AnyProof, usize), String>> {
    let cannot_read = || format!("cannot read {}", path.display());
    let mut file = File::open(path).with_context(cannot_read)?;
    let size = file.metadata().with_context(cannot_read)?.len();
    let mut bytes = Vec::new();
    (&mut file)
        .take(MAX_HEADER_LEN as u64)
        .read_to_end(&mut bytes)
        .with_context(cannot_read)?;
    let decoded = match AnyProof::max_len(&bytes) {
        Ok(max) if policy.check_size(max).is_err() => {
            return Ok(Err(format!(
                "its header allows {max} bytes, more than --max-proof-bytes {}",
                policy.max_proof_bytes
            )));
        }
        Ok(max) if size > max => Err(ProofFormatError::TooLong { max, got: size }),
        Ok(max) => {
            // Never read past the bound, even if the file grows after the size check.
            let rest = (max + 1).saturating_sub(bytes.len() as u64);
            (&mut file)
                .take(rest)
                .read_to_end(&mut bytes)
                .with_context(cannot_read)?;
            AnyProof::from_bytes(&bytes)
        }
        Err(e) => Err(e),
    };
    match decoded {
        // Not a ballast proof this build can read: unreadable input, not an invalid proof.
        Err(
            e @ (ProofFormatError::BadMagic
            | ProofFormatError::UnsupportedVersion { .. }
            | ProofFormatError::UnknownWorkload(_)),
        ) => Err(anyhow::anyhow!("{}: {e}", path.display())),
        Err(e) => Ok(Err(e.to_string())),
        Ok(proof) => Ok(Ok((proof, bytes.len()))),
    }
}

/// Verifies the proof and the statement the user expects.
fn check(proof: &AnyProof, policy: &VerifyPolicy, args: &VerifyArgs) -> Result<(), String> {
    proof.verify(policy).map_err(|e| e.to_string())?;
    let digest = proof.statement_digest();
    match args.expect_statement {
        Some(expected) if expected != digest => Err(format!(
            "it proves statement {}, not the expected {}",
            summary::hex(&digest),
            summary::hex(&expected)
        )),
        _ => Ok(()),
    }
}
