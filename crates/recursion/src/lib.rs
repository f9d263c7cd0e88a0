#![doc = include_str!("../README.md")]

mod child;
mod deep;
mod ext;
mod identity;
mod layer;
mod openings;
mod queries;
mod transcript;

pub use child::{ChildError, ChildQueries, ChildSegment, LayerInputs, LinkError};
pub use deep::{DeepAir, DeepClaims, WIDTH as DEEP_WIDTH};
pub use identity::{IdentityAir, IdentityError, OodClaims};
pub use layer::{LAYER_AIRS, LAYER_CONTEXT, LayerError, LayerProof, read_layer, verify_layer};
pub use openings::{Opened, OpeningsAir, OpeningsError, TreeShape, WIDTH as OPENINGS_WIDTH};
pub use queries::{ChildShape, MAX_LOG_FINAL_POLY_LEN, QueriesAir, WIDTH as QUERIES_WIDTH};
pub use transcript::{SAVED as TRANSCRIPT_SAVED, TranscriptAir, TranscriptError};
