//! The CUDA backend on a real device against the CPU: the same checks as
//! `emulated_kernels.rs` (whole proofs of both workloads at several shapes and blowups,
//! parts and bundles, what the backend counts), and the device's own: the memory pool's
//! release threshold read back, its high-water mark.
//!
//! Without a usable device every test prints "skipping: no CUDA device: <reason>" and
//! passes, unless `BALLAST_REQUIRE_GPU=1`, which turns the skip into a failure.

mod common;

use std::io::Write as _;
use std::sync::Once;

use ballast_cuda::{CudaBackend, CudaDevice, KernelBackend};

/// Prints `message` on the test process's stderr once. It is written to the stream itself,
/// not through `eprintln!`, which the test harness captures: a skip must be visible.
fn say_once(message: &str) {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = writeln!(std::io::stderr(), "{message}");
    });
}

/// The device, or `None` after saying why there is none.
///
/// # Panics
/// Without a device when `BALLAST_REQUIRE_GPU=1`.
fn device() -> Option<CudaDevice> {
    match CudaDevice::open() {
        Ok(device) => Some(device),
        Err(reason) => {
            assert!(
                std::env::var_os("BALLAST_REQUIRE_GPU").is_none_or(|v| v != "1"),
                "BALLAST_REQUIRE_GPU=1 but no CUDA device: {reason}"
            );
            say_once(&format!("skipping: no CUDA device: {reason}"));
            None
        }
    }
}

#[test]
fn proofs_are_byte_identical_to_the_cpu_backend() {
    if device().is_none() {
        return;
    }
    let backend = CudaBackend::new().unwrap();
    for case in common::fibonacci_cases() {
        common::check_proof(&backend, &case);
    }
    for case in common::keccak_cases() {
        common::check_proof(&backend, &case);
    }
    let small_tiles = KernelBackend::with_tile(device().unwrap(), 2);
    common::check_proof(&small_tiles, &common::keccak_cases()[1]);
    let (fibonacci, keccak) = common::poseidon2_cases();
    for case in &fibonacci {
        common::check_proof(&backend, case);
    }
    common::check_proof(&backend, &keccak);
    for case in common::poseidon2_chain_cases() {
        common::check_proof(&backend, &case);
    }
}

#[test]
fn parts_proven_on_the_device_bundle_into_the_cpu_proof() {
    if device().is_none() {
        return;
    }
    let backend = CudaBackend::new().unwrap();
    common::check_parts(&backend, &common::fibonacci_cases()[0], 3);
    common::check_parts(&backend, &common::keccak_cases()[0], 2);
}

#[test]
fn later_segments_allocate_nothing_and_transfers_stay_within_bounds() {
    if let Some(device) = device() {
        common::check_counters(&KernelBackend::new(device));
    }
}

#[test]
fn the_memory_pool_never_hands_memory_back() {
    let Some(device) = device() else { return };
    // Read back from the driver after setting it when the device was opened.
    assert_eq!(device.info().pool_release_threshold, u64::MAX);
    let backend = KernelBackend::new(device.clone());
    common::check_proof(&backend, &common::keccak_cases()[0]);
    let (used, reserved) = device
        .pool_high_water()
        .unwrap()
        .expect("devices the backend opens have memory pools");
    println!("memory pool high-water mark: {used} bytes used, {reserved} bytes reserved");
    assert!(used > 0 && reserved >= used);
}
