#!/usr/bin/env bash
# ballast's Nix packaging, checked with a real Nix and the real crane and
# rust-overlay.
#
#   ci/check-nix.sh [lint] [lock] [eval] [discriminate] [k8s]   (no argument: the first four)
#
# lint          every .nix file parses (nix-instantiate --parse), is formatted
#               (alejandra) and has no dead code (deadnix --fail)
# lock          flake.lock is a well-formed version-7 lock holding exactly the pins
#               of nix/pins.json (ci/check-flake-lock.py)
# eval          with the offline kit: Nix 2.31 evaluates the flake against the
#               pinned crane and rust-overlay (and the kit's stand-in nixpkgs, unless
#               the pinned one is among its inputs): nix flake show, nix flake check
#               --no-build --all-systems, every package, app, check and dev shell of
#               both systems, and ci/check-flake-eval.py's assertions on
#               `nix derivation show`. Without the kit, a Nix on PATH runs the real,
#               building `nix flake check`.
# discriminate  the assertions catch a broken wiring: each of a few deliberate
#               breakages of a copy of the flake must fail the assertion it names
# k8s           writes .#k8s-job's manifests as JSON to $BALLAST_K8S_OUT (the
#               package's and an override's), for ci/check-deploy.sh
#
# Environment:
#   BALLAST_NIX_KIT    the offline Nix kit (.ci/run sets ../shared/nix-kit): its
#                      install.sh puts Nix 2.31.5 in /opt/nix-modern (as root) and its
#                      load-inputs.sh the pinned input trees in that Nix's store
#   BALLAST_TOOLS_DIR  where the pinned alejandra and deadnix are installed with
#                      `cargo install --locked --root` (default: target/ci-tools)
#   BALLAST_NIX_TOOLS  install (default): install those pinned tools if missing
#                      path: use alejandra (or alejandra-check) and deadnix from
#                      PATH, as `nix develop` and the nix-fmt flake check do
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD

# Pinned versions. alejandra is published on crates.io as a library only, so
# ci/tools/alejandra-check wraps it (alejandra = "=3.1.0", with its Cargo.lock).
deadnix_version=1.3.1
alejandra_check_dir=ci/tools/alejandra-check

tools_mode=${BALLAST_NIX_TOOLS:-install}
tools_dir=${BALLAST_TOOLS_DIR:-$root/target/ci-tools}

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

# The nix-instantiate for parsing and reading flake.nix: the kit's when
# BALLAST_NIX_KIT is set (installing it), else one on PATH; empty if none.
# Call choose_nix first when the kit is set (not in a $(...) subshell).
instantiate() {
  if [[ -n ${BALLAST_NIX_KIT:-} ]]; then
    echo "${kit_nix%/nix}/nix-instantiate"
  elif command -v nix-instantiate >/dev/null; then
    command -v nix-instantiate
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

  [[ -z ${BALLAST_NIX_KIT:-} ]] || choose_nix
  local parser
  parser=$(instantiate)
  if [[ -n $parser ]]; then
    local file bad=()
    for file in "${files[@]}"; do
      "$parser" --parse "$file" >/dev/null 2>"$scratch/parse.err" || {
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
  [[ -z ${BALLAST_NIX_KIT:-} ]] || choose_nix
  local reader
  reader=$(instantiate)
  if [[ -z $reader ]]; then
    fail "no nix-instantiate to read flake.nix's inputs (set BALLAST_NIX_KIT)"
    return
  fi
  if ! "$reader" --eval --strict --json -E '(import ./flake.nix).inputs' >"$scratch/inputs.json"; then
    fail "could not read the inputs of flake.nix"
    return
  fi
  if python3 ci/check-flake-lock.py flake.lock nix/pins.json "$scratch/inputs.json"; then
    pass "flake.lock: version 7, every input locked (rev, narHash, lastModified), equal to nix/pins.json"
  else
    fail "flake.lock does not match flake.nix or nix/pins.json (see above)"
  fi
}

# --- the Nix that evaluates ----------------------------------------------------

# Sets nix_cmd (offline evaluation with the kit's Nix) or real_nix (building).
kit_nix=/opt/nix-modern/bin/nix
choose_nix() {
  [[ -n ${nix_cmd+set} || -n ${real_nix:-} ]] && return 0
  if [[ -n ${BALLAST_NIX_KIT:-} ]]; then
    local kit
    kit=$(cd "$BALLAST_NIX_KIT" 2>/dev/null && pwd) || {
      echo "error: BALLAST_NIX_KIT=$BALLAST_NIX_KIT is not a directory" >&2
      exit 2
    }
    [[ -x $kit/install.sh && -x $kit/load-inputs.sh && -f $kit/inputs/inputs.tsv ]] || {
      echo "error: $kit is not the Nix kit (install.sh, load-inputs.sh, inputs/inputs.tsv)" >&2
      exit 2
    }
    if ! "$kit_nix" --version >/dev/null 2>&1; then
      [[ $(id -u) == 0 ]] || {
        echo "error: installing the kit's Nix needs root: run $kit/install.sh as root" >&2
        exit 2
      }
      echo "installing the kit's Nix ($kit/install.sh) ..."
      local start=$SECONDS
      NIX_KIT_SYSTEM_PATH=0 "$kit/install.sh" >"$scratch/install.log" 2>&1 || {
        tail -n 20 "$scratch/install.log" >&2
        echo "error: $kit/install.sh failed" >&2
        exit 2
      }
      echo "installed $("$kit_nix" --version) in $((SECONDS - start)) s"
    fi
    nix_cmd=("$kit_nix" --extra-experimental-features 'nix-command flakes'
      --offline --option substituters '' --option eval-cache false)
    # Options of the flake commands, which go after the subcommand.
    flake_opts=()
    # The kit carries the pinned nixpkgs only if a line of inputs.tsv has its narHash;
    # otherwise its stand-in nixpkgs replaces that one node (fallback.lock).
    local pinned
    pinned=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["nodes"]["nixpkgs"]["locked"]["narHash"])' flake.lock)
    if grep -qF "$pinned" "$kit/inputs/inputs.tsv"; then
      nixpkgs_note="the pinned nixpkgs"
    else
      flake_opts+=(--reference-lock-file "$kit/inputs/fallback.lock")
      nixpkgs_note="the kit's stand-in nixpkgs $(python3 -c 'import json,sys; n=json.load(open(sys.argv[1]))["nodes"]["nixpkgs"]["locked"]; print(n["owner"] + "/" + n["repo"] + "@" + n["rev"][:12])' "$kit/inputs/fallback.lock") (the pinned tree is not on this machine)"
    fi
    # The same options for ci/check-flake-eval.py.
    assert_opts=()
    local option
    for option in "${flake_opts[@]}"; do
      assert_opts+=(--flake-option "$option")
    done
    # The inputs resolve offline once their trees are in the store. `flake archive` puts
    # every input in the store, so it fails when one would have to be downloaded
    # (`flake metadata` succeeds without fetching them).
    mkdir -p "$scratch/inputs"
    cp flake.nix flake.lock "$scratch/inputs/"
    if ! "${nix_cmd[@]}" flake archive --no-write-lock-file "${flake_opts[@]}" "path:$scratch/inputs" >/dev/null 2>&1; then
      echo "loading the pinned inputs into the store ($kit/load-inputs.sh) ..."
      local start=$SECONDS
      NIX=$kit_nix "$kit/load-inputs.sh" | sed 's/^/  /'
      echo "loaded in $((SECONDS - start)) s"
    fi
  elif command -v nix >/dev/null && nix --version >/dev/null 2>&1; then
    real_nix=$(command -v nix)
  else
    echo "error: no Nix to evaluate the flake: set BALLAST_NIX_KIT to the offline kit, or put a Nix >= 2.31 with network access on PATH" >&2
    exit 2
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

# Runs one timed nix command; its output goes to $scratch/$name.{out,err}.
timed() {
  local name=$1 what=$2
  shift 2
  local start=$SECONDS
  if "$@" >"$scratch/$name.out" 2>"$scratch/$name.err"; then
    pass "$what ($((SECONDS - start)) s)"
  else
    grep -E 'error' "$scratch/$name.err" | tail -n 5 | sed 's/^/    /'
    fail "$what"
  fi
}

step_eval() {
  choose_nix
  if [[ -n ${real_nix:-} ]]; then
    section "eval: no kit, so the real nix flake check builds everything ($real_nix)"
    local start=$SECONDS
    if "$real_nix" --extra-experimental-features 'nix-command flakes' flake check -L "path:$root"; then
      pass "nix flake check ($((SECONDS - start)) s)"
    else
      fail "nix flake check"
    fi
    return
  fi
  section "eval: Nix $("$kit_nix" --version | awk '{print $NF}') with the pinned crane and rust-overlay and $nixpkgs_note"
  local tree=$scratch/tree
  copy_tree "$tree"
  local flake=path:$tree
  timed show "nix flake show --all-systems" "${nix_cmd[@]}" flake show --no-write-lock-file "${flake_opts[@]}" --all-systems "$flake"
  sed 's/\x1b\[[0-9;]*m//g' "$scratch/show.out" | sed 's/^/    /'
  timed check "nix flake check --no-build --all-systems" \
    "${nix_cmd[@]}" flake check --no-write-lock-file "${flake_opts[@]}" --no-build --all-systems "$flake"
  echo "  assertions on the derivations (ci/check-flake-eval.py):"
  local start=$SECONDS
  if python3 ci/check-flake-eval.py "$flake" "${assert_opts[@]}" --flake-option --no-write-lock-file -- "${nix_cmd[@]}" >"$scratch/assert.out" 2>&1; then
    sed 's/^/  /' "$scratch/assert.out"
    passed=$((passed + $(grep -c '^  ok:' "$scratch/assert.out")))
    echo "  ($((SECONDS - start)) s)"
  else
    sed 's/^/  /' "$scratch/assert.out"
    passed=$((passed + $(grep -c '^  ok:' "$scratch/assert.out")))
    local n_failed
    n_failed=$(grep -c '^  FAIL:' "$scratch/assert.out" || true)
    failed=$((failed + n_failed))
    failures+=("$n_failed assertion(s) of ci/check-flake-eval.py")
  fi
  check_lock_drift "$flake"
}

# flake.lock must still describe flake.nix's inputs. Offline this works for
# an unchanged lock (nothing is fetched); when it cannot work, say so.
check_lock_drift() {
  local flake=$1
  if "${nix_cmd[@]}" flake lock --no-update-lock-file "${flake_opts[@]}" "$flake" >/dev/null 2>"$scratch/drift.err"; then
    pass "nix flake lock --no-update-lock-file: flake.lock matches flake.nix's inputs"
  else
    sed 's/^/    /' "$scratch/drift.err"
    fail "flake.lock has drifted from flake.nix's inputs"
  fi
}

# --- discriminate -------------------------------------------------------------

# Each breakage: file, text to replace, replacement, the assertion that must fail.
breakages=(
  "nix/package.nix|cargoExtraArgs = \"--locked -p cli\";|cargoExtraArgs = \"--locked\";|cargo builds with --locked -p cli"
  "flake.nix|jemallocLgPage = \"16\";|jemallocLgPage = \"14\";|aarch64-linux: cli: JEMALLOC_SYS_WITH_LG_PAGE"
  "nix/package.nix|exit 1|true|preBuild guard refuses"
  "nix/package.nix|nativeBuildInputs = [pkgs.autoAddDriverRunpath];||autoAddDriverRunpath is a native build input"
  "nix/checks.nix|ci/check-proof-equality.sh \${cli}/bin/cli|ci/check-proof-equality.sh|proof-equality: runs bash"
  "nix/image.nix|NVIDIA_VISIBLE_DEVICES=all|NVIDIA_VISIBLE_DEVICES=none|image: NVIDIA runtime variables"
  "nix/source.nix|(lib.fileset.fileFilter (file: file.name == \"README.md\") ../crates)||source: holds all"
  "nix/k8s.nix|completionMode = \"Indexed\";|completionMode = \"NonIndexed\";|k8s-job: the prove Job is an Indexed Job"
  "nix/k8s.nix|(container \"bundle\" ([\"bundle\"] ++ partFiles|(container \"bundle\" ([\"bundle\"] ++ lib.tail partFiles|k8s-job: the bundle Job joins"
)

step_discriminate() {
  choose_nix
  section "discriminate: each deliberate breakage fails the assertion that guards it"
  if [[ -n ${real_nix:-} ]]; then
    skip "discrimination runs use the kit's offline evaluation"
    return
  fi
  local i=0 entry file from to expect tree
  for entry in "${breakages[@]}"; do
    IFS='|' read -r file from to expect <<<"$entry"
    i=$((i + 1))
    tree=$scratch/broken-$i
    copy_tree "$tree"
    if ! grep -qF -- "$from" "$tree/$file"; then
      fail "breakage $i: $file no longer contains '$from' (update the list in ci/check-nix.sh)"
      continue
    fi
    FROM=$from TO=$to python3 -c 'import os, sys; p = sys.argv[1]; s = open(p).read(); open(p, "w").write(s.replace(os.environ["FROM"], os.environ["TO"], 1))' "$tree/$file"
    if python3 ci/check-flake-eval.py "path:$tree" --expect-failure "$expect" "${assert_opts[@]}" --flake-option --no-write-lock-file -- "${nix_cmd[@]}" >"$scratch/broken-$i.out" 2>&1; then
      pass "$file: '$from' -> '$to' is caught ($(grep -m1 'discrimination:' "$scratch/broken-$i.out" | sed 's/discrimination: caught by //'))"
    else
      grep -E 'FAIL|discrimination' "$scratch/broken-$i.out" | sed 's/^/    /'
      fail "$file: '$from' -> '$to' was not caught by an assertion on '$expect'"
    fi
    rm -rf "$tree"
  done
}

# --- k8s ---------------------------------------------------------------------

# The Kubernetes manifests of .#k8s-job, as JSON for ci/check-deploy.sh: the
# default package's (default.json) and an override's (override.json), evaluated
# for x86_64-linux (the manifests are the same on every system but the image tag).
k8s_override='{ name = "fib"; parts = 8; parallelism = 2; proveArgs = ["--workload" "fibonacci" "--sequences" "4" "--log-rows" "10" "--segments" "16" "--security-bits" "80"]; verifyArgs = ["--min-security-bits" "80"]; imageRef = "registry.example.com/ballast:ci"; storageClassName = "nfs"; }'

step_k8s() {
  choose_nix
  local out=${BALLAST_K8S_OUT:?BALLAST_K8S_OUT must name the directory the manifests are written to}
  section "k8s: render .#k8s-job's manifests into $out"
  mkdir -p "$out"
  local attr=packages.x86_64-linux.k8s-job eval_cmd flake
  if [[ -n ${real_nix:-} ]]; then
    eval_cmd=("$real_nix" --extra-experimental-features 'nix-command flakes' eval)
    flake=path:$root
  else
    copy_tree "$scratch/k8s-tree"
    eval_cmd=("${nix_cmd[@]}" eval --no-write-lock-file "${flake_opts[@]}")
    flake=path:$scratch/k8s-tree
  fi
  timed k8s-default "default.json: the package as shipped" \
    "${eval_cmd[@]}" --json "$flake#$attr.manifests"
  timed k8s-override "override.json: .override $k8s_override" \
    "${eval_cmd[@]}" --json "$flake#$attr" --apply "j: (j.override $k8s_override).manifests"
  cp "$scratch/k8s-default.out" "$out/default.json"
  cp "$scratch/k8s-override.out" "$out/override.json"
}

# --- main --------------------------------------------------------------------

steps=("$@")
((${#steps[@]})) || steps=(lint lock eval discriminate)
for step in "${steps[@]}"; do
  case $step in
    lint | lock | eval | discriminate | k8s) ;;
    *)
      echo "usage: ci/check-nix.sh [lint] [lock] [eval] [discriminate] [k8s]" >&2
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
if [[ -n ${nixpkgs_note:-} ]]; then
  echo "Evaluated, not built: crane and rust-overlay are the pinned trees, nixpkgs is"
  echo "$nixpkgs_note. A build needs nixpkgs' bootstrap and toolchains,"
  echo "which this machine cannot download (docs/nix.md)."
fi
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
