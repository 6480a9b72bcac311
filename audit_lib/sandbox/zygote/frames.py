"""Length-prefixed frames between a tests job's processes and the zygote (stdlib only).

A frame is an 8-byte little-endian length, a one-byte kind and a JSON body. The job (`serve_child`) and the judge
(`judge_child`) write and read them on their result and go pipes; the zygote (`tests_job`) cuts them out of the
pipe's chunks with `FrameCutter` and relays them unopened, so it never decodes a value.
"""

from __future__ import annotations

import os
import struct
# Bound here, not looked up in builtins at each use: the code under test may rebind builtins in the job.
from builtins import (  # noqa: A004
    bytearray, bytes, int, len, list, memoryview, min, str, tuple,
)

FRAME_LENGTH = struct.Struct("<Q")
MAX_FRAME_BYTES = 64 * 1024 * 1024
# Kinds. Job -> zygote: LOAD, ANSWER. Judge -> zygote: REQUEST, VERDICT. Zygote -> judge: LOAD, ANSWER (relayed).
# Zygote -> job: REQUEST (relayed).
LOAD, ANSWER, REQUEST, VERDICT = b"L", b"A", b"Q", b"V"

_os_read, _os_write, _memoryview, _bytes = os.read, os.write, memoryview, bytes


def frame(kind: bytes, body: bytes) -> bytes:
    return FRAME_LENGTH.pack(len(body) + 1) + kind + body


def write_frame(fd: int, kind: bytes, body: bytes) -> None:
    view = _memoryview(frame(kind, body))
    while view:
        view = view[_os_write(fd, view):]


def _read_exact(fd: int, size: int) -> bytes | None:
    chunks = []
    while size:
        chunk = _os_read(fd, min(size, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int) -> tuple[bytes, bytes] | None:
    """(kind, body) of the next frame on `fd`; None at the end of the stream."""
    head = _read_exact(fd, FRAME_LENGTH.size)
    if head is None:
        return None
    (size,) = FRAME_LENGTH.unpack(head)
    if not 1 <= size <= MAX_FRAME_BYTES:
        return None
    payload = _read_exact(fd, size)
    if payload is None:
        return None
    return payload[:1], payload[1:]


class FrameCutter:
    """Cuts whole frames out of a byte stream as it arrives; a frame over `MAX_FRAME_BYTES` is a violation."""

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.violation: str | None = None

    def feed(self, chunk: bytes) -> list[bytes]:
        """The whole frames completed by `chunk` (each with its length prefix, ready to relay)."""
        self.buffer += chunk
        frames: list[bytes] = []
        while len(self.buffer) >= FRAME_LENGTH.size:
            (size,) = FRAME_LENGTH.unpack_from(self.buffer)
            if not 1 <= size <= MAX_FRAME_BYTES:
                self.violation = f"a frame of {size} bytes (at most {MAX_FRAME_BYTES})"
                return frames
            end = FRAME_LENGTH.size + size
            if len(self.buffer) < end:
                break
            frames.append(_bytes(self.buffer[:end]))
            del self.buffer[:end]
        return frames


def kind_of(whole_frame: bytes) -> bytes:
    return whole_frame[FRAME_LENGTH.size:FRAME_LENGTH.size + 1]


def body_of(whole_frame: bytes) -> bytes:
    return whole_frame[FRAME_LENGTH.size + 1:]


class Relay:
    """Frames waiting to be written to one process's go pipe (non-blocking; written as the pipe takes them)."""

    def __init__(self, run) -> None:  # noqa: ANN001 - a supervise.ChildRun (supervise imports the zygote state)
        self.run = run
        self.pending: list[memoryview] = []

    def push(self, data: bytes) -> None:
        self.pending.append(memoryview(data))
        self.flush()

    def flush(self) -> None:
        while self.pending and self.run.go_fd is not None:
            head = self.pending[0]
            try:
                written = _os_write(self.run.go_fd, head)
            except BlockingIOError:
                return
            except OSError:  # the process is gone: nothing it would read matters
                self.pending.clear()
                return
            if written == len(head):
                self.pending.pop(0)
            else:
                self.pending[0] = head[written:]

    def waiting(self) -> bool:
        return bool(self.pending) and self.run.go_fd is not None
