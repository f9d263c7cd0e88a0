//! `cli bundle`: join the parts separate workers proved into the statement's proof.

use std::fmt::Write as _;
use std::time::Instant;

use anyhow::{Result, anyhow, bail};
use sha2::{Digest, Sha256};

use crate::args::BundleArgs;
use crate::output::{check_writable, print, write_atomic};
use crate::read::read;
use crate::resources::human_bytes;
use crate::summary::{self, ParamsJson};

/// Runs `cli bundle`: every part is read and checked, and the proof is written only if they
/// join into a whole one that verifies under the floor and cap `cli verify` applies — byte
/// for byte what `cli prove` of the statement writes.
pub fn run(args: &BundleArgs) -> Result<()> {
    check_writable(&args.output)?;
    let started = Instant::now();
    let policy = args.policy.policy();
    let mut parts = Vec::with_capacity(args.parts.len());
    for path in &args.parts {
        let name = path.display().to_string();
        match read(path, policy.max_proof_bytes)? {
            Err(reason) => bail!("{name} is not a valid part: {reason}"),
            Ok((part, _)) => parts.push((name, part)),
        }
    }
    let count = parts.len();
    let proof = ballast_workloads::bundle(parts, &policy).map_err(|e| anyhow!(e))?;
    let bytes = proof.to_bytes();
    write_atomic(&args.output, &bytes)?;
    let mut out = String::new();
    let _ = writeln!(out, "valid proof: {}", args.output.display());
    out.push_str(&summary::covered(&*proof, None));
    let _ = writeln!(
        out,
        "parameters: {}",
        summary::params(&ParamsJson::of(&*proof))
    );
    let _ = writeln!(
        out,
        "bundled:    {count} parts, {} segments, verified in {:.2} s",
        proof.statement_segments(),
        started.elapsed().as_secs_f64()
    );
    let _ = writeln!(
        out,
        "proof:      {} ({}, sha256 {})",
        args.output.display(),
        human_bytes(bytes.len() as u64),
        &hex::encode(Sha256::digest(&bytes))[..16]
    );
    print(&out)
}
