#![doc = include_str!("../README.md")]

pub mod air;
pub mod constants;
mod duplex;
mod many;
mod permutation;
mod sponge;

pub use duplex::{Duplex, DuplexStep};
pub use many::{compress_many, hash_block_rows, hash_many, permute_many};
pub use permutation::{permute, permute_over};
pub use sponge::{
    DIGEST_BYTES, DIGEST_ELEMENTS, FeltDigest, RATE, compress, digest_from_bytes, digest_to_bytes,
    hash_elements, leaf_start, node_start,
};
