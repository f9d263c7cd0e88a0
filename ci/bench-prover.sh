#!/usr/bin/env bash
# ci/bench-prover.sh [--runs N] [--peer P3_BENCH] [--fib SIZES] [--keccak SIZES] [--params LIST] [CLI]
#
# The prover benchmark. For each statement and parameter set it proves and verifies with `cli`
# (whole processes; the dispatch path is whatever the binary picks, or BALLAST_CPU) and, with
# --peer, with the Plonky3 0.8.0 harness built outside the repository (see
# docs/benchmarking.md), interleaved: run r proves ballast then the peer when r is odd, the
# peer then ballast when it is even, so drift on a noisy machine falls on both sides alike.
#
#   --runs N        runs per case (default 3); medians are reported
#   --peer BIN      the p3-bench binary (`--air fib --log-rows K …`, `--perms N …`)
#   --fib SIZES     log2 rows of the 16-sequence Fibonacci statement (default "16 17 18 19 20")
#   --keccak SIZES  log2 rows of the keccak chain, 2^(k−5) steps, against p3-keccak-air proving
#                   as many Keccak-f permutations (default: none)
#   --params LIST   blowup/queries pairs (default "2/219 4/110")
#   CLI             the ballast binary (default: the workspace's release build)
#
# Times include trace generation on both sides. No grinding anywhere. Prints one JSON line per
# run on stderr and Markdown tables (side by side, then ballast's phases) on stdout.
# A benchmark, not a test: nothing here asserts a timing.
set -euo pipefail

runs=3 peer="" fib_sizes="16 17 18 19 20" keccak_sizes="" params="2/219 4/110" cli=""
usage() { echo "usage: ci/bench-prover.sh [--runs N] [--peer P3_BENCH] [--fib SIZES] [--keccak SIZES] [--params LIST] [CLI]" >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case $1 in
    --runs) runs=${2:?}; shift 2 ;;
    --peer) peer=${2:?}; shift 2 ;;
    --fib) fib_sizes=${2-}; shift 2 ;;
    --keccak) keccak_sizes=${2-}; shift 2 ;;
    --params) params=${2:?}; shift 2 ;;
    -h|--help) usage ;;
    -*) echo "bench-prover: unknown option $1" >&2; usage ;;
    *) [[ -z $cli ]] || usage; cli=$1; shift ;;
  esac
done
if [[ -z $cli ]]; then
  target_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
  cli=$target_dir/release/cli
fi
[[ -x $cli ]] || { echo "bench-prover: $cli is not executable (cargo build --release -p cli)" >&2; exit 2; }
[[ -z $peer || -x $peer ]] || { echo "bench-prover: --peer $peer is not executable" >&2; exit 2; }
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "bench-prover: --runs must be a positive integer" >&2; exit 2; }
for p in $params; do
  [[ $p =~ ^(2|4|8|16)/[1-9][0-9]*$ ]] || { echo "bench-prover: --params takes BLOWUP/QUERIES pairs, not $p" >&2; exit 2; }
done
for k in $fib_sizes $keccak_sizes; do
  [[ $k =~ ^[0-9]+$ && $k -ge 6 && $k -le 24 ]] || { echo "bench-prover: sizes are log2 rows in 6..24, not $k" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
results=$work/results.jsonl
threads=$(nproc)

log2() { local v=$1 l=0; while ((v > 1)); do v=$((v / 2)); l=$((l + 1)); done; echo "$l"; }

ballast() { # workload log_rows blowup queries
  local workload=$1 k=$2 blowup=$3 queries=$4 flags
  if [[ $workload == fib ]]; then
    flags=(--workload fibonacci --sequences 16 --log-rows "$k" --segments 1)
  else
    flags=(--log-rows "$k" --steps $((1 << (k - 5))))
  fi
  env -u _RJEM_MALLOC_CONF -u MALLOC_CONF "$cli" prove "${flags[@]}" --blowup "$blowup" \
    --queries "$queries" --pow-bits 0 --backend cpu --threads "$threads" \
    -o "$work/proof.bin" --report "$work/prove.json" >/dev/null
  "$cli" verify --min-security-bits 0 --report "$work/verify.json" "$work/proof.bin" >/dev/null
  python3 - "$work/prove.json" "$work/verify.json" "$workload" "$k" "$blowup" "$queries" <<'PY' >>"$results"
import json, sys
p, v = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
print(json.dumps({"side": "ballast", "workload": sys.argv[3], "log_rows": int(sys.argv[4]),
    "blowup": int(sys.argv[5]), "queries": int(sys.argv[6]), "cpu_path": p["cpu_path"],
    "prove_s": p["prove_seconds"], "verify_s": v["verify_seconds"], "proof_bytes": p["proof_bytes"],
    "peak_rss_bytes": p["peak_rss_bytes"], "phases": p["phases_seconds"]}))
PY
  tail -n1 "$results" >&2
}

plonky3() { # workload log_rows blowup queries
  local workload=$1 k=$2 blowup=$3 queries=$4 flags
  if [[ $workload == fib ]]; then
    flags=(--air fib --log-rows "$k")
  else
    flags=(--perms $((1 << (k - 5))))
  fi
  RAYON_NUM_THREADS=$threads "$peer" "${flags[@]}" --log-blowup "$(log2 "$blowup")" \
    --queries "$queries" 2>/dev/null | tail -n1 >"$work/peer.json"
  python3 - "$work/peer.json" "$workload" "$k" "$blowup" "$queries" <<'PY' >>"$results"
import json, sys
r = json.load(open(sys.argv[1]))
print(json.dumps({"side": "plonky3", "workload": sys.argv[2], "log_rows": int(sys.argv[3]),
    "blowup": int(sys.argv[4]), "queries": int(sys.argv[5]),
    "prove_s": r["trace_s"] + r["prove_s"], "verify_s": r["verify_s"],
    "proof_bytes": r["proof_bytes"], "peak_rss_bytes": r["peak_rss_bytes"]}))
PY
  tail -n1 "$results" >&2
}

cases=()
for p in $params; do
  for k in $fib_sizes; do cases+=("fib $k ${p%/*} ${p#*/}"); done
  for k in $keccak_sizes; do cases+=("keccak $k ${p%/*} ${p#*/}"); done
done
for run in $(seq "$runs"); do
  for c in "${cases[@]}"; do
    echo "bench-prover: run $run/$runs: $c" >&2
    # shellcheck disable=SC2086
    if [[ -z $peer ]]; then
      ballast $c
    elif ((run % 2)); then
      ballast $c; plonky3 $c
    else
      plonky3 $c; ballast $c
    fi
  done
done

"$cli" doctor | grep -E '^(ballast cli|target|cpu path)' || true
python3 - "$results" "$runs" "$threads" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
runs, threads = int(sys.argv[2]), int(sys.argv[3])
med = statistics.median
cases = []
for r in rows:
    key = (r["workload"], r["blowup"], r["queries"], r["log_rows"])
    if key not in cases:
        cases.append(key)
def pick(side, key):
    return [r for r in rows if r["side"] == side and (r["workload"], r["blowup"], r["queries"], r["log_rows"]) == key]
peer = any(r["side"] == "plonky3" for r in rows)
name = {"fib": "fib 16", "keccak": "keccak chain"}
if peer:
    print("| statement | rows | b/q | path | ballast prove (s) | Plonky3 prove (s) | ratio | ballast verify (ms) | Plonky3 verify (ms) | proof KiB (ballast / Plonky3) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
else:
    print("| statement | rows | b/q | path | prove (s) | verify (ms) | proof (KiB) | peak RSS (MiB) |")
    print("|---|---|---|---|---|---|---|---|")
for key in cases:
    w, b, q, k = key
    ours = pick("ballast", key)
    path = "/".join(sorted({r["cpu_path"] for r in ours}))
    bp, bv = med(r["prove_s"] for r in ours), med(r["verify_s"] for r in ours) * 1e3
    if peer:
        theirs = pick("plonky3", key)
        pp, pv = med(r["prove_s"] for r in theirs), med(r["verify_s"] for r in theirs) * 1e3
        print(f"| {name[w]} | 2^{k} | {b}/{q} | {path} | {bp:.3f} | {pp:.3f} | **{bp / pp:.2f}** "
              f"| {bv:.1f} | {pv:.1f} | {ours[0]['proof_bytes'] / 1024:.0f} / {theirs[0]['proof_bytes'] / 1024:.0f} |")
    else:
        print(f"| {name[w]} | 2^{k} | {b}/{q} | {path} | {bp:.3f} | {bv:.1f} "
              f"| {ours[0]['proof_bytes'] / 1024:.0f} | {med(r['peak_rss_bytes'] for r in ours) / 2**20:.0f} |")
phases = list(rows[0]["phases"]) if rows and rows[0]["side"] == "ballast" else \
    list(next(r for r in rows if r["side"] == "ballast")["phases"])
print()
print("ballast's phases (s, medians):\n")
print("| statement | rows | b/q | " + " | ".join(phases) + " |")
print("|---|---|---|" + "---|" * len(phases))
for key in cases:
    w, b, q, k = key
    ours = pick("ballast", key)
    print(f"| {name[w]} | 2^{k} | {b}/{q} | " + " | ".join(f"{med(r['phases'][p] for r in ours):.3f}" for p in phases) + " |")
print(f"\nMedians of {runs} interleaved runs per case, {threads} threads, whole processes, no grinding.")
PY
