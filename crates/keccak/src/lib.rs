#![doc = include_str!("../README.md")]

use ballast_cpu::Kernels;
use sha3::{Digest as _, Keccak256};

mod lanes;
mod sponge;

#[cfg(target_arch = "x86_64")]
use sponge::{avx2, avx512};

pub use sponge::ROUND_CONSTANTS;

/// A Keccak-256 output.
pub type Digest = [u8; 32];

/// `Keccak-256(prefix ‖ bytes)`.
pub fn keccak256(prefix: u8, bytes: &[u8]) -> Digest {
    let mut hasher = Keccak256::new();
    hasher.update([prefix]);
    hasher.update(bytes);
    hasher.finalize().into()
}

/// `out[i] = Keccak-256(prefix ‖ data[i·len .. (i + 1)·len])` for every `i`, with the
/// given kernels; one thread (callers parallelise over chunks).
///
/// # Panics
/// If `data` is not `out.len()` messages of `len` bytes.
pub fn keccak256_many(kernels: Kernels, prefix: u8, data: &[u8], len: usize, out: &mut [Digest]) {
    assert_eq!(
        data.len(),
        out.len() * len,
        "{} messages of {len} bytes",
        out.len()
    );
    let done =
        ballast_cpu::dispatch!(kernels, isa => isa::hash_many(prefix, data, len, out), _ => 0);
    // What no whole register group covered, one message at a time.
    for (i, digest) in out.iter_mut().enumerate().skip(done) {
        *digest = keccak256(prefix, &data[i * len..(i + 1) * len]);
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
            0xcc,
            &[],
            0,
            std::slice::from_mut(&mut one_byte),
        );
        assert_eq!(one_byte, Keccak256::digest([0xcc]).as_slice());
    }

    #[test]
    fn every_path_hashes_like_sha3() {
        // Lengths around the 136-byte rate: the padding's 0x01 and 0x80 in one byte (134),
        // in the next block (135), in two blocks, and several blocks.
        let lens = [
            0, 1, 7, 8, 31, 64, 127, 133, 134, 135, 136, 200, 256, 271, 272, 1000,
        ];
        for kernels in Kernels::supported() {
            for len in lens {
                // 19 messages: whole register groups plus a remainder on every path.
                let count = 19;
                let data: Vec<u8> = (0..count * len)
                    .map(|i| (i as u8).wrapping_mul(31) ^ (i >> 8) as u8)
                    .collect();
                let mut got = vec![[0u8; 32]; count];
                keccak256_many(kernels, 0x5a, &data, len, &mut got);
                for (i, digest) in got.iter().enumerate() {
                    let mut message = vec![0x5a];
                    message.extend_from_slice(&data[i * len..(i + 1) * len]);
                    let want: Digest = Keccak256::digest(&message).into();
                    assert_eq!(
                        hex(digest),
                        hex(&want),
                        "{} path, length {len}, message {i}",
                        kernels.path()
                    );
                }
            }
        }
    }
}
