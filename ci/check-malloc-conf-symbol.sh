#!/usr/bin/env bash
# ci/check-malloc-conf-symbol.sh BINARY
#
# Passes only if BINARY carries ballast's never-purge policy where jemalloc reads it:
#   1. nm: `_rjem_malloc_conf` is defined as a global, non-weak data symbol ("D") of pointer
#      size. jemalloc's own weak default shows as "V"; a byte array instead of a pointer
#      shows as "R" (and crashes at start-up); "U" or nothing means no definition.
#   2. nm: `_rjem_malloc` is defined, so the jemalloc inside is the _rjem_-prefixed one. An
#      unprefixed jemalloc reads `malloc_conf` and would ignore our symbol while carrying it.
#   3. jemalloc itself, asked with _RJEM_MALLOC_CONF=confirm_conf:true, reports reading
#      "dirty_decay_ms:-1,muzzy_decay_ms:-1" from the global variable. This witness also
#      works on a stripped binary, where nm has nothing to read.
# Prints the lines it judged; exits 1 with a reason on any failure, 2 on bad usage.
set -euo pipefail

expected='dirty_decay_ms:-1,muzzy_decay_ms:-1'

if [[ $# -ne 1 ]]; then
  echo "usage: $0 BINARY" >&2
  exit 2
fi
binary=$1
if [[ ! -x $binary ]]; then
  echo "check-malloc-conf-symbol: $binary is not an executable file" >&2
  exit 2
fi
command -v nm >/dev/null || { echo "check-malloc-conf-symbol: nm (binutils) is required" >&2; exit 2; }

fail() {
  echo "check-malloc-conf-symbol: FAIL: $*" >&2
  exit 1
}

symbols=$(nm -S "$binary" 2>&1) || fail "nm cannot read $binary: $symbols"
conf_line=$(awk '$NF == "_rjem_malloc_conf"' <<<"$symbols")
malloc_line=$(awk '$NF == "_rjem_malloc"' <<<"$symbols")
echo "nm: ${conf_line:-<no _rjem_malloc_conf symbol>}"
echo "nm: ${malloc_line:-<no _rjem_malloc symbol>}"

# 2 first: without the prefixed jemalloc, the symbol's state says nothing.
[[ $malloc_line =~ \ [Tt]\ _rjem_malloc$ ]] ||
  fail "_rjem_malloc is not defined: this jemalloc is not the _rjem_-prefixed build and ignores _rjem_malloc_conf (or the binary is stripped)"

# 1. The exported configuration pointer.
[[ -n $conf_line ]] || fail "no _rjem_malloc_conf symbol in $binary: nothing defines it"
read -r -a fields <<<"$conf_line"
if [[ ${#fields[@]} -eq 4 ]]; then
  size=$((16#${fields[1]}))
  type=${fields[2]}
else
  size=0
  type=${fields[-2]}
fi
case $type in
  D) ;;
  V | v | W | w) fail "_rjem_malloc_conf is jemalloc's weak default ($type): the export did not reach the linker" ;;
  U) fail "_rjem_malloc_conf is undefined (U): nothing defines it" ;;
  R | r) fail "_rjem_malloc_conf is read-only data ($type): a byte array, not a pointer to a string" ;;
  *) fail "_rjem_malloc_conf has symbol type $type, expected a global data symbol (D)" ;;
esac
[[ $size -eq 8 ]] || fail "_rjem_malloc_conf is $size bytes, expected a thin pointer (8 bytes)"

# 3. jemalloc's own account of what it read (labels use the unprefixed names).
report=$(env -u MALLOC_CONF _RJEM_MALLOC_CONF=confirm_conf:true "$binary" --version 2>&1 >/dev/null || true)
conf_report=$(grep -F 'malloc_conf #2 (string pointed to by the global variable' <<<"$report" || true)
echo "jemalloc: ${conf_report:-<no confirm_conf report>}"
[[ $conf_report == *"\"$expected\""* ]] ||
  fail "jemalloc did not report reading \"$expected\" from _rjem_malloc_conf"

echo "check-malloc-conf-symbol: ok: $binary exports \"$expected\" as _rjem_malloc_conf and jemalloc reads it"
