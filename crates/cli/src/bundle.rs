//! `cli bundle`: join the parts separate workers proved into the statement's proof.

use std::fmt::Write as _;
use std::time::Instant;

use anyhow::{Result, anyhow, bail};
use ballast_stark::{DEFAULT_MIN_SECURITY_BITS, VerifyPolicy};
use sha2::{Digest, Sha256};

use crate::args::BundleArgs;
use crate::output::{check_writable, print, write_atomic};
use crate::read::{Cap, ProofFile, read};
use crate::resources::human_bytes;
use crate::summary::{self, ParamsJson};

/// Runs `cli bundle`: every part is read and checked, and the proof is written only if they
/// join into a whole one whose every segment verifies — byte for byte what `cli prove` of
/// the statement writes. The parameters were chosen when the parts were proven, so no
/// security floor is applied, and the output says so: `cli verify` gives the verdict.
pub fn run(args: &BundleArgs) -> Result<()> {
    check_writable(&args.output)?;
    let started = Instant::now();
    let mut parts = Vec::with_capacity(args.parts.len());
    for path in &args.parts {
        let name = path.display().to_string();
        match read(path, Cap::NONE)? {
            Err(reason) => bail!("{name} is not a valid part: {reason}"),
            Ok((ProofFile::Proof(part), _)) => parts.push((name, part)),
            Ok((ProofFile::Compressed(_), _)) => {
                bail!(
                    "{name} is a compressed proof, not a part: bundling compressed proofs needs aggregation layers, which this build does not have"
                )
            }
        }
    }
    let count = parts.len();
    let unjudged = VerifyPolicy {
        min_security_bits: 0,
        max_proof_bytes: u64::MAX,
        ..VerifyPolicy::default()
    };
    let proof = ballast_workloads::bundle(parts, &unjudged).map_err(|e| anyhow!(e))?;
    let bytes = proof.to_bytes();
    write_atomic(&args.output, &bytes)?;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "bundled:    {count} parts, {} segments, each segment checked, in {:.2} s",
        proof.statement_segments(),
        started.elapsed().as_secs_f64()
    );
    let digest = proof
        .statement_digest()
        .expect("a bundle covers the statement");
    let _ = writeln!(out, "claims:     {}", proof.summary());
    let _ = writeln!(out, "            digest {}", hex::encode(digest));
    let _ = writeln!(
        out,
        "parameters: {}",
        summary::params(&ParamsJson::of(&*proof))
    );
    let _ = writeln!(
        out,
        "verdict:    none: no security floor applied; `cli verify {}` judges it (floor {} bits by default)",
        args.output.display(),
        DEFAULT_MIN_SECURITY_BITS
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
