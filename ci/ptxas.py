#!/usr/bin/env python3
"""Checks the committed PTX with ptxas, as a driver would compile it: no register spills on
the GPUs ballast targets, and the PTX ISA floor.

Used by ci/check-kernels.sh; standard library only.

    ptxas.py --ptxas PTXAS spills --arch sm_90 FILE.ptx...
    ptxas.py --ptxas PTXAS floor --isa 7.0 --below 6.5 --arch sm_80 FILE.ptx...

`spills` assembles each file for the architecture with -v, prints every kernel's registers,
stack frame and spills, and exits 1 if any kernel spills. `floor` checks that each file
declares `.version ISA`, that ptxas assembles it as it is for the architecture (so nothing
in it needs a later ISA), and that ptxas refuses it with the version lowered to BELOW (so
the declared ISA is the lowest that serves): exit 1 otherwise.
"""

import argparse
import pathlib
import re
import subprocess
import sys
import tempfile

# ptxas -v prints, per kernel: "Compiling entry function 'name' for 'sm_90'", then
# "N bytes stack frame, N bytes spill stores, N bytes spill loads" and "Used N registers, ...".
SPILLS = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads")


def assemble(ptxas, arch, path, verbose=False):
    """Runs ptxas on `path` for `arch`; returns (exit code, its messages)."""
    with tempfile.TemporaryDirectory() as out:
        command = [ptxas, f"--gpu-name={arch}", str(path), "-o", f"{out}/kernel.cubin"]
        if verbose:
            command.insert(1, "-v")
        done = subprocess.run(command, capture_output=True, text=True)
        return done.returncode, done.stdout + done.stderr


def spills(args):
    spilled = []
    for path in map(pathlib.Path, args.files):
        code, log = assemble(args.ptxas, args.arch, path, verbose=True)
        if code != 0:
            print(f"ptxas.py: ptxas refuses {path.name} for {args.arch}:\n{log}", file=sys.stderr)
            return 1
        kernel = "?"
        for line in log.splitlines():
            line = line.strip()
            entry = re.search(r"Compiling entry function '(\w+)'", line)
            if entry:
                kernel = entry.group(1)
            elif "registers" in line or "spill" in line:
                detail = re.sub(r"^ptxas\s+(info\s*:|\.)\s*", "", line)
                print(f"  {args.arch:7} {kernel:24} {detail}")
                m = SPILLS.search(line)
                if m and (int(m.group(1)) or int(m.group(2))):
                    spilled.append(f"{path.name}:{kernel}")
    if spilled:
        print(f"ptxas.py: register spills on {args.arch}: {', '.join(spilled)}", file=sys.stderr)
        return 1
    return 0


def floor(args):
    declared = f".version {args.isa}"
    failures = []
    for path in map(pathlib.Path, args.files):
        text = path.read_text()
        if f"\n{declared}\n" not in text:
            failures.append(f"{path.name} does not declare {declared}")
            continue
        code, log = assemble(args.ptxas, args.arch, path)
        if code != 0:
            failures.append(f"ptxas refuses {path.name} at ISA {args.isa}: {log.strip()}")
        with tempfile.TemporaryDirectory() as tmp:
            lowered = pathlib.Path(tmp) / path.name
            lowered.write_text(text.replace(f"\n{declared}\n", f"\n.version {args.below}\n"))
            code, _ = assemble(args.ptxas, args.arch, lowered)
            if code == 0:
                failures.append(
                    f"ptxas accepts {path.name} at ISA {args.below} too: "
                    f"{args.isa} is not the lowest that serves"
                )
    for failure in failures:
        print(f"ptxas.py: {failure}", file=sys.stderr)
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ptxas", required=True, help="path to ptxas")
    commands = parser.add_subparsers(dest="command", required=True)
    s = commands.add_parser("spills")
    s.add_argument("--arch", required=True)
    s.add_argument("files", nargs="+")
    f = commands.add_parser("floor")
    f.add_argument("--isa", required=True)
    f.add_argument("--below", required=True)
    f.add_argument("--arch", required=True)
    f.add_argument("files", nargs="+")
    args = parser.parse_args()
    return {"spills": spills, "floor": floor}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
