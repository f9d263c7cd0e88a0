#!/usr/bin/env bash
# ci/check-kernels.sh [--write]
#
# The CUDA kernels' committed PTX is what the pinned NVRTC makes of their sources, at the
# lowest PTX ISA that has what they use, and what a driver would compile from it spills no
# registers on sm_90 (H100/H200) or sm_120 (RTX 50xx).
#
#   1. Installs NVRTC (nvidia-cuda-nvrtc-cu12==12.8.93) and ptxas (from
#      nvidia-cuda-nvcc-cu12==12.8.93), the sha256-pinned PyPI wheels for x86_64 or aarch64
#      Linux, into $BALLAST_TOOLS_DIR (default target/ci-tools), unless already there.
#   2. Compiles crates/cuda/kernels/*.cu to PTX (compute_80, ci/nvrtc.py's fixed options,
#      ISA $isa declared) and fails if any differs from the committed *.ptx, printing a
#      diff summary. --write replaces the committed PTX instead: run it after editing a
#      kernel.
#   3. The ISA floor: ptxas assembles every committed PTX as it is for sm_80, and refuses it
#      declared one ISA lower (ci/ptxas.py floor).
#   4. ptxas -v on every committed PTX for sm_90 and sm_120: each kernel's registers, stack
#      and spills, failing on any spill (ci/ptxas.py spills).
#   5. The per-operation instruction counts ci/roofline.py predicts with are what NVRTC makes
#      of the kernels' field and hash functions (ci/roofline.py costs --check).
#
# Needs python3 with pip, and network access the first time. No GPU, driver or toolkit.
# On hosts other than x86_64 and aarch64 Linux, for which NVIDIA publishes no wheels, it
# says "check-kernels: skipped: ..." and exits 0.
# Exit codes: 0 ok (or skipped), 1 a check failed, 2 usage or setup error (one line says why).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD

# NVRTC 12.8 writes PTX ISA 8.7 (driver 570+); the kernels need no more than ISA 7.0, the
# first with sm_80, which drivers from CUDA 11.0 on JIT-compile, so the committed PTX
# declares 7.0 (ballast_cuda::PTX_ISA, checked against it). Changing the pin changes the PTX:
# regenerate it with --write and update docs/gpu.md.
# The wheels of each pair are the same build (CL-35583870); the hashes are PyPI's.
nvrtc_version=12.8.93
isa=7.0
isa_below=6.5
kernels=crates/cuda/kernels
architectures=(sm_90 sm_120)

write=false
case "${1:-}" in
  "") ;;
  --write) write=true ;;
  *)
    echo "usage: $0 [--write]" >&2
    exit 2
    ;;
esac

arch=$(uname -m)
case "$(uname -s)/$arch" in
  Linux/x86_64)
    # 88 MB; 222 MB unpacked, of which the two libraries kept are 111 MB.
    wheel=nvidia_cuda_nvrtc_cu12-${nvrtc_version}-py3-none-manylinux2010_x86_64.manylinux_2_12_x86_64.whl
    wheel_sha256=a7756528852ef889772a84c6cd89d41dfa74667e24cca16bb31f8f061e3e9994
    # 40 MB; ptxas alone (32 MB) is kept.
    nvcc_wheel=nvidia_cuda_nvcc_cu12-${nvrtc_version}-py3-none-manylinux2010_x86_64.manylinux_2_12_x86_64.whl
    nvcc_wheel_sha256=2d6dc36fb7cb5ac9c0b8825bc13d193c35487a315664007287d0126531238011
    platform=manylinux_2_12_x86_64
    ;;
  Linux/aarch64)
    # 43 MB; 105 MB unpacked, nearly all of it the two libraries kept.
    wheel=nvidia_cuda_nvrtc_cu12-${nvrtc_version}-py3-none-manylinux2014_aarch64.manylinux_2_17_aarch64.whl
    wheel_sha256=fc1fec1e1637854b4c0a65fb9a8346b51dd9ee69e61ebaccc82058441f15bce8
    # 38 MB; ptxas alone (26 MB) is kept.
    nvcc_wheel=nvidia_cuda_nvcc_cu12-${nvrtc_version}-py3-none-manylinux2014_aarch64.manylinux_2_17_aarch64.whl
    nvcc_wheel_sha256=2b35ada240938d19398119ca596faaf626ba5e729511be9715842a29d112926d
    platform=manylinux2014_aarch64
    ;;
  *)
    echo "check-kernels: skipped: the pinned NVRTC wheels are for x86_64 and aarch64 Linux only ($(uname -s) $arch)" >&2
    exit 0
    ;;
esac

started=$SECONDS
tools_dir=${BALLAST_TOOLS_DIR:-$root/target/ci-tools}
nvrtc_dir=$tools_dir/nvrtc-$nvrtc_version-$arch
lib=$nvrtc_dir/libnvrtc.so.12

# 1 ----- NVRTC and ptxas
# install PACKAGE WHEEL SHA256 DIR FILE...: the named files of the wheel's package into DIR.
install() {
  local package=$1 wheel=$2 sha256=$3 dir=$4
  shift 4
  [[ -f $dir/.complete ]] && return 0
  local began=$SECONDS
  echo "check-kernels: installing $package into $dir"
  rm -rf "$dir"
  mkdir -p "$dir"
  download=$(mktemp -d)
  trap 'rm -rf "$download"' EXIT
  python3 -m pip --version >/dev/null 2>&1 || {
    echo "check-kernels: setup: python3 with pip is needed to install $package" >&2
    exit 2
  }
  python3 -m pip download --quiet --no-deps --only-binary=:all: --no-cache-dir \
    --platform "$platform" --python-version 3 --implementation py \
    --dest "$download" "$package" || {
    echo "check-kernels: setup: pip could not download $package for $platform (network access is needed the first time)" >&2
    exit 2
  }
  [[ -f $download/$wheel ]] || {
    echo "check-kernels: setup: pip did not download $wheel" >&2
    exit 2
  }
  echo "$sha256  $download/$wheel" | sha256sum --check --quiet >/dev/null 2>&1 || {
    echo "check-kernels: setup: $wheel does not have the pinned sha256 $sha256" >&2
    exit 2
  }
  python3 - "$download/$wheel" "$dir" "$@" <<'PY' || exit 2
import pathlib, stat, sys, zipfile
wheel, dest, wanted = sys.argv[1], pathlib.Path(sys.argv[2]), set(sys.argv[3:])
try:
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            base = name.rsplit("/", 1)[-1]
            if base in wanted and ("/lib/" in name or "/bin/" in name):
                target = dest / base
                target.write_bytes(z.read(name))
                target.chmod(target.stat().st_mode | stat.S_IXUSR)
                wanted.discard(base)
except (OSError, zipfile.BadZipFile) as e:
    sys.exit(f"check-kernels: setup: could not extract from {wheel}: {e}")
if wanted:
    sys.exit(f"check-kernels: setup: missing from {wheel}: {sorted(wanted)}")
PY
  touch "$dir/.complete"
  rm -rf "$download"
  trap - EXIT
  echo "check-kernels: $package installed in $((SECONDS - began)) s"
}
install "nvidia-cuda-nvrtc-cu12==$nvrtc_version" "$wheel" "$wheel_sha256" "$nvrtc_dir" \
  libnvrtc.so.12 libnvrtc-builtins.so.12.8
ptxas_dir=$tools_dir/ptxas-$nvrtc_version-$arch
install "nvidia-cuda-nvcc-cu12==$nvrtc_version" "$nvcc_wheel" "$nvcc_wheel_sha256" "$ptxas_dir" ptxas
ptxas=$ptxas_dir/ptxas
version=$(python3 ci/nvrtc.py --lib "$lib" version 2>&1) || {
  # The last line of the traceback is the loader's reason.
  echo "check-kernels: setup: NVRTC does not load: ${version##*$'\n'} (remove $nvrtc_dir to reinstall it)" >&2
  exit 2
}
echo "check-kernels: NVRTC $version ($lib)"

sources=("$kernels"/*.cu)

# 2 ----- the committed PTX regenerates
fresh=$(mktemp -d)
trap 'rm -rf "$fresh"' EXIT
python3 ci/nvrtc.py --lib "$lib" ptx --isa "$isa" --out-dir "$fresh" "${sources[@]}"
if $write; then
  cp "$fresh"/*.ptx "$kernels"/
  echo "check-kernels: wrote $(cd "$fresh" && echo *.ptx) into $kernels"
fi
stale=0
for source in "${sources[@]}"; do
  name=$(basename "$source" .cu).ptx
  if [[ ! -f $kernels/$name ]]; then
    echo "check-kernels: FAIL: $kernels/$name is missing (run ci/check-kernels.sh --write)"
    stale=1
  elif ! cmp -s "$fresh/$name" "$kernels/$name"; then
    echo "check-kernels: FAIL: $kernels/$name is not what NVRTC $nvrtc_version makes of $(basename "$source"):"
    diff -u "$kernels/$name" "$fresh/$name" | sed -n '1,3d;/^[-+]/p' | head -n 20 || true
    echo "  ($(diff "$kernels/$name" "$fresh/$name" | grep -c '^[<>]' || true) lines differ; run ci/check-kernels.sh --write)"
    stale=1
  fi
done
for ptx in "$kernels"/*.ptx; do
  [[ -f ${ptx%.ptx}.cu ]] || {
    echo "check-kernels: FAIL: $ptx has no source"
    stale=1
  }
done
[[ $stale == 0 ]] && echo "check-kernels: ok: the committed PTX ($(cd "$kernels" && echo *.ptx)) regenerates byte for byte"

committed=("$kernels"/*.ptx)

# 3 ----- the ISA floor: nothing needs more than ISA $isa, which is the lowest for sm_80
floor=0
python3 ci/ptxas.py --ptxas "$ptxas" floor --isa "$isa" --below "$isa_below" --arch sm_80 \
  "${committed[@]}" || floor=1
[[ $floor == 0 ]] && echo "check-kernels: ok: the committed PTX declares ISA $isa, which ptxas accepts for sm_80 and refuses lowered to $isa_below"

# 4 ----- no register spills in what a driver compiles from the committed PTX
spills=0
for arch in "${architectures[@]}"; do
  python3 ci/ptxas.py --ptxas "$ptxas" spills --arch "$arch" "${committed[@]}" || spills=1
done
[[ $spills == 0 ]] && echo "check-kernels: ok: no kernel spills registers on ${architectures[*]} (ptxas $nvrtc_version on the committed PTX)"

# 5 ----- the roofline's operation costs are the kernels' (docs/gpu.md)
costs=0
python3 ci/roofline.py costs --nvrtc "$lib" --check >/dev/null || costs=1
[[ $costs == 0 ]] && echo "check-kernels: ok: ci/roofline.py's operation costs are what the kernels compile to"

echo "check-kernels: $((SECONDS - started)) s"
if [[ $stale != 0 || $floor != 0 || $spills != 0 || $costs != 0 ]]; then
  exit 1
fi
