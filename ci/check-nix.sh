#!/usr/bin/env bash
# Structural checks of ballast's Nix packaging that run without nixpkgs.
#
#   ci/check-nix.sh [lint] [lock] [eval]      (no argument: all three)
#
# lint  every .nix file parses (nix-instantiate --parse), is formatted
#       (alejandra) and has no dead code (deadnix --fail)
# lock  flake.lock is a well-formed version-7 lock holding exactly the pins of
#       nix/pins.json (ci/check-flake-lock.py)
# eval  the flake's wiring evaluates (nix flake show, nix flake check
#       --no-build) with its inputs replaced by the stand-ins under tests/nix/;
#       the assertions of tests/nix/probe/assertions.nix hold; the preBuild
#       guard refuses JEMALLOC_OVERRIDE; flake.lock has not drifted from flake.nix
#
# Environment:
#   BALLAST_TOOLS_DIR  where the pinned alejandra and deadnix are installed with
#                      `cargo install --locked --root` (default: target/ci-tools)
#   BALLAST_NIX_TOOLS  install (default): install those pinned tools if missing
#                      path: use alejandra (or alejandra-check) and deadnix from
#                      PATH, as `nix develop` and the nix-fmt flake check do
#   CI                 when "true" and Nix is missing, install Debian's nix-bin
#
# Debian's Nix 2.8 cannot evaluate nixpkgs or crane, and no machine here
# reaches GitHub: nothing in this script builds anything with real nixpkgs.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD

# Pinned versions. alejandra is published on crates.io as a library only, so
# ci/tools/alejandra-check wraps it (alejandra = "=3.1.0", with its Cargo.lock).
deadnix_version=1.3.1
alejandra_check_dir=ci/tools/alejandra-check

tools_mode=${BALLAST_NIX_TOOLS:-install}
tools_dir=${BALLAST_TOOLS_DIR:-$root/target/ci-tools}

nix_cmd=(nix --extra-experimental-features 'nix-command flakes'
  --offline --option substituters '' --option eval-cache false)

passed=0
failed=0
skipped=0
failures=()

pass() {
  passed=$((passed + 1))
  echo "  ok: $*"
}

fail() {
  failed=$((failed + 1))
  failures+=("$*")
  echo "  FAIL: $*"
}

skip() {
  skipped=$((skipped + 1))
  echo "  skipped: $*"
}

section() {
  echo
  echo "== $*"
}

# --- tools -------------------------------------------------------------------

ensure_nix() {
  if command -v nix-instantiate >/dev/null && command -v nix >/dev/null; then
    return 0
  fi
  if [[ ${CI:-} == true && $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    echo "Nix is missing: installing Debian's nix-bin (CI=true)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nix-bin >/dev/null
  fi
  if ! command -v nix >/dev/null; then
    echo "error: nix is not installed; on Debian: apt-get install nix-bin" >&2
    exit 2
  fi
}

# Installs a tool into $tools_dir unless the stamp says this exact version is there.
install_tool() {
  local name=$1 stamp=$2
  shift 2
  local stamp_file=$tools_dir/$name.stamp
  if [[ -x $tools_dir/bin/$name && -f $stamp_file && $(cat "$stamp_file") == "$stamp" ]]; then
    return 0
  fi
  echo "installing $name ($stamp) into $tools_dir ..."
  local start=$SECONDS
  mkdir -p "$tools_dir"
  CARGO_TARGET_DIR=$tools_dir/build cargo install --quiet --locked --force --root "$tools_dir" "$@"
  echo "$stamp" >"$stamp_file"
  echo "installed $name in $((SECONDS - start)) s"
}

# Sets fmt_cmd and deadnix_cmd.
ensure_lint_tools() {
  case $tools_mode in
    install)
      command -v cargo >/dev/null || {
        echo "error: cargo is needed to install the pinned alejandra and deadnix" >&2
        exit 2
      }
      install_tool deadnix "deadnix $deadnix_version" deadnix --version "$deadnix_version"
      local source_hash
      source_hash=$(cat "$alejandra_check_dir"/Cargo.toml "$alejandra_check_dir"/Cargo.lock "$alejandra_check_dir"/src/*.rs | sha256sum | cut -c1-16)
      install_tool alejandra-check "alejandra-check $source_hash" --path "$alejandra_check_dir"
      fmt_cmd=("$tools_dir/bin/alejandra-check" --check)
      deadnix_cmd=("$tools_dir/bin/deadnix" --fail)
      ;;
    path)
      if command -v alejandra-check >/dev/null; then
        fmt_cmd=(alejandra-check --check)
      elif command -v alejandra >/dev/null; then
        fmt_cmd=(alejandra --check --quiet)
      else
        echo "error: BALLAST_NIX_TOOLS=path but neither alejandra nor alejandra-check is on PATH" >&2
        exit 2
      fi
      deadnix_cmd=(deadnix --fail)
      ;;
    *)
      echo "error: BALLAST_NIX_TOOLS must be install or path, not '$tools_mode'" >&2
      exit 2
      ;;
  esac
}

# The files a commit would hold: tracked plus untracked-but-not-ignored ones,
# so a clean clone and a dirty checkout are checked alike.
list_files() {
  if command -v git >/dev/null && git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -z --cached --others --exclude-standard -- "$@" |
      while IFS= read -r -d '' file; do
        [[ -f $file ]] && printf '%s\0' "$file"
      done
  else
    local names=() pattern
    for pattern in "$@"; do
      names+=(-o -name "$pattern")
    done
    ((${#names[@]} == 0)) || names=(\( "${names[@]:1}" \))
    find . \( -path ./target -o -path ./.git \) -prune -o -type f "${names[@]}" -print0 |
      sed -z 's|^\./||'
  fi
}

# --- lint --------------------------------------------------------------------

step_lint() {
  section "lint: every .nix file parses, is formatted (alejandra) and has no dead code (deadnix)"
  local files=()
  mapfile -d '' -t files < <(list_files '*.nix' | sort -z)
  if ((${#files[@]} == 0)); then
    fail "no .nix files found"
    return
  fi
  echo "  ${#files[@]} files: ${files[*]}"

  if command -v nix-instantiate >/dev/null; then
    local file bad=()
    for file in "${files[@]}"; do
      nix-instantiate --parse "$file" >/dev/null 2>"$scratch/parse.err" || {
        cat "$scratch/parse.err"
        bad+=("$file")
      }
    done
    if ((${#bad[@]} == 0)); then
      pass "all ${#files[@]} files parse (nix-instantiate --parse)"
    else
      fail "syntax errors in: ${bad[*]}"
    fi
  else
    skip "nix-instantiate --parse (no Nix here; alejandra's parser still rejects syntax errors)"
  fi

  ensure_lint_tools
  if "${fmt_cmd[@]}" "${files[@]}"; then
    pass "formatted ($(basename "${fmt_cmd[0]}") ${fmt_cmd[*]:1})"
  else
    fail "not formatted: run 'nix fmt', or $tools_dir/bin/alejandra-check --write FILE..."
  fi
  if "${deadnix_cmd[@]}" "${files[@]}"; then
    pass "no dead code (deadnix --fail)"
  else
    fail "dead code found by deadnix (listed above)"
  fi
}

# --- lock --------------------------------------------------------------------

step_lock() {
  section "lock: flake.lock is well-formed and equals nix/pins.json"
  ensure_nix
  if ! nix-instantiate --eval --strict --json -E '(import ./flake.nix).inputs' >"$scratch/inputs.json"; then
    fail "could not read the inputs of flake.nix"
    return
  fi
  if python3 ci/check-flake-lock.py flake.lock nix/pins.json "$scratch/inputs.json"; then
    pass "flake.lock: version 7, every input locked (rev, narHash, lastModified), equal to nix/pins.json"
  else
    fail "flake.lock does not match flake.nix or nix/pins.json (see above)"
  fi
}

# --- eval --------------------------------------------------------------------

# A copy of the files a commit would hold: a flake inside a git repository
# sees tracked files only, so evaluating the checkout itself would miss new files.
copy_tree() {
  local dest=$1
  mkdir -p "$dest"
  list_files | tar --null -T - -cf - | tar -xf - -C "$dest"
}

step_eval() {
  section "eval: the flake's wiring, against the stand-in inputs in tests/nix/"
  ensure_nix
  local tree=$scratch/tree
  copy_tree "$tree"
  local stand_ins=(
    --override-input nixpkgs "path:$tree/tests/nix/nixpkgs"
    --override-input crane "path:$tree/tests/nix/crane"
    --override-input rust-overlay "path:$tree/tests/nix/rust-overlay"
  )
  local flake=path:$tree

  if "${nix_cmd[@]}" flake show --no-write-lock-file "$flake" "${stand_ins[@]}" >"$scratch/show.out" 2>"$scratch/show.err"; then
    sed 's/\x1b\[[0-9;]*m//g' "$scratch/show.out" | sed 's/^/    /'
    pass "nix flake show"
  else
    grep -v '^warning: not writing\|^•\|^    \|^  →' "$scratch/show.err" || true
    fail "nix flake show"
  fi

  if "${nix_cmd[@]}" flake check --no-build --no-write-lock-file "$flake" "${stand_ins[@]}" 2>"$scratch/check.err"; then
    pass "nix flake check --no-build (every output of both systems evaluates; checks instantiate)"
  else
    grep -v '^warning: not writing\|^•\|^    \|^  →' "$scratch/check.err" || true
    fail "nix flake check --no-build"
  fi

  echo "  assertions (tests/nix/probe/assertions.nix):"
  # ballast/rust-overlay rather than a follows: ballast's own flake.nix must
  # make that input's nixpkgs follow its nixpkgs (an assertion checks it).
  if "${nix_cmd[@]}" eval --json --no-write-lock-file "path:$tree/tests/nix/probe#report" \
    --override-input ballast "$flake" \
    --override-input nixpkgs "path:$tree/tests/nix/nixpkgs" \
    --override-input crane "path:$tree/tests/nix/crane" \
    --override-input ballast/rust-overlay "path:$tree/tests/nix/rust-overlay" \
    >"$scratch/report.json" 2>"$scratch/report.err"; then
    local counts
    counts=$(python3 - "$scratch/report.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
for name in report["passed"]:
    print(f"    ok: {name}", file=sys.stderr)
for failure in report["failed"]:
    print(f"    FAIL: {failure['name']}\n          got: {json.dumps(failure['got'])}", file=sys.stderr)
print(len(report["passed"]), len(report["failed"]))
PY
)
    local n_passed=${counts% *} n_failed=${counts#* }
    passed=$((passed + n_passed))
    failed=$((failed + n_failed))
    ((n_failed == 0)) || failures+=("$n_failed assertion(s) of tests/nix/probe/assertions.nix")
  else
    grep -v '^warning: not writing\|^•\|^    \|^  →' "$scratch/report.err" || true
    fail "the assertions did not evaluate"
  fi

  check_override_guard "$flake" "${stand_ins[@]}"
  check_lock_drift "$tree"
  check_compile_time_inputs
}

# Files the Rust code reads at compile time (include_str!, include_bytes!, include!) must
# be in the Nix source, or a real Nix build fails while every structural check passes.
# The rules mirror nix/source.nix (an assertion checks that file has them).
check_compile_time_inputs() {
  local result
  if result=$(python3 - <<'PY'
import os, re, sys
pattern = re.compile(r'include(?:_str|_bytes)?!\(\s*"([^"]+)"\s*\)')
def covered(rel):
    parts = rel.split("/")
    name = parts[-1]
    if name.endswith((".rs", ".toml")) or name == "Cargo.lock":
        return True                                   # commonCargoSources
    if parts[0] == "crates" and name == "README.md":
        return True                                   # the README.md filter
    if rel.startswith("crates/cuda/kernels/"):
        return True
    if parts[0] == "ci" and not rel.startswith("ci/tools/"):
        return True
    if parts[0] == "tests" and not rel.startswith("tests/nix/"):
        return True
    return len(parts) > 3 and parts[0] == "crates" and parts[2:4] == ["tests", "fixtures"]
found, missing = 0, []
for dirpath, _, files in os.walk("crates"):
    for f in files:
        if not f.endswith(".rs"):
            continue
        source = os.path.join(dirpath, f)
        for target in pattern.findall(open(source, encoding="utf-8").read()):
            rel = os.path.normpath(os.path.join(dirpath, target))
            found += 1
            if not covered(rel):
                missing.append(f"{rel} (read by {source})")
print(found)
print("\n".join(missing))
sys.exit(1 if missing else 0)
PY
  ); then
    pass "all ${result%%$'\n'*} files read by include_str!/include_bytes! are in the Nix source"
  else
    printf '    missing: %s\n' "${result#*$'\n'}"
    fail "files the Rust code reads at compile time are missing from nix/source.nix"
  fi
}

# Runs the package's preBuild guard itself: it must pass in a clean
# environment and stop the build for each form of JEMALLOC_OVERRIDE.
check_override_guard() {
  local flake=$1
  shift
  local guard
  if ! guard=$("${nix_cmd[@]}" eval --raw --no-write-lock-file "$flake#packages.x86_64-linux.cli.stub.args.preBuild" "$@" 2>"$scratch/guard.err"); then
    cat "$scratch/guard.err"
    fail "could not read the cli's preBuild"
    return
  fi
  if env -i PATH="$PATH" bash -euo pipefail -c "$guard" >/dev/null 2>&1; then
    pass "preBuild guard: passes without JEMALLOC_OVERRIDE"
  else
    fail "preBuild guard: fails even without JEMALLOC_OVERRIDE"
  fi
  local variable
  for variable in JEMALLOC_OVERRIDE X86_64_UNKNOWN_LINUX_GNU_JEMALLOC_OVERRIDE AARCH64_UNKNOWN_LINUX_GNU_JEMALLOC_OVERRIDE; do
    if env -i PATH="$PATH" "$variable=/nix/store/x-rust-jemalloc-sys/lib/libjemalloc_pic.a" \
      bash -euo pipefail -c "$guard" 2>"$scratch/guard.msg" >/dev/null; then
      fail "preBuild guard: lets $variable through"
    elif grep -q "JEMALLOC_OVERRIDE" "$scratch/guard.msg"; then
      pass "preBuild guard: stops the build when $variable is set, naming it"
    else
      fail "preBuild guard: fails for $variable but without saying why"
    fi
  done
}

# flake.lock must still describe flake.nix's inputs. Offline this works for
# an unchanged lock (nothing is fetched); when it cannot work, say so.
check_lock_drift() {
  local tree=$1
  if "${nix_cmd[@]}" flake lock --no-update-lock-file "path:$tree" >/dev/null 2>"$scratch/drift.err"; then
    pass "nix flake lock --no-update-lock-file: flake.lock matches flake.nix's inputs"
  elif grep -q "requires lock file changes\|cannot write modified lock file" "$scratch/drift.err"; then
    cat "$scratch/drift.err"
    fail "flake.lock has drifted from flake.nix's inputs"
  elif grep -q "unable to download\|Couldn't resolve\|cannot be fetched" "$scratch/drift.err"; then
    sed 's/^/    /' "$scratch/drift.err"
    fail "flake.lock does not lock flake.nix's inputs as declared (Nix tried to fetch one)"
  else
    sed 's/^/    /' "$scratch/drift.err"
    skip "lock drift detection did not run offline (see the message above)"
  fi
}

# --- main --------------------------------------------------------------------

steps=("$@")
((${#steps[@]})) || steps=(lint lock eval)
for step in "${steps[@]}"; do
  case $step in
    lint | lock | eval) ;;
    *)
      echo "usage: ci/check-nix.sh [lint] [lock] [eval]" >&2
      exit 2
      ;;
  esac
done

scratch=$(mktemp -d "${TMPDIR:-/tmp}/ballast-check-nix.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

for step in "${steps[@]}"; do
  "step_$step"
done

echo
echo "Note: these are structural checks. No build against real nixpkgs or crane ran:"
echo "the flake was parsed, linted, lock-checked and evaluated against the stand-ins"
echo "under tests/nix/. 'nix flake check' on a machine with a current Nix and network"
echo "access is what builds and tests it for real (see docs/nix.md)."
if ((failed > 0)); then
  echo
  echo "Failed:"
  printf '  - %s\n' "${failures[@]}"
fi
if ((skipped > 0)); then
  echo "check-nix: $passed passed, $failed failed, $skipped skipped"
else
  echo "check-nix: $passed passed, $failed failed"
fi
((failed == 0))
