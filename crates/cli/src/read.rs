//! Reading proof and part files, never past what their headers allow.

use std::fs::File;
use std::io::Read as _;
use std::path::Path;

use anyhow::{Context, Result};
use ballast_stark::ProofFormatError;
use ballast_workloads::{AnyPart, AnyProof, MAX_HEADER_LEN};

/// A decoded file: a whole proof, or a part of one.
pub enum Decoded {
    /// A proof of a whole statement.
    Proof(AnyProof),
    /// A part (`cli prove --parts`).
    Part(AnyPart),
}

/// Why a readable proof or part file is not a valid one.
pub struct Invalid {
    /// Whether the file is a part (by its magic).
    pub is_part: bool,
    /// What is wrong with it.
    pub reason: String,
}

/// Reads and decodes a proof or part. The header alone bounds the file's size, so a header
/// that allows more than `max_bytes`, or a file larger than its header allows, is refused
/// before the rest is loaded. `Err` for unreadable input (I/O, not a ballast proof or part,
/// another format version); `Ok(Err(_))` for a malformed one; otherwise the file and its
/// size.
pub fn read(path: &Path, max_bytes: u64) -> Result<Result<(Decoded, usize), Invalid>> {
    let cannot_read = || format!("cannot read {}", path.display());
    let mut file = File::open(path).with_context(cannot_read)?;
    let size = file.metadata().with_context(cannot_read)?.len();
    let mut bytes = Vec::new();
    (&mut file)
        .take(MAX_HEADER_LEN as u64)
        .read_to_end(&mut bytes)
        .with_context(cannot_read)?;
    let is_part = AnyPart::is_part(&bytes);
    let max_len = if is_part {
        AnyPart::max_len(&bytes)
    } else {
        AnyProof::max_len(&bytes)
    };
    let decoded = match max_len {
        Ok(max) if max > max_bytes => {
            return Ok(Err(Invalid {
                is_part,
                reason: format!(
                    "its header allows {max} bytes, more than --max-proof-bytes {max_bytes}"
                ),
            }));
        }
        Ok(max) if size > max => Err(ProofFormatError::TooLong { max, got: size }),
        Ok(max) => {
            // Never read past the bound, even if the file grows after the size check.
            let rest = max.saturating_add(1).saturating_sub(bytes.len() as u64);
            (&mut file)
                .take(rest)
                .read_to_end(&mut bytes)
                .with_context(cannot_read)?;
            if is_part {
                AnyPart::from_bytes(&bytes).map(Decoded::Part)
            } else {
                AnyProof::from_bytes(&bytes).map(Decoded::Proof)
            }
        }
        Err(e) => Err(e),
    };
    match decoded {
        // Not a ballast file this build can read: unreadable input, not an invalid proof.
        Err(
            e @ (ProofFormatError::BadMagic
            | ProofFormatError::UnsupportedVersion { .. }
            | ProofFormatError::UnknownWorkload(_)),
        ) => Err(anyhow::anyhow!("{}: {e}", path.display())),
        Err(e) => Ok(Err(Invalid {
            is_part,
            reason: e.to_string(),
        })),
        Ok(decoded) => Ok(Ok((decoded, bytes.len()))),
    }
}
