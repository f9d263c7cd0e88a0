//! The CUDA backend on a real device against the CPU: the same checks as
//! `emulated_kernels.rs` (LDE columns, row trees, FRI layer trees, backend calls, whole
//! proofs), plus an ignored throughput measurement that `ci/gpu-check.sh` runs.
//!
//! Without a usable device every test prints "skipping: no CUDA device: <reason>" and
//! passes, unless `BALLAST_REQUIRE_GPU=1`, which turns the skip into a failure.

mod common;

use std::io::Write as _;
use std::sync::Once;
use std::time::{Duration, Instant};

use ballast_cuda::{
    ColumnForm, CudaBackend, CudaDevice, Launcher, LdeTables, commit_rows, extend_uploaded,
    upload_matrix,
};

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
fn lde_columns_match_the_cpu_plan() {
    if let Some(device) = device() {
        common::check_lde(&device);
    }
}

#[test]
fn row_trees_match_commit_rows() {
    if let Some(device) = device() {
        common::check_row_trees(&device);
    }
}

#[test]
fn fri_layer_trees_match_commit_layer() {
    if let Some(device) = device() {
        common::check_fri_layers(&device);
    }
}

#[test]
fn backend_calls_match_the_cpu_backend() {
    if device().is_some() {
        common::check_backend(&CudaBackend::new().unwrap());
    }
}

#[test]
fn proofs_are_byte_identical_to_the_cpu_backend() {
    if device().is_some() {
        common::check_proofs(&CudaBackend::new().unwrap());
    }
}

/// The fastest of three timed runs of `f`, after one warm-up.
fn fastest<T>(mut f: impl FnMut() -> T) -> Duration {
    f();
    (0..3)
        .map(|_| {
            let started = Instant::now();
            f();
            started.elapsed()
        })
        .min()
        .expect("three runs")
}

/// Kernel throughput on one large trace: the LDE (from columns already on the device) and
/// the row tree over it (including downloading its levels). Prints one line per stage;
/// asserts nothing about speed.
#[test]
#[ignore = "a measurement: ci/gpu-check.sh runs it on a GPU host"]
fn throughput() {
    let Some(device) = device() else { return };
    let (width, log_n, log_blowup) = (32, 20, 1);
    let input = common::matrix(width, log_n, 1);
    let tables = LdeTables::upload(&device, log_n, log_blowup).unwrap();
    let columns = upload_matrix(&device, &input).unwrap();
    let height = 1usize << (log_n + log_blowup);
    let elements = (width * height) as f64;

    // Raw form: the input columns are only read, so every run does the same work. The
    // evaluation form adds log_n DIF stages on the (B times smaller) input.
    let lde_time = fastest(|| {
        let lde = extend_uploaded(&device, &tables, &columns, width, ColumnForm::Raw).unwrap();
        device.download(&lde, 1).unwrap(); // waits for the kernels
    });
    // Each DIT stage reads and writes every LDE element once; the scatter reads one input
    // word and one scale per output word and writes it.
    let traffic = elements * 8.0 * (2.0 * log_n as f64 + 3.0);
    println!(
        "throughput: lde {width} columns x 2^{log_n} rows x {}: {:.3} ms, {:.1} GB/s of LDE output, ~{:.0} GB/s of memory traffic",
        1 << log_blowup,
        lde_time.as_secs_f64() * 1e3,
        elements * 8.0 / lde_time.as_secs_f64() / 1e9,
        traffic / lde_time.as_secs_f64() / 1e9
    );

    let lde = extend_uploaded(&device, &tables, &columns, width, ColumnForm::Raw).unwrap();
    let tree_time = fastest(|| commit_rows(&device, &lde, width, height).unwrap());
    let hashes = height - 1; // height/2 leaves and height/2 − 1 nodes
    println!(
        "throughput: merkle {} leaves of {} bytes + {} nodes: {:.3} ms, {:.3e} hashes/s (incl. downloading {} MiB of levels)",
        height / 2,
        1 + 16 * width,
        height / 2 - 1,
        tree_time.as_secs_f64() * 1e3,
        hashes as f64 / tree_time.as_secs_f64(),
        (hashes * 32) >> 20
    );

    let download_time = fastest(|| device.download(&lde, width * height).unwrap());
    println!(
        "throughput: download of the LDE ({} MiB): {:.3} ms, {:.1} GB/s",
        (width * height * 8) >> 20,
        download_time.as_secs_f64() * 1e3,
        elements * 8.0 / download_time.as_secs_f64() / 1e9
    );
}
