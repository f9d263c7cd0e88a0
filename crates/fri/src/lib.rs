#![doc = include_str!("../README.md")]

mod error;
mod fold;
mod prover;
mod verifier;

pub use error::FriError;
pub use fold::{fold_pair, layer_leaf};
pub use prover::{FriCommitment, commit, commit_layer_cpu};
pub use verifier::{FriLayerProof, FriVerifierInput, verify_query};
