#![doc = include_str!("../README.md")]

use ballast_cpu::Kernels;
use sha3::{Digest as _, Keccak256};

mod sponge;

use sponge::{HashMany, HashRows};

pub use sponge::ROUND_CONSTANTS;

/// A Keccak-256 output.
pub type Digest = [u8; 32];

/// What a hashed message is for, written as its first byte. Every message ballast hashes
/// starts with the byte of its use and no two uses share one, so a message of one use is
/// never a message of another: a Merkle node cannot be read as a transcript step, a leaf as
/// a proof-of-work candidate, and so on (docs/protocol.md §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum HashDomain {
    /// A Merkle leaf: a row of a table or a FRI coset.
    MerkleLeaf = 0x00,
    /// A Merkle inner node: two child digests.
    MerkleNode = 0x01,
    /// The transcript's initial state, from the protocol's domain separator.
    TranscriptInit = 0x02,
    /// A labelled message absorbed into the transcript.
    TranscriptAbsorb = 0x03,
    /// The transcript's state advanced for a challenge.
    TranscriptSqueeze = 0x04,
    /// The words a challenge is read from.
    TranscriptStream = 0x05,
    /// A proof-of-work candidate: the transcript state and a nonce.
    ProofOfWork = 0x06,
    /// A statement's digest: the workload's tag and encoding, and the outcome.
    Statement = 0x07,
    /// An AIR's key: the encoding of its whole definition (since version 17, its length
    /// and its chunks' digests).
    AirKey = 0x08,
    /// One periodic column of an AIR, its values, whose digest its key holds (unless the AIR
    /// builds its columns from a source, which its key holds instead).
    PeriodicColumn = 0x09,
    /// One chunk of an AIR's key message, whose digest the key holds (version 17).
    AirKeyChunk = 0x0a,
}

impl HashDomain {
    /// Every domain.
    pub const ALL: [HashDomain; 11] = [
        HashDomain::MerkleLeaf,
        HashDomain::MerkleNode,
        HashDomain::TranscriptInit,
        HashDomain::TranscriptAbsorb,
        HashDomain::TranscriptSqueeze,
        HashDomain::TranscriptStream,
        HashDomain::ProofOfWork,
        HashDomain::Statement,
        HashDomain::AirKey,
        HashDomain::PeriodicColumn,
        HashDomain::AirKeyChunk,
    ];

    /// The byte a message of this domain starts with.
    pub const fn byte(self) -> u8 {
        self as u8
    }
}

/// `Keccak-256(domain ‖ bytes)`.
pub fn keccak256(domain: HashDomain, bytes: &[u8]) -> Digest {
    keccak256_concat(domain, &[bytes])
}

/// `Keccak-256(domain ‖ parts[0] ‖ parts[1] ‖ …)`.
pub fn keccak256_concat(domain: HashDomain, parts: &[&[u8]]) -> Digest {
    let mut hasher = Keccak256::new();
    hasher.update([domain.byte()]);
    for part in parts {
        hasher.update(part);
    }
    hasher.finalize().into()
}

/// `out[i] = Keccak-256(domain ‖ data[i·len .. (i + 1)·len])` for every `i`, with the
/// given kernels; one thread (callers parallelise over chunks).
///
/// # Panics
/// If `data` is not `out.len()` messages of `len` bytes.
pub fn keccak256_many(
    kernels: Kernels,
    domain: HashDomain,
    data: &[u8],
    len: usize,
    out: &mut [Digest],
) {
    let prefix = domain.byte();
    assert_eq!(
        data.len(),
        out.len() * len,
        "{} messages of {len} bytes",
        out.len()
    );
    let kernel = HashMany {
        prefix,
        data,
        len,
        out: &mut *out,
    };
    let done = ballast_field::packed::run(kernels, kernel).unwrap_or(0);
    // What the lanes left (a remainder of half a group or less), one message at a time.
    for (i, digest) in out.iter_mut().enumerate().skip(done) {
        *digest = keccak256(domain, &data[i * len..(i + 1) * len]);
    }
}

/// Rows hashed together by [`keccak256_rows`]: a block of a row-blocked table.
pub const BLOCK_ROWS: usize = 8;

/// `out[k] = Keccak-256(domain ‖ row k)` for the rows of one block of a table stored in
/// blocks of [`BLOCK_ROWS`] rows: `block` holds `width` runs of eight words, run c being
/// column c of rows 0..8, and a row's bytes are its words in little-endian order. On a SIMD
/// path each word loads as a register of rows. Only the first `out.len()` rows are hashed
/// (a table's last block may be partial).
///
/// # Panics
/// If `block` is not `width` runs of eight words or `out` holds more than eight digests.
pub fn keccak256_rows(
    kernels: Kernels,
    domain: HashDomain,
    block: &[u64],
    width: usize,
    out: &mut [Digest],
) {
    let prefix = domain.byte();
    assert_eq!(
        block.len(),
        BLOCK_ROWS * width,
        "{width} runs of {BLOCK_ROWS} words"
    );
    assert!(out.len() <= BLOCK_ROWS, "a block has {BLOCK_ROWS} rows");
    let mut all = [[0u8; 32]; BLOCK_ROWS];
    let kernel = HashRows {
        prefix,
        block,
        width,
        out: &mut all,
    };
    let done = ballast_field::packed::run(kernels, kernel).is_some();
    if done {
        out.copy_from_slice(&all[..out.len()]);
        return;
    }
    let mut row = Vec::with_capacity(8 * width);
    for (k, digest) in out.iter_mut().enumerate() {
        row.clear();
        row.extend(
            block
                .iter()
                .skip(k)
                .step_by(BLOCK_ROWS)
                .flat_map(|w| w.to_le_bytes()),
        );
        *digest = keccak256(domain, &row);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(d: &Digest) -> String {
        d.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn keccak_is_keccak_256_not_sha3() {
        // Keccak-256("") differs from SHA3-256("") only by padding; this is the Keccak value.
        let empty: Digest = Keccak256::digest([]).into();
        assert_eq!(
            hex(&empty),
            "c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"
        );
        let mut one_byte = [0u8; 32];
        keccak256_many(
            Kernels::Scalar,
            HashDomain::Statement,
            &[],
            0,
            std::slice::from_mut(&mut one_byte),
        );
        assert_eq!(one_byte, Keccak256::digest([0x07]).as_slice());
    }

    #[test]
    fn domains_are_distinct_bytes() {
        let bytes: std::collections::BTreeSet<u8> =
            HashDomain::ALL.iter().map(|d| d.byte()).collect();
        assert_eq!(bytes.len(), HashDomain::ALL.len());
        assert_eq!(
            keccak256_concat(HashDomain::TranscriptAbsorb, &[b"ab", b"c"]),
            keccak256(HashDomain::TranscriptAbsorb, b"abc")
        );
    }

    #[test]
    fn every_path_hashes_like_sha3() {
        // Lengths around the 136-byte rate: the padding's 0x01 and 0x80 in one byte (134),
        // in the next block (135), in two blocks, and several blocks; 41, a proof-of-work
        // candidate.
        let lens = [
            0, 1, 7, 8, 31, 41, 64, 127, 133, 134, 135, 136, 200, 256, 271, 272, 1000,
        ];
        for kernels in Kernels::supported() {
            for (k, len) in lens.into_iter().enumerate() {
                // Whole register groups plus a remainder on every path, every domain among
                // the lengths: 19 messages (a remainder of 3: 4 lanes pad it, 8 leave it), 14
                // (of 2 and 6: the other way round).
                for count in [19, 14] {
                    let domain = HashDomain::ALL[k % HashDomain::ALL.len()];
                    let data: Vec<u8> = (0..count * len)
                        .map(|i| (i as u8).wrapping_mul(31) ^ (i >> 8) as u8)
                        .collect();
                    let mut got = vec![[0u8; 32]; count];
                    keccak256_many(kernels, domain, &data, len, &mut got);
                    for (i, digest) in got.iter().enumerate() {
                        let mut message = vec![domain.byte()];
                        message.extend_from_slice(&data[i * len..(i + 1) * len]);
                        let want: Digest = Keccak256::digest(&message).into();
                        assert_eq!(
                            hex(digest),
                            hex(&want),
                            "{} path, length {len}, {count} messages, message {i}",
                            kernels.path()
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn rows_of_a_block_hash_like_sha3_on_every_path() {
        // Widths around the rate: 16 words (129 bytes with the prefix), 17 (137: two blocks),
        // and wide rows of several blocks, with the pad bytes meeting (134/135 + 1 bytes).
        for width in [0usize, 1, 2, 16, 17, 33, 50, 2349] {
            let block: Vec<u64> = (0..8 * width as u64)
                .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (i << 7))
                .collect();
            for kernels in Kernels::supported() {
                for rows in [8usize, 5] {
                    let mut got = vec![[0u8; 32]; rows];
                    keccak256_rows(kernels, HashDomain::MerkleLeaf, &block, width, &mut got);
                    for (k, digest) in got.iter().enumerate() {
                        let mut message = vec![HashDomain::MerkleLeaf.byte()];
                        for c in 0..width {
                            message.extend_from_slice(&block[8 * c + k].to_le_bytes());
                        }
                        let want: Digest = Keccak256::digest(&message).into();
                        assert_eq!(
                            hex(digest),
                            hex(&want),
                            "{} path, width {width}, row {k}",
                            kernels.path()
                        );
                    }
                }
            }
        }
    }
}
