#!/usr/bin/env bash
# The short fuzz pass: every cargo-fuzz target in fuzz/ runs for a bounded time from the
# seed corpora, on the stable toolchain without a sanitizer (`cargo fuzz … -s none`: the
# coverage instrumentation is stable rustc flags; AddressSanitizer would need nightly, and
# safe Rust's bounds checks already turn memory errors into panics, which libFuzzer
# reports). A crash fails the run and leaves its input in fuzz/artifacts/<target>/: commit
# it to crates/fuzz-checks/tests/fixtures/<target>/ once fixed, where `cargo test` replays it.
#
#   ci/check-fuzz.sh [SECONDS_PER_TARGET]      (default 45)
#
# Installs the pinned cargo-fuzz with `cargo install --locked` into $BALLAST_TOOLS_DIR
# (default target/ci-tools) unless it is already there. Needs a C++ compiler (libFuzzer).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

seconds=${1:-45}
[[ $seconds =~ ^[1-9][0-9]*$ ]] || { echo "check-fuzz: seconds must be a positive integer, got '$seconds'" >&2; exit 2; }
version=0.13.1
tools_dir=${BALLAST_TOOLS_DIR:-$PWD/target/ci-tools}
fuzz=$tools_dir/bin/cargo-fuzz
if [[ ! -x $fuzz || $("$fuzz" --version 2>/dev/null) != "cargo-fuzz $version" ]]; then
  echo "installing cargo-fuzz $version into $tools_dir ..."
  start=$SECONDS
  CARGO_TARGET_DIR=$tools_dir/build cargo install --quiet --locked --force \
    --root "$tools_dir" cargo-fuzz --version "$version"
  echo "installed in $((SECONDS - start)) s"
fi

corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
cargo run --quiet --release -p ballast-fuzz-checks --example write_corpora -- "$corpus"

cd fuzz
"$fuzz" build -s none -O
for target in $("$fuzz" list); do
  echo "check-fuzz: $target for $seconds s"
  log=$corpus/$target.log
  if ! "$fuzz" run -s none -O "$target" "$corpus/$target" -- -max_total_time="$seconds" >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "check-fuzz: $target crashed; the input is in fuzz/artifacts/$target/" >&2
    exit 1
  fi
  grep -E '^Done [0-9]+ runs' "$log" | sed "s/^/check-fuzz: $target: /"
done
echo "check-fuzz: ok"
