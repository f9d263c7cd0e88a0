#!/usr/bin/env bash
# The release cli does not depend on where the checkout or the target directory is.
#
#   ci/check-path-independence.sh REFERENCE_CLI
#
# Copies the files a commit would hold into a scratch checkout at another path (with the
# same git revision for `cli doctor`), builds
# `cargo build --locked --release -p cli` there with its own target directory, and
# requires the binary to be byte-identical (sha256) to REFERENCE_CLI, built from this
# checkout. What would differ otherwise is jemalloc's C debug info, which records its
# absolute build directory under target/; the release profile strips debug info
# (`strip = "debuginfo"`, keeping the symbol table for ci/check-malloc-conf-symbol.sh).
# Exit codes: 0 identical, 1 different, 2 usage or build error.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [[ $# -ne 1 || ! -f $1 ]]; then
  echo "usage: $0 REFERENCE_CLI (a release cli built from this checkout)" >&2
  exit 2
fi
reference=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")

scratch=$(mktemp -d "${TMPDIR:-/tmp}/ballast-elsewhere.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
other=$scratch/a/different/checkout
mkdir -p "$other"
git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - | tar -xf - -C "$other"

# The copy is not a git checkout: give its build the revision `cli doctor` reports, which
# the reference build read from git (the same commit must give the same bytes).
rev=$(git rev-parse --short=12 HEAD 2>/dev/null || true)
echo "building the cli at $other (target directory $scratch/target) ..."
start=$SECONDS
if ! (cd "$other" && BALLAST_GIT_REV=${BALLAST_GIT_REV:-$rev} CARGO_TARGET_DIR=$scratch/target \
  cargo build --quiet --locked --release -p cli); then
  echo "check-path-independence: the build at $other failed" >&2
  exit 2
fi
echo "built in $((SECONDS - start)) s"

here=$(sha256sum "$reference" | cut -d' ' -f1)
there=$(sha256sum "$scratch/target/release/cli" | cut -d' ' -f1)
echo "  $here  $reference"
echo "  $there  (built at $other)"
if [[ $here != "$there" ]]; then
  echo "check-path-independence: the binaries differ; strings naming the build paths:" >&2
  strings "$scratch/target/release/cli" | grep -F -e "$scratch" | head -n 5 >&2 || true
  exit 1
fi
echo "check-path-independence: identical at both paths"
