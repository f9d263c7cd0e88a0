#!/usr/bin/env python3
"""The bench bot's logic: each `run:` step of .github/workflows/bench.yml is one subcommand.

    ci/bench-bot.py gate      read the comment: a maintainer's command (outputs for the next
                              jobs), or a reply that says why not
    ci/bench-bot.py main      main's cli (restored from the cache or built) and, for /bench and
                              the baseline refresh, main's baseline unless a fresh one was restored
    ci/bench-bot.py measure   the pull request's cli, ballast-bench on both sides, the comment's
                              Markdown with the JSON and CSVs beside it
    ci/bench-bot.py report    the comment posted, or the bot's earlier one edited in place

Inputs are environment variables (the step's env: and the runner's GITHUB_* and RUNNER_*);
outputs go to $GITHUB_OUTPUT. Every GitHub API call goes through api(): with BENCH_BOT_REPLAY=DIR
(ci/check-bench-bot.sh), it is logged to DIR/api.jsonl and answered from DIR/github.json instead
of the network. docs/benchmarking.md ("The bench bot") describes the commands.
"""

import collections
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tomllib
import urllib.error
import urllib.parse
import urllib.request
from datetime import UTC, datetime, timedelta
from pathlib import Path

# What a comment can ask for, and what each runs (the reply to an unknown command lists them).
COMMANDS = {
    "/bench": "main's cached baseline against this pull request: peak heap, peak RSS and prove "
    "time, median of 3 runs each",
    "/bench-memory": "/bench with main measured afresh beside the pull request, plus the memory "
    "growth sweep over 1-4 segments with its growth rates and the scaling-regression warning",
    "/bench-abba [N]": "N pairs of A/B/B/A (default 10, at most 30): paired t, exact Wilcoxon, "
    "jitter, drift and a verdict",
    "/bench-growth": "the memory growth sweep alone, wider: 1, 2, 4 and 8 segments, 3 runs per "
    "point",
    "/bench-gpu [N]": "/bench-abba on the self-hosted runner labelled `gpu`, with `--backend cuda`",
}
MAINTAINERS = ("OWNER", "MEMBER", "COLLABORATOR")
RUNS, WARMUP = 3, 1  # /bench: the median of 3 runs per side, after 1 warm-up
ABBA_PAIRS, ABBA_MAX = 10, 30
MEMORY_POINTS = (1, 2, 3, 4)
GROWTH_POINTS, GROWTH_REPEAT = (1, 2, 4, 8), 3
# compare always sweeps; where the command does not report the sweep, the cheapest one.
MINIMAL_POINTS = (1, 2)
# A prove-time spread ((max - min) / median of the runs) above this makes a Δ unreliable.
NOISE_FLOOR_PCT = 2.0
BASELINE_MAX_AGE = timedelta(days=7)
BASELINE_FORMAT = 1
BOT_LOGIN = "github-actions[bot]"
DEFAULT_STATEMENT = "the cli's default statement (a keccak chain, 4 segments of 2^14 rows)"
MAX_COMMENT = 60000  # GitHub refuses comments over 65,536 characters


class BotError(Exception):
    """A failure the bot explains in one line."""


def log(msg):
    print(f"bench-bot: {msg}", file=sys.stderr, flush=True)


def env(name, default=None):
    value = os.environ.get(name, default)
    if value is None:
        raise BotError(f"{name} is not set")
    return value


def output(**values):
    """Step outputs, one line each (the values are the bot's own: SHAs, numbers, names)."""
    path = os.environ.get("GITHUB_OUTPUT")
    for key, value in values.items():
        value = str(value)
        if "\n" in value or "\r" in value:
            raise BotError(f"output {key} has a line break")
        log(f"output {key}={value}")
        if path:
            with open(path, "a", encoding="utf-8") as f:
                f.write(f"{key.replace('_', '-')}={value}\n")


def marker(command):
    """The hidden line that finds the bot's comment for `command` on a re-run."""
    return f"<!-- ballast-bench-bot {command} -->"


# --- GitHub ---------------------------------------------------------------------------------


def api(method, path, body=None):
    """One GitHub REST call; in replay mode, logged and answered by the fake."""
    replay = os.environ.get("BENCH_BOT_REPLAY")
    if replay:
        return replay_api(Path(replay), method, path, body)
    url = os.environ.get("GITHUB_API_URL", "https://api.github.com") + path
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    request.add_header("Authorization", f"Bearer {env('GH_TOKEN')}")
    request.add_header("Accept", "application/vnd.github+json")
    request.add_header("X-GitHub-Api-Version", "2022-11-28")
    request.add_header("User-Agent", "ballast-bench-bot")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            raw = response.read()
    except urllib.error.HTTPError as e:
        detail = e.read().decode(errors="replace")[:300]
        raise BotError(f"GitHub API {method} {path}: {e.code} {e.reason}: {detail}") from None
    except urllib.error.URLError as e:
        raise BotError(f"GitHub API {method} {path}: {e.reason}") from None
    return json.loads(raw) if raw else None


def replay_api(state_dir, method, path, body):
    """The replay's GitHub: requests are appended to api.jsonl; github.json holds the pull
    request, the branches and the comments, which POST and PATCH change as GitHub would."""
    with open(state_dir / "api.jsonl", "a", encoding="utf-8") as f:
        f.write(json.dumps({"method": method, "path": path, "body": body}) + "\n")
    state_file = state_dir / "github.json"
    state = json.loads(state_file.read_text())
    route, _, query = path.partition("?")
    parts = route.strip("/").split("/")
    if parts[:3] != ["repos", *state["repository"].split("/")]:
        raise BotError(f"replay: {path} is not under repos/{state['repository']}")
    rest = [urllib.parse.unquote(p) for p in parts[3:]]
    reactions = ["issues", "comments", "reactions"]  # issues/comments/ID/reactions
    answer = None
    if method == "GET" and len(rest) == 2 and rest[0] == "pulls":
        answer = state["pulls"][rest[1]]
    elif method == "GET" and len(rest) == 2 and rest[0] == "branches":
        answer = state["branches"][rest[1]]
    elif len(rest) == 3 and rest[0] == "issues" and rest[2] == "comments":
        issue = int(rest[1])
        if method == "GET":
            page = int(urllib.parse.parse_qs(query).get("page", ["1"])[0])
            answer = [c for c in state["comments"] if c["issue"] == issue] if page == 1 else []
        elif method == "POST":
            answer = {
                "id": state["next_id"],
                "issue": issue,
                "body": body["body"],
                "user": {"login": BOT_LOGIN, "type": "Bot"},
            }
            state["next_id"] += 1
            state["comments"].append(answer)
    elif len(rest) == 3 and rest[:2] == ["issues", "comments"] and method == "PATCH":
        answer = next((c for c in state["comments"] if c["id"] == int(rest[2])), None)
        if answer is None:
            raise BotError(f"replay: PATCH of comment {rest[2]}, which does not exist")
        answer["body"] = body["body"]
    elif method == "POST" and len(rest) == 4 and rest[:2] + rest[3:] == reactions:
        state["reactions"].append({"comment": int(rest[2]), "content": body["content"]})
        answer = {"content": body["content"]}
    if answer is None:
        raise BotError(f"replay: no fake for {method} {path}")
    state_file.write_text(json.dumps(state, indent=1))
    return answer


def repo_path(*parts):
    repo = env("GITHUB_REPOSITORY")
    return "/repos/" + repo + "".join("/" + urllib.parse.quote(str(p), safe="") for p in parts)


def react(comment_id, content):
    if comment_id:
        api("POST", repo_path("issues", "comments", comment_id, "reactions"), {"content": content})


def reply(pr, text):
    api("POST", repo_path("issues", pr, "comments"), {"body": text})


def find_bot_comment(pr, command):
    """The bot's latest comment on `pr` that starts with `command`'s marker, or None."""
    found, page = None, 1
    while True:
        comments = api("GET", repo_path("issues", pr, "comments") + f"?per_page=100&page={page}")
        for c in comments:
            if c["user"]["login"] == BOT_LOGIN and c["body"].startswith(marker(command)):
                found = c
        if len(comments) < 100:
            return found
        page += 1


def run_url():
    return (
        f"{os.environ.get('GITHUB_SERVER_URL', 'https://github.com')}/"
        f"{env('GITHUB_REPOSITORY')}/actions/runs/{env('GITHUB_RUN_ID')}"
    )


# --- gate -----------------------------------------------------------------------------------


def shown(text):
    """Words of a comment, quoted back in a code span of the bot's reply: no backtick to end
    the span, at most 40 characters."""
    return text.replace("`", "'")[:40]


def parse_command(body):
    """`(command, pairs, note)` from a comment, or raise BotError with the reply's text.

    The command is the first word; /bench-abba and /bench-gpu take an optional pair count
    as the second word of the first line. The rest of the comment is the human's."""
    words = body.strip().split("\n", 1)[0].split()
    if not words:
        raise BotError("an empty comment")
    word = words[0]
    known = {usage.split()[0]: usage for usage in COMMANDS}
    if word not in known:
        listing = "\n".join(f"- `{usage}`: {what}" for usage, what in COMMANDS.items())
        raise BotError(
            f"`{shown(word)}` is not a command of the bench bot. It knows:\n\n{listing}\n\n"
            "The command is the first word of the comment."
        )
    if word not in ("/bench-abba", "/bench-gpu"):
        return word, 0, ""
    if len(words) < 2:
        return word, ABBA_PAIRS, ""
    try:
        pairs = int(words[1])
    except ValueError:
        pairs = 0
    if pairs < 2:
        raise BotError(
            f"`{shown(word + ' ' + words[1])}`: N is the number of A/B/B/A pairs, a whole "
            "number from 2 "
            f"(at most {ABBA_MAX}; without it, {ABBA_PAIRS})."
        )
    if pairs > ABBA_MAX:
        return word, ABBA_MAX, f"{pairs} pairs were asked for; capped at {ABBA_MAX}"
    return word, pairs, ""


def cmd_gate():
    skip = {
        "run": "false",
        "command": "",
        "pairs": 0,
        "note": "",
        "pr": "",
        "base_ref": "",
        "base_sha": "",
        "head_sha": "",
    }
    if env("GITHUB_EVENT_NAME") == "workflow_dispatch":
        default = env("DEFAULT_BRANCH")
        if env("GITHUB_REF") != f"refs/heads/{default}":
            raise BotError(
                f"the baseline is {default}'s: run the workflow on {default}, "
                f"not {env('GITHUB_REF')}"
            )
        output(
            **{
                **skip,
                "run": "true",
                "command": "baseline",
                "pr": "baseline",
                "base_ref": default,
                "base_sha": env("GITHUB_SHA"),
            }
        )
        return
    pr = int(env("PR_NUMBER"))
    comment_id = env("COMMENT_ID")
    author = env("COMMENT_AUTHOR")
    association = env("AUTHOR_ASSOCIATION")
    body = env("COMMENT_BODY")
    first = shown((body.split() or [""])[0])
    if association not in MAINTAINERS:
        log(f"refused: {author} is {association}, not a maintainer")
        react(comment_id, "-1")
        reply(
            pr,
            f"{marker('refusal')}\n@{author} the bench bot runs only for maintainers of this "
            f"repository (author association OWNER, MEMBER or COLLABORATOR); yours is "
            f"`{association}`, so `{first}` was not run. A maintainer can comment it for you.",
        )
        output(**skip)
        return
    try:
        command, pairs, note = parse_command(body)
    except BotError as e:
        log(f"refused: {e}".split("\n")[0])
        react(comment_id, "confused")
        reply(pr, f"{marker('refusal')}\n@{author} {e}")
        output(**skip)
        return
    react(comment_id, "eyes")
    try:
        pull = api("GET", repo_path("pulls", pr))
        base_ref = pull["base"]["ref"]
        branch = api("GET", repo_path("branches", base_ref))
    except BotError as e:
        react(comment_id, "confused")
        reply(pr, f"{marker('refusal')}\n@{author} `{command}` could not start: {e}")
        raise
    log(f"{command} by {author} ({association}) on #{pr}: {base_ref} against {pull['head']['sha']}")
    output(
        run="true",
        command=command,
        pairs=pairs,
        note=note,
        pr=pr,
        base_ref=base_ref,
        base_sha=branch["commit"]["sha"],
        head_sha=pull["head"]["sha"],
    )


# --- building and measuring -----------------------------------------------------------------


def work_dir():
    return Path(env("RUNNER_TEMP")) / "bench"


def main_dir():
    """Main's cli and baseline: what actions/cache keeps between runs."""
    return Path(env("RUNNER_TEMP")) / "bench-main"


def workspace():
    return Path(env("GITHUB_WORKSPACE"))


def run(args, cwd=None, environ=None):
    """Runs a command, its stdout dropped (ballast-bench repeats its report there) and its
    stderr passed on; a failure is one line with the last lines of that stderr."""
    args = [str(a) for a in args]
    log("$ " + shlex.join(args))
    tail = collections.deque(maxlen=4)
    with subprocess.Popen(
        args,
        cwd=cwd,
        env=environ,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
    ) as proc:
        for line in proc.stderr:
            sys.stderr.write(line)
            if line.strip():
                tail.append(line.strip())
    if proc.returncode != 0:
        said = " | ".join(tail)
        raise BotError(f"{Path(args[0]).name} {args[1]} failed (exit {proc.returncode}): {said}")


def cargo_build(src, package, binary, target):
    """`cargo build --release --locked -p package` in `src` (its own toolchain file)."""
    if not (src / "Cargo.toml").is_file():
        raise BotError(f"{src} has no Cargo.toml")
    toolchain = src / "rust-toolchain.toml"
    if shutil.which("rustup") and toolchain.is_file():
        # Explicitly, with its components: whether rustup installs a toolchain file's toolchain
        # by itself depends on its version and RUSTUP_AUTO_INSTALL.
        pinned = tomllib.loads(toolchain.read_text())["toolchain"]
        components = [arg for c in pinned.get("components", []) for arg in ("-c", c)]
        run(
            [
                "rustup",
                "toolchain",
                "install",
                "--profile",
                "minimal",
                pinned["channel"],
                *components,
            ],
            cwd=src,
        )
    run(
        ["cargo", "build", "--release", "--locked", "-p", package],
        cwd=src,
        environ={**os.environ, "CARGO_TARGET_DIR": str(target)},
    )
    built = target / "release" / binary
    if not built.is_file():
        raise BotError(f"cargo left no {built}")
    return built


def ballast_bench():
    """ballast-bench from the bot's own checkout (the default branch), never the PR's."""
    root = Path(__file__).resolve().parent.parent
    return cargo_build(root, "ballast-bench", "ballast-bench", target_dir())


def target_dir():
    """One target directory for every build of the job: the pull request's build reuses the
    dependencies main's compiled (same versions, same profile)."""
    return work_dir() / "target"


def prove_args():
    args = shlex.split(os.environ.get("BENCH_PROVE_ARGS", ""))
    if env("BENCH_COMMAND") == "/bench-gpu":
        args += ["--backend", "cuda"]
    return args


def statement_text(args):
    return f"`cli prove {shlex.join(args)}`" if args else DEFAULT_STATEMENT


def clean_env():
    """The allocator variables that would change a run's policy are not inherited (as
    ballast-bench compare's prove arms do)."""
    return {k: v for k, v in os.environ.items() if k not in ("_RJEM_MALLOC_CONF", "MALLOC_CONF")}


def measure_runs(bench, cli, args, label):
    """WARMUP + RUNS runs of `cli prove ARGS`, one at a time, through `ballast-bench growth`
    with the run's number as n (the statement is the same every run; the fit is not used).
    Returns each measured run's accounting; the warm-up is dropped."""
    scratch = work_dir() / f"runs-{label}"
    scratch.mkdir(parents=True, exist_ok=True)
    template = shlex.join(
        [str(cli), "prove", "-o", f"{scratch}/run-{{n}}.proof", "--report", "{report}", *args]
    )
    result = scratch / "growth.json"
    points = ",".join(str(n) for n in range(1, WARMUP + RUNS + 1))
    run(
        [bench, "growth", "--cmd", template, "--points", points, "--json", result],
        environ=clean_env(),
    )
    samples = [p["runs"][0] for p in json.loads(result.read_text())["points"]][WARMUP:]
    shutil.rmtree(scratch)
    return [{k: s.get(k) for k in ("wall_s", "maxrss_bytes", "peak_heap_bytes")} for s in samples]


def run_compare(bench, base_cli, head_cli, args, pairs, warmup, points, repeat, out):
    run(
        [
            bench,
            "compare",
            "--base-cli",
            base_cli,
            "--head-cli",
            head_cli,
            "--pairs",
            pairs,
            "--warmup",
            warmup,
            "--growth-points",
            ",".join(map(str, points)),
            "--repeat",
            repeat,
            "--out-dir",
            out,
            "--json",
            out / "compare.json",
            "--",
            *args,
        ],
        environ=clean_env(),
    )
    return json.loads((out / "compare.json").read_text())


def spread_pct(values):
    med = statistics.median(values)
    return (max(values) - min(values)) / med * 100 if med else 0.0


def stale_reason(baseline, args):
    """Why a restored baseline cannot serve `/bench`, or None while it is fresh."""
    if baseline is None:
        return "none was restored"
    if baseline.get("format") != BASELINE_FORMAT:
        return "it is of another format"
    if baseline["commit"] != env("BENCH_BASE_SHA"):
        return f"it is of {baseline['commit'][:10]}"
    if baseline["prove_args"] != args:
        return "the statement changed (BENCH_PROVE_ARGS)"
    if baseline["runner"] != env("BENCH_RUNNER"):
        return f"it was recorded on {baseline['runner']}"
    age = datetime.now(UTC) - datetime.fromisoformat(baseline["recorded_at"])
    if age > BASELINE_MAX_AGE:
        return f"it was recorded {age.days} days ago (at most {BASELINE_MAX_AGE.days})"
    return None


def load_json(path):
    return json.loads(path.read_text()) if path.is_file() else None


def cmd_main():
    command = env("BENCH_COMMAND")
    base_sha = env("BENCH_BASE_SHA")
    cache = main_dir()
    cache.mkdir(parents=True, exist_ok=True)
    cli = cache / "cli"
    save = False
    if cli.is_file() and load_json(cache / "build.json") == {"commit": base_sha}:
        log(f"main's cli ({base_sha[:10]}) restored from the cache")
    else:
        built = cargo_build(workspace() / "base", "cli", "cli", target_dir())
        shutil.copy2(built, cli)
        (cache / "build.json").write_text(json.dumps({"commit": base_sha}))
        save = True
    if command in ("/bench", "baseline"):
        args = prove_args()
        baseline = load_json(cache / "baseline.json")
        reason = (
            "a refresh was asked for" if command == "baseline" else stale_reason(baseline, args)
        )
        if reason is None:
            log(f"main's baseline restored: recorded {baseline['recorded_at']}")
        else:
            log(f"recording main's baseline ({reason})")
            samples = measure_runs(ballast_bench(), cli, args, "main")
            baseline = {
                "format": BASELINE_FORMAT,
                "commit": base_sha,
                "ref": env("BENCH_BASE_REF"),
                "runner": env("BENCH_RUNNER"),
                "prove_args": args,
                "warmup": WARMUP,
                "recorded_at": datetime.now(UTC).isoformat(timespec="seconds"),
                "run_id": env("GITHUB_RUN_ID"),
                "run_url": run_url(),
                "samples": samples,
            }
            (cache / "baseline.json").write_text(json.dumps(baseline, indent=1) + "\n")
            wall = [s["wall_s"] for s in samples]
            log(
                f"main: prove time {fmt_s(statistics.median(wall))}, "
                f"spread {spread_pct(wall):.1f} %"
            )
            save = True
    output(save="true" if save else "false")


def cmd_measure():
    command = env("BENCH_COMMAND")
    out = work_dir() / "out"
    out.mkdir(parents=True, exist_ok=True)
    try:
        bench = ballast_bench()  # before any of the pull request's code runs
        head_cli = cargo_build(workspace() / "head", "cli", "cli", target_dir())
        base_cli = main_dir() / "cli"
        args = prove_args()
        ctx = {
            "command": command,
            "pr": env("BENCH_PR"),
            "base_ref": env("BENCH_BASE_REF"),
            "base_sha": env("BENCH_BASE_SHA"),
            "head_sha": env("BENCH_HEAD_SHA"),
            "runner": env("BENCH_RUNNER"),
            "note": os.environ.get("BENCH_NOTE", ""),
            "statement": statement_text(args),
            "run_url": run_url(),
        }
        if command == "/bench":
            baseline = load_json(main_dir() / "baseline.json")
            if baseline is None:
                raise BotError("main's baseline is missing (the main step records it)")
            shutil.copy2(main_dir() / "baseline.json", out / "baseline.json")
            samples = measure_runs(bench, head_cli, args, "pr")
            (out / "runs-pr.json").write_text(json.dumps(samples, indent=1) + "\n")
            markdown = render_bench(ctx, baseline, samples)
        elif command == "/bench-memory":
            result = run_compare(
                bench, base_cli, head_cli, args, RUNS, WARMUP, MEMORY_POINTS, 1, out
            )
            markdown = render_memory(ctx, result, (out / "compare.md").read_text())
        elif command == "/bench-growth":
            result = run_compare(
                bench, base_cli, head_cli, args, 1, 0, GROWTH_POINTS, GROWTH_REPEAT, out
            )
            markdown = render_growth(ctx, result, (out / "compare.md").read_text())
        elif command in ("/bench-abba", "/bench-gpu"):
            pairs = int(env("BENCH_PAIRS"))
            result = run_compare(bench, base_cli, head_cli, args, pairs, 1, MINIMAL_POINTS, 1, out)
            markdown = render_abba(ctx, result, (out / "compare.md").read_text())
        else:
            raise BotError(f"BENCH_COMMAND {command!r} is not a command")
    except BotError as e:
        (out / "error.txt").write_text(f"{e}\n")
        raise
    (out / "comment.md").write_text(markdown)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        with open(summary, "a", encoding="utf-8") as f:
            f.write(markdown)
    log(f"wrote {out / 'comment.md'}")


# --- the comment ----------------------------------------------------------------------------


def fmt_s(x):
    return f"{x:.3f} s"


def mib(b):
    return b / (1 << 20)


def fmt_mib(b):
    return f"{mib(b):.1f} MiB"


def short(sha):
    return sha[:10]


def footer(ctx, baseline_text):
    return (
        f"_Commit: `{short(ctx['head_sha'])}` · Baseline: {baseline_text} · "
        f"Runner: {ctx['runner']} · [run]({ctx['run_url']})_\n"
    )


# (title, sample key, formatter of a value in the key's unit)
METRICS = (
    ("Peak heap", "peak_heap_bytes", "heap", fmt_mib),
    ("Peak RSS", "maxrss_bytes", "maxrss", fmt_mib),
    ("Prove time", "wall_s", "wall", fmt_s),
)


def metric_rows(base_samples, head_samples, marks):
    rows = []
    for title, key, metric, fmt in METRICS:
        base = [s[key] for s in base_samples if s.get(key) is not None]
        head = [s[key] for s in head_samples if s.get(key) is not None]
        if not base or not head:
            continue
        b, h = statistics.median(base), statistics.median(head)
        delta = h - b
        sign = "+" if delta >= 0 else "-"
        pct = f" ({delta / b * 100:+.1f} %)" if b else ""
        rows.append(
            f"| {title} | {fmt(b)} | {fmt(h)} | {sign}{fmt(abs(delta))}{pct} {marks(metric)} |"
        )
    return "| Metric | main | PR | Δ |\n|---|---:|---:|---:|\n" + "\n".join(rows) + "\n"


def spread_line(label, samples):
    wall = [s["wall_s"] for s in samples]
    runs = " / ".join(fmt_s(w) for w in wall)
    return f"{label} {spread_pct(wall):.1f} % ({runs})"


def render_bench(ctx, baseline, samples):
    base_samples = baseline["samples"]
    fresh = baseline["run_id"] == env("GITHUB_RUN_ID")
    recorded = baseline["recorded_at"].replace("T", " ").replace("+00:00", " UTC")
    md = [
        f"## Benchmark: `{ctx['base_ref']}` against #{ctx['pr']} (median of {RUNS})\n",
        f"_{ctx['statement']} · {RUNS} runs per side after {WARMUP} warm-up_\n",
        metric_rows(base_samples, samples, lambda _metric: "❔"),
        "_❔ no verdict: medians of runs measured at different times, not paired; "
        "`/bench-abba` tests a difference._\n",
    ]
    base_spread = spread_pct([s["wall_s"] for s in base_samples])
    head_spread = spread_pct([s["wall_s"] for s in samples])
    if base_spread > NOISE_FLOOR_PCT:
        md.append(
            f"⚠️ The {'baseline' if fresh else 'cached baseline'} was noisy when it was recorded "
            f"(prove-time spread {base_spread:.1f} %, above the {NOISE_FLOOR_PCT:g} % noise "
            "floor), "
            "so the Δ column compares against an unreliable number and no verdict is drawn. "
            'Refresh it (Actions → "Benchmark (PR)" → Run workflow on '
            f"`{ctx['base_ref']}`), then re-run `/bench` — or use `/bench-abba`, which "
            "measures both sides itself.\n"
        )
    if head_spread > NOISE_FLOOR_PCT:
        md.append(
            f"⚠️ This pull request's runs were noisy (prove-time spread {head_spread:.1f} %, "
            f"above the {NOISE_FLOOR_PCT:g} % noise floor): re-run `/bench`, or use "
            "`/bench-abba`.\n"
        )
    md.append(
        f"_Prove-time spread: {spread_line('PR', samples)} · "
        f"{spread_line(ctx['base_ref'], base_samples)}_\n"
    )
    baseline_text = (
        f"measured in this run before the PR (`{short(baseline['commit'])}`)"
        if fresh
        else f"cached (`{short(baseline['commit'])}`, recorded {recorded})"
    )
    md.append(footer(ctx, baseline_text))
    return "\n".join(md)


def abba_marks(result):
    """The ABBA block's verdict mark per metric name (wall, maxrss, heap, …)."""
    verdicts = {c["metric"]: c["verdict"] for c in result["abba"]["comparisons"]}
    symbol = {"real_improvement": "✅", "real_regression": "❌"}
    return lambda metric: symbol.get(verdicts.get(metric), "❔")


def sides(result):
    """(main's samples, the PR's samples) of the ABBA runs: arm B is base, arm A head."""
    records = result["abba"]["records"]
    pick = lambda side: [r["sample"] for r in records if r["side"] == side]  # noqa: E731
    return pick("B"), pick("A")


def growth_section(result, title, again=True):
    base, head = result["growth"]
    heap = all(p["heap_mib"] is not None for p in base["points"] + head["points"])
    repeat = head["repeat"]
    per_point = "1 run per point" if repeat == 1 else f"{repeat} runs per point, the median"
    md = [f"### {title}\n", f"_the statement with `--segments n` · {per_point}_\n"]
    header = "| Segments | main heap (MiB) | PR heap (MiB) | Δ heap |" if heap else "| Segments |"
    header += " main RSS (MiB) | PR RSS (MiB) | Δ RSS |"
    md.append(header + "\n" + "|---:" * (header.count("|") - 1) + "|")
    for pb, ph in zip(base["points"], head["points"], strict=True):
        row = f"| {pb['n']} |"
        for key in ("heap_mib", "rss_mib") if heap else ("rss_mib",):
            b, h = pb[key], ph[key]
            d = h - b
            pct = f" ({d / b * 100:+.1f} %)" if b else ""
            row += f" {b:.1f} | {h:.1f} | {d:+.1f} MiB{pct} |"
        md.append(row)
    md.append("")
    for s in result["slopes"]:
        rel = (
            f", Δ {s['delta'] / abs(s['base']['slope']) * 100:+.1f} %" if s["base"]["slope"] else ""
        )
        noise = (
            f"noise ± {s['noise']:.3g} MiB / segment"
            if s["noise"] is not None
            else "noise unknown (fewer than 3 points)"
        )
        md.append(
            f"- **{s['metric']} growth rate:** {s['head']['slope']:.3g} MiB / segment "
            f"(main: {s['base']['slope']:.3g}{rel}); {noise}. "
            f"Fit: R² = {s['head']['r_squared']:.4f} (main: {s['base']['r_squared']:.4f})"
        )
    md.append("")
    for s in result["slopes"]:
        if s["regression"]:
            rel = (
                f" by {s['delta'] / abs(s['base']['slope']) * 100:+.1f} %"
                if s["base"]["slope"]
                else ""
            )
            md.append(
                f"⚠️ **Memory scaling regression** — {s['metric']} growth rate increased{rel} "
                f"({s['delta']:+.3g} MiB / segment, beyond the fits' noise)."
                + (" `/bench-growth` measures it again with 3 runs per point." if again else "")
                + "\n"
            )
    return "\n".join(md) + "\n"


def details(compare_md):
    return (
        "<details><summary>The whole <code>ballast-bench compare</code> report</summary>\n\n"
        + compare_md.strip()
        + "\n\n</details>\n"
    )


def proof_line(result):
    identical = "identical" if result["proofs_identical"] else "**DIFFERENT**"
    proofs = len(result["abba"]["proof_digests"])
    return f"Proof bytes: {identical} across both sides ({proofs} proofs).\n"


def render_memory(ctx, result, compare_md):
    base, head = sides(result)
    md = [
        f"## Benchmark: `{ctx['base_ref']}` against #{ctx['pr']} (median of {RUNS})\n",
        f"_{ctx['statement']} · {RUNS} A/B/B/A pairs after {WARMUP} warm-up_\n",
        metric_rows(base, head, abba_marks(result)),
        f"_Marks: the ABBA verdict (✅ improvement, ❌ regression, ❔ none; {RUNS} pairs "
        "cannot decide — `/bench-abba` runs 10)._\n",
        proof_line(result),
        growth_section(result, "Memory growth"),
        details(compare_md),
        footer(ctx, f"`{short(ctx['base_sha'])}`, measured in this run (A/B/B/A)"),
    ]
    return "\n".join(md)


def render_growth(ctx, result, compare_md):
    md = [
        f"## Memory growth: `{ctx['base_ref']}` against #{ctx['pr']}\n",
        f"_{ctx['statement']}_\n",
        growth_section(result, "Peak memory per segment count", again=False),
        details(compare_md),
        footer(ctx, f"`{short(ctx['base_sha'])}`, measured in this run"),
    ]
    return "\n".join(md)


def host_text(host):
    return f"{host['cpu']}, {host['cpus']} logical CPUs, {host['kernel']}"


def render_abba(ctx, result, compare_md):
    """compare's own Markdown from its table on, without its two-point growth sweep."""
    lines = compare_md.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("| metric")), 0)
    body, skipping = [], False
    for line in lines[start:]:
        if line.startswith("### "):
            skipping = line.startswith("### Memory growth")
        if not skipping:
            body.append(line)
    pairs = result["abba"]["plan"]["pairs"]
    gpu = " (GPU)" if ctx["command"] == "/bench-gpu" else ""
    md = [
        f"## Benchmark{gpu} (ABBA): #{ctx['pr']} `{short(ctx['head_sha'])}` against "
        f"`{ctx['base_ref']}` ({pairs} pairs)\n",
        f"_{ctx['statement']} · {host_text(result['abba']['host'])} · drift-free A/B/B/A_\n",
    ]
    if ctx["note"]:
        md.append(f"_{ctx['note']}._\n")
    md += [
        "\n".join(body).strip() + "\n",
        footer(ctx, f"`{short(ctx['base_sha'])}`, measured in this run"),
    ]
    return "\n".join(md)


# --- report ---------------------------------------------------------------------------------


def cmd_report():
    command = env("BENCH_COMMAND")
    pr = env("BENCH_PR")
    result = env("BENCH_RESULT")
    report = Path(env("RUNNER_TEMP")) / "report"
    comment = report / "comment.md"
    if result == "success" and comment.is_file():
        # Written by the job that ran the pull request's code: posted as text, never run.
        text = comment.read_text(errors="replace")
        if len(text) > MAX_COMMENT:
            text = text[:MAX_COMMENT] + "\n\n_(cut: the whole report is in the run's artifact)_\n"
        reaction = "rocket"
    else:
        why = ""
        error = report / "error.txt"
        if error.is_file():
            why = (
                "\n\n```\n"
                + error.read_text(errors="replace")[:2000].replace("```", "'''")
                + "\n```"
            )
        text = (
            f"❌ `{command}` on `{short(env('BENCH_HEAD_SHA'))}`: the measurement ended "
            f"`{result}`; see [the run]({run_url()}).{why}\n"
        )
        reaction = "confused"
    body = f"{marker(command)}\n{text}"
    earlier = find_bot_comment(pr, command)
    if earlier:
        api("PATCH", repo_path("issues", "comments", earlier["id"]), {"body": body})
        log(f"edited comment {earlier['id']} on #{pr}")
    else:
        posted = api("POST", repo_path("issues", pr, "comments"), {"body": body})
        log(f"posted comment {posted['id']} on #{pr}")
    react(os.environ.get("COMMENT_ID", ""), reaction)


def main():
    commands = {"gate": cmd_gate, "main": cmd_main, "measure": cmd_measure, "report": cmd_report}
    if len(sys.argv) != 2 or sys.argv[1] not in commands:
        print(f"usage: ci/bench-bot.py {{{'|'.join(commands)}}}", file=sys.stderr)
        return 2
    try:
        commands[sys.argv[1]]()
    except BotError as e:
        print(f"ci/bench-bot.py {sys.argv[1]}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
