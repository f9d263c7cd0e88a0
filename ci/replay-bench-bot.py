#!/usr/bin/env python3
"""Replays .github/workflows/bench.yml on comment events, locally, and checks what it posts.

    ci/replay-bench-bot.py --cli CLI --ballast-bench BIN [--workflow FILE] [--evidence DIR]
                           [--statement ARGS] [--keep DIR] [--only NAMES] [--pr-cli PR_CLI]

A scratch git repository stands for GitHub: its main holds this checkout's ci/ and workflow
and a `replay-cli` that exec's CLI; a pull request branch makes that cli sleep 0.5 s and hold
32 MiB per segment (a deliberately slowed, hungrier commit), another one makes it fail. Each
event runs the workflow's jobs in order, as Actions would: `if:` and `${{ }}` expressions
evaluated from the event's payload (a small evaluator of the expression language), each job on a
fresh workspace and RUNNER_TEMP, its `run:` steps executed with bash and the step's `env:`,
GITHUB_OUTPUT read back into step and job outputs, and the `uses:` steps it needs emulated
(checkout by commit from the scratch repository, cache restore/save and artifact upload/download
in local directories). `cargo` and `rustup` are stand-ins on PATH: "building" `-p cli` copies
the checkout's replay-cli, `-p ballast-bench` copies BIN. Every GitHub API call of
ci/bench-bot.py goes to its replay fake (BENCH_BOT_REPLAY), whose log and comments are checked.
With `--pr-cli PR_CLI --only real` the pull request's cli is PR_CLI (a build of a real change)
and only /bench, /bench again and /bench-memory run, for their comments (--evidence).
Needs PyYAML (ci/check-bench-bot.sh runs it from a venv with the pinned version).
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
REPO = "ballast-dev/ballast"
PR = 7
BROKEN_PR = 8
# The statement the replay measures: small, so that the 0.5 s and the 32 MiB stand out.
STATEMENT = "--workload fibonacci --sequences 8 --log-rows 12 --pow-bits 8"


class ReplayError(Exception):
    pass


def fail(msg):
    raise ReplayError(msg)


# --- the expression language ----------------------------------------------------------------

TOKEN = re.compile(
    r"\s*(?:(?P<num>-?\d+(?:\.\d+)?)|(?P<str>'(?:[^']|'')*')|(?P<op>==|!=|<=|>=|&&|\|\||[()\[\],.!<>])"
    r"|(?P<id>[A-Za-z_][A-Za-z0-9_-]*|\*))"
)


def tokenize(text):
    tokens, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m or m.end() == pos:
            fail(f"expression {text!r}: cannot read at {text[pos:]!r}")
        pos = m.end()
        kind = m.lastgroup
        value = m.group(kind)
        if kind == "num":
            tokens.append(("lit", float(value) if "." in value else int(value)))
        elif kind == "str":
            tokens.append(("lit", value[1:-1].replace("''", "'")))
        elif kind == "id" and value in ("true", "false", "null"):
            tokens.append(("lit", {"true": True, "false": False, "null": None}[value]))
        else:
            tokens.append((kind, value))
    return tokens


class Parser:
    """Recursive descent over GitHub's grammar: || < && < equality < comparison < unary."""

    def __init__(self, text):
        self.text, self.tokens, self.i = text, tokenize(text), 0

    def peek(self):
        return self.tokens[self.i] if self.i < len(self.tokens) else (None, None)

    def take(self, value=None):
        tok = self.peek()
        if tok[0] is None or (value is not None and tok[1] != value):
            fail(f"expression {self.text!r}: expected {value or 'more'}")
        self.i += 1
        return tok

    def parse(self):
        node = self.or_()
        if self.i != len(self.tokens):
            fail(f"expression {self.text!r}: unexpected {self.peek()[1]!r}")
        return node

    def binary(self, ops, sub):
        node = sub()
        while self.peek()[0] == "op" and self.peek()[1] in ops:
            op = self.take()[1]
            node = ("bin", op, node, sub())
        return node

    def or_(self):
        return self.binary(("||",), self.and_)

    def and_(self):
        return self.binary(("&&",), self.eq)

    def eq(self):
        return self.binary(("==", "!="), self.cmp)

    def cmp(self):
        return self.binary(("<", "<=", ">", ">="), self.unary)

    def unary(self):
        if self.peek() == ("op", "!"):
            self.take()
            return ("not", self.unary())
        return self.postfix()

    def postfix(self):
        kind, value = self.take()
        if kind == "lit":
            node = ("lit", value)
        elif kind == "op" and value == "(":
            node = self.or_()
            self.take(")")
        elif kind == "id" and self.peek() == ("op", "("):
            self.take("(")
            args = []
            while self.peek() != ("op", ")"):
                args.append(self.or_())
                if self.peek() == ("op", ","):
                    self.take(",")
            self.take(")")
            node = ("call", value.lower(), args)
        elif kind == "id":
            node = ("ctx", value)
        else:
            fail(f"expression {self.text!r}: unexpected {value!r}")
        while self.peek() in (("op", "."), ("op", "[")):
            if self.take()[1] == ".":
                node = ("get", node, ("lit", self.take()[1]))
            else:
                node = ("get", node, self.or_())
                self.take("]")
        return node


def truthy(v):
    return not (v is None or v is False or v == 0 or v == "" or (isinstance(v, float) and v != v))


def to_number(v):
    if v is None:
        return 0
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, (int, float)):
        return v
    if isinstance(v, str):
        try:
            return float(v.strip()) if v.strip() else 0
        except ValueError:
            return float("nan")
    return float("nan")


def to_string(v):
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    if isinstance(v, (dict, list)):
        fail("an object or array interpolated into a string: use toJSON()")
    return str(v)


def equal(a, b):
    if type(a) is type(b) or (isinstance(a, (int, float)) and isinstance(b, (int, float))):
        if isinstance(a, str):
            return a.lower() == b.lower()
        return a == b
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return a is b
    return to_number(a) == to_number(b)


class Evaluator:
    def __init__(self, contexts, status):
        self.contexts, self.status = contexts, status

    def eval(self, node):
        kind = node[0]
        if kind == "lit":
            return node[1]
        if kind == "ctx":
            if node[1] not in self.contexts:
                fail(f"no context {node[1]!r} here")
            return self.contexts[node[1]]
        if kind == "get":
            obj, key = self.eval(node[1]), self.eval(node[2])
            if isinstance(obj, dict):
                return obj.get(key)
            if isinstance(obj, list) and isinstance(key, int) and 0 <= key < len(obj):
                return obj[key]
            return None
        if kind == "not":
            return not truthy(self.eval(node[1]))
        if kind == "bin":
            op = node[1]
            left = self.eval(node[2])
            if op == "&&":
                return self.eval(node[3]) if truthy(left) else left
            if op == "||":
                return left if truthy(left) else self.eval(node[3])
            right = self.eval(node[3])
            if op == "==":
                return equal(left, right)
            if op == "!=":
                return not equal(left, right)
            a, b = to_number(left), to_number(right)
            return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
        if kind == "call":
            name, args = node[1], [self.eval(a) for a in node[2]]
            if name in ("success", "failure", "always", "cancelled"):
                return self.status(name)
            if name == "startswith":
                return to_string(args[0]).lower().startswith(to_string(args[1]).lower())
            if name == "endswith":
                return to_string(args[0]).lower().endswith(to_string(args[1]).lower())
            if name == "contains":
                if isinstance(args[0], list):
                    return any(equal(x, args[1]) for x in args[0])
                return to_string(args[1]).lower() in to_string(args[0]).lower()
            if name == "fromjson":
                return json.loads(to_string(args[0]))
            if name == "tojson":
                return json.dumps(args[0], indent=2)
            if name == "format":
                out = to_string(args[0])
                for i, a in enumerate(args[1:]):
                    out = out.replace("{" + str(i) + "}", to_string(a))
                return out
            fail(f"function {name}() is not supported by the replay")
        fail(f"bad node {node!r}")


EXPR = re.compile(r"\$\{\{(.*?)\}\}", re.S)


def evaluate(text, contexts, status=lambda name: name != "failure"):
    return Evaluator(contexts, status).eval(Parser(text).parse())


def substitute(value, contexts):
    """A workflow value with its `${{ }}` replaced: the value itself when it is one whole
    expression (`runs-on: ${{ fromJSON(...) }}`), else a string."""
    if isinstance(value, dict):
        return {k: substitute(v, contexts) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, contexts) for v in value]
    if not isinstance(value, str):
        return value
    whole = EXPR.fullmatch(value.strip())
    if whole:
        return evaluate(whole.group(1), contexts)
    return EXPR.sub(lambda m: to_string(evaluate(m.group(1), contexts)), value)


def condition(text, contexts, status):
    if text is None:
        return status("success")
    if isinstance(text, bool):
        return text
    text = str(text).strip()
    whole = EXPR.fullmatch(text)
    return truthy(evaluate(whole.group(1) if whole else text, contexts, status))


# --- the runner -----------------------------------------------------------------------------


def git(*args, cwd=None):
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


def copy_tree(src, dst):
    dst.mkdir(parents=True, exist_ok=True)
    shutil.copytree(src, dst, dirs_exist_ok=True, symlinks=True)


class Replay:
    def __init__(self, workflow, origin, root, fake_bin, variables):
        self.workflow = yaml.safe_load(Path(workflow).read_text())
        # YAML 1.1 reads the key `on` as true.
        self.on = self.workflow.get("on", self.workflow.get(True))
        self.origin, self.root, self.fake_bin = origin, root, fake_bin
        self.variables = variables
        self.api = root / "github"
        self.cache = root / "cache"
        self.cache.mkdir(parents=True, exist_ok=True)
        self.run_id = 1000
        self.log = root / "replay.log"

    def uses(self, step):
        """`owner/repo[/path]` of a `uses:` step, checking the pin is a full commit SHA."""
        ref = step["uses"]
        action, _, pin = ref.partition("@")
        if not re.fullmatch(r"[0-9a-f]{40}", pin):
            fail(f"{ref}: not pinned by a full commit SHA")
        return action

    def run_event(self, event_name, payload, ref="refs/heads/main", dry=()):
        """Runs the workflow on one event; returns {job: {result, outputs, runs-on, ...}}."""
        if event_name not in self.on:
            fail(f"the workflow is not triggered by {event_name}")
        self.run_id += 1
        run_dir = self.root / f"run-{self.run_id}"
        run_dir.mkdir(parents=True)
        event_path = run_dir / "event.json"
        event_path.write_text(json.dumps(payload))
        sha = git("rev-parse", ref, cwd=self.origin)
        github = {
            "event_name": event_name,
            "event": payload,
            "repository": REPO,
            "repository_owner": REPO.split("/")[0],
            "ref": ref,
            "ref_name": ref.removeprefix("refs/heads/"),
            "sha": sha,
            "run_id": str(self.run_id),
            "run_attempt": "1",
            "token": "replay-token",
            "server_url": "https://github.example",
            "api_url": "https://api.github.example",
            "workflow": self.workflow.get("name", ""),
            "actor": (payload.get("comment") or {}).get("user", {}).get("login", "maintainer"),
        }
        results = {}
        for name, job in self.jobs_in_order():
            results[name] = self.run_job(
                name, job, github, results, run_dir, event_path, name in dry
            )
        return results

    def jobs_in_order(self):
        jobs, done, order = self.workflow["jobs"], set(), []
        while len(order) < len(jobs):
            for name, job in jobs.items():
                needs = job.get("needs", [])
                needs = [needs] if isinstance(needs, str) else needs
                if name not in done and all(n in done for n in needs):
                    done.add(name)
                    order.append((name, job))
                    break
            else:
                fail("the jobs' needs have a cycle")
        return order

    def run_job(self, name, job, github, results, run_dir, event_path, dry):
        needs = job.get("needs", [])
        needs = [needs] if isinstance(needs, str) else needs
        needs_ctx = {
            n: {"result": results[n]["result"], "outputs": results[n]["outputs"]} for n in needs
        }

        def job_status(fn):
            if fn == "always":
                return True
            if fn == "cancelled":
                return False
            failed = any(results[n]["result"] == "failure" for n in needs)
            ok = all(results[n]["result"] == "success" for n in needs)
            return failed if fn == "failure" else ok

        contexts = {"github": github, "needs": needs_ctx, "vars": self.variables, "inputs": {}}
        record = {"result": "skipped", "outputs": {}, "steps": {}}
        if not condition(job.get("if"), contexts, job_status):
            return record
        for key in ("timeout-minutes", "permissions", "runs-on"):
            if key not in job:
                fail(f"job {name} has no {key}")
        record["runs-on"] = substitute(job["runs-on"], contexts)
        record["timeout-minutes"] = job["timeout-minutes"]
        record["permissions"] = job["permissions"]
        record["concurrency"] = substitute(job.get("concurrency"), contexts)
        job_env = {
            k: to_string(v) for k, v in substitute(self.workflow.get("env", {}), contexts).items()
        }
        contexts["env"] = dict(job_env)
        job_env.update(
            {k: to_string(v) for k, v in substitute(job.get("env", {}), contexts).items()}
        )
        record["env"] = dict(job_env)
        if dry:
            record["result"] = "dry"
            return record
        home = run_dir / name
        workspace, temp = home / "workspace", home / "temp"
        workspace.mkdir(parents=True)
        temp.mkdir()
        runner = {"os": "Linux", "arch": "X64", "temp": str(temp), "name": "replay"}
        steps_ctx, failed = {}, False
        deadline = time.monotonic() + 60 * job["timeout-minutes"]

        def step_status(fn):
            return {"always": True, "cancelled": False, "failure": failed}.get(fn, not failed)

        for i, step in enumerate(job["steps"]):
            sid = step.get("id", f"step{i}")
            ctx = {**contexts, "steps": steps_ctx, "runner": runner, "env": dict(job_env)}
            if not condition(step.get("if"), ctx, step_status):
                steps_ctx[sid] = {"outputs": {}, "outcome": "skipped", "conclusion": "skipped"}
                continue
            out_file, env_file = home / f"{sid}.output", home / f"{sid}.env"
            out_file.touch()
            env_file.touch()
            step_env = {
                **job_env,
                **{k: to_string(v) for k, v in substitute(step.get("env", {}), ctx).items()},
            }
            ok = True
            try:
                if "run" in step:
                    ok = self.run_step(
                        name,
                        step,
                        sid,
                        ctx,
                        step_env,
                        workspace,
                        temp,
                        github,
                        event_path,
                        out_file,
                        env_file,
                        deadline,
                    )
                else:
                    inputs = substitute(step.get("with", {}), ctx)
                    self.uses_step(step, inputs, workspace, out_file, run_dir, github)
            except ReplayError as e:
                with open(self.log, "a") as f:
                    f.write(f"[{name}/{sid}] {e}\n")
                if not step.get("continue-on-error"):
                    raise
                ok = False
            outputs = parse_outputs(out_file.read_text())
            job_env.update(parse_outputs(env_file.read_text()))
            outcome = "success" if ok else "failure"
            conclusion = "success" if ok or step.get("continue-on-error") else "failure"
            steps_ctx[sid] = {"outputs": outputs, "outcome": outcome, "conclusion": conclusion}
            if conclusion == "failure":
                failed = True
        record["steps"] = steps_ctx
        ctx = {**contexts, "steps": steps_ctx, "runner": runner, "env": dict(job_env)}
        record["outputs"] = {
            k: to_string(substitute(v, ctx)) for k, v in job.get("outputs", {}).items()
        }
        record["result"] = "failure" if failed else "success"
        return record

    def run_step(
        self,
        job,
        step,
        sid,
        ctx,
        step_env,
        workspace,
        temp,
        github,
        event_path,
        out_file,
        env_file,
        deadline,
    ):
        script = workspace.parent / f"{sid}.sh"
        script.write_text(substitute(step["run"], ctx))
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_"))},
            "PATH": f"{self.fake_bin}:{os.environ['PATH']}",
            "CI": "true",
            "GITHUB_ACTIONS": "true",
            "GITHUB_WORKSPACE": str(workspace),
            "GITHUB_EVENT_NAME": github["event_name"],
            "GITHUB_EVENT_PATH": str(event_path),
            "GITHUB_REPOSITORY": REPO,
            "GITHUB_REF": github["ref"],
            "GITHUB_SHA": github["sha"],
            "GITHUB_RUN_ID": github["run_id"],
            "GITHUB_RUN_ATTEMPT": github["run_attempt"],
            "GITHUB_SERVER_URL": github["server_url"],
            "GITHUB_API_URL": github["api_url"],
            "GITHUB_OUTPUT": str(out_file),
            "GITHUB_ENV": str(env_file),
            "GITHUB_STEP_SUMMARY": str(workspace.parent / "summary.md"),
            "RUNNER_TEMP": str(temp),
            "RUNNER_OS": "Linux",
            "RUNNER_ARCH": "X64",
            # The network's stand-in: ci/bench-bot.py's api() answers from here.
            "BENCH_BOT_REPLAY": str(self.api),
            **step_env,
        }
        cwd = workspace / step.get("working-directory", ".")
        with open(self.log, "a") as f:
            f.write(f"\n[{job}/{sid}] {step.get('name', '')}\n")
            f.flush()
            try:
                proc = subprocess.run(
                    ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                    cwd=cwd,
                    env=env,
                    stdout=f,
                    stderr=subprocess.STDOUT,
                    timeout=max(1, deadline - time.monotonic()),
                )
            except subprocess.TimeoutExpired:
                fail(f"{job}/{sid}: past the job's timeout-minutes")
        return proc.returncode == 0

    def uses_step(self, step, inputs, workspace, out_file, run_dir, github):
        action = self.uses(step)
        path = Path(inputs.get("path", "."))
        target = path if path.is_absolute() else workspace / path
        if action == "actions/checkout":
            if str(inputs.get("persist-credentials", "true")).lower() != "false":
                fail("actions/checkout without persist-credentials: false")
            ref = inputs.get("ref") or github["sha"]
            target.mkdir(parents=True, exist_ok=True)
            git("clone", "--quiet", "--no-checkout", str(self.origin), str(target))
            if inputs.get("sparse-checkout"):
                git("sparse-checkout", "set", *inputs["sparse-checkout"].split(), cwd=target)
            git("checkout", "--quiet", "--detach", ref, cwd=target)
        elif action == "actions/cache/restore":
            entry = self.cache / inputs["key"]
            if not entry.is_dir():
                prefixes = [
                    p.strip() for p in inputs.get("restore-keys", "").splitlines() if p.strip()
                ]
                candidates = [
                    e for e in self.cache.iterdir() if any(e.name.startswith(p) for p in prefixes)
                ]
                entry = max(candidates, key=lambda e: e.stat().st_mtime_ns, default=None)
            if entry:
                copy_tree(entry, target)
                with open(out_file, "a") as f:
                    f.write(f"cache-matched-key={entry.name}\n")
        elif action == "actions/cache/save":
            entry = self.cache / inputs["key"]
            if entry.exists():
                fail(f"cache key {inputs['key']} exists: a cache entry cannot be overwritten")
            copy_tree(target, entry)
        elif action == "actions/upload-artifact":
            dest = run_dir / "artifacts" / inputs["name"]
            if dest.exists():
                fail(f"artifact {inputs['name']} was already uploaded in this run")
            if target.is_dir() and any(target.iterdir()):
                copy_tree(target, dest)
            elif inputs.get("if-no-files-found", "warn") == "error":
                fail(f"no files at {target}")
        elif action == "actions/download-artifact":
            src = run_dir / "artifacts" / inputs["name"]
            if not src.is_dir():
                fail(f"artifact {inputs['name']} not found")
            copy_tree(src, target)
        else:
            fail(f"the replay does not emulate {action}")


def parse_outputs(text):
    """GITHUB_OUTPUT / GITHUB_ENV: `key=value` lines and `key<<DELIM` blocks."""
    values, lines, i = {}, text.splitlines(), 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            key, delim = line.split("<<", 1)
            j = lines.index(delim, i + 1)
            values[key] = "\n".join(lines[i + 1 : j])
            i = j + 1
            continue
        if "=" in line:
            key, value = line.split("=", 1)
            values[key] = value
        i += 1
    return values


# --- the scenarios --------------------------------------------------------------------------


def commit_all(repo, message):
    git("add", "-A", cwd=repo)
    git(
        "-c",
        "user.name=replay",
        "-c",
        "user.email=replay@invalid",
        "commit",
        "-q",
        "-m",
        message,
        cwd=repo,
    )
    return git("rev-parse", "HEAD", cwd=repo)


def make_origin(root, cli, workflow, pr_cli=None):
    """The scratch repository: main with the bot and a cli that is CLI; `slow-prover` with a
    cli that sleeps 0.5 s and holds 32 MiB per segment first (or, with `pr_cli`, one that is
    PR_CLI); `broken` with one that fails."""
    origin = root / "origin"
    origin.mkdir()
    git("init", "-q", "-b", "main", cwd=origin)
    shutil.copytree(ROOT / "ci", origin / "ci", ignore=shutil.ignore_patterns("__pycache__"))
    (origin / ".github" / "workflows").mkdir(parents=True)
    shutil.copy2(workflow, origin / ".github" / "workflows" / "bench.yml")
    shutil.copy2(ROOT / "rust-toolchain.toml", origin / "rust-toolchain.toml")
    (origin / "Cargo.toml").write_text(
        "# the replay's stand-in workspace: `cargo` here is ci's fake\n"
    )
    cli_file = origin / "replay-cli"
    cli_file.write_text(f"#!/bin/sh\nexec '{cli}' \"$@\"\n")
    cli_file.chmod(0o755)
    main = commit_all(origin, "main")
    git("checkout", "-q", "-b", "slow-prover", cwd=origin)
    if pr_cli:
        cli_file.write_text(f"#!/bin/sh\nexec '{pr_cli}' \"$@\"\n")
        slow = commit_all(origin, f"the pull request's cli: {pr_cli}")
    else:
        cli_file.write_text(
            "#!/usr/bin/env python3\n"
            "# A deliberately worse prover: 0.5 s slower, and 32 MiB more per segment.\n"
            "import os, sys, time\n"
            "args = sys.argv[1:]\n"
            'segments = int(args[args.index("--segments") + 1]) if "--segments" in args else 4\n'
            'held = b"\\1" * (segments * 32 << 20)\n'
            "time.sleep(0.5)\n"
            f"os.execv('{cli}', ['{cli}'] + args)\n"
        )
        slow = commit_all(origin, "prove: sleep 0.5 s and hold 32 MiB per segment")
    git("checkout", "-q", "-b", "broken", "main", cwd=origin)
    cli_file.write_text("#!/bin/sh\necho 'replay-cli: broken on purpose' >&2\nexit 3\n")
    broken = commit_all(origin, "prove: always fails")
    git("checkout", "-q", "main", cwd=origin)
    return origin, main, slow, broken


def make_fake_bin(root, ballast_bench):
    fake = root / "bin"
    fake.mkdir()
    (fake / "cargo").write_text(
        "#!/bin/sh\n"
        "# The replay's cargo: `build -p cli` copies the checkout's replay-cli,\n"
        "# `-p ballast-bench` the prebuilt ballast-bench.\n"
        "# Each goes where cargo would put it.\n"
        "set -eu\n"
        "pkg=\n"
        'while [ $# -gt 0 ]; do [ "$1" = -p ] && pkg=$2; shift; done\n'
        "case $pkg in\n"
        "  cli) src=./replay-cli ;;\n"
        f"  ballast-bench) src='{ballast_bench}' ;;\n"
        '  *) echo "replay cargo: no stand-in for -p $pkg" >&2; exit 101 ;;\n'
        "esac\n"
        'mkdir -p "$CARGO_TARGET_DIR/release"\n'
        'cp "$src" "$CARGO_TARGET_DIR/release/$pkg"\n'
        'echo "replay cargo: $pkg <- $src" >&2\n'
    )
    (fake / "rustup").write_text('#!/bin/sh\necho "replay rustup: $*" >&2\n')
    for f in fake.iterdir():
        f.chmod(0o755)
    return fake


class Checks:
    def __init__(self, replay, origin, main, slow, broken, evidence):
        self.r, self.origin = replay, origin
        self.main, self.slow, self.broken = main, slow, broken
        self.evidence = evidence
        self.comment_id = 100
        state = {
            "repository": REPO,
            "pulls": {
                str(PR): {
                    "number": PR,
                    "head": {"sha": slow, "ref": "slow-prover"},
                    "base": {"ref": "main"},
                },
                str(BROKEN_PR): {
                    "number": BROKEN_PR,
                    "head": {"sha": broken, "ref": "broken"},
                    "base": {"ref": "main"},
                },
            },
            "branches": {"main": {"name": "main", "commit": {"sha": main}}},
            "comments": [],
            "reactions": [],
            "next_id": 5000,
        }
        replay.api.mkdir()
        (replay.api / "github.json").write_text(json.dumps(state))
        (replay.api / "api.jsonl").touch()

    def state(self):
        return json.loads((self.r.api / "github.json").read_text())

    def requests(self):
        return [json.loads(line) for line in (self.r.api / "api.jsonl").read_text().splitlines()]

    def comment(self, body, association="OWNER", pr=PR, on_pr=True, login="maintainer", dry=()):
        self.comment_id += 1
        issue = {"number": pr, "title": "a change"}
        if on_pr:
            issue["pull_request"] = {"url": f"https://api.github.example/repos/{REPO}/pulls/{pr}"}
        payload = {
            "action": "created",
            "issue": issue,
            "comment": {
                "id": self.comment_id,
                "body": body,
                "author_association": association,
                "user": {"login": login},
            },
            "repository": {"full_name": REPO, "default_branch": "main"},
        }
        before = len(self.requests())
        started = time.monotonic()
        results = self.r.run_event("issue_comment", payload, dry=dry)
        took = time.monotonic() - started
        summary = " ".join(f"{j}:{r['result']}" for j, r in results.items())
        print(f"  {body.splitlines()[0]!r} by {association}: {summary} ({took:.1f} s)")
        return results, self.requests()[before:]

    def reactions(self, comment_id):
        return [r["content"] for r in self.state()["reactions"] if r["comment"] == comment_id]

    def bot_comments(self, pr, command):
        tag = f"<!-- ballast-bench-bot {command} -->"
        return [
            c for c in self.state()["comments"] if c["issue"] == pr and c["body"].startswith(tag)
        ]

    def save(self, name, text):
        if self.evidence:
            self.evidence.mkdir(parents=True, exist_ok=True)
            (self.evidence / name).write_text(text)


def expect(cond, msg):
    if not cond:
        fail(msg)


def prove_time_delta(body):
    """The Δ seconds of the comment's Prove time row."""
    m = re.search(r"^\| Prove time \| [^|]+ \| [^|]+ \| ([+-][0-9.]+) s ", body, re.M)
    expect(m, f"no Prove time row in:\n{body}")
    return float(m.group(1))


def scenario_bench(c):
    r = c.r
    print("== /bench by a maintainer: main's baseline recorded (cache empty), the comment posted")
    results, calls = c.comment("/bench")
    expect(results["gate"]["result"] == "success", "the gate failed")
    expect(c.reactions(c.comment_id)[:1] == ["eyes"], f"no 👀 first: {c.reactions(c.comment_id)}")
    bench = results["bench"]
    expect(bench["result"] == "success", "the bench job failed (see the replay log)")
    expect(bench["runs-on"] == "ubuntu-latest", f"runs-on {bench['runs-on']}")
    expect(
        bench["permissions"] == {"contents": "read"}, f"bench permissions {bench['permissions']}"
    )
    expect(bench["concurrency"]["group"].endswith(f"-{PR}"), f"concurrency {bench['concurrency']}")
    expect(
        bench["steps"]["main"]["outputs"].get("save") == "true",
        "main's baseline was not to be saved",
    )
    expect(results["report"]["result"] == "success", "the report job failed")
    posted = [
        x for x in calls if x["method"] == "POST" and x["path"].endswith(f"/issues/{PR}/comments")
    ]
    expect(len(posted) == 1, f"expected one new comment, got {len(posted)}")
    body = posted[0]["body"]["body"]
    expect(body.startswith("<!-- ballast-bench-bot /bench -->\n"), "no hidden marker first")
    for needle in (
        "| Peak heap |",
        "| Peak RSS |",
        "| Prove time |",
        "measured in this run",
        "median of 3",
    ):
        expect(needle in body, f"the /bench comment lacks {needle!r}:\n{body}")
    expect(prove_time_delta(body) > 0, "a PR 0.5 s slower has no positive prove-time Δ")
    expect(c.reactions(c.comment_id)[-1] == "rocket", "no 🚀 at the end")
    artifact = r.root / f"run-{r.run_id}" / "artifacts" / f"bench-{r.run_id}-1"
    for name in ("comment.md", "baseline.json", "runs-pr.json"):
        expect((artifact / name).is_file(), f"the artifact has no {name}")
    c.save("bench-first.md", body)
    first_id = c.bot_comments(PR, "/bench")[0]["id"]

    print("== /bench again: the cached baseline (made quiet), the same comment edited in place")
    entry = max(r.cache.iterdir(), key=lambda e: e.stat().st_mtime_ns)
    baseline = json.loads((entry / "baseline.json").read_text())
    quiet = sorted(s["wall_s"] for s in baseline["samples"])[1]
    for s in baseline["samples"]:
        s["wall_s"] = quiet  # no spread
    (entry / "baseline.json").write_text(json.dumps(baseline))
    results, calls = c.comment("/bench")
    expect(
        results["bench"]["steps"]["main"]["outputs"].get("save") == "false",
        "main was measured again",
    )
    expect(
        not any(x["method"] == "POST" and x["path"].endswith("/comments") for x in calls),
        "a second comment was posted instead of an edit",
    )
    patched = [x for x in calls if x["method"] == "PATCH"]
    expect(
        len(patched) == 1 and patched[0]["path"].endswith(f"/comments/{first_id}"),
        f"expected an edit of comment {first_id}: {patched}",
    )
    body = c.bot_comments(PR, "/bench")[0]["body"]
    expect("Baseline: cached" in body, f"not from the cached baseline:\n{body}")
    expect("baseline was noisy" not in body, f"a quiet baseline called noisy:\n{body}")
    expect(len(c.bot_comments(PR, "/bench")) == 1, "more than one /bench comment")
    c.save("bench.md", body)

    print("== /bench on a noisy cached baseline: the Δ is called untrustworthy")
    baseline["samples"][0]["wall_s"] = quiet * 1.10  # a 10 % spread
    (entry / "baseline.json").write_text(json.dumps(baseline))
    results, _ = c.comment("/bench")
    body = c.bot_comments(PR, "/bench")[0]["body"]
    expect(
        "⚠️ The cached baseline was noisy" in body and "/bench-abba" in body,
        f"no noisy-baseline warning:\n{body}",
    )
    c.save("bench-noisy-baseline.md", body)


def scenario_memory(c):
    r = c.r
    print("== /bench-memory by a member: table, growth sweep, scaling warning, proofs identical")
    results, _ = c.comment("/bench-memory", association="MEMBER")
    expect(results["bench"]["result"] == "success", "the bench job failed")
    memory = c.bot_comments(PR, "/bench-memory")
    expect(len(memory) == 1, "no /bench-memory comment of its own")
    body = memory[0]["body"]
    for needle in (
        "### Memory growth",
        "growth rate:",
        "Memory scaling regression",
        "peak RSS",
        "Proof bytes: identical",
        "| Prove time |",
        "<details>",
    ):
        expect(needle in body, f"the /bench-memory comment lacks {needle!r}:\n{body}")
    expect(prove_time_delta(body) > 0, "a PR 0.5 s slower has no positive prove-time Δ")
    artifact = r.root / f"run-{r.run_id}" / "artifacts" / f"bench-{r.run_id}-1"
    for name in ("compare.json", "compare.md", "pairs.csv", "growth-base.csv", "growth-head.csv"):
        expect((artifact / name).is_file(), f"the artifact has no {name}")
    c.save("bench-memory.md", body)


def scenario_abba(c):
    print("== /bench-abba 6 by a collaborator: the ABBA block, REAL REGRESSION")
    results, _ = c.comment("/bench-abba 6\nplease", association="COLLABORATOR")
    body = c.bot_comments(PR, "/bench-abba")[0]["body"]
    for needle in ("(6 pairs)", "REAL REGRESSION", "Wilcoxon"):
        expect(needle in body, f"the /bench-abba comment lacks {needle!r}:\n{body}")
    expect("### Memory growth" not in body, "the two-point growth sweep was not left out")
    c.save("bench-abba.md", body)


def scenario_growth(c):
    print("== /bench-growth: the wider sweep, 3 runs per point")
    results, _ = c.comment("/bench-growth")
    body = c.bot_comments(PR, "/bench-growth")[0]["body"]
    for needle in ("| 8 |", "3 run(s) per point", "growth rate:"):
        expect(needle in body, f"the /bench-growth comment lacks {needle!r}:\n{body}")
    c.save("bench-growth.md", body)


def scenario_dry(c):
    print("== /bench-abba 99 and /bench-gpu: capped pairs, the GPU runner (jobs not run)")
    results, _ = c.comment("/bench-abba 99", dry=("bench", "report"))
    gate = results["gate"]["outputs"]
    expect(gate["pairs"] == "30" and "capped at 30" in gate["note"], f"not capped: {gate}")
    results, _ = c.comment("/bench-gpu", dry=("bench", "report"))
    bench = results["bench"]
    expect(bench["runs-on"] == ["self-hosted", "gpu"], f"/bench-gpu runs on {bench['runs-on']}")
    expect(bench["env"]["BENCH_RUNNER"] == "self-hosted-gpu", f"BENCH_RUNNER {bench['env']}")
    expect(results["gate"]["outputs"]["pairs"] == "10", "/bench-gpu's default is not 10 pairs")


def scenario_refusals(c):
    print("== a contributor's /bench: refused with a reply, nothing run")
    results, calls = c.comment("/bench", association="CONTRIBUTOR", login="someone")
    expect(
        results["bench"]["result"] == "skipped" and results["report"]["result"] == "skipped",
        "a contributor's command ran",
    )
    replies = [
        x["body"]["body"] for x in calls if x["method"] == "POST" and "body" in (x["body"] or {})
    ]
    expect(
        len(replies) == 1
        and "only for maintainers" in replies[0]
        and "`CONTRIBUTOR`" in replies[0]
        and "@someone" in replies[0],
        f"no refusal reply: {replies}",
    )
    expect(c.reactions(c.comment_id) == ["-1"], f"reactions {c.reactions(c.comment_id)}")
    expect(not any(x["path"].startswith(f"/repos/{REPO}/pulls") for x in calls), "the PR was read")
    c.save("refused-contributor.md", replies[0])

    print("== an unknown command: a reply listing the commands")
    results, calls = c.comment("/bench-fast now")
    replies = [
        x["body"]["body"] for x in calls if x["method"] == "POST" and "body" in (x["body"] or {})
    ]
    expect(results["bench"]["result"] == "skipped", "an unknown command ran")
    expect(len(replies) == 1 and "`/bench-fast` is not a command" in replies[0], f"reply {replies}")
    for usage in (
        "/bench`",
        "/bench-memory`",
        "/bench-abba [N]`",
        "/bench-growth`",
        "/bench-gpu [N]`",
    ):
        expect(usage in replies[0], f"the reply does not list {usage}: {replies[0]}")
    c.save("refused-unknown.md", replies[0])
    results, calls = c.comment("/bench-abba lots")
    replies = [
        x["body"]["body"] for x in calls if x["method"] == "POST" and "body" in (x["body"] or {})
    ]
    expect(len(replies) == 1 and "whole number" in replies[0], f"reply {replies}")


def scenario_ignored(c):
    print("== comments that are not commands, and a command on an issue: nothing runs")
    for body, on_pr in (("thanks! /bench later", True), ("/bench", False)):
        results, calls = c.comment(body, on_pr=on_pr)
        expect(all(x["result"] == "skipped" for x in results.values()), f"{body!r} ran a job")
        expect(calls == [], f"{body!r} called the API: {calls}")


def scenario_failure(c):
    print("== a pull request whose cli fails: the comment says the measurement failed")
    results, _ = c.comment("/bench", pr=BROKEN_PR)
    expect(
        results["bench"]["result"] == "failure" and results["report"]["result"] == "success",
        f"bench {results['bench']['result']}, report {results['report']['result']}",
    )
    body = c.bot_comments(BROKEN_PR, "/bench")[0]["body"]
    expect(
        "❌" in body and "failure" in body and "broken on purpose" in body,
        f"no failure comment with the cli's last words:\n{body}",
    )
    expect(c.reactions(c.comment_id)[-1] == "confused", "no 😕 on a failure")


def scenario_dispatch(c):
    r = c.r
    print("== Run workflow on main: the baseline recorded afresh; on another branch: refused")
    before = len(list(r.cache.iterdir()))
    payload = {"repository": {"full_name": REPO, "default_branch": "main"}}
    results = r.run_event("workflow_dispatch", payload)
    expect(
        results["bench"]["result"] == "success" and results["report"]["result"] == "skipped",
        f"{ {j: x['result'] for j, x in results.items()} }",
    )
    expect(len(list(r.cache.iterdir())) == before + 1, "no new cache entry")
    git("branch", "-f", "other", "main", cwd=c.origin)
    results = r.run_event("workflow_dispatch", payload, ref="refs/heads/other")
    expect(
        results["gate"]["result"] == "failure" and results["bench"]["result"] == "skipped",
        "a baseline refresh off main was not refused",
    )


def scenario_real(c):
    """For a note, not for CI: /bench twice and /bench-memory on a pull request whose cli is
    --pr-cli, a real change; only the comments' shape is checked, not what they measured."""
    print("== /bench, /bench again and /bench-memory on the pull request's real cli")
    c.comment("/bench")
    first = c.bot_comments(PR, "/bench")
    expect(len(first) == 1 and "| Prove time |" in first[0]["body"], "no /bench comment")
    c.save("bench-first.md", first[0]["body"])
    c.comment("/bench")
    again = c.bot_comments(PR, "/bench")
    expect(len(again) == 1 and again[0]["id"] == first[0]["id"], "the comment was not edited")
    expect("Baseline: cached" in again[0]["body"], "the second /bench did not use the cache")
    c.save("bench.md", again[0]["body"])
    results, _ = c.comment("/bench-memory")
    memory = c.bot_comments(PR, "/bench-memory")
    expect(len(memory) == 1 and "### Memory growth" in memory[0]["body"], "no /bench-memory")
    c.save("bench-memory.md", memory[0]["body"])


# The scenarios, in the order they run: `bench` first (the others do not need its baseline,
# but it checks that the first /bench records one).
SCENARIOS = {
    "bench": scenario_bench,
    "memory": scenario_memory,
    "abba": scenario_abba,
    "growth": scenario_growth,
    "dry": scenario_dry,
    "refusals": scenario_refusals,
    "ignored": scenario_ignored,
    "failure": scenario_failure,
    "dispatch": scenario_dispatch,
    "real": scenario_real,
}
CI_SCENARIOS = [name for name in SCENARIOS if name != "real"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cli", required=True, type=Path)
    parser.add_argument("--ballast-bench", required=True, type=Path)
    parser.add_argument(
        "--workflow", type=Path, default=ROOT / ".github" / "workflows" / "bench.yml"
    )
    parser.add_argument("--statement", default=STATEMENT, help="vars.BENCH_PROVE_ARGS")
    parser.add_argument("--evidence", type=Path, help="copy the posted comments' Markdown here")
    parser.add_argument("--keep", type=Path, help="replay in this (new) directory and keep it")
    parser.add_argument(
        "--only",
        default=",".join(CI_SCENARIOS),
        help=f"comma-separated scenarios, in this order: {', '.join(SCENARIOS)} (default: all "
        "but real, which needs --pr-cli)",
    )
    parser.add_argument(
        "--pr-cli",
        type=Path,
        help="the pull request's cli is this binary instead of the slowed one (for --only real)",
    )
    args = parser.parse_args()
    only = args.only.split(",")
    unknown = [name for name in only if name not in SCENARIOS]
    if unknown:
        print(f"ci/replay-bench-bot.py: --only: no scenario {', '.join(unknown)}", file=sys.stderr)
        return 2
    if ("real" in only) != bool(args.pr_cli) or (args.pr_cli and only != ["real"]):
        print("ci/replay-bench-bot.py: --pr-cli goes with --only real", file=sys.stderr)
        return 2
    for path in (args.cli, args.ballast_bench, *([args.pr_cli] if args.pr_cli else [])):
        if not (path.is_file() and os.access(path, os.X_OK)):
            print(f"ci/replay-bench-bot.py: {path} is not an executable", file=sys.stderr)
            return 2
    if args.keep:
        args.keep.mkdir(parents=True)
        root = args.keep.resolve()
    else:
        root = Path(tempfile.mkdtemp(prefix="ballast-replay-bench-bot."))
    try:
        pr_cli = args.pr_cli.resolve() if args.pr_cli else None
        origin, main_sha, slow, broken = make_origin(
            root, args.cli.resolve(), args.workflow, pr_cli
        )
        fake_bin = make_fake_bin(root, args.ballast_bench.resolve())
        replay = Replay(args.workflow, origin, root, fake_bin, {"BENCH_PROVE_ARGS": args.statement})
        checks = Checks(replay, origin, main_sha, slow, broken, args.evidence)
        for name, scenario in SCENARIOS.items():
            if name in only:
                scenario(checks)
    except ReplayError as e:
        print(f"ci/replay-bench-bot.py: {e}", file=sys.stderr)
        log = root / "replay.log"
        if log.is_file():
            print("-- the last lines of the replay's log:", file=sys.stderr)
            print("\n".join(log.read_text().splitlines()[-40:]), file=sys.stderr)
        return 1
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    print("ci/replay-bench-bot.py: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
