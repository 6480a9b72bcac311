"""Constants and framing shared by the zygote, its job children and the parent (stdlib only)."""

from __future__ import annotations

import json
import os
import struct
import traceback

from audit_lib.sandbox.nesting import depth_room

RESULT_FD = 3
# The descriptors of one job, in the order the zygote hands them to a cell's init (SCM_RIGHTS).
JOB_FDS = ("spec", "out", "err", "res", "ctl", "go")
FRAME_HEADER = struct.Struct("<Q")
# Imported once into the job template, so a job that uses them pays no import: what the benchmarks' programs import
# (math, typing, re, collections, random, functools, heapq, itertools, copy, string, cmath, bisect, operator,
# decimal), what the harness needs anyway, and what EvalPlus's `reliability_guard` imports before every HumanEval+ /
# MBPP+ sample (faulthandler, shutil, subprocess: about 8 ms per sample's job otherwise, for little memory). Not
# here: modules that weigh more than they are used (hashlib, tempfile, dataclasses, statistics...): every page the
# template holds is copied into each job's page tables at its fork, and a job importing one of them pays a few ms
# once (`perf/bench_sandbox.py` measures both sides).
PRELOADED_MODULES = (
    "re", "math", "cmath", "itertools", "functools", "collections", "heapq", "bisect", "string", "typing",
    "json", "random", "fractions", "decimal", "datetime", "operator", "array", "textwrap", "unicodedata", "base64",
    "struct", "enum", "abc", "numbers", "contextlib", "io", "copy", "types", "socket", "faulthandler", "shutil",
    "subprocess",
)
CLONE_NEWNET = 0x40000000
PR_SET_DUMPABLE = 4
MAX_RESULT_BYTES = 512 * 1024 * 1024
MAX_VALUE_BYTES = 64 * 1024 * 1024
SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"


def report_exception(fd: int) -> None:
    """Write the current traceback's last 4,000 bytes to `fd`, if anything can still be written."""
    try:
        os.write(fd, traceback.format_exc().encode()[-4000:])
    except BaseException:  # noqa: BLE001, S110 - nothing left to tell
        pass


def _read_exact(fd: int, size: int) -> bytes:
    chunks = []
    while size:
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def read_frames(fd: int) -> tuple[dict, bytes]:
    """One message: a JSON header frame and a raw blob frame."""
    raw, blob = read_raw_frames(fd)
    with depth_room():  # a request's inputs and a judge's expected values, nested up to MAX_DEPTH
        return json.loads(raw), blob


def read_raw_frames(fd: int) -> tuple[bytes, bytes]:
    """One message, its header left as JSON text."""
    (header_size,) = FRAME_HEADER.unpack(_read_exact(fd, FRAME_HEADER.size))
    raw = _read_exact(fd, header_size)
    (blob_size,) = FRAME_HEADER.unpack(_read_exact(fd, FRAME_HEADER.size))
    return raw, _read_exact(fd, blob_size)


def write_frames(fd: int, header: dict, blob: bytes = b"") -> None:
    with depth_room():
        encoded = json.dumps(header).encode()
    write_all(fd, FRAME_HEADER.pack(len(encoded)) + encoded + FRAME_HEADER.pack(len(blob)) + blob)
