#!/usr/bin/env bash
# Poseidon2 against its peer: builds peers/plonky3-poseidon2 (Plonky3 0.8.0's width-12
# Goldilocks permutation, from crates.io at exact versions, locked) into target/peers, feeds
# it the input states of crates/poseidon2/tests/fixtures/plonky3-vectors.txt and requires
# its output to be that file, byte for byte. The workspace test checks ballast-poseidon2 against the
# same file; so the two permutations agree on every state in it, and the file's outputs are
# Plonky3's, not written by hand.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

vectors=crates/poseidon2/tests/fixtures/plonky3-vectors.txt
target=$PWD/target/peers/plonky3-poseidon2
cargo build --quiet --release --locked --manifest-path peers/plonky3-poseidon2/Cargo.toml \
  --target-dir "$target"
peer=$target/release/p3-poseidon2-vectors

printed=$(mktemp)
trap 'rm -f "$printed"' EXIT
cut -d' ' -f1-12 "$vectors" | "$peer" >"$printed"
if ! cmp -s "$printed" "$vectors"; then
  echo "ci/check-poseidon2-peer.sh: Plonky3 0.8.0 permutes the states of $vectors otherwise:" >&2
  diff "$vectors" "$printed" | head -n 8 >&2
  exit 1
fi
echo "ci/check-poseidon2-peer.sh: Plonky3 0.8.0 prints the $(wc -l <"$vectors") vectors of $vectors"
