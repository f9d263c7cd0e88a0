#!/usr/bin/env bash
# ci/bench-prover.sh [--runs N] [--peer BIN | --no-peer] [--keccak PERMS] [--poseidon2 PERMS]
#                    [--fib SIZES] [--params LIST] [--paths LIST] [CLI]
#
# The prover benchmark: ballast against Plonky3 0.8.0 on the same statements, one command.
# Each case is proven and verified by whole processes, interleaved (run r proves the sides
# in one order when r is odd and in the reverse order when it is even, so drift on a noisy
# machine falls on all sides alike), and reported as medians.
#
#   --runs N        runs per case (default 3)
#   --peer BIN      the Plonky3 harness binary; by default peers/plonky3 (our code calling
#                   Plonky3 0.8.0 from crates.io at exact versions) is built here with
#                   RUSTFLAGS="-C target-cpu=native" into target/peers/plonky3
#   --no-peer       ballast alone
#   --keccak PERMS  Keccak-f permutation counts: ballast's keccak chain of that many steps in
#                   one segment (2^k rows, 24 per step) against p3-keccak-air proving as many
#                   permutations (24 rows each, padded to a power of two)
#                   (default "512 1024 1365 2048")
#   --poseidon2 PERMS  Poseidon2 permutation counts, powers of two: ballast's poseidon2-chain of
#                   that many steps in one segment (a row each) against p3-poseidon2-air
#                   proving as many width-12 Goldilocks permutations (default: none)
#   --fib SIZES     log2 rows of the 16-sequence Fibonacci statement, one segment
#                   (default "16 17 18 19 20")
#   --params LIST   blowup/queries pairs (default "2/219 4/110")
#   --paths LIST    ballast's CPU paths (BALLAST_CPU), default: the one the binary picks,
#                   and avx2 beside it where that is another
#   CLI             the ballast binary (default: the workspace's release build)
#
# Both sides: Goldilocks with cubic-extension challenges, Keccak-256 Merkle trees, no proof
# of work; times include trace generation. Prints one JSON line per run on stderr and
# Markdown on stdout: the side-by-side table (prove time, ratio, peak RSS and its ratio,
# proof size), then both provers' phases. A benchmark, not a test: nothing here asserts a
# timing.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

runs=3 peer="" use_peer=1 keccak="512 1024 1365 2048" poseidon2="" fib="16 17 18 19 20"
params="2/219 4/110"
paths="" cli=""
usage() {
  echo "usage: ci/bench-prover.sh [--runs N] [--peer BIN | --no-peer] [--keccak PERMS] [--poseidon2 PERMS] [--fib SIZES] [--params LIST] [--paths LIST] [CLI]" >&2
  exit 2
}
while [[ $# -gt 0 ]]; do
  case $1 in
    --runs) runs=${2:?}; shift 2 ;;
    --peer) peer=${2:?}; shift 2 ;;
    --no-peer) use_peer=0; shift ;;
    --keccak) keccak=${2-}; shift 2 ;;
    --poseidon2) poseidon2=${2-}; shift 2 ;;
    --fib) fib=${2-}; shift 2 ;;
    --params) params=${2:?}; shift 2 ;;
    --paths) paths=${2:?}; shift 2 ;;
    -h|--help) usage ;;
    -*) echo "bench-prover: unknown option $1" >&2; usage ;;
    *) [[ -z $cli ]] || usage; cli=$1; shift ;;
  esac
done
target_dir=$(cd "$root" && cargo metadata --format-version 1 --no-deps |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
cli=${cli:-$target_dir/release/cli}
[[ -x $cli ]] || { echo "bench-prover: $cli is not executable (cargo build --release -p cli)" >&2; exit 2; }
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "bench-prover: --runs must be a positive integer" >&2; exit 2; }
for p in $params; do
  [[ $p =~ ^(2|4|8|16)/[1-9][0-9]*$ ]] || { echo "bench-prover: --params takes BLOWUP/QUERIES pairs, not $p" >&2; exit 2; }
done
for k in $fib; do
  [[ $k =~ ^[0-9]+$ && $k -ge 6 && $k -le 24 ]] || { echo "bench-prover: --fib sizes are log2 rows in 6..24, not $k" >&2; exit 2; }
done
for n in $keccak; do
  [[ $n =~ ^[1-9][0-9]*$ && $n -le 65536 ]] || { echo "bench-prover: --keccak takes permutation counts in 1..65536, not $n" >&2; exit 2; }
done
for n in $poseidon2; do
  [[ $n =~ ^[1-9][0-9]*$ && $n -ge 2 && $n -le 16777216 && $((n & (n - 1))) -eq 0 ]] ||
    { echo "bench-prover: --poseidon2 takes powers of two in 2..2^24, not $n" >&2; exit 2; }
done
if [[ -z $paths ]]; then
  paths=$("$cli" doctor --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["cpu_path"])')
  [[ $paths == avx2 ]] || ! "$cli" doctor --json | grep -q '"avx2"' || paths="$paths avx2"
fi
for path in $paths; do
  BALLAST_CPU=$path "$cli" doctor >/dev/null 2>&1 ||
    { echo "bench-prover: this CPU cannot run the $path path" >&2; exit 2; }
done
if ((use_peer)) && [[ -z $peer ]]; then
  echo "bench-prover: building the Plonky3 harness (peers/plonky3) for the native CPU" >&2
  (cd "$root/peers/plonky3" && RUSTFLAGS="-C target-cpu=native" \
    cargo build --locked --release --quiet --target-dir "$target_dir/peers/plonky3")
  peer=$target_dir/peers/plonky3/release/p3-bench
fi
((use_peer == 0)) || [[ -x $peer ]] || { echo "bench-prover: --peer $peer is not executable" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/ballast-bench-prover.XXXXXX")
trap 'rm -rf "$work"' EXIT
results=$work/results.jsonl
threads=$(nproc)

log2() { local v=$1 l=0; while ((v > 1)); do v=$(((v + 1) / 2)); l=$((l + 1)); done; echo "$l"; }

ballast() { # path workload size blowup queries
  local path=$1 workload=$2 size=$3 blowup=$4 queries=$5 flags
  if [[ $workload == fib ]]; then
    flags=(--workload fibonacci --sequences 16 --log-rows "$size" --segments 1)
  elif [[ $workload == poseidon2 ]]; then
    flags=(--workload poseidon2-chain --steps "$size" --log-rows "$(log2 "$size")")
  else
    flags=(--steps "$size" --log-rows "$(log2 $((24 * size)))")
  fi
  env -u _RJEM_MALLOC_CONF -u MALLOC_CONF BALLAST_CPU="$path" "$cli" prove "${flags[@]}" \
    --blowup "$blowup" --queries "$queries" --pow-bits 0 --backend cpu --threads "$threads" \
    -o "$work/proof.bin" --report "$work/prove.json" >/dev/null
  "$cli" verify --min-security-bits 0 --report "$work/verify.json" "$work/proof.bin" >/dev/null
  python3 - "$work/prove.json" "$work/verify.json" "$path" "$workload" "$size" "$blowup" "$queries" <<'PY' >>"$results"
import json, sys
p, v = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
print(json.dumps({"side": "ballast " + sys.argv[3], "workload": sys.argv[4], "size": int(sys.argv[5]),
    "blowup": int(sys.argv[6]), "queries": int(sys.argv[7]), "rows": 1 << p["statement"]["log_rows"],
    "prove_s": p["prove_seconds"], "verify_s": v["verify_seconds"], "proof_bytes": p["proof_bytes"],
    "peak_rss_bytes": p["peak_rss_bytes"], "phases": p["phases_seconds"]}))
PY
  tail -n1 "$results" >&2
}

plonky3() { # workload size blowup queries
  local workload=$1 size=$2 blowup=$3 queries=$4 flags
  if [[ $workload == fib ]]; then
    flags=(--air fib --log-rows "$size")
  elif [[ $workload == poseidon2 ]]; then
    flags=(--air poseidon2 --perms "$size")
  else
    flags=(--air keccak --perms "$size")
  fi
  RAYON_NUM_THREADS=$threads "$peer" "${flags[@]}" --log-blowup "$(log2 "$blowup")" \
    --queries "$queries" 2>/dev/null | tail -n1 >"$work/peer.json"
  python3 - "$work/peer.json" "$workload" "$size" "$blowup" "$queries" <<'PY' >>"$results"
import json, sys
r = json.load(open(sys.argv[1]))
print(json.dumps({"side": "plonky3", "workload": sys.argv[2], "size": int(sys.argv[3]),
    "blowup": int(sys.argv[4]), "queries": int(sys.argv[5]), "rows": r["rows"],
    "prove_s": r["trace_s"] + r["prove_s"], "verify_s": r["verify_s"],
    "proof_bytes": r["proof_bytes"], "peak_rss_bytes": r["peak_rss_bytes"], "phases": r["phases"]}))
PY
  tail -n1 "$results" >&2
}

cases=()
for p in $params; do
  for n in $keccak; do cases+=("keccak $n ${p%/*} ${p#*/}"); done
  for n in $poseidon2; do cases+=("poseidon2 $n ${p%/*} ${p#*/}"); done
  for k in $fib; do cases+=("fib $k ${p%/*} ${p#*/}"); done
done
sides=()
for path in $paths; do sides+=("ballast $path"); done
((use_peer == 0)) || sides+=("plonky3")
for run in $(seq "$runs"); do
  order=("${sides[@]}")
  if ((run % 2 == 0)); then
    order=()
    for ((i = ${#sides[@]} - 1; i >= 0; i--)); do order+=("${sides[i]}"); done
  fi
  for c in "${cases[@]}"; do
    echo "bench-prover: run $run/$runs: $c" >&2
    for side in "${order[@]}"; do
      # shellcheck disable=SC2086
      case $side in
        plonky3) plonky3 $c ;;
        *) ballast "${side#ballast }" $c ;;
      esac
    done
  done
done

"$cli" doctor | grep -E '^(ballast cli|target|cpu path)' || true
grep -m1 'model name' /proc/cpuinfo | sed 's/^.*: /cpu:       /' || true
python3 "$root/ci/bench-prover-report.py" "$results" "$runs" "$threads"
