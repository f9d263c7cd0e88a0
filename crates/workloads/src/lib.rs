#![doc = include_str!("../README.md")]

mod fibonacci;
mod keccak_chain;
mod registry;
mod tags;

pub use fibonacci::{Fibonacci, FibonacciAir};
pub use keccak_chain::{KeccakChain, KeccakChainAir, keccak_f};
pub use registry::{AnyProof, Describe, thousands};
pub use tags::{MAX_HEADER_LEN, Registered, WORKLOADS, bundle, decode, max_len};
