#!/usr/bin/env bash
# cargo-deny over the dependency graph: licenses, bans and sources (deny.toml), the same
# checks as the flake's `cargo-deny` check. The advisories check is not run: it needs the
# RustSec database from the network, which CI does not reach.
#
# Installs the pinned cargo-deny with `cargo install --locked` into $BALLAST_TOOLS_DIR
# (default target/ci-tools) unless it is already there.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

version=0.20.2
tools_dir=${BALLAST_TOOLS_DIR:-$PWD/target/ci-tools}
deny=$tools_dir/bin/cargo-deny
if [[ ! -x $deny || $("$deny" --version 2>/dev/null) != "cargo-deny $version" ]]; then
  echo "installing cargo-deny $version into $tools_dir ..."
  start=$SECONDS
  CARGO_TARGET_DIR=$tools_dir/build cargo install --quiet --locked --force --no-default-features \
    --root "$tools_dir" cargo-deny --version "$version"
  echo "installed in $((SECONDS - start)) s"
fi
"$deny" --version
exec "$deny" check bans licenses sources
