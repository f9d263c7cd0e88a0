#!/usr/bin/env bash
# ci/gpu-check.sh [--prebuilt DIR]: the CUDA backend on a machine with an NVIDIA GPU and no
# network, in at most about six minutes, every step under its own timeout.
#
# GPU hosts in a fleet often cannot download crates: with --prebuilt DIR it runs from
# binaries `ci/gpu-check.sh --bundle DIR` prepared elsewhere (DIR/cli, DIR/parity, and
# DIR/compute-sanitizer/ when the bundle could fetch it); without, it builds them here with
# cargo --offline.
#
#   1. cli doctor: the device (driver release, memory, PCIe link, MIG), or why none is usable
#      (then it stops, exit 1);
#   2. the device parity tests, which fail instead of skipping (BALLAST_REQUIRE_GPU=1): whole
#      proofs of both workloads byte-identical to the CPU's, parts and bundles, the memory
#      pool's release threshold read back and its high-water mark, nothing allocated after
#      the first segment, transfers within bounds;
#   3. ci/check-proof-equality.sh with --backend cpu: the CPU paths this host has (GPU hosts
#      usually have the AVX-512 the development machines may lack) prove the same bytes;
#   4. compute-sanitizer memcheck and racecheck on a small proof (skipped, saying so, when no
#      compute-sanitizer is on PATH or in the bundle);
#   5. the table: the default statement, the Keccak chain at one 2^16-row segment and
#      Fibonacci 16 x 2^22, each with --backend cuda and --backend cpu (all the host's
#      cores): proofs byte-identical and verifying, every phase (device events on the GPU)
#      beside ci/roofline.py's prediction, the device's peak memory and the transfers.
#
# Exit codes: 0 ok, 1 a check failed, 2 usage.
#
# ci/gpu-check.sh --bundle DIR builds the release cli and the parity test binary into DIR and,
# where Debian's non-free archive is reachable, compute-sanitizer from its
# nvidia-cuda-toolkit package: carry DIR to the GPU host.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

fail() {
  echo "gpu-check: FAIL: $*" >&2
  exit 1
}

# The parity test binary cargo builds, for the release profile.
parity_binary() {
  cargo test --locked --offline --release -p ballast-cuda --test parity --no-run \
    --message-format=json 2>/dev/null |
    python3 -c 'import json, sys
found = [m["executable"] for m in map(json.loads, sys.stdin)
         if m.get("reason") == "compiler-artifact" and m.get("executable")]
sys.exit("no parity test binary") if len(found) != 1 else print(found[0])'
}

case "${1:-}" in
  --bundle)
    [[ $# -eq 2 ]] || { echo "usage: $0 --bundle DIR" >&2; exit 2; }
    dir=$2
    mkdir -p "$dir"
    cargo build --locked --release -p cli
    target_dir=$(cargo metadata --locked --format-version 1 --no-deps |
      python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
    cp "$target_dir/release/cli" "$dir/cli"
    cp "$(parity_binary)" "$dir/parity"
    # compute-sanitizer 11.8 (Hopper support) from Debian's non-free nvidia-cuda-toolkit.
    if command -v apt-get >/dev/null && [[ $(id -u) == 0 ]]; then
      debs=$(mktemp -d)
      list=/etc/apt/sources.list.d/ballast-gpu-check-nonfree.list
      echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm non-free" >"$list"
      if apt-get update -q >/dev/null 2>&1 &&
        (cd "$debs" && apt-get download -q nvidia-cuda-toolkit >/dev/null 2>&1); then
        dpkg -x "$debs"/nvidia-cuda-toolkit_*.deb "$debs/unpacked"
        mkdir -p "$dir/compute-sanitizer"
        cp "$debs/unpacked/usr/bin/compute-sanitizer" "$dir/compute-sanitizer/"
        cp "$debs"/unpacked/usr/lib/nvidia-cuda-toolkit/compute-sanitizer/*.so "$dir/compute-sanitizer/"
      else
        echo "gpu-check: no compute-sanitizer in the bundle (Debian's non-free archive unreachable)"
      fi
      rm -f "$list"
      rm -rf "$debs"
    fi
    du -sh "$dir"
    exit 0
    ;;
  --prebuilt)
    [[ $# -eq 2 ]] || { echo "usage: $0 [--prebuilt DIR | --bundle DIR]" >&2; exit 2; }
    cli=$2/cli
    parity=$2/parity
    [[ -x $cli && -x $parity ]] || { echo "gpu-check: $2 has no cli and parity binaries" >&2; exit 2; }
    sanitizer_dir=$2/compute-sanitizer
    ;;
  "")
    timeout 600 cargo build --locked --offline --release -p cli || fail "building the cli offline"
    target_dir=$(cargo metadata --locked --offline --format-version 1 --no-deps |
      python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
    cli=$target_dir/release/cli
    parity=$(timeout 600 parity_binary) || fail "building the parity tests offline"
    sanitizer_dir=
    ;;
  *)
    echo "usage: $0 [--prebuilt DIR | --bundle DIR]" >&2
    exit 2
    ;;
esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
started=$SECONDS

step() {
  printf '\n== %s (%d s so far)\n' "$1" "$((SECONDS - started))"
}

step "1. cli doctor"
timeout 60 "$cli" doctor || fail "cli doctor"
timeout 60 "$cli" doctor --json >"$work/doctor.json" || fail "cli doctor --json"
python3 - "$work/doctor.json" <<'PY' || fail "no usable CUDA device"
import json, sys
cuda = json.load(open(sys.argv[1]))["cuda"]
sys.exit(0 if cuda["usable"] else 1)
PY
if command -v nvidia-smi >/dev/null; then
  timeout 30 nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.memory,pcie.link.gen.current,pcie.link.width.current --format=csv || true
fi

step "2. parity with the CPU on the device"
BALLAST_REQUIRE_GPU=1 timeout 180 "$parity" --nocapture --test-threads 1 2>&1 |
  tee "$work/parity.log" || fail "the device parity tests"

step "3. every CPU path of this host proves the same bytes"
timeout 120 ci/check-proof-equality.sh "$cli" || fail "proofs differ across CPU paths, threads or allocator policies"

step "4. compute-sanitizer on a small proof"
sanitizer=$(command -v compute-sanitizer || true)
if [[ -z $sanitizer && -n ${sanitizer_dir:-} && -x $sanitizer_dir/compute-sanitizer ]]; then
  sanitizer=$sanitizer_dir/compute-sanitizer
  export LD_LIBRARY_PATH=$sanitizer_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
if [[ -z $sanitizer ]]; then
  echo "gpu-check: skipped: no compute-sanitizer on PATH or in the bundle"
else
  small=(prove --backend cuda --log-rows 6 --steps 4 --blowup 2 --queries 20 --pow-bits 4)
  for tool in memcheck racecheck; do
    timeout 120 "$sanitizer" --tool "$tool" --error-exitcode 1 \
      "$cli" "${small[@]}" -o "$work/sanitized.bin" >"$work/$tool.log" 2>&1 ||
      { tail -n 20 "$work/$tool.log"; fail "compute-sanitizer --tool $tool"; }
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$work/$tool.log" || true
  done
fi

step "5. cuda against cpu, phase by phase, beside the roofline"
# name|prove flags|roofline flags
statements=(
  "default statement||--keccak 14 4"
  "default statement, poseidon2 trees|--hash poseidon2|--keccak 14 4 --hash poseidon2"
  "keccak chain, one 2^16 segment|--log-rows 16 --steps 2730|--keccak 16 1"
  "poseidon2 chain, 4 x 2^14|--workload poseidon2-chain --hash poseidon2|--poseidon2-chain 14 4 --hash poseidon2"
  "fibonacci 16 x 2^22|--workload fibonacci --sequences 16 --log-rows 22 --segments 1|--fibonacci 16 22 1"
)
for entry in "${statements[@]}"; do
  IFS='|' read -r name flags roofline <<<"$entry"
  slug=${name//[^a-z0-9]/_}
  for backend in cuda cpu; do
    # shellcheck disable=SC2086 # flags are words
    timeout 240 "$cli" prove $flags --backend "$backend" --report "$work/$slug.$backend.json" \
      -o "$work/$slug.$backend.bin" >/dev/null || fail "$name: prove --backend $backend"
  done
  cmp "$work/$slug.cuda.bin" "$work/$slug.cpu.bin" || fail "$name: the cuda and cpu proofs differ"
  timeout 60 "$cli" verify --min-security-bits 0 "$work/$slug.cuda.bin" >/dev/null ||
    fail "$name: the cuda proof does not verify"
  # The roofline prices the queries the proof has (the security code picks them).
  queries=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["params"]["queries"])' "$work/$slug.cpu.json")
  # shellcheck disable=SC2086 # flags are words
  python3 ci/roofline.py predict $roofline --queries "$queries" --json \
    --sms "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cuda"]["device"]["multiprocessors"])' "$work/doctor.json")" \
    --bandwidth-tbs "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cuda"]["device"]["peak_memory_bandwidth_bytes_per_second"] / 1e12)' "$work/doctor.json")" \
    >"$work/$slug.roofline.json"
  python3 - "$name" "$work/$slug" <<'PY'
import json, sys
name, base = sys.argv[1], sys.argv[2]
cuda, cpu, model = (json.load(open(f"{base}.{k}.json")) for k in ("cuda", "cpu", "roofline"))
segments = model["segments"]
print(f"\n{name}: proofs identical ({cuda['proof_bytes']:,} bytes); cpu on {cpu['threads']} threads")
print(f"{'phase':<14} {'cuda ms':>9} {'roofline ms':>12} {'cuda/roofline':>14} {'cpu ms':>9} {'cpu/cuda':>9}")
for phase, t_cpu in cpu["phases_seconds"].items():
    t_cuda = cuda["phases_seconds"][phase]
    predicted = model["phases"].get(phase, {}).get("seconds", 0.0) * segments
    vs_model = f"{t_cuda / predicted:.2f}" if predicted > 0 else "-"
    speedup = f"{t_cpu / t_cuda:.1f}" if t_cuda > 0 else "-"
    print(f"{phase:<14} {t_cuda * 1e3:>9.2f} {predicted * 1e3:>12.2f} {vs_model:>14} "
          f"{t_cpu * 1e3:>9.2f} {speedup:>9}")
total = model["total_seconds"]
print(f"{'prove (wall)':<14} {cuda['prove_seconds'] * 1e3:>9.2f} {total * 1e3:>12.2f} "
      f"{cuda['prove_seconds'] / total:>14.2f} {cpu['prove_seconds'] * 1e3:>9.2f} "
      f"{cpu['prove_seconds'] / cuda['prove_seconds']:>9.1f}")
mib = 1 << 20
print(f"device peak {cuda['device_peak_bytes'] / mib:,.0f} MiB; up {cuda['pcie_up_bytes'] / mib:,.1f} MiB, "
      f"down {cuda['pcie_down_bytes'] / mib:,.1f} MiB ({segments} segments); "
      f"host peak RSS cuda {cuda['peak_rss_bytes'] / mib:,.0f} MiB, cpu {cpu['peak_rss_bytes'] / mib:,.0f} MiB")
PY
done

grep -E "memory pool high-water" "$work/parity.log" || true
echo
echo "gpu-check: all checks passed in $((SECONDS - started)) s"
