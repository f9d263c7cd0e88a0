#!/usr/bin/env python3
"""A small driver of NVRTC's C API (libnvrtc) through ctypes: CUDA C to PTX.

Used by ci/check-kernels.sh; standard library only. Every `*.cuh` next to a source is handed
to NVRTC as an in-memory header, so no include path (and no checkout path) reaches the
compiler: the output depends only on the sources, the options below and the NVRTC build.

    nvrtc.py --lib LIBNVRTC version
    nvrtc.py --lib LIBNVRTC ptx --isa 7.0 --out-dir DIR SOURCE.cu...

`ptx` writes DIR/<name>.ptx for each source, declaring PTX ISA `--isa` instead of the
version this NVRTC writes: the lowest ISA that has what the kernels use, so that the
oldest drivers load them (ci/ptxas.py checks that ptxas accepts them at it).
"""

import argparse
import ctypes
import pathlib
import re
import sys

# The PTX the repository commits: compute_80 runs on every GPU from Ampere on (the driver
# JIT-compiles it for sm_90, sm_120, ...). No line info, no debug info: the PTX carries no
# paths or timestamps, so repeated compiles are byte-identical.
PTX_OPTIONS = ["--gpu-architecture=compute_80", "-default-device", "--std=c++17"]


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

    def compile(self, source, options):
        """Compiles `source` (a Path) with `options`; returns (log, PTX bytes)."""
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
            return log, self._read(program, "nvrtcGetPTXSize", "nvrtcGetPTX").rstrip(b"\0")
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
        log, data = nvrtc.compile(source, PTX_OPTIONS)
        if log.strip():
            print(f"{source.name}: {log.strip()}", file=sys.stderr)
        text, count = re.subn(rb"^\.version \d+\.\d+$", b".version " + args.isa.encode(),
                              data, count=1, flags=re.MULTILINE)
        if count != 1:
            raise RuntimeError(f"{source.name}: NVRTC wrote no .version line")
        (out_dir / f"{source.stem}.ptx").write_bytes(text)
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lib", required=True, help="path to libnvrtc.so")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("version")
    p = commands.add_parser("ptx")
    p.add_argument("--isa", required=True, help="the PTX ISA version to declare, e.g. 7.0")
    p.add_argument("--out-dir", required=True)
    p.add_argument("sources", nargs="+")
    args = parser.parse_args()

    nvrtc = Nvrtc(args.lib)
    try:
        if args.command == "version":
            print("%d.%d" % nvrtc.version())
            return 0
        return ptx(nvrtc, args)
    except RuntimeError as err:
        print(f"nvrtc.py: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
