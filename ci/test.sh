#!/usr/bin/env bash
# ballast's test command: README.md gives it, .ci/run calls it, and `nix flake check` runs the
# same pieces as separate checks. Run from anywhere; needs cargo, nm, python3 (with pip, for
# ci/check-kernels.sh's pinned NVRTC) and (for the Nix checks) Debian's nix-bin, which
# ci/check-nix.sh installs itself when CI=true.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

step() {
  printf '\n== %s\n' "$*"
}

step "format (cargo fmt --check)"
cargo fmt --all -- --check

step "lints (clippy -D warnings)"
cargo clippy --locked --workspace --all-targets -- -D warnings

step "workspace tests"
cargo test --locked --workspace

step "release cli"
cargo build --locked --release -p cli
# Wherever CARGO_TARGET_DIR or the cargo config puts the build.
target_dir=$(cargo metadata --locked --format-version 1 --no-deps |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
cli=$target_dir/release/cli

step "allocator policy: the shipped cli exports _rjem_malloc_conf (nm + jemalloc's own report)"
ci/check-malloc-conf-symbol.sh "$cli"

step "allocator policy: the same check rejects a binary without the export"
# The read-back control test installs jemalloc without the export: the check must fail on it.
control=$(cargo test --locked -p ballast-allocator --test jemalloc_conf_control --no-run \
  --message-format=json 2>/dev/null |
  python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable"):
        print(m["executable"])')
if ci/check-malloc-conf-symbol.sh "$control"; then
  echo "ci/test.sh: check-malloc-conf-symbol.sh accepted $control, which has no export" >&2
  exit 1
fi
echo "rejected, as it must be"

step "proof bytes across allocator policies and thread counts"
ci/check-proof-equality.sh "$cli"

step "CUDA kernels: committed PTX regenerates, no spills on sm_90/sm_120"
ci/check-kernels.sh

step "nix: parse, format, dead code, lock, structural evaluation"
ci/check-nix.sh

printf '\nci/test.sh: all checks passed\n'
