#![doc = include_str!("../README.md")]

mod hash;
mod tree;

pub use hash::{Digest, compress, hash_leaf, hash_row};
pub use tree::{MerkleTree, verify_path};
