#![doc = include_str!("../README.md")]

mod batch;
mod dot;
mod element;
mod ext;
mod felt;
mod matrix;
pub mod packed;

pub use batch::{batch_inverse, inverse_differences};
pub use dot::{dot_ext_base, dot_rows};
pub use element::{Algebra, FieldElement};
pub use ext::Ext3;
pub use felt::{Felt, TWO_ADICITY};
pub use matrix::ColMatrix;
