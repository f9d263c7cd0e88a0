//! `cli verify`: check a proof and say what it proves.

use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result};
use ballast_stark::{Proof, ProofFormatError, VerifyPolicy, verify_statement};
use serde::Serialize;

use crate::args::VerifyArgs;
use crate::output::{print, write_atomic};
use crate::summary::{self, ParamsJson, StatementJson};

#[derive(Serialize)]
struct VerifyReport {
    command: &'static str,
    proof_path: String,
    proof_bytes: usize,
    valid: bool,
    reason: Option<String>,
    statement: Option<StatementJson>,
    params: Option<ParamsJson>,
    verify_seconds: f64,
}

pub fn run(args: &VerifyArgs) -> Result<ExitCode> {
    if let Some(n) = args.threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(usize::from(n))
            .build_global()
            .context("cannot configure the thread pool")?;
    }
    let path = args.proof.display().to_string();
    let bytes = std::fs::read(&args.proof).with_context(|| format!("cannot read {path}"))?;
    let started = Instant::now();
    let policy = VerifyPolicy {
        min_security_bits: args.min_security_bits,
        ..VerifyPolicy::default()
    };
    let verdict = match Proof::from_bytes(&bytes) {
        // Not a ballast proof this build can read: unreadable input, not an invalid proof.
        Err(
            e @ (ProofFormatError::BadMagic
            | ProofFormatError::UnsupportedVersion { .. }
            | ProofFormatError::UnknownWorkload(_)),
        ) => return Err(anyhow::anyhow!("{path}: {e}")),
        Err(e) => Err(e.to_string()),
        Ok(proof) => verify_statement(&proof, &policy)
            .map(|()| proof)
            .map_err(|e| e.to_string()),
    };
    let verify_seconds = started.elapsed().as_secs_f64();
    let valid = verdict.as_ref().ok();
    let report = VerifyReport {
        command: "verify",
        proof_path: path.clone(),
        proof_bytes: bytes.len(),
        valid: valid.is_some(),
        reason: verdict.as_ref().err().cloned(),
        statement: valid.map(|p| StatementJson::new(&p.statement)),
        params: valid.map(|p| ParamsJson::new(&p.params, p.statement.shape.log_rows)),
        verify_seconds,
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
        Ok(proof) => {
            let s = &proof.statement;
            let mut out = String::new();
            let _ = writeln!(out, "valid proof: {path}");
            let _ = writeln!(out, "statement:  {}", summary::shape(&s.shape));
            let _ = writeln!(out, "            start {}", summary::row(&s.start));
            let _ = writeln!(out, "            end   {}", summary::row(&s.end));
            let _ = writeln!(
                out,
                "parameters: {}",
                summary::params(&proof.params, s.shape.log_rows)
            );
            let _ = writeln!(out, "verified in {:.1} ms", verify_seconds * 1e3);
            print(&out)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
