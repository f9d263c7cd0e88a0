#![doc = include_str!("../README.md")]

mod error;
mod hash;
mod mixed;
mod tree;

pub use error::MerkleError;
pub use hash::{Digest, MerkleHash};
pub use mixed::{MixedShape, MixedTree, TableShape, mixed_paths, verify_mixed};
pub use tree::{
    MerkleTree, batch_opening_len, batch_opening_nodes, batch_paths, check_indices, verify_batch,
};
