//! Goldilocks arithmetic on 4 (AVX2) or 8 (AVX-512) elements at once.
//!
//! Both types have the same inherent API, so one kernel body serves both (the NTT writes its
//! kernels once, in a macro). Every method carries `#[target_feature]`: it is safe to call
//! from code compiled for the same feature, which the kernels are, and such code only runs
//! behind a `ballast_cpu` token. Values stay canonical, and every operation is the field
//! operation, so results are exactly the scalar path's.

#[cfg(target_arch = "x86_64")]
pub mod avx2;
#[cfg(target_arch = "x86_64")]
pub mod avx512;

#[cfg(all(test, target_arch = "x86_64"))]
mod tests;
