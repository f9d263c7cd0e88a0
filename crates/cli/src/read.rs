//! Reading proof files: the length a header states is judged before the rest is read, and
//! the file must hold exactly that many bytes.

use std::fs::File;
use std::io::Read as _;
use std::path::Path;

use anyhow::{Context, Result};
use ballast_stark::{ProofFormatError, peek};
use ballast_workloads::{
    AnyCompressed, AnyProof, MAX_HEADER_LEN, decode, decode_compressed, max_len,
};

/// What a proof file holds: a proof (whole or part) or a compressed proof.
pub enum ProofFile {
    /// A proof of some or all of a statement's segments.
    Proof(Box<dyn AnyProof>),
    /// A compressed proof of a statement.
    Compressed(Box<dyn AnyCompressed>),
}

/// The most bytes a proof file may state, and what sets that bound (named when a file
/// states more).
#[derive(Clone, Copy, Debug)]
pub struct Cap {
    /// The bound.
    pub bytes: u64,
    /// What sets it: a flag, or the default.
    pub set_by: &'static str,
}

impl Cap {
    /// The cap of the commands that take no flag for it.
    pub const DEFAULT: Cap = Cap {
        bytes: ballast_stark::DEFAULT_MAX_PROOF_BYTES,
        set_by: "the default cap of",
    };

    /// No cap: only the header's own bound applies.
    pub const NONE: Cap = Cap {
        bytes: u64::MAX,
        set_by: "no cap",
    };
}

/// A proof read from a file and its size in bytes, or why it is refused.
pub type Read = Result<(ProofFile, usize), String>;

/// Reads and decodes a proof, whole or part, or a compressed proof, by its magic. Its
/// header is read first: a stated length above
/// `cap`, or above what the header allows, is refused before anything else is read;
/// then exactly the stated length is read, and a file of another length is refused. `Err`
/// for unreadable input (I/O, not a ballast proof, another format version, an unknown
/// workload); `Ok(Err(reason))` for a malformed or refused proof; otherwise the proof and
/// its size.
pub fn read(path: &Path, cap: Cap) -> Result<Read> {
    let cannot_read = || format!("cannot read {}", path.display());
    let mut file = File::open(path).with_context(cannot_read)?;
    let mut bytes = Vec::new();
    (&mut file)
        .take(MAX_HEADER_LEN as u64)
        .read_to_end(&mut bytes)
        .with_context(cannot_read)?;
    let length = match peek(&bytes).and_then(|prefix| Ok((prefix, max_len(&bytes)?))) {
        Err(e) => return refused(path, e),
        Ok((prefix, _)) if prefix.length > cap.bytes => {
            return Ok(Err(format!(
                "its header states {} bytes, more than {} {}",
                prefix.length, cap.set_by, cap.bytes
            )));
        }
        Ok((prefix, max)) if prefix.length > max => {
            let e = ProofFormatError::TooLong {
                max,
                stated: prefix.length,
            };
            return Ok(Err(e.to_string()));
        }
        Ok((prefix, _)) => prefix.length,
    };
    // Exactly `length` bytes: never more, even if the file grows while it is read.
    let rest = length.saturating_sub(bytes.len() as u64);
    (&mut file)
        .take(rest)
        .read_to_end(&mut bytes)
        .with_context(cannot_read)?;
    let more = file.read(&mut [0u8; 1]).with_context(cannot_read)?;
    if bytes.len() as u64 != length || more > 0 {
        let got = if more > 0 {
            file.metadata()
                .map_or(0, |m| m.len())
                .max(bytes.len() as u64 + 1)
        } else {
            bytes.len() as u64
        };
        let e = ProofFormatError::StatedLength {
            stated: length,
            got,
        };
        return Ok(Err(e.to_string()));
    }
    let decoded = if peek(&bytes).is_ok_and(|prefix| prefix.compressed) {
        decode_compressed(&bytes).map(ProofFile::Compressed)
    } else {
        decode(&bytes).map(ProofFile::Proof)
    };
    match decoded {
        Err(e) => refused(path, e),
        Ok(file) => Ok(Ok((file, bytes.len()))),
    }
}

/// A file this build cannot read (`Err`), or a proof it refuses (`Ok(Err(reason))`).
fn refused(path: &Path, e: ProofFormatError) -> Result<Read> {
    match e {
        ProofFormatError::BadMagic
        | ProofFormatError::UnsupportedVersion { .. }
        | ProofFormatError::UnknownWorkload(_) => Err(anyhow::anyhow!("{}: {e}", path.display())),
        e => Ok(Err(e.to_string())),
    }
}
