#![doc = include_str!("../README.md")]

mod batch;
mod blocks;
mod column_major;
mod dot;
mod element;
mod ext;
mod felt;
pub mod packed;

pub use ballast_cpu::prefetch;
pub use batch::{batch_inverse, inverse_differences};
pub use blocks::{BLOCK_ROWS, BlockRunMut, ColumnsMut, RowBlocks};
pub use column_major::ColumnMajor;
pub use dot::{ExtBaseSum, dot_base, dot_block_rows, dot_ext_base};
pub use element::{Algebra, FieldElement, Halve};
pub use ext::Ext3;
pub use felt::{Felt, TWO_ADICITY};
