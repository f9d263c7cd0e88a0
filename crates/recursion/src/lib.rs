#![doc = include_str!("../README.md")]

mod child;
mod compress;
mod deep;
mod ext;
mod identity;
mod layer;
mod layer_child;
mod node;
mod openings;
mod queries;
mod transcript;

use ballast_poseidon2::air::Sbox;

/// The S-boxes of the layer's AIRs: whole, so a permutation keeps 118 columns, not 236,
/// and their constraints have degree 7, which takes a blowup of 8 or more (the blowups a
/// layer is proven at: its bytes are its queries times its width).
pub const SBOX: Sbox = Sbox::Whole;

pub use child::{Child, ChildError, ChildQueries, LinkError};
pub use compress::{
    CompressError, CompressedCircuits, CompressedPart, DEFAULT_LAST_LAYER, DEFAULT_NODE_LAYER,
    compress, compress_part, join_parts, plan_compression, verify_compressed, weakest,
};
pub use deep::{ClaimedSums, DeepAir, DeepClaims, WIDTH as DEEP_WIDTH};
pub use identity::{IdentityAir, IdentityError, OodClaims};
pub use layer::{
    LAYER_AIRS, LAYER_CONTEXT, LayerError, LayerProof, LayerRole, MAX_LAST_LOG_FINAL_POLY_LEN,
    read_layer, record_layer, verify_layer, verify_record,
};
pub use layer_child::{
    TreeLevel, TreePlan, read_layer_over_layers, verify_layer_over_layers, verify_layer_over_node,
    verify_record_over_layers, verify_record_over_node, verify_record_over_tree, verify_tree,
};
pub use node::{
    Segment, node_params, node_record, part_statements, prove_node, segment_statements,
    verify_node, verify_node_record,
};
pub use openings::{
    Join, Opened, OpeningsAir, OpeningsError, Tree, TreeShape, WIDTH as OPENINGS_WIDTH,
};
pub use queries::{ChildShape, MAX_LOG_FINAL_POLY_LEN, QueriesAir, WIDTH as QUERIES_WIDTH};
pub use transcript::{SAVED as TRANSCRIPT_SAVED, TranscriptAir, TranscriptError};
