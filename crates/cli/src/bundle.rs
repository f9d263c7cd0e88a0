//! `cli bundle`: join the parts separate workers proved into the statement's proof.

use std::fmt::Write as _;
use std::time::Instant;

use anyhow::{Result, anyhow, bail};
use ballast_stark::VerifyPolicy;
use sha2::{Digest, Sha256};

use crate::args::BundleArgs;
use crate::output::{check_writable, print, write_atomic};
use crate::read::{Decoded, read};
use crate::resources::human_bytes;
use crate::summary;

/// Runs `cli bundle`: every part is read and checked, and the proof is written only if they
/// join into a whole one — byte for byte what `cli prove` of the statement writes.
pub fn run(args: &BundleArgs) -> Result<()> {
    check_writable(&args.output)?;
    let started = Instant::now();
    let mut parts = Vec::with_capacity(args.parts.len());
    for path in &args.parts {
        let name = path.display().to_string();
        let part = match read(path, u64::MAX)? {
            Err(invalid) => bail!("{name} is not a valid part: {}", invalid.reason),
            Ok((Decoded::Proof(_), _)) => {
                bail!("{name} is a whole proof, not a part (`cli prove --parts` writes parts)")
            }
            Ok((Decoded::Part(part), _)) => part,
        };
        parts.push((name, part));
    }
    let count = parts.len();
    // The parameters were chosen when the parts were proven; the bundle reproduces that
    // proof whatever its security, which `cli verify` then judges.
    let policy = VerifyPolicy {
        min_security_bits: 0,
        max_proof_bytes: u64::MAX,
        params: None,
    };
    let proof = ballast_workloads::AnyPart::bundle(parts, &policy).map_err(|e| anyhow!(e))?;
    let bytes = proof.to_bytes();
    write_atomic(&args.output, &bytes)?;
    let mut out = String::new();
    out.push_str(&summary::statement(&proof));
    let _ = writeln!(
        out,
        "bundled:    {count} parts, {} segments, checked in {:.2} s",
        proof.segments(),
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
