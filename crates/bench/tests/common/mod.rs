//! Helpers shared by the `ballast-bench` integration tests.
#![allow(dead_code)] // each test binary uses its own subset

use std::fs;
use std::os::unix::fs::PermissionsExt;
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

/// A stand-in for `cli prove -o FILE --report FILE ARGS…` whose proof records the allocator
/// environment it saw (so tests can check what each arm's child got), or constant bytes with
/// `--constant`. Its report's `peak_heap_bytes` is FAKE_HEAP_MIB (default 1) MiB per
/// `--segments` (default 4), plus 8 MiB.
pub const FAKE_CLI: &str = r#"#!/bin/sh
[ "$1" = prove ] && [ "$2" = -o ] && [ "$4" = --report ] || { echo "usage: prove -o FILE --report FILE" >&2; exit 64; }
out=$3; report=$5; shift 5
segments=4; prev=
for a in "$@"; do [ "$prev" = --segments ] && segments=$a; prev=$a; done
echo "{\"peak_heap_bytes\": $(( (segments * ${FAKE_HEAP_MIB:-1} + 8) * 1048576 ))}" > "$report"
if [ "$1" = --constant ]; then echo same > "$out"; exit 0; fi
if [ "$1" = --fail ]; then echo partial > "$out"; echo "fake failure" >&2; exit 1; fi
printf '%s|%s|%s\n' "${_RJEM_MALLOC_CONF-unset}" "${MALLOC_CONF-unset}" "$*" > "$out"
"#;

/// Writes [`FAKE_CLI`] into `dir` as an executable `fake-cli`.
pub fn fake_cli(dir: &std::path::Path) -> PathBuf {
    let path = dir.join("fake-cli");
    fs::write(&path, FAKE_CLI).unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    path
}
