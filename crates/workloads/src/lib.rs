#![doc = include_str!("../README.md")]

mod any;
mod chain;
mod compressed;
mod fibonacci;
mod flags;
mod keccak_chain;
mod poseidon2_chain;
mod registry;
#[cfg(feature = "test-workload")]
mod square_chain;

pub use any::{AnyProof, AnyStatement, Describe, thousands};
pub use compressed::AnyCompressed;
pub use fibonacci::{Fibonacci, FibonacciAir};
pub use flags::{Flag, FlagError, FlagValues, FromFlags, SHARED_FLAGS, parse_digest};
pub use keccak_chain::{KeccakChain, KeccakChainAir, keccak_f};
pub use poseidon2_chain::{Poseidon2Chain, Poseidon2ChainAir};
pub use registry::{
    DEFAULT_WORKLOAD, MAX_HEADER_LEN, Registered, WORKLOADS, bundle, decode, decode_compressed,
    max_len, named,
};
