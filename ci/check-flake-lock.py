#!/usr/bin/env python3
"""Check that flake.lock is well-formed and holds exactly the verified pins.

usage: check-flake-lock.py FLAKE_LOCK PINS_JSON FLAKE_INPUTS_JSON

FLAKE_INPUTS_JSON is the `inputs` attribute of flake.nix as JSON, e.g. from
`nix-instantiate --eval --strict --json -E '(import ./flake.nix).inputs'`.
No machine here reaches GitHub, so `nix flake lock` cannot write the lock: it
is written by hand from nix/pins.json, and this script keeps the two equal.
Python standard library only. Prints one line per check; exits 1 on failure.
"""

import base64
import json
import re
import sys

LOCK_VERSION = 7
REV = re.compile(r"^[0-9a-f]{40}$")
RELEASE_BRANCH = re.compile(r"^nixos-[0-9]{2}\.(05|11)$")


class Checker:
    def __init__(self):
        self.failures = []
        self.passed = 0

    def check(self, ok, what):
        if ok:
            self.passed += 1
            print(f"  ok: {what}")
        else:
            self.failures.append(what)
            print(f"  FAIL: {what}")
        return ok


def parse_github_url(url):
    """github:OWNER/REPO[/REF] -> dict like a lock's `original`."""
    match = re.fullmatch(r"github:([^/]+)/([^/?]+)(?:/([^?]+))?", url)
    if match is None:
        return None
    original = {"type": "github", "owner": match[1], "repo": match[2]}
    if match[3]:
        original["ref"] = match[3]
    return original


def is_sri_sha256(value):
    if not isinstance(value, str) or not value.startswith("sha256-"):
        return False
    try:
        return len(base64.b64decode(value[len("sha256-"):], validate=True)) == 32
    except ValueError:
        return False


def follows_of(spec):
    """{input name: follows path} declared under inputs.<x>.inputs."""
    return {
        name: sub["follows"]
        for name, sub in spec.get("inputs", {}).items()
        if isinstance(sub, dict) and "follows" in sub
    }


def main(lock_path, pins_path, inputs_path):
    with open(lock_path) as f:
        lock = json.load(f)
    with open(pins_path) as f:
        pins = json.load(f)["nodes"]
    with open(inputs_path) as f:
        inputs = json.load(f)

    c = Checker()
    c.check(lock.get("version") == LOCK_VERSION, f"lock version is {LOCK_VERSION} (got {lock.get('version')!r})")
    root_name = lock.get("root")
    nodes = lock.get("nodes", {})
    if not c.check(root_name in nodes, f"root node {root_name!r} exists"):
        return c
    root_inputs = nodes[root_name].get("inputs", {})
    c.check(
        sorted(root_inputs) == sorted(inputs),
        f"root inputs {sorted(root_inputs)} equal flake.nix inputs {sorted(inputs)}",
    )

    reachable = {root_name}
    for name, spec in sorted(inputs.items()):
        node_name = root_inputs.get(name)
        if not c.check(isinstance(node_name, str) and node_name in nodes, f"{name}: locked as its own node"):
            continue
        reachable.add(node_name)
        node = nodes[node_name]
        locked = node.get("locked", {})
        original = node.get("original", {})
        c.check(bool(REV.match(locked.get("rev", ""))), f"{name}: locked.rev is a 40-hex commit")
        c.check(is_sri_sha256(locked.get("narHash")), f"{name}: locked.narHash is a sha256 SRI hash")
        c.check(
            isinstance(locked.get("lastModified"), int) and locked["lastModified"] > 0,
            f"{name}: locked.lastModified is a timestamp",
        )
        c.check(
            all(locked.get(k) == original.get(k) for k in ("type", "owner", "repo")),
            f"{name}: locked and original name the same repository",
        )
        declared = parse_github_url(spec.get("url", ""))
        c.check(
            declared == original,
            f"{name}: original {original} matches flake.nix url {spec.get('url')!r}",
        )
        if name == "nixpkgs":
            c.check(
                bool(RELEASE_BRANCH.match(original.get("ref", ""))),
                f"nixpkgs: original.ref {original.get('ref')!r} is a release branch nixos-YY.MM",
            )

        declared_follows = follows_of(spec)
        lock_inputs = node.get("inputs", {})
        for sub, path in sorted(declared_follows.items()):
            c.check(
                lock_inputs.get(sub) == path.split("/"),
                f"{name}: input {sub} follows {path!r} in the lock (got {lock_inputs.get(sub)!r})",
            )
        c.check(
            sorted(lock_inputs) == sorted(declared_follows),
            f"{name}: lock has no inputs beyond the followed ones ({sorted(lock_inputs)})",
        )

        pin = pins.get(name)
        if c.check(pin is not None, f"{name}: has an entry in nix/pins.json"):
            c.check(locked == pin["locked"], f"{name}: locked entry equals the pin (rev {pin['locked']['rev'][:12]})")
            c.check(original == pin["original"], f"{name}: original entry equals the pin")

    c.check(
        set(nodes) == reachable,
        f"no stray nodes in the lock (extra: {sorted(set(nodes) - reachable)})",
    )
    return c


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    checker = main(*sys.argv[1:])
    if checker.failures:
        print(f"flake.lock: {len(checker.failures)} check(s) failed, {checker.passed} passed")
        sys.exit(1)
    print(f"flake.lock: all {checker.passed} checks passed")
