#!/usr/bin/env python3
"""The CUDA backend's roofline: what each phase of a segment should take on a GPU, from the
kernels as written (their instruction counts from the committed PTX and the passes they
make over memory) and the device's peak rates.

Standard library only. docs/gpu.md's tables are this script's output; ci/gpu-check.sh prints
its prediction beside every phase it measures.

    roofline.py predict [--sms 132 --clock-ghz 1.98 --bandwidth-tbs 4.8 --pcie-gbs 55]
                        (--keccak LOG_ROWS SEGMENTS | --poseidon2-chain LOG_ROWS SEGMENTS
                         | --fibonacci SEQUENCES LOG_ROWS SEGMENTS)
                        [--blowup 2] [--queries 227] [--pow-bits 16] [--hash keccak|poseidon2]
                        [--json]
    roofline.py costs --nvrtc LIBNVRTC [--check]

`predict` prints, per phase, the predicted time of one segment (and of all), as the larger of
its instructions at the device's integer rate and its bytes at its memory bandwidth. `costs`
recounts the per-operation PTX instruction counts below from probe kernels compiled with the
pinned NVRTC; --check fails if they differ from the counts this file uses (ci/check-kernels.sh
runs it, so that the model keeps up with the kernels).
"""

import argparse
import json
import math
import pathlib
import re
import shutil
import sys
import tempfile

# PTX instructions per operation, as `costs` counts them in probe kernels (net of the probe's
# own loads, stores and indexing). A 64-bit multiply is one PTX instruction and several SASS
# ones, so these undercount the hardware's work on multiplies: see MULTIPLY_EXPANSION.
COSTS = {
    "gl_mul": 15,
    "gl_add": 5,
    "gl_sub": 3,
    "ext_mul": 191,
    "keccak_round": 218,
    "p2_full_round": 1244,
    "p2_partial_round": 297,
    "p2_external": 390,
}

# SASS instructions per PTX 64-bit multiply (mul.lo.u64, mul.hi.u64): 32-bit IMADs and
# their carries; gl_mul has three multiplies.
MULTIPLY_EXPANSION = 4

# Probe kernels: each computes one operation on values it loads, and stores the result.
PROBES = r"""
#include "keccak.cuh"
#include "goldilocks.cuh"
#include "poseidon2.cuh"
extern "C" __global__ void probe_empty(const u64* a, const u64* b, u64* out) {
    out[0] = a[0] ^ b[0];
}
extern "C" __global__ void probe_gl_mul(const u64* a, const u64* b, u64* out) {
    out[0] = gl_mul(a[0], b[0]);
}
extern "C" __global__ void probe_gl_add(const u64* a, const u64* b, u64* out) {
    out[0] = gl_add(a[0], b[0]);
}
extern "C" __global__ void probe_gl_sub(const u64* a, const u64* b, u64* out) {
    out[0] = gl_sub(a[0], b[0]);
}
extern "C" __global__ void probe_ext_mul(const u64* a, const u64* b, u64* out) {
    Ext3 x = ext_mul(Ext3{a[0], a[1], a[2]}, Ext3{b[0], b[1], b[2]});
    out[0] = x.c0 ^ x.c1 ^ x.c2;
}
extern "C" __global__ void probe_keccak(const u64* a, const u64* b, u64* out) {
    u64 s[25];
    for (int i = 0; i < 25; ++i) s[i] = a[i];
    keccak_f1600(s);
    out[0] = s[0];
}
"""


# The Poseidon2 probes load a state of 12, apply one piece of the permutation to it (b: round
# constants) and store one word of it; probe_p2_state is that overhead alone.
P2_PROBES = {
    "p2_state": "",
    "p2_full_round": "p2_full_round(s, b);",
    "p2_partial_round": "s[0] = p2_sbox(gl_add(s[0], b[0])); p2_internal(s);",
    "p2_external": "p2_external(s);",
}
P2_PROBE = """
extern "C" __global__ void probe_{name}(const u64* a, const u64* b, u64* out) {{
    u64 s[12];
    for (int i = 0; i < 12; ++i) s[i] = a[i];
    {body}
    u64 x = 0;
    for (int i = 0; i < 12; ++i) x ^= s[i];
    out[0] = x;
}}
"""


def ptx_instructions(body):
    """The instructions of a PTX function body: statements, not directives or labels."""
    return [l.strip() for l in body.splitlines()
            if l.strip().endswith(";") and not l.strip().startswith(".")]


def measure(nvrtc_lib):
    sys.path.insert(0, str(pathlib.Path(__file__).parent))
    import nvrtc
    kernels = pathlib.Path(__file__).parent.parent / "crates/cuda/kernels"
    with tempfile.TemporaryDirectory() as tmp:
        for header in kernels.glob("*.cuh"):
            shutil.copy(header, tmp)
        source = pathlib.Path(tmp) / "probes.cu"
        source.write_text(PROBES + "".join(
            P2_PROBE.format(name=name, body=body) for name, body in P2_PROBES.items()))
        _, ptx = nvrtc.Nvrtc(nvrtc_lib).compile(source, nvrtc.PTX_OPTIONS)
    bodies = {m.group(1): m.group(2) for m in re.finditer(
        r"\.visible \.entry (\w+)\(.*?\n\{(.*?)\n\}", ptx.decode(), re.S)}
    base = len(ptx_instructions(bodies["probe_empty"]))
    counts = {}
    for name in ("gl_mul", "gl_add", "gl_sub"):
        counts[name] = len(ptx_instructions(bodies[f"probe_{name}"])) - base
    # ext_mul loads six values and folds three (two xors) where the empty probe loads two.
    counts["ext_mul"] = len(ptx_instructions(bodies["probe_ext_mul"])) - base - 4 - 2
    # keccak_f1600's 24 rounds are a loop: its body, between its label and the branch back.
    body = bodies["probe_keccak"]
    loop = re.search(r"\n(\$L__BB\d+_\d+):\n(.*?)\n\s*@%p\d+ bra \s*\1;", body, re.S)
    counts["keccak_round"] = len(ptx_instructions(loop.group(2))) + 1
    state = len(ptx_instructions(bodies["probe_p2_state"]))
    for name in ("p2_full_round", "p2_partial_round", "p2_external"):
        counts[name] = len(ptx_instructions(bodies[f"probe_{name}"])) - state
    return counts


# The shipped AIRs' constraint programs (ballast_air::ConstraintProgram): how many of each
# instruction one quotient point interprets, and the registers a thread holds.
PROGRAMS = {
    "keccak": {"add": 11433, "sub": 13061, "mul": 8448, "neg": 40, "assert": 3109,
               "registers": 35},
    "poseidon2-chain": {"add": 1281, "sub": 365, "mul": 684, "neg": 0, "assert": 258,
                        "registers": 19},
    "fibonacci": {"add": 1, "sub": 6, "mul": 0, "neg": 0, "assert": 6, "registers": 1},
}
# Per interpreted instruction, beyond its operation: fetching and decoding the word, two
# operands through a switch, the register store (read off constraints.ptx's loop).
INTERPRETER_OVERHEAD = 30
# Threads of the composition launch at most (crates/cuda/src/segment.rs).
COMPOSITION_THREADS = 1 << 16
# Shared-memory tile of the transform passes: 2^11 words (crates/cuda/src/lde.rs).
LOG_TILE = 11
KECCAK_RATE_BYTES = 136


def segment_shape(args):
    if args.keccak:
        log_rows, segments = args.keccak
        return {"name": f"keccak chain, {segments} x 2^{log_rows} rows", "width": 2353,
                "log_rows": log_rows, "segments": segments, "log_chunks": 1,
                "program": PROGRAMS["keccak"]}
    if args.poseidon2_chain:
        log_rows, segments = args.poseidon2_chain
        return {"name": f"poseidon2 chain, {segments} x 2^{log_rows} rows", "width": 242,
                "log_rows": log_rows, "segments": segments, "log_chunks": 1,
                "program": PROGRAMS["poseidon2-chain"]}
    sequences, log_rows, segments = args.fibonacci
    program = {k: v * sequences for k, v in PROGRAMS["fibonacci"].items()}
    program["registers"] = 1
    return {"name": f"fibonacci {sequences} x 2^{log_rows} rows x {segments}",
            "width": 2 * sequences, "log_rows": log_rows, "segments": segments,
            "log_chunks": 0, "program": program}


def predict(args):
    c = COSTS
    mul = c["gl_mul"] + 3 * (MULTIPLY_EXPANSION - 1)  # SASS-weighted
    ext_scale_add = 3 * (mul + c["gl_add"])
    ext_mul = c["ext_mul"] + 27 * (MULTIPLY_EXPANSION - 1)
    inverse = 96 * mul  # a^(p-2): 63 squarings and ~32 multiplications
    ext_inverse = inverse + 12 * mul
    keccak = 24 * c["keccak_round"]
    # Poseidon2: the outer matrix, 8 full rounds (12 S-boxes of 4 multiplies), 22 partial
    # ones (1), the multiplies SASS-weighted.
    poseidon2 = (c["p2_external"] + 8 * c["p2_full_round"] + 22 * c["p2_partial_round"]
                 + (8 * 12 + 22) * 4 * (MULTIPLY_EXPANSION - 1) * 3)
    # A butterfly: a multiply, an add and a subtract, the twiddle's index and load, two
    # shared-memory loads and stores.
    butterfly = mul + c["gl_add"] + c["gl_sub"] + 12

    s = segment_shape(args)
    w, log_n, log_blowup = s["width"], s["log_rows"], int(math.log2(args.blowup))
    n, blowup = 1 << log_n, args.blowup
    lde_rows = n * blowup
    log_q = log_n + s["log_chunks"]
    q = 1 << log_q
    cq = 3 << s["log_chunks"]
    passes = max(1, math.ceil(log_n / LOG_TILE))
    passes_q = max(1, math.ceil(log_q / LOG_TILE))
    rate = args.sms * 64 * args.clock_ghz * 1e9  # 32-bit integer instructions per second
    bandwidth = args.bandwidth_tbs * 1e12

    phases = {}

    def phase(name, instructions, nbytes):
        phases[name] = {"instructions": instructions, "bytes": nbytes,
                        "seconds": max(instructions / rate, nbytes / bandwidth)}

    # LDE: the trace's inverse transform and its B coset transforms, the quotient's inverse
    # transform (3 columns of q) and its chunks' coset transforms. Each pass reads and writes
    # its columns once.
    trace_butterflies = w * (n // 2) * log_n * (1 + blowup)
    quotient_butterflies = 3 * (q // 2) * log_q + cq * (n // 2) * log_n * blowup
    scales = (w + cq) * lde_rows
    phase("lde", (trace_butterflies + quotient_butterflies) * butterfly + scales * mul,
          16 * w * n * passes * (1 + blowup) + 16 * 3 * q * passes_q
          + 16 * cq * n * passes * blowup)
    # Trees: a leaf per LDE row hashes its row (trace and quotient), a node per leaf; with
    # Poseidon2 a permutation per 8 elements (at least one) and one a node.
    if args.hash == "poseidon2":
        permutation = poseidon2
        trace_leaf, quotient_leaf = max(1, math.ceil(w / 8)), max(1, math.ceil(cq / 8))
        fri_leaf = 3 + 1  # 8 values of 3 coordinates, and a node
    else:
        permutation = keccak
        trace_leaf = math.ceil((8 * w + 2) / KECCAK_RATE_BYTES)
        quotient_leaf = math.ceil((8 * cq + 2) / KECCAK_RATE_BYTES)
        fri_leaf = 2  # 8 values' 192 bytes in two blocks, a node a block
    phase("tree", lde_rows * (trace_leaf + quotient_leaf + 2) * permutation,
          8 * (w + cq) * lde_rows + 2 * 64 * lde_rows)
    # Quotient: the program interpreted at q points; its registers (24 bytes of traffic an
    # instruction) stay in L2 only while the launch's register files fit there.
    p = s["program"]
    per_point = (p["add"] * (INTERPRETER_OVERHEAD + c["gl_add"])
                 + p["sub"] * (INTERPRETER_OVERHEAD + c["gl_sub"])
                 + p["mul"] * (INTERPRETER_OVERHEAD + mul)
                 + p["neg"] * (INTERPRETER_OVERHEAD + c["gl_sub"])
                 + p["assert"] * (INTERPRETER_OVERHEAD + ext_scale_add)
                 + 3 * inverse)
    executed = p["add"] + p["sub"] + p["mul"] + p["neg"]
    register_file = 8 * p["registers"] * min(q, COMPOSITION_THREADS)
    register_bytes = 24 * executed * q if register_file > 50e6 else 0
    phase("quotient", q * per_point, register_bytes + 2 * 8 * w * q)
    # Out of domain: n barycentric weights, two weighted sums a trace column (every B-th LDE
    # row: whole sectors are read), the quotient's chunks at z.
    phase("out_of_domain",
          n * (ext_inverse + 2 * mul) + 2 * w * n * ext_scale_add + cq * n * ext_scale_add,
          8 * w * n * min(blowup, 4) + 8 * cq * n + 24 * n)
    # DEEP: a dot product of every LDE row with γ's powers, two extension inverses a point.
    phase("deep", lde_rows * ((w + cq) * ext_scale_add + 2 * ext_inverse + 4 * ext_mul),
          8 * (w + cq) * lde_rows + 24 * lde_rows)
    # FRI: folds of 8 (an extension inverse-free fold a value, ~a multiply of the extension)
    # and a tree a round, over layers shrinking by 8.
    layer_values = sum(lde_rows >> (3 * k) for k in range(log_n // 3 + 1))
    phase("fri", layer_values * (ext_mul + fri_leaf * permutation // 8), 48 * layer_values)
    phase("grind", (1 << args.pow_bits) * permutation, 0)
    phase("queries", args.queries * (w + cq) * 4, 8 * args.queries * (w + cq) * 32)

    segment = sum(v["seconds"] for v in phases.values())
    upload = 8 * w * n / (args.pcie_gbs * 1e9)
    return {"statement": s["name"], "phases": phases, "segment_seconds": segment,
            "upload_seconds_per_segment": upload, "segments": s["segments"],
            "total_seconds": s["segments"] * segment + upload,
            "device": {"sms": args.sms, "clock_ghz": args.clock_ghz,
                       "bandwidth_tbs": args.bandwidth_tbs, "pcie_gbs": args.pcie_gbs}}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("predict")
    p.add_argument("--sms", type=int, default=132)
    p.add_argument("--clock-ghz", type=float, default=1.98)
    p.add_argument("--bandwidth-tbs", type=float, default=4.8)
    p.add_argument("--pcie-gbs", type=float, default=55.0)
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--keccak", type=int, nargs=2, metavar=("LOG_ROWS", "SEGMENTS"))
    which.add_argument("--poseidon2-chain", type=int, nargs=2, metavar=("LOG_ROWS", "SEGMENTS"))
    which.add_argument("--fibonacci", type=int, nargs=3,
                       metavar=("SEQUENCES", "LOG_ROWS", "SEGMENTS"))
    p.add_argument("--blowup", type=int, default=2)
    p.add_argument("--queries", type=int, default=227)
    p.add_argument("--pow-bits", type=int, default=16)
    p.add_argument("--hash", choices=["keccak", "poseidon2"], default="keccak")
    p.add_argument("--json", action="store_true")
    c = commands.add_parser("costs")
    c.add_argument("--nvrtc", required=True, help="path to libnvrtc.so")
    c.add_argument("--check", action="store_true")
    args = parser.parse_args()

    if args.command == "costs":
        counts = measure(args.nvrtc)
        print(json.dumps(counts))
        if args.check and counts != COSTS:
            print(f"roofline.py: the kernels' costs are {counts}, the model uses {COSTS}: "
                  "update COSTS in ci/roofline.py and docs/gpu.md", file=sys.stderr)
            return 1
        return 0

    r = predict(args)
    if args.json:
        print(json.dumps(r, indent=1))
        return 0
    print(f"{r['statement']}, {args.hash} trees, blowup {args.blowup}, on {args.sms} SMs at {args.clock_ghz} GHz, "
          f"{args.bandwidth_tbs} TB/s")
    print(f"{'phase':<14} {'G instr':>9} {'GB':>8} {'ms':>8}")
    for name, v in r["phases"].items():
        print(f"{name:<14} {v['instructions'] / 1e9:>9.2f} {v['bytes'] / 1e9:>8.2f} "
              f"{v['seconds'] * 1e3:>8.2f}")
    print(f"{'segment':<14} {'':>9} {'':>8} {r['segment_seconds'] * 1e3:>8.2f}")
    print(f"trace upload {r['upload_seconds_per_segment'] * 1e3:.1f} ms a segment at "
          f"{args.pcie_gbs} GB/s (overlapped with the previous segment)")
    print(f"statement: {r['segments']} segments, {r['total_seconds'] * 1e3:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
