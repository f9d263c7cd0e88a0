#!/usr/bin/env bash
# ci/gpu-check.sh: the CUDA backend on a machine with an NVIDIA GPU and no network.
#
#   1. builds the release cli (cargo --offline: dependencies must already be in the cargo
#      cache or vendored);
#   2. the CPU paths this host supports (GPU hosts usually have AVX-512, which the
#      development machines lack): the SIMD unit tests against the scalar kernels and
#      ci/check-proof-equality.sh, whose proofs on every path must be byte-identical;
#   3. `cli doctor`: the device, or why none is usable (then it stops, exit 1);
#   4. the device parity tests, which fail instead of skipping (BALLAST_REQUIRE_GPU=1), and
#      the kernel throughput measurement;
#   5. proves the default statement with --backend cuda and --backend cpu, requires
#      byte-identical proofs that verify, and prints the phases side by side with the
#      achieved LDE and Merkle throughput next to the device's memory bandwidth.
#
# Takes a few minutes on an H200 host with 16 cores. Exit codes: 0 ok, 1 a check failed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

step() {
  printf '\n== %s\n' "$*"
}

fail() {
  echo "gpu-check: FAIL: $*" >&2
  exit 1
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
started=$SECONDS

step "build (release)"
cargo build --locked --offline --release -p cli
target_dir=$(cargo metadata --locked --offline --format-version 1 --no-deps |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
cli=$target_dir/release/cli

step "every CPU path of this host"
"$cli" doctor | grep '^cpu path'
cargo test --locked --offline --release -p ballast-field -p ballast-ntt -p ballast-keccak \
  -p ballast-merkle -p ballast-transcript -- --nocapture 2>&1 | tee "$work/cpu-tests.log" |
  grep -E '^skipping|^test result' || true
grep -q 'test result: FAILED' "$work/cpu-tests.log" && fail "the SIMD kernels differ from the scalar ones"
grep -q '^test result: ok' "$work/cpu-tests.log" || fail "the CPU path tests did not run"
ci/check-proof-equality.sh "$cli" || fail "proofs differ across CPU paths, threads or allocator policies"

step "cli doctor"
"$cli" doctor
"$cli" doctor --json >"$work/doctor.json"
python3 - "$work/doctor.json" <<'PY' || fail "no usable CUDA device"
import json, sys
cuda = json.load(open(sys.argv[1]))["cuda"]
sys.exit(0 if cuda["usable"] else 1)
PY
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.memory --format=csv
fi

step "parity with the CPU on the device, and kernel throughput"
BALLAST_REQUIRE_GPU=1 cargo test --locked --offline --release -p ballast-cuda \
  -- --include-ignored --nocapture --test-threads 1 2>&1 | tee "$work/tests.log" ||
  fail "the ballast-cuda tests"

step "prove the default statement on both backends"
for backend in cuda cpu; do
  "$cli" prove --backend "$backend" --report "$work/$backend.json" -o "$work/$backend.bin"
done
cmp "$work/cuda.bin" "$work/cpu.bin" || fail "the cuda and cpu proofs differ"
"$cli" verify "$work/cuda.bin" >/dev/null || fail "the cuda proof does not verify"
echo "gpu-check: ok: the cuda and cpu proofs are byte-identical ($(wc -c <"$work/cuda.bin") bytes) and verify"

step "timings"
python3 - "$work" <<'PY'
import json, pathlib, re, sys
work = pathlib.Path(sys.argv[1])
cuda, cpu = (json.loads((work / f"{b}.json").read_text()) for b in ("cuda", "cpu"))
device = json.loads((work / "doctor.json").read_text())["cuda"]["device"]
peak = device["peak_memory_bandwidth_bytes_per_second"] / 1e9

print(f"{'phase':<14} {'cuda s':>9} {'cpu s':>9} {'cpu/cuda':>9}")
for phase, t_cpu in cpu["phases_seconds"].items():
    t_cuda = cuda["phases_seconds"][phase]
    ratio = f"{t_cpu / t_cuda:.2f}" if t_cuda > 0 else "-"
    print(f"{phase:<14} {t_cuda:>9.3f} {t_cpu:>9.3f} {ratio:>9}")
print(f"{'total':<14} {cuda['prove_seconds']:>9.3f} {cpu['prove_seconds']:>9.3f} "
      f"{cpu['prove_seconds'] / cuda['prove_seconds']:>9.2f}")

# lde and tree are the extensions of the trace and quotient and their trees, transfers
# included; the trace's dominate.
s, blowup = cuda["statement"], cuda["params"]["blowup"]
rows = (1 << s["log_rows"]) * blowup * s["segments"]
width = 2353 if s["workload"] == "keccak-chain" else 2 * s["sequences"]
lde_bytes = width * rows * 8
t = cuda["phases_seconds"]["lde"] + cuda["phases_seconds"]["tree"]
print(f"\nlde + tree on cuda: {lde_bytes / t / 1e9:.1f} GB/s of LDE output and "
      f"{rows / t:.3e} hashes/s, end to end (upload, LDE, tree, download)")
for line in (work / "tests.log").read_text().splitlines():
    if line.startswith("throughput:"):
        print("kernels only:", line.removeprefix("throughput: "))
print(f"device: {device['name']}, peak memory bandwidth {peak:.0f} GB/s "
      f"({device['memory_clock_khz'] / 1e6:.2f} GHz x {device['memory_bus_width_bits']} bits x 2)")
PY

echo
echo "gpu-check: all checks passed in $((SECONDS - started)) s"
