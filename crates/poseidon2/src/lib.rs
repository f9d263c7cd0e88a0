#![doc = include_str!("../README.md")]

pub mod constants;
mod permutation;
mod sponge;

pub use permutation::permute;
pub use sponge::{
    DIGEST_BYTES, DIGEST_ELEMENTS, FeltDigest, RATE, compress, digest_from_bytes, digest_to_bytes,
    hash_elements,
};
