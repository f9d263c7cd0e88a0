#!/usr/bin/env bash
# ci/bench-prover.sh [CLI] [RUNS] [BACKEND]
#
# The prover benchmark: 16 sequences × 2^16 … 2^19 rows (one segment), blowup 2, 219 queries,
# no grinding — the statement and parameters lambda_vm benchmarks against Plonky3. For each size
# it runs `cli prove --backend BACKEND` (default cpu) and `cli verify` RUNS times (default 3) as
# whole processes and prints a Markdown table of medians: prove time, verify time, proof size,
# peak RSS, minor faults. CLI defaults to the workspace's release build.
# A benchmark, not a test: nothing here asserts a timing.
set -euo pipefail

if [[ $# -ge 1 ]]; then
  cli=$1
else
  target_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
  cli=$target_dir/release/cli
fi
runs=${2:-3}
backend=${3:-cpu}
[[ -x $cli ]] || { echo "bench-prover: $cli is not executable (cargo build --release -p cli)" >&2; exit 2; }
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "bench-prover: RUNS must be a positive integer" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for log_rows in 16 17 18 19; do
  for run in $(seq "$runs"); do
    echo "bench-prover: 2^$log_rows rows, run $run/$runs" >&2
    env -u _RJEM_MALLOC_CONF -u MALLOC_CONF "$cli" prove --workload fibonacci --sequences 16 --log-rows "$log_rows" \
      --segments 1 --blowup 2 --queries 219 --pow-bits 0 --backend "$backend" \
      -o "$work/proof.bin" --report "$work/prove-$log_rows-$run.json" >/dev/null
    "$cli" verify --report "$work/verify-$log_rows-$run.json" "$work/proof.bin" >/dev/null
  done
done

python3 - "$work" "$runs" <<'PY'
import json, os, statistics, sys
work, runs = sys.argv[1], int(sys.argv[2])
def load(kind, k, r):
    with open(os.path.join(work, f"{kind}-{k}-{r}.json")) as f:
        return json.load(f)
print(f"| rows | prove (s) | verify (ms) | proof (KiB) | peak RSS (MiB) | minor faults |")
print(f"|---|---|---|---|---|---|")
for k in (16, 17, 18, 19):
    p = [load("prove", k, r) for r in range(1, runs + 1)]
    v = [load("verify", k, r) for r in range(1, runs + 1)]
    med = lambda xs: statistics.median(xs)
    print(f"| 2^{k} | {med(x['prove_seconds'] for x in p):.2f} "
          f"| {med(x['verify_seconds'] for x in v) * 1e3:.1f} "
          f"| {p[0]['proof_bytes'] / 1024:.0f} "
          f"| {med(x['peak_rss_bytes'] for x in p) / 2**20:.0f} "
          f"| {med(x['minor_faults'] for x in p):.0f} |")
backend = load("prove", 19, 1)
print(f"\n16 sequences (32 columns), 1 segment, blowup 2, 219 queries, 0 grinding bits; "
      f"median of {runs} runs; backend {backend['backend']}"
      f"{' (' + backend['device'] + ')' if backend.get('device') else ''}; {os.cpu_count()} CPUs.")
PY
