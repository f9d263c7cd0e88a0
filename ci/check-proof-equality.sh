#!/usr/bin/env bash
# ci/check-proof-equality.sh CLI
#
# An allocator is no input to a transcript, and neither is the thread count or the SIMD path:
# this proves one multi-segment statement six ways, and once more on every CPU path this
# machine supports, and requires byte-identical proofs that all verify.
#   never-purge         the compiled-in policy (no allocator variables in the environment)
#   jemalloc-defaults   _RJEM_MALLOC_CONF=dirty_decay_ms:10000,muzzy_decay_ms:0
#   background-thread   _RJEM_MALLOC_CONF=background_thread:true
#   threads-1           --threads 1
#   threads-2           --threads 2
#   threads-3           --threads 3 (an uneven split of the work on small machines)
#   cpu-scalar, cpu-avx2, cpu-avx512
#                       BALLAST_CPU=scalar|avx2|avx512 (a path the CPU lacks is skipped, visibly,
#                       unless BALLAST_REQUIRE_CPU_PATHS names it: then it fails)
# Prints each proof's SHA-256; exits 1 if any proof fails to verify or differs, 2 on usage.
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 CLI" >&2
  exit 2
fi
cli=$1
[[ -x $cli ]] || { echo "check-proof-equality: $cli is not an executable file" >&2; exit 2; }

# A small statement with several segments and grinding, so every phase runs; on the CPU
# backend whatever the host has, so that the CPU paths are what is compared.
statement=(--log-rows 8 --steps 20 --backend cpu)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# run NAME ALLOCATOR_CONF [PROVE_FLAG...]: prove with _RJEM_MALLOC_CONF=ALLOCATOR_CONF (unset
# when empty) and verify.
run() {
  local name=$1 conf=$2
  shift 2
  local env_args=(env -u MALLOC_CONF -u _RJEM_MALLOC_CONF -u BALLAST_CPU)
  [[ -z $conf ]] || env_args+=("_RJEM_MALLOC_CONF=$conf")
  [[ -z ${cpu_path-} ]] || env_args+=("BALLAST_CPU=$cpu_path")
  "${env_args[@]}" "$cli" prove "${statement[@]}" "$@" -o "$work/$name.bin" >"$work/$name.log" 2>&1 ||
    fail "proving ($name) failed: $(tail -n 3 "$work/$name.log")"
  "$cli" verify "$work/$name.bin" >/dev/null || fail "the $name proof does not verify"
}

fail() {
  echo "check-proof-equality: FAIL: $*" >&2
  exit 1
}

arms=(never-purge jemalloc-defaults background-thread threads-1 threads-2 threads-3)
run never-purge ""
run jemalloc-defaults "dirty_decay_ms:10000,muzzy_decay_ms:0"
run background-thread "background_thread:true"
run threads-1 "" --threads 1
run threads-2 "" --threads 2
run threads-3 "" --threads 3
for cpu_path in scalar avx2 avx512; do
  if BALLAST_CPU=$cpu_path "$cli" doctor >/dev/null 2>"$work/cpu.err"; then
    arms+=("cpu-$cpu_path")
    run "cpu-$cpu_path" ""
  elif [[ ,${BALLAST_REQUIRE_CPU_PATHS-}, == *",$cpu_path,"* ]]; then
    fail "BALLAST_REQUIRE_CPU_PATHS requires the $cpu_path path: $(cat "$work/cpu.err")"
  else
    echo "check-proof-equality: skipping the $cpu_path path: $(cat "$work/cpu.err")"
  fi
done
unset cpu_path

reference=$work/${arms[0]}.bin
for arm in "${arms[@]}"; do
  digest=$(sha256sum "$work/$arm.bin" | cut -d' ' -f1)
  printf '%-18s %s  %s bytes\n' "$arm" "$digest" "$(wc -c <"$work/$arm.bin")"
done
for arm in "${arms[@]:1}"; do
  cmp -s "$reference" "$work/$arm.bin" || fail "the $arm proof differs from the ${arms[0]} proof"
done
echo "check-proof-equality: ok: ${#arms[@]} proofs of ${statement[*]} verify and are byte-identical"
