#![doc = include_str!("../README.md")]

mod error;
mod fold;
mod plan;
mod prover;
mod steps;
mod verifier;

pub use error::FriError;
pub use fold::{
    LOG_ARITY, fold_coset, fold_pair, layer_leaf, layer_row, roll_in_arities, round_arities,
};
pub use plan::{PlannedLayer, QueryPlan};
pub use prover::{FriCommitment, FriLayers, HostLayers, commit_layer, commit_phase};
pub use steps::label;
pub use verifier::{FriLayerOpening, FriVerifierInput, verify_queries};
