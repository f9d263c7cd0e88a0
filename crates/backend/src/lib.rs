#![doc = include_str!("../README.md")]

mod error;
mod ood;
mod seam;
mod stats;

pub use error::BackendError;
pub use ood::OodValues;
pub use seam::{
    Backend, CompositionInput, DeepCoefficients, Geometry, Openings, SegmentAir, SegmentProver,
    Staged,
};
pub use stats::{DeviceCounters, Phase, PhaseTimes};
