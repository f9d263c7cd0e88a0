#![doc = include_str!("../README.md")]

mod kernels;
mod lde;
mod poly;
mod radix2;
mod twiddles;

pub use lde::{ColumnForm, LdePlan, from_cosets, split_into_chunks};
pub use poly::{evaluate_poly, interpolate_coset};
pub use radix2::{dif, dit};
pub use twiddles::{Twiddles, bit_reverse, bit_reversed_powers, coset_points};
