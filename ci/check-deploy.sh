#!/usr/bin/env bash
# Scale-out, end to end, with the release cli:
#
#   ci/check-deploy.sh CLI [k8s] [growth] [slurm]     (no argument: all three)
#
# k8s     Nix renders .#k8s-job's manifests (ci/check-nix.sh k8s: the package and an
#         override); the pinned kubernetes-validate checks them against the official
#         Kubernetes schemas (strict, 1.33 and 1.37), and must reject a broken copy;
#         then ci/emulate-indexed-job.py runs each pod's exact command line as its own
#         process (JOB_COMPLETION_INDEX set, the claim a directory), bundles and
#         verifies, and the proof must be byte-identical to `cli prove` on one host.
# growth  a keccak chain of 64 segments proven in 8 parts: the bundle is the
#         single-host proof, and each worker's peak heap is that of an 8-segment
#         statement, not of the 64-segment one (a table of heap and RSS per worker)
# slurm   a real single-node Slurm cluster runs deploy/slurm/ (ci/check-slurm.sh)
#
# Needs python3 with venv and pip (and PyPI the first time), the Nix kit or a Nix
# (BALLAST_NIX_KIT, as for ci/check-nix.sh), and root with Debian's packages for slurm.
# BALLAST_TOOLS_DIR is where the validator's venv goes (default: target/ci-tools).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD

cli=$(realpath "${1:?usage: ci/check-deploy.sh CLI [k8s] [growth] [slurm]}")
shift
steps=("$@")
((${#steps[@]})) || steps=(k8s growth slurm)
for step in "${steps[@]}"; do
  [[ $step == k8s || $step == growth || $step == slurm ]] || {
    echo "usage: ci/check-deploy.sh CLI [k8s] [growth] [slurm]" >&2
    exit 2
  }
done
[[ -x $cli ]] || {
  echo "ci/check-deploy.sh: $cli is not an executable" >&2
  exit 2
}
tools_dir=${BALLAST_TOOLS_DIR:-$root/target/ci-tools}
scratch=$(mktemp -d "${TMPDIR:-/tmp}/ballast-check-deploy.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

die() {
  echo "ci/check-deploy.sh: $*" >&2
  exit 1
}

section() {
  printf '\n== %s\n' "$*"
}

# The proof `cli prove ARGS` writes on one host.
single_host() {
  local out=$1
  shift
  "$cli" prove "$@" -o "$out" >/dev/null
}

step_k8s() {
  section "k8s: the manifests Nix renders, validated and run"
  BALLAST_K8S_OUT=$scratch/k8s ci/check-nix.sh k8s | grep -E '^  (ok|FAIL)' || die "Nix did not render the manifests"

  local venv=$tools_dir/kubernetes-validate requirements=ci/tools/kubernetes-validate/requirements.txt
  if ! cmp -s "$requirements" "$venv/requirements.txt" 2>/dev/null; then
    echo "  installing kubernetes-validate into $venv ($requirements) ..."
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps -r "$requirements"
    cp "$requirements" "$venv/requirements.txt"
  fi
  local validate=("$venv/bin/kubernetes-validate" --strict --quiet)
  local manifests=() name part
  for name in default override; do
    for part in volume prove bundle; do
      python3 -c 'import json, sys; json.dump(json.load(open(sys.argv[1]))[sys.argv[2]], open(sys.argv[3], "w"), indent=1)' \
        "$scratch/k8s/$name.json" "$part" "$scratch/k8s/$name-$part.json"
      manifests+=("$scratch/k8s/$name-$part.json")
    done
  done
  local version
  for version in 1.33.0 1.37.0; do
    "${validate[@]}" --kubernetes-version "$version" "${manifests[@]}" ||
      die "the manifests do not validate against Kubernetes $version"
    echo "  ok: ${#manifests[@]} manifests (PersistentVolumeClaim, Indexed Job, bundle Job; package and override) are valid Kubernetes $version (strict)"
  done
  # The same validator rejects a Job whose GPU limit is not a quantity and whose
  # container has a misspelt field: it discriminates.
  python3 - "$scratch/k8s/default-prove.json" "$scratch/k8s/broken.json" <<'PY'
import json, sys
job = json.load(open(sys.argv[1]))
container = job["spec"]["template"]["spec"]["containers"][0]
container["resources"]["limits"]["nvidia.com/gpu"] = "one"
container["volumeMount"] = container.pop("volumeMounts")
json.dump(job, open(sys.argv[2], "w"))
PY
  if "${validate[@]}" "$scratch/k8s/broken.json" >"$scratch/broken.out" 2>&1; then
    die "kubernetes-validate accepted a broken Job"
  fi
  echo "  ok: a broken copy is rejected: $(grep -m1 -o 'did not validate.*' "$scratch/broken.out" | cut -c1-140)"

  local args
  for name in default override; do
    echo "  emulating the $name manifests:"
    mkdir -p "$scratch/volume-$name"
    python3 ci/emulate-indexed-job.py "$cli" "$scratch/k8s/$name.json" "$scratch/volume-$name" | sed 's/^/    /'
    # The statement the pods prove: their args less `prove` and `--parts K`.
    mapfile -t args < <(python3 -c '
import json, sys
args = json.load(open(sys.argv[1]))["prove"]["spec"]["template"]["spec"]["containers"][0]["args"]
assert args[0] == "prove" and args[-2] == "--parts", args
sys.stdout.write("".join(a + "\n" for a in args[1:-2]))' "$scratch/k8s/$name.json")
    single_host "$scratch/single-$name.bin" "${args[@]}"
    cmp "$scratch/single-$name.bin" "$scratch/volume-$name/proof.bin" ||
      die "the $name Job's proof differs from cli prove ${args[*]} on one host"
    echo "  ok: the $name Job's proof.bin is the single-host proof of '${args[*]:-the default statement}', byte for byte (sha256 $(sha256sum "$scratch/volume-$name/proof.bin" | cut -c1-16))"
  done
}

step_growth() {
  section "growth: 64 segments in 8 parts"
  local statement=(--log-rows 10 --segments 64) dir=$scratch/growth
  mkdir -p "$dir"
  "$cli" prove "${statement[@]}" -o "$dir/single.bin" --report "$dir/single.json" >/dev/null
  "$cli" prove --log-rows 10 --segments 8 -o "$dir/eight.bin" --report "$dir/eight.json" >/dev/null
  local i parts=()
  for ((i = 0; i < 8; i++)); do
    "$cli" prove "${statement[@]}" --parts 8 --part-index "$i" -o "$dir/part-$i.bin" --report "$dir/part-$i.json" >/dev/null
    parts+=("$dir/part-$i.bin")
  done
  "$cli" bundle "${parts[@]}" -o "$dir/bundled.bin" >/dev/null
  cmp "$dir/single.bin" "$dir/bundled.bin" || die "64 segments in 8 parts bundle into other bytes than one host proves"
  python3 - "$dir" <<'PY'
import json, os, sys
d = sys.argv[1]
load = lambda name: json.load(open(os.path.join(d, name + ".json")))
single, eight = load("single"), load("eight")
workers = [load(f"part-{i}") for i in range(8)]
mib = lambda b: f"{b / 2**20:.1f}"
print("  | run | segments | proof MiB | peak heap MiB | peak RSS MiB | prove s |")
print("  |---|---|---|---|---|---|")
rows = [("one host, 64 segments", "0..64", single), ("one host, 8 segments", "0..8", eight)]
rows += [(f"worker {i} of 8", f"{w['part']['first_segment']}..{w['part']['end_segment']}", w) for i, w in enumerate(workers)]
for label, segments, r in rows:
    print(f"  | {label} | {segments} | {mib(r['proof_bytes'])} | {mib(r['peak_heap_bytes'])} | {mib(r['peak_rss_bytes'])} | {r['prove_seconds']:.2f} |")
whole = os.path.getsize(os.path.join(d, "single.bin"))
in_parts = sum(os.path.getsize(os.path.join(d, f"part-{i}.bin")) for i in range(8))
print(f"  ok: 8 part files of {in_parts:,} bytes in all bundle into the {whole:,}-byte proof one host writes (cmp)")
worst = max(w["peak_heap_bytes"] for w in workers)
# A worker holds one segment's tables and its own segments' proofs: what an
# 8-segment statement needs (within 5 %), far from the 64-segment statement's heap.
if worst > 1.05 * eight["peak_heap_bytes"] or worst >= single["peak_heap_bytes"] / 2:
    sys.exit(f"a worker's peak heap {mib(worst)} MiB is not that of its own 8 segments "
             f"({mib(eight['peak_heap_bytes'])} MiB) but grows with the whole "
             f"({mib(single['peak_heap_bytes'])} MiB)")
print(f"  ok: every worker peaks at <= {mib(worst)} MiB of heap, as an 8-segment statement does "
      f"({mib(eight['peak_heap_bytes'])} MiB); one host proving all 64 peaks at {mib(single['peak_heap_bytes'])} MiB")
PY
}

step_slurm() {
  section "slurm: a real single-node cluster runs deploy/slurm/"
  ci/check-slurm.sh "$cli" | sed 's/^/  /'
}

for step in "${steps[@]}"; do
  "step_$step"
done
echo
echo "ci/check-deploy.sh: ${steps[*]}: ok"
