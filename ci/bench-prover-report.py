#!/usr/bin/env python3
"""The Markdown tables of ci/bench-prover.sh, from its JSON lines.

bench-prover-report.py RESULTS.jsonl RUNS THREADS

Medians per case and side. Plonky3's phases are its own tracing spans (summed over the
run, the outermost of each name), mapped onto ballast's:

  trace       "trace" (the harness's span around generate_trace_rows)
  lde         "coset_lde_batch_with_transform" (the trace's and the quotient chunks')
  tree        "build merkle tree" (every tree: trace, quotient, FRI layers)
  quotient    "quotient_values"
  ood + deep  "open" minus "FRI prover" (opened values at zeta and zeta·g, the reduced
              DEEP quotient)
  fri         "FRI prover" (commit and query phases)
"""
import json
import statistics
import sys

rows = [json.loads(line) for line in open(sys.argv[1])]
runs, threads = int(sys.argv[2]), int(sys.argv[3])
med = statistics.median


def key(r):
    return (r["workload"], r["blowup"], r["queries"], r["size"])


cases, sides = [], []
for r in rows:
    if key(r) not in cases:
        cases.append(key(r))
    if r["side"] not in sides:
        sides.append(r["side"])
ours = [s for s in sides if s.startswith("ballast")]
peer = "plonky3" in sides


def pick(side, case):
    return [r for r in rows if r["side"] == side and key(r) == case]


def name(case):
    w, _, _, size = case
    if w == "poseidon2":
        return f"poseidon2 × {size:,}"
    return f"keccak × {size:,}" if w == "keccak" else f"fib 16 × 2^{size}"


def rows_of(side, case):
    k = pick(side, case)[0]["rows"].bit_length() - 1
    return f"2^{k}"


header = ["statement", "b/q", "rows (ballast / P3)" if peer else "rows"]
for s in ours:
    header += [f"{s} (s)"] + (["÷ P3"] if peer else [])
if peer:
    header += ["Plonky3 (s)"]
header += ["peak RSS MiB (" + " / ".join(s.split()[-1] for s in ours) + (" / P3)" if peer else ")")]
if peer:
    header += ["RSS ÷ P3"]
header += ["proof KiB" + (" (ballast / P3)" if peer else "")]
print("| " + " | ".join(header) + " |")
print("|" + "---|" * len(header))
for case in cases:
    w, b, q, _ = case
    line = [name(case), f"{b}/{q}"]
    line.append(rows_of(ours[0], case) + (" / " + rows_of("plonky3", case) if peer else ""))
    p_time = med(r["prove_s"] for r in pick("plonky3", case)) if peer else None
    for s in ours:
        t = med(r["prove_s"] for r in pick(s, case))
        line.append(f"{t:.3f}")
        if peer:
            line.append(f"**{t / p_time:.2f}**")
    if peer:
        line.append(f"{p_time:.3f}")
    rss = [med(r["peak_rss_bytes"] for r in pick(s, case)) for s in ours]
    p_rss = med(r["peak_rss_bytes"] for r in pick("plonky3", case)) if peer else None
    line.append(" / ".join(f"{v / 2**20:,.0f}" for v in rss + ([p_rss] if peer else [])))
    if peer:
        line.append(f"**{rss[0] / p_rss:.2f}**")
    size = f"{pick(ours[0], case)[0]['proof_bytes'] / 1024:,.0f}"
    if peer:
        size += f" / {pick('plonky3', case)[0]['proof_bytes'] / 1024:,.0f}"
    line.append(size)
    print("| " + " | ".join(line) + " |")

phases = ["trace", "check", "lde", "tree", "quotient", "out_of_domain", "deep", "fri", "grind", "queries"]


def p3_phases(r):
    p = r["phases"]
    get = lambda n: p.get(n, 0.0)
    return {
        "trace": get("trace"),
        "lde": get("coset_lde_batch_with_transform"),
        "tree": get("build merkle tree"),
        "quotient": get("quotient_values"),
        "ood + deep": get("open") - get("FRI prover"),
        "fri": get("FRI prover"),
    }


print()
print("Phases (s, medians). ballast's: its own phase timer; Plonky3's: its tracing spans, mapped as "
      "in ci/bench-prover-report.py (\"ood + deep\" is its opening minus FRI).\n")
cols = ["trace", "check", "lde", "tree", "quotient", "ood + deep", "fri", "other", "total"]
print("| statement | b/q | side | " + " | ".join(cols) + " |")
print("|---|---|---|" + "---|" * len(cols))
for case in cases:
    w, b, q, _ = case
    for s in sides:
        got = pick(s, case)
        if s == "plonky3":
            per = [p3_phases(r) for r in got]
            values = {c: med(p[c] for p in per) for c in ["trace", "lde", "tree", "quotient", "ood + deep", "fri"]}
            values["check"] = None
        else:
            values = {c: med(r["phases"][c] for r in got) for c in phases}
            values["ood + deep"] = values.pop("out_of_domain") + values.pop("deep")
            values["fri"] += values.pop("grind") + values.pop("queries")
        total = med(r["prove_s"] for r in got)
        known = sum(v for v in values.values() if v is not None)
        values["other"] = total - known
        values["total"] = total
        cells = ["—" if values.get(c) is None else f"{values[c]:.3f}" for c in cols]
        print(f"| {name(case)} | {b}/{q} | {s} | " + " | ".join(cells) + " |")

print(f"\nMedians of {runs} interleaved runs per case, {threads} threads, whole processes, "
      "no grinding. ballast's fri column includes its grinding and query openings.")
