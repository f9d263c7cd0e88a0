//! Helpers shared by the `ballast-bench` integration tests.

use std::fs;
use std::path::PathBuf;

/// A fresh, empty directory `name` for one test under cargo's per-target temporary directory.
pub fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("ballast-bench-tests")
        .join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}
