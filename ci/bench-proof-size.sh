#!/usr/bin/env bash
# Proof bytes and verify time of one or more `cli` builds on the same statements: one
# segment of 16 Fibonacci sequences (32 columns) per size, no grinding, at blowup 2 / 219
# queries and blowup 4 / 110 queries, and optionally keccak-chain segments. A benchmark,
# not a test: proof bytes are exact; verify times are medians of RUNS whole `cli verify`
# processes per build, the builds' runs interleaved (A B A B …).
#
#   ci/bench-proof-size.sh [--runs N] [--fib "16 18 20"] [--keccak "14"] CLI [CLI …]
#
# Prints one JSON line per (build, statement) and a Markdown table at the end.
set -euo pipefail
runs=5
fib_sizes="16 17 18 19 20"
keccak_sizes=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --fib) fib_sizes=$2; shift 2 ;;
    --keccak) keccak_sizes=$2; shift 2 ;;
    -*) echo "bench-proof-size: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
[[ $# -ge 1 ]] || { echo "usage: $0 [--runs N] [--fib SIZES] [--keccak SIZES] CLI [CLI …]" >&2; exit 2; }
for cli in "$@"; do [[ -x $cli ]] || { echo "bench-proof-size: $cli is not executable" >&2; exit 2; }; done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
results=$work/results.jsonl

measure() {
  local workload=$1 log_rows=$2 blowup=$3 queries=$4
  local args=(--workload "$workload" --log-rows "$log_rows" --blowup "$blowup"
    --queries "$queries" --pow-bits 0 --backend cpu)
  # One segment: a keccak-chain segment holds 2^(log_rows − 5) steps.
  if [[ $workload == keccak-chain ]]; then
    args+=(--steps $((1 << (log_rows - 5))))
  else
    args+=(--segments 1)
  fi
  local b
  for b in "${!clis[@]}"; do
    "${clis[$b]}" prove "${args[@]}" -o "$work/p$b.bin" --report "$work/prove$b.json" >/dev/null
    : >"$work/verify$b.txt"
  done
  local r
  for ((r = 0; r < runs; r++)); do
    for b in "${!clis[@]}"; do
      "${clis[$b]}" verify --min-security-bits 0 --report "$work/v.json" "$work/p$b.bin" >/dev/null
      python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verify_seconds"])' "$work/v.json" >>"$work/verify$b.txt"
    done
  done
  for b in "${!clis[@]}"; do
    python3 - "${clis[$b]}" "$workload" "$log_rows" "$blowup" "$queries" "$(stat -c %s "$work/p$b.bin")" "$work/verify$b.txt" >>"$results" <<'PY'
import json, statistics, sys
cli, workload, log_rows, blowup, queries, size, times = sys.argv[1:]
t = [float(x) for x in open(times)]
print(json.dumps({"cli": cli, "workload": workload, "log_rows": int(log_rows), "blowup": int(blowup),
    "queries": int(queries), "proof_bytes": int(size), "verify_ms_median": round(1e3 * statistics.median(t), 2),
    "verify_ms_runs": [round(1e3 * x, 2) for x in t]}))
PY
    tail -n1 "$results"
  done
}

clis=("$@")
for k in $fib_sizes; do measure fibonacci "$k" 2 219; measure fibonacci "$k" 4 110; done
for k in $keccak_sizes; do measure keccak-chain "$k" 2 219; measure keccak-chain "$k" 4 110; done

python3 - "$results" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
clis = list(dict.fromkeys(r["cli"] for r in rows))
print()
print("| workload | rows | blowup/queries | " + " | ".join(f"{c} bytes (KiB) | verify ms" for c in clis) + " |")
print("|---|---|---|" + "---|---|" * len(clis))
keys = list(dict.fromkeys((r["workload"], r["log_rows"], r["blowup"], r["queries"]) for r in rows))
for w, k, b, q in keys:
    cells = []
    for c in clis:
        r = next(r for r in rows if (r["cli"], r["workload"], r["log_rows"], r["blowup"]) == (c, w, k, b))
        cells += [f'{r["proof_bytes"]} ({r["proof_bytes"] / 1024:.1f})', f'{r["verify_ms_median"]}']
    print(f"| {w} | 2^{k} | {b}/{q} | " + " | ".join(cells) + " |")
PY
