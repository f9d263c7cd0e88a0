#!/usr/bin/env bash
# ci/check-kernels.sh [--write]
#
# The CUDA kernels' committed PTX is what the pinned NVRTC makes of their sources, and the
# kernels compile for sm_90 (H100/H200) and sm_120 (RTX 50xx) without register spills.
#
#   1. Installs NVRTC from PyPI (nvidia-cuda-nvrtc-cu12==12.8.93, the sha256-pinned wheel
#      for x86_64 or aarch64 Linux) into $BALLAST_TOOLS_DIR/nvrtc-12.8.93-<arch> (default
#      target/ci-tools), unless already there.
#   2. Compiles crates/cuda/kernels/*.cu to PTX (compute_80, ci/nvrtc.py's fixed options)
#      and fails if any differs from the committed *.ptx, printing a diff summary.
#      --write replaces the committed PTX instead: run it after editing a kernel.
#   3. Compiles cubins for sm_90 and sm_120 with ptxas -v, prints each kernel's registers
#      and spills, and fails if any kernel spills.
#
# Needs python3 with pip, and network access the first time. No GPU, driver or toolkit.
# On hosts other than x86_64 and aarch64 Linux, for which NVIDIA publishes no NVRTC wheel,
# it says "check-kernels: skipped: ..." and exits 0.
# Exit codes: 0 ok (or skipped), 1 a check failed, 2 usage or setup error (one line says why).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD

# NVRTC 12.8 emits PTX ISA 8.7, which every driver from 570 (CUDA 12.8) on JIT-compiles;
# the backend refuses older drivers (MIN_DRIVER_CUDA_VERSION). Changing the pin changes the
# PTX: regenerate it with --write and update docs/gpu.md.
# Both wheels are the same NVRTC build (CL-35583870); the hashes are PyPI's.
nvrtc_version=12.8.93
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
    platform=manylinux_2_12_x86_64
    ;;
  Linux/aarch64)
    # 43 MB; 105 MB unpacked, nearly all of it the two libraries kept.
    wheel=nvidia_cuda_nvrtc_cu12-${nvrtc_version}-py3-none-manylinux2014_aarch64.manylinux_2_17_aarch64.whl
    wheel_sha256=fc1fec1e1637854b4c0a65fb9a8346b51dd9ee69e61ebaccc82058441f15bce8
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

# 1 ----- NVRTC
if [[ ! -f $nvrtc_dir/.complete ]]; then
  echo "check-kernels: installing NVRTC $nvrtc_version into $nvrtc_dir"
  rm -rf "$nvrtc_dir"
  mkdir -p "$nvrtc_dir"
  download=$(mktemp -d)
  trap 'rm -rf "$download"' EXIT
  python3 -m pip --version >/dev/null 2>&1 || {
    echo "check-kernels: setup: python3 with pip is needed to install NVRTC" >&2
    exit 2
  }
  python3 -m pip download --quiet --no-deps --only-binary=:all: --no-cache-dir \
    --platform "$platform" --python-version 3 --implementation py \
    --dest "$download" "nvidia-cuda-nvrtc-cu12==$nvrtc_version" || {
    echo "check-kernels: setup: pip could not download nvidia-cuda-nvrtc-cu12==$nvrtc_version for $platform (network access is needed the first time)" >&2
    exit 2
  }
  [[ -f $download/$wheel ]] || {
    echo "check-kernels: setup: pip did not download $wheel" >&2
    exit 2
  }
  echo "$wheel_sha256  $download/$wheel" | sha256sum --check --quiet >/dev/null 2>&1 || {
    echo "check-kernels: setup: $wheel does not have the pinned sha256 $wheel_sha256" >&2
    exit 2
  }
  # Only the library and its builtins.
  python3 - "$download/$wheel" "$nvrtc_dir" <<'PY' || exit 2
import pathlib, sys, zipfile
wheel, dest = sys.argv[1], pathlib.Path(sys.argv[2])
wanted = {"libnvrtc.so.12", "libnvrtc-builtins.so.12.8"}
try:
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            base = name.rsplit("/", 1)[-1]
            if name.startswith("nvidia/cuda_nvrtc/lib/") and base in wanted:
                (dest / base).write_bytes(z.read(name))
                wanted.discard(base)
except (OSError, zipfile.BadZipFile) as e:
    sys.exit(f"check-kernels: setup: could not extract NVRTC from {wheel}: {e}")
if wanted:
    sys.exit(f"check-kernels: setup: missing from {wheel}: {sorted(wanted)}")
PY
  touch "$nvrtc_dir/.complete"
  rm -rf "$download"
  trap - EXIT
  echo "check-kernels: NVRTC installed in $((SECONDS - started)) s"
fi
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
python3 ci/nvrtc.py --lib "$lib" ptx --out-dir "$fresh" "${sources[@]}"
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

# 3 ----- no register spills on the GPUs we target
spills=0
for arch in "${architectures[@]}"; do
  python3 ci/nvrtc.py --lib "$lib" cubin --arch "$arch" "${sources[@]}" || spills=1
done
[[ $spills == 0 ]] && echo "check-kernels: ok: no kernel spills registers on ${architectures[*]}"

echo "check-kernels: $((SECONDS - started)) s"
if [[ $stale != 0 || $spills != 0 ]]; then
  exit 1
fi
