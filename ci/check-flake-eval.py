#!/usr/bin/env python3
"""Evaluate ballast's flake with a real Nix and assert what its derivations must say.

usage: check-flake-eval.py FLAKE [--expect-failure TEXT] [--flake-option OPT]... -- NIX_COMMAND...

FLAKE is a flake reference (`path:DIR`); NIX_COMMAND is the nix invocation with
its global options (offline flags); each --flake-option (for example
--reference-lock-file FILE) goes after `nix eval`, where flake options go. Nothing is
built: every fact comes from `nix eval` and `nix derivation show`, that is from
the real crane, rust-overlay and nixpkgs the lock resolves to.

With --expect-failure TEXT the script is a discrimination run over a flake that
was broken on purpose: it exits 0 only when an assertion whose name contains
TEXT fails. Python standard library only; exits 1 when an assertion fails.
"""

import json
import os
import re
import subprocess
import sys

# What each system pins (flake.nix `platforms`).
SYSTEMS = {
    "x86_64-linux": {"lg_page": "12", "driver_lib_dirs": "/usr/lib64:/usr/lib/x86_64-linux-gnu"},
    "aarch64-linux": {"lg_page": "16", "driver_lib_dirs": "/usr/lib64:/usr/lib/aarch64-linux-gnu"},
}
CHECKS = [
    "cargo-deny",
    "cargo-doc",
    "cli",
    "clippy",
    "doctest",
    "fmt",
    "jemalloc-conf",
    "malloc-conf-symbol",
    "nextest",
    "nix-fmt",
    "proof-equality",
]
# The checks that run a ci/ script on the built binary.
POLICY_SCRIPTS = {
    "malloc-conf-symbol": "ci/check-malloc-conf-symbol.sh",
    "proof-equality": "ci/check-proof-equality.sh",
}
INCLUDE = re.compile(r'include(?:_str|_bytes)?!\(\s*"([^"]+)"\s*\)')
OVERRIDES = [
    "JEMALLOC_OVERRIDE",
    "X86_64_UNKNOWN_LINUX_GNU_JEMALLOC_OVERRIDE",
    "AARCH64_UNKNOWN_LINUX_GNU_JEMALLOC_OVERRIDE",
]


class Nix:
    def __init__(self, command, flake, flake_options):
        self.command = command
        self.flake = flake
        self.flake_options = flake_options

    def run(self, *args):
        done = subprocess.run([*self.command, *args], capture_output=True, text=True)
        if done.returncode != 0:
            lines = [l for l in done.stderr.splitlines() if "error" in l] or done.stderr.splitlines()
            raise RuntimeError(f"nix {' '.join(args[:2])} failed: {' / '.join(lines[-3:])}")
        return done.stdout

    def eval_json(self, attr, apply):
        return json.loads(
            self.run("eval", *self.flake_options, "--json", f"{self.flake}#{attr}", "--apply", apply)
        )

    def derivations(self, paths):
        return json.loads(self.run("derivation", "show", *sorted(set(paths))))

    def store_files(self, path):
        """Every regular file below a store path, relative to it."""
        tree = json.loads(self.run("store", "ls", "--recursive", "--json", path))

        def walk(node, prefix):
            if node.get("type") != "directory":
                yield prefix
                return
            for name, child in node.get("entries", {}).items():
                yield from walk(child, f"{prefix}/{name}" if prefix else name)

        return set(walk(tree, ""))


class Checker:
    def __init__(self):
        self.passed, self.failed = [], []

    def check(self, name, ok, got=None):
        if ok:
            self.passed.append(name)
            print(f"  ok: {name}")
        else:
            self.failed.append(name)
            print(f"  FAIL: {name}" + ("" if got is None else f"\n        got: {got}"))


def words(text):
    return (text or "").split()


def has_run(text, run):
    """`run` (a list of words) appears as consecutive words of `text`."""
    w = words(text)
    return any(w[i : i + len(run)] == run for i in range(len(w) - len(run) + 1))


def cargo_command(env):
    return "\n".join(env.get(k, "") for k in ("buildPhase", "checkPhase", "buildCommand"))


def compile_time_files(root):
    """Files the Rust code reads at compile time, relative to the checkout."""
    found = set()
    for dirpath, _, files in os.walk(os.path.join(root, "crates")):
        for f in files:
            if f.endswith(".rs"):
                source = os.path.join(dirpath, f)
                with open(source, encoding="utf-8") as text:
                    for target in INCLUDE.findall(text.read()):
                        found.add(os.path.relpath(os.path.normpath(os.path.join(dirpath, target)), root))
    return found


def guard_refuses_overrides(pre_build):
    """The preBuild guard passes a clean environment and stops for each override, naming it."""
    clean = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", pre_build],
        env={"PATH": os.environ["PATH"]},
        capture_output=True,
        text=True,
    )
    if clean.returncode != 0:
        return False, "fails without any override"
    for variable in OVERRIDES:
        run = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", pre_build],
            env={"PATH": os.environ["PATH"], variable: "/nix/store/x-rust-jemalloc-sys/lib/libjemalloc_pic.a"},
            capture_output=True,
            text=True,
        )
        if run.returncode == 0 or "JEMALLOC_OVERRIDE" not in run.stderr:
            return False, f"lets {variable} through or does not say why"
    return True, None


def check_k8s(c, n, deployment):
    """The Kubernetes manifests of packages.<system>.k8s-job, as shipped."""
    m = deployment.get("manifests") or {}
    volume, prove, bundle = m.get("volume", {}), m.get("prove", {}), m.get("bundle", {})
    claim = volume.get("metadata", {}).get("name")
    c.check(
        n("k8s-job: the parts volume is a ReadWriteMany PersistentVolumeClaim"),
        volume.get("kind") == "PersistentVolumeClaim" and volume.get("spec", {}).get("accessModes") == ["ReadWriteMany"],
        volume.get("spec"),
    )
    spec = prove.get("spec", {})
    pod = spec.get("template", {}).get("spec", {})
    containers = pod.get("containers", [{}])
    args = containers[0].get("args", [])
    c.check(
        n("k8s-job: the prove Job is an Indexed Job of --parts completions"),
        (prove.get("apiVersion"), prove.get("kind"), spec.get("completionMode")) == ("batch/v1", "Job", "Indexed")
        and args[:1] == ["prove"]
        and args[-2:] == ["--parts", str(spec.get("completions"))],
        (spec.get("completionMode"), spec.get("completions"), args),
    )
    c.check(
        n("k8s-job: one GPU per proving pod"),
        containers[0].get("resources", {}).get("limits", {}).get("nvidia.com/gpu") == 1,
        containers[0].get("resources"),
    )
    bundle_pod = bundle.get("spec", {}).get("template", {}).get("spec", {})
    every = containers + bundle_pod.get("initContainers", []) + bundle_pod.get("containers", [])
    c.check(
        n("k8s-job: every container runs .#image's entrypoint (args, no command)"),
        all(x.get("image") == deployment.get("image") and "command" not in x and x.get("args") for x in every),
        [(x.get("image"), x.get("command")) for x in every],
    )

    def mounts_claim(pod_spec, container):
        names = {
            v["name"]
            for v in pod_spec.get("volumes", [])
            if v.get("persistentVolumeClaim", {}).get("claimName") == claim
        }
        paths = [mnt["mountPath"] for mnt in container.get("volumeMounts", []) if mnt["name"] in names]
        return container.get("workingDir") in paths

    c.check(
        n("k8s-job: every container works in the shared claim (parts and proof land there)"),
        all(mounts_claim(pod, x) for x in containers)
        and all(mounts_claim(bundle_pod, x) for x in every[len(containers) :]),
    )
    parts = [f"part-{i}.bin" for i in range(spec.get("completions") or 0)]
    init = bundle_pod.get("initContainers", [{}])
    c.check(
        n("k8s-job: the bundle Job joins part-0..K-1 into proof.bin, then verifies it"),
        init[0].get("args") == ["bundle", *parts, "-o", "proof.bin"]
        and bundle_pod.get("containers", [{}])[0].get("args", [""])[0] == "verify"
        and bundle_pod.get("containers", [{}])[0].get("args", [])[-1:] == ["proof.bin"],
        (init[0].get("args"), bundle_pod.get("containers")),
    )


def main(flake, nix_command, flake_options, root):
    nix = Nix(nix_command, flake, flake_options)
    c = Checker()

    packages = nix.eval_json(
        "packages",
        "ps: builtins.mapAttrs (s: builtins.mapAttrs (n: d: {"
        " drv = d.drvPath; out = d.outPath; main = d.meta.mainProgram or null;"
        " src = if d ? src then toString d.src else null;"
        " deps = if d ? cargoArtifacts then d.cargoArtifacts.drvPath else null;"
        " conf = if d ? passthru.conf then d.passthru.conf.drvPath else null; })) ps",
    )
    apps = nix.eval_json("apps", "as: builtins.mapAttrs (s: builtins.mapAttrs (n: a: {inherit (a) type program;})) as")
    checks = nix.eval_json(
        "checks",
        "cs: builtins.mapAttrs (s: builtins.mapAttrs (n: d: {"
        " drv = d.drvPath; src = if d ? src then toString d.src else null; })) cs",
    )
    deployments = nix.eval_json(
        "packages",
        "ps: builtins.mapAttrs (s: p: {"
        " image = p.image.imageName + \":\" + p.image.imageTag;"
        " manifests = p.k8s-job.manifests or null; }) ps",
    )
    shells = nix.eval_json("devShells", "ds: builtins.mapAttrs (s: builtins.mapAttrs (n: d: d.drvPath)) ds")
    c.check("systems are exactly x86_64-linux and aarch64-linux", sorted(packages) == sorted(SYSTEMS), sorted(packages))
    toolchain = re.search(r'channel\s*=\s*"([^"]+)"', open(os.path.join(root, "rust-toolchain.toml")).read())[1]
    included = compile_time_files(root)

    for system, expected in SYSTEMS.items():
        n = lambda what: f"{system}: {what}"  # noqa: E731
        pkgs, sys_checks = packages.get(system, {}), checks.get(system, {})
        c.check(
            n("packages are cli, default, image and k8s-job"),
            sorted(pkgs) == ["cli", "default", "image", "k8s-job"],
            sorted(pkgs),
        )
        check_k8s(c, n, deployments.get(system, {}))
        c.check(n("checks are exactly " + " ".join(CHECKS)), sorted(sys_checks) == CHECKS, sorted(sys_checks))
        c.check(n("devShells.default evaluates to a derivation"), shells.get(system, {}).get("default", "").endswith(".drv"))
        cli = pkgs.get("cli")
        if cli is None or pkgs.get("image") is None:
            continue
        wanted = [cli["drv"], cli["deps"], pkgs["image"]["drv"], pkgs["image"]["conf"]]
        wanted += [v["drv"] for v in sys_checks.values()]
        drvs = nix.derivations(p for p in wanted if p)
        env = lambda path: drvs[path]["env"]  # noqa: E731
        cli_env, deps_env = env(cli["drv"]), env(cli["deps"])
        cli_bin = f"{cli['out']}/bin/cli"

        c.check(n("packages.default is packages.cli"), pkgs["default"]["drv"] == cli["drv"])
        c.check(n("cli: pname and meta.mainProgram are cli"), (cli_env.get("pname"), cli["main"]) == ("cli", "cli"))
        c.check(
            n("cli: cargo builds with --locked -p cli"),
            has_run(cli_env.get("buildPhase"), ["--locked", "-p", "cli"]),
            cli_env.get("buildPhase"),
        )
        c.check(n("cli: doCheck is off (the tests run in the checks)"), cli_env.get("doCheck") == "", cli_env.get("doCheck"))
        c.check(
            n("cli: dependencies are crane's deps-only derivation, built --locked"),
            deps_env.get("name", "").startswith("ballast-deps-") and "--locked" in words(deps_env.get("buildPhase")),
            deps_env.get("name"),
        )
        for what, e in (("cli", cli_env), ("its deps-only derivation", deps_env)):
            c.check(
                n(f"{what}: JEMALLOC_SYS_WITH_LG_PAGE = {expected['lg_page']}"),
                e.get("JEMALLOC_SYS_WITH_LG_PAGE") == expected["lg_page"],
                e.get("JEMALLOC_SYS_WITH_LG_PAGE"),
            )
            ok, why = guard_refuses_overrides(e.get("preBuild", ""))
            c.check(n(f"{what}: the preBuild guard refuses every JEMALLOC_OVERRIDE form"), ok, why)
        c.check(
            n("cli: autoAddDriverRunpath is a native build input"),
            any(p.endswith("-auto-add-driver-runpath-hook") for p in words(cli_env.get("nativeBuildInputs"))),
            cli_env.get("nativeBuildInputs"),
        )
        c.check(
            n("cli: symbols are kept (no stripAllList, no stripAll)"),
            not cli_env.get("stripAllList") and not cli_env.get("stripAll"),
        )
        rust = [p for p in drvs[cli["drv"]]["inputDrvs"] if re.search(rf"-rust-[a-z]+-{re.escape(toolchain)}\.drv$", p)]
        c.check(n(f"cli: built with the rust-toolchain.toml toolchain ({toolchain}, rust-overlay)"), bool(rust))

        for name in ("cli", "default"):
            app = apps.get(system, {}).get(name, {})
            c.check(n(f"apps.{name} runs {'${cli}'}/bin/cli"), app == {"type": "app", "program": cli_bin}, app)

        chk = {k: env(v["drv"]) for k, v in sys_checks.items()}
        c.check(n("checks.cli is packages.cli"), sys_checks.get("cli", {}).get("drv") == cli["drv"])
        expectations = {
            "nextest": (["cargo", "nextest", "run"], ["--locked", "--workspace"]),
            "doctest": (["test", "--doc", "--locked", "--workspace"], []),
            "jemalloc-conf": (
                ["test", "--locked", "-p", "ballast-allocator", "--test", "jemalloc_conf", "--test", "jemalloc_conf_control"],
                [],
            ),
            "clippy": (["clippy", "--locked", "--workspace", "--all-targets", "--", "--deny", "warnings"], []),
            "fmt": (["cargo", "fmt", "--all", "--", "--check"], []),
            "cargo-doc": (["doc", "--locked", "--workspace", "--no-deps"], []),
            "cargo-deny": (["deny", "check", "bans", "licenses", "sources"], []),
        }
        for check, (run, also) in expectations.items():
            command = cargo_command(chk.get(check, {}))
            c.check(
                n(f"{check}: runs {' '.join(run + also)}"),
                has_run(command, run) and all(w in words(command) for w in also),
                command.strip() or None,
            )
        c.check(
            n("cargo-doc: RUSTDOCFLAGS denies warnings"),
            has_run(chk.get("cargo-doc", {}).get("RUSTDOCFLAGS"), ["--deny", "warnings"]),
            chk.get("cargo-doc", {}).get("RUSTDOCFLAGS"),
        )
        c.check(
            n("cargo checks build from the package's source"),
            all(sys_checks.get(k, {}).get("src") == cli["src"] for k in expectations),
        )
        for check, script in POLICY_SCRIPTS.items():
            command = chk.get(check, {}).get("buildCommand", "")
            c.check(
                n(f"{check}: runs bash {script} on the built cli"),
                has_run(command, ["bash", f"{cli['src']}/{script}", cli_bin]),
                command.strip() or None,
            )
        c.check(
            n("malloc-conf-symbol: binutils (nm) is a native build input"),
            any("-binutils" in p for p in words(chk.get("malloc-conf-symbol", {}).get("nativeBuildInputs"))),
        )
        nix_fmt = chk.get("nix-fmt", {})
        c.check(
            n("nix-fmt: runs ci/check-nix.sh lint with nixpkgs' alejandra and deadnix"),
            "ci/check-nix.sh lint" in nix_fmt.get("buildCommand", "")
            and all(any(f"-{t}-" in p for p in words(nix_fmt.get("nativeBuildInputs"))) for t in ("alejandra", "deadnix")),
            nix_fmt.get("nativeBuildInputs"),
        )

        src_files = nix.store_files(cli["src"])
        needed = included | set(POLICY_SCRIPTS.values()) | {"Cargo.lock", "Cargo.toml", "rust-toolchain.toml"}
        missing = sorted(needed - src_files)
        c.check(
            n(f"source: holds all {len(needed)} files the build and the checks read (include_str!/include_bytes!, ci scripts)"),
            not missing,
            missing,
        )
        # A document the code reads at compile time (docs/protocol.md's layout table, which a
        # test compares with the code) is source; every other doc stays out.
        extra = sorted(
            f
            for f in src_files
            if (f.startswith(("docs/", "ci/tools/", "nix/")) or f.endswith(".nix")) and f not in included
        )
        c.check(
            n("source: leaves out docs the code does not read, Nix files and ci/tools (editing them rebuilds nothing)"),
            not extra,
            extra[:5],
        )
        fmt_files = nix.store_files(sys_checks["nix-fmt"]["src"]) if sys_checks.get("nix-fmt") else set()
        c.check(
            n("nix-fmt: its source is the .nix files and ci/check-nix.sh"),
            "ci/check-nix.sh" in fmt_files and "flake.nix" in fmt_files and all(
                f.endswith(".nix") or f == "ci/check-nix.sh" for f in fmt_files
            ),
            sorted(fmt_files)[:5],
        )

        conf_drv = drvs.get(pkgs["image"]["conf"], {})
        base = [p for p in conf_drv.get("inputDrvs", {}) if p.endswith("-base.json.drv")]
        config = {}
        if base:
            config = json.loads(nix.derivations(base)[base[0]]["env"].get("text", "{}")).get("config", {})
        c.check(n("image: entrypoint is ${cli}/bin/cli"), config.get("Entrypoint") == [cli_bin], config.get("Entrypoint"))
        want_env = [
            "NVIDIA_VISIBLE_DEVICES=all",
            "NVIDIA_DRIVER_CAPABILITIES=compute,utility",
            f"LD_LIBRARY_PATH={expected['driver_lib_dirs']}",
        ]
        c.check(
            n("image: NVIDIA runtime variables and the driver library path"),
            all(v in config.get("Env", []) for v in want_env),
            config.get("Env"),
        )
    return c


if __name__ == "__main__":
    args = sys.argv[1:]
    if "--" not in args or not args or args[0].startswith("-"):
        sys.exit(__doc__)
    split = args.index("--")
    options, nix_command = args[1:split], args[split + 1 :]
    flake, expect, flake_options = args[0], None, []
    while options:
        if options[0] == "--expect-failure" and len(options) > 1:
            expect, options = options[1], options[2:]
        elif options[0] == "--flake-option" and len(options) > 1:
            flake_options.append(options[1])
            options = options[2:]
        else:
            sys.exit(f"unknown option {options[0]!r}\n{__doc__}")
    root = flake.removeprefix("path:")
    try:
        result = main(flake, nix_command, flake_options, root)
    except RuntimeError as err:
        # A flake that does not evaluate proves nothing about the assertions either.
        print(f"  FAIL: {err}")
        sys.exit(1)
    if expect is not None:
        hit = [f for f in result.failed if expect in f]
        print(f"discrimination: {'caught by' if hit else 'NOT caught:'} {hit or expect!r}")
        sys.exit(0 if hit else 1)
    print(f"flake evaluation: {len(result.passed)} passed, {len(result.failed)} failed")
    sys.exit(1 if result.failed else 0)
