#!/usr/bin/env python3
"""A small driver of NVRTC's C API (libnvrtc) through ctypes: CUDA C to PTX and to cubins.

Used by ci/check-kernels.sh; standard library only. Every `*.cuh` next to a source is handed
to NVRTC as an in-memory header, so no include path (and no checkout path) reaches the
compiler: the output depends only on the sources, the options below and the NVRTC build.

    nvrtc.py --lib LIBNVRTC version
    nvrtc.py --lib LIBNVRTC ptx --out-dir DIR SOURCE.cu...
    nvrtc.py --lib LIBNVRTC cubin --arch sm_90 SOURCE.cu...

`ptx` writes DIR/<name>.ptx for each source. `cubin` compiles for a real architecture with
`--ptxas-options=-v`, prints ptxas's register and spill lines, and exits 1 if any kernel
spills.
"""

import argparse
import ctypes
import pathlib
import re
import sys

# The PTX the repository commits: compute_80 runs on every GPU from Ampere on (the driver
# JIT-compiles it for sm_90, sm_120, ...). No line info, no debug info: the PTX carries no
# paths or timestamps, so repeated compiles are byte-identical.
COMMON_OPTIONS = ["-default-device", "--std=c++17"]
PTX_OPTIONS = ["--gpu-architecture=compute_80", *COMMON_OPTIONS]


class Nvrtc:
    """The few NVRTC entry points this script needs."""

    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.lib.nvrtcGetErrorString.restype = ctypes.c_char_p

    def check(self, result, what):
        if result != 0:
            message = self.lib.nvrtcGetErrorString(result).decode()
            raise RuntimeError(f"{what}: {message}")

    def version(self):
        major, minor = ctypes.c_int(), ctypes.c_int()
        self.check(self.lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)), "nvrtcVersion")
        return major.value, minor.value

    def compile(self, source, options, output):
        """Compiles `source` (a Path) with `options`; returns (log, output bytes), where
        output is "ptx" or "cubin"."""
        headers = sorted(source.parent.glob("*.cuh"))
        header_texts = (ctypes.c_char_p * len(headers))(*[h.read_bytes() for h in headers])
        header_names = (ctypes.c_char_p * len(headers))(*[h.name.encode() for h in headers])
        program = ctypes.c_void_p()
        self.check(
            self.lib.nvrtcCreateProgram(
                ctypes.byref(program),
                source.read_bytes(),
                source.name.encode(),
                len(headers),
                header_texts,
                header_names,
            ),
            f"nvrtcCreateProgram({source.name})",
        )
        try:
            opts = (ctypes.c_char_p * len(options))(*[o.encode() for o in options])
            result = self.lib.nvrtcCompileProgram(program, len(options), opts)
            log = self._read(program, "nvrtcGetProgramLogSize", "nvrtcGetProgramLog")
            log = log.rstrip(b"\0").decode(errors="replace")
            if result != 0:
                self.check(result, f"compiling {source.name}:\n{log}")
            if output == "ptx":
                data = self._read(program, "nvrtcGetPTXSize", "nvrtcGetPTX").rstrip(b"\0")
            else:
                data = self._read(program, "nvrtcGetCUBINSize", "nvrtcGetCUBIN")
            return log, data
        finally:
            self.lib.nvrtcDestroyProgram(ctypes.byref(program))

    def _read(self, program, size_fn, read_fn):
        size = ctypes.c_size_t()
        self.check(getattr(self.lib, size_fn)(program, ctypes.byref(size)), size_fn)
        buffer = ctypes.create_string_buffer(size.value)
        self.check(getattr(self.lib, read_fn)(program, buffer), read_fn)
        return buffer.raw[: size.value]


def ptx(nvrtc, args):
    out_dir = pathlib.Path(args.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    for source in map(pathlib.Path, args.sources):
        log, data = nvrtc.compile(source, PTX_OPTIONS, "ptx")
        if log.strip():
            print(f"{source.name}: {log.strip()}", file=sys.stderr)
        (out_dir / f"{source.stem}.ptx").write_bytes(data)
    return 0


# ptxas -v prints, per kernel: "Compiling entry function 'name' for 'sm_90'", then
# "N bytes stack frame, N bytes spill stores, N bytes spill loads" and "Used N registers, ...".
SPILLS = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads")


def cubin(nvrtc, args):
    options = [f"--gpu-architecture={args.arch}", *COMMON_OPTIONS, "--ptxas-options=-v"]
    spilled = []
    for source in map(pathlib.Path, args.sources):
        log, _ = nvrtc.compile(source, options, "cubin")
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
                    spilled.append(f"{source.name}:{kernel}")
    if spilled:
        print(f"nvrtc.py: register spills on {args.arch}: {', '.join(spilled)}", file=sys.stderr)
        return 1
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lib", required=True, help="path to libnvrtc.so")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("version")
    p = commands.add_parser("ptx")
    p.add_argument("--out-dir", required=True)
    p.add_argument("sources", nargs="+")
    c = commands.add_parser("cubin")
    c.add_argument("--arch", required=True)
    c.add_argument("sources", nargs="+")
    args = parser.parse_args()

    nvrtc = Nvrtc(args.lib)
    try:
        if args.command == "version":
            print("%d.%d" % nvrtc.version())
            return 0
        return {"ptx": ptx, "cubin": cubin}[args.command](nvrtc, args)
    except RuntimeError as err:
        print(f"nvrtc.py: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
