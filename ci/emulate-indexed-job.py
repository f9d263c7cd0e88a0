#!/usr/bin/env python3
"""Run the Kubernetes manifests of .#k8s-job on this machine, pod by pod, as processes.

usage: emulate-indexed-job.py CLI MANIFESTS.json VOLUME_DIR

MANIFESTS.json is `nix eval --json .#packages.<system>.k8s-job.manifests`: the
ReadWriteMany claim (`volume`), the Indexed Job proving the parts (`prove`) and the
Job bundling them (`bundle`). Each pod's containers run exactly the command lines
the manifests give them — the image's entrypoint (the cli, here CLI) with the
container's `args`, its `env`, and its `workingDir` — with the claim mapped to
VOLUME_DIR. The prove Job's pods get JOB_COMPLETION_INDEX = 0 .. completions - 1,
as the Job controller sets it, and run `parallelism` at a time (at most one per
core); the bundle Job's init containers, then its containers, run after every part
has succeeded. Exits 1 if a pod fails, 2 if the manifests are not what this
emulation understands. Python standard library only.
"""

import concurrent.futures
import json
import os
import pathlib
import shlex
import subprocess
import sys

# What the Job controller and kubelet would set that the host must not leak in.
SCHEDULER_VARIABLES = ("JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID")


def fail(message, code=2):
    print(f"emulate-indexed-job.py: {message}", file=sys.stderr)
    sys.exit(code)


def mounts(pod, claim, volume_dir):
    """The pod's mount paths of `claim`, mapped to VOLUME_DIR."""
    names = {
        v["name"]
        for v in pod.get("volumes", [])
        if v.get("persistentVolumeClaim", {}).get("claimName") == claim
    }
    if not names:
        fail(f"the pod does not mount the claim {claim}")

    def for_container(container):
        found = {m["mountPath"]: volume_dir for m in container.get("volumeMounts", []) if m["name"] in names}
        if not found:
            fail(f"container {container['name']} does not mount the claim {claim}")
        return found

    return for_container


def host_path(path, mapping):
    """Where a container path lies on this machine, if it is under a mounted claim."""
    for mount, target in mapping.items():
        relative = os.path.relpath(path, mount)
        if not relative.startswith(".."):
            return os.path.normpath(os.path.join(target, relative))
    fail(f"{path} is not on the shared volume, so its files would be lost with the pod")


def command_line(container, cli):
    if "command" in container:
        fail(f"container {container['name']} replaces the image's entrypoint; the manifests use args only")
    if any("$(" in arg for arg in container.get("args", [])):
        fail(f"container {container['name']} relies on $(VAR) expansion, which this emulation does not do")
    return [cli, *container.get("args", [])]


def run_container(container, cli, mapping, extra_env, label):
    argv = command_line(container, cli)
    env = {k: v for k, v in os.environ.items() if k not in SCHEDULER_VARIABLES}
    for variable in container.get("env", []):
        if "value" not in variable:
            fail(f"container {container['name']}: env {variable['name']} is not a plain value")
        env[variable["name"]] = variable["value"]
    env.update(extra_env)
    cwd = host_path(container.get("workingDir", "/"), mapping)
    shown = " ".join(f"{k}={v}" for k, v in extra_env.items())
    print(f"  {label}: {shown + ' ' if shown else ''}{shlex.join(argv)}  (in {cwd})", flush=True)
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        print(done.stdout + done.stderr, file=sys.stderr)
        fail(f"{label}: exit {done.returncode}", code=1)
    return done.stdout


def pod_spec(job, kind):
    if job.get("apiVersion") != "batch/v1" or job.get("kind") != "Job":
        fail(f"the {kind} manifest is not a batch/v1 Job")
    spec = job["spec"]["template"]["spec"]
    if spec.get("restartPolicy") != "Never":
        fail(f"the {kind} Job's pods must not restart in place (restartPolicy Never)")
    return spec


def main(cli, manifests_path, volume_dir):
    cli, volume_dir = os.path.abspath(cli), os.path.abspath(volume_dir)
    manifests = json.loads(pathlib.Path(manifests_path).read_text())
    claim = manifests["volume"]["metadata"]["name"]
    if manifests["volume"]["spec"].get("accessModes") != ["ReadWriteMany"]:
        fail("the parts volume must be ReadWriteMany: every pod writes to it")

    prove = manifests["prove"]
    spec = prove["spec"]
    if spec.get("completionMode") != "Indexed":
        fail("the prove Job is not an Indexed Job")
    completions, parallelism = spec["completions"], spec.get("parallelism", 1)
    pod = pod_spec(prove, "prove")
    mount_of = mounts(pod, claim, volume_dir)
    (container,) = pod["containers"]
    workers = max(1, min(parallelism, os.cpu_count() or 1))
    print(f"prove: Indexed Job {prove['metadata']['name']}, {completions} completions, {workers} at a time")
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        futures = [
            pool.submit(
                run_container,
                container,
                cli,
                mount_of(container),
                {"JOB_COMPLETION_INDEX": str(index)},
                f"pod {index}",
            )
            for index in range(completions)
        ]
        for future in futures:
            future.result()

    bundle = manifests["bundle"]
    pod = pod_spec(bundle, "bundle")
    mount_of = mounts(pod, claim, volume_dir)
    print(f"bundle: Job {bundle['metadata']['name']}")
    for kind in ("initContainers", "containers"):
        for container in pod.get(kind, []):
            out = run_container(container, cli, mount_of(container), {}, f"{kind[:-1]} {container['name']}")
            print("".join(f"    {line}\n" for line in out.splitlines()), end="")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
