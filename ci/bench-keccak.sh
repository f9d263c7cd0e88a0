#!/usr/bin/env bash
# The keccak-chain benchmark: one segment of 2^k rows (⌊2^k / 24⌋ Keccak-f permutations) per
# run, no grinding, at blowup 2 / 219 queries and blowup 4 / 110 queries. For each size it
# reports prove and verify time, proof bytes, peak RSS and permutations proven per second,
# from whole `cli` processes (one run each: a benchmark, not a test).
#
#   ci/bench-keccak.sh CLI [SIZES_2_219] [SIZES_4_110]     e.g. ci/bench-keccak.sh target/release/cli "14 15 16" "14 15"
#
# Prints one JSON line per run and a Markdown table at the end.
set -euo pipefail
cli=${1:?usage: $0 CLI [SIZES_2_219] [SIZES_4_110]}
sizes_2=${2:-14 15 16 17 18}
sizes_4=${3:-14 15 16 17}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
results=$work/results.jsonl

run() {
  local log_rows=$1 blowup=$2 queries=$3
  local steps=$(((1 << log_rows) / 24))
  env -u _RJEM_MALLOC_CONF "$cli" prove --log-rows "$log_rows" --steps "$steps" --blowup "$blowup" \
    --queries "$queries" --pow-bits 0 --backend cpu -o "$work/p.bin" --report "$work/prove.json" >/dev/null
  "$cli" verify --min-security-bits 0 --report "$work/verify.json" "$work/p.bin" >/dev/null
  python3 - "$work/prove.json" "$work/verify.json" "$log_rows" "$blowup" "$queries" >>"$results" <<'PY'
import json, sys
p, v = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
steps = p["statement"]["steps"]
print(json.dumps({"log_rows": int(sys.argv[3]), "blowup": int(sys.argv[4]), "queries": int(sys.argv[5]),
    "perms": steps, "prove_s": round(p["prove_seconds"], 3), "verify_s": round(v["verify_seconds"], 4),
    "proof_bytes": p["proof_bytes"], "peak_rss_bytes": p["peak_rss_bytes"],
    "perms_per_s": round(steps / p["prove_seconds"], 1), "phases": p["phases_seconds"]}))
PY
  tail -n1 "$results"
}

for k in $sizes_2; do run "$k" 2 219; done
for k in $sizes_4; do run "$k" 4 110; done

python3 - "$results" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("\n| rows | blowup/queries | permutations | prove | perms/s | verify | proof | peak RSS |")
print("|---|---|---|---|---|---|---|---|")
for r in rows:
    print(f"| 2^{r['log_rows']} | {r['blowup']}/{r['queries']} | {r['perms']} | {r['prove_s']:.2f} s | "
          f"{r['perms_per_s']:.0f} | {r['verify_s'] * 1e3:.1f} ms | {r['proof_bytes'] / 2**20:.2f} MiB | "
          f"{r['peak_rss_bytes'] / 2**30:.2f} GiB |")
PY
