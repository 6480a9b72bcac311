"""The judge: a process that holds a job's expected values, apart from the zygote and every job child."""

from __future__ import annotations

import json
import os
import select
import signal
import time

from audit_lib.sandbox import codec as sandbox_codec
from audit_lib.sandbox.budget import JobDecoder
from audit_lib.sandbox.zygote.protocol import write_all as _write_all, read_frames, write_frames
from audit_lib.sandbox.zygote.state import ZygoteState
from audit_lib.sandbox.zygote.template import die_with_parent

# A judge that takes longer than this over one batch of lines (values built to decode slowly) is killed; the job
# then runs on without early stops, and the parent, which decides every verdict, bounds its own decoding.
QUERY_BUDGET_S = 5.0


class Judge:
    """A process that holds a job's expected values and says which value lines differ from them.

    The expected values come in a sealed message that follows the request on the zygote's request pipe. The judge,
    forked from the zygote, reads that message itself, so the values never enter the zygote's memory. (Job children
    descend from the template, forked before the zygote read any request, so nothing in the zygote's memory reaches
    them either way.) Decoding the child's values to compare them is the judge's work too: a value built to decode
    slowly stalls the judge, which is then killed (`QUERY_BUDGET_S`), never the zygote. The judge runs as the
    zygote's user, apart from every child (which cannot see it from its own PID namespace), dies with the zygote,
    and exits when the job is over.
    """

    def __init__(self, state: ZygoteState, protocol_in: int) -> None:
        query_r, query_w = os.pipe()
        answer_r, answer_w = os.pipe()
        zygote_pid = os.getpid()
        pid = os.fork()
        if pid == 0:  # the judge
            status = 1
            try:
                die_with_parent(zygote_pid)
                os.close(query_w), os.close(answer_r)
                _judge_main(protocol_in, query_r, answer_w)
                status = 0
            finally:
                os._exit(status)
        os.close(query_r), os.close(answer_w)
        self.state, self.pid, self.query_fd, self.answer_fd = state, pid, query_w, answer_r
        self.alive = True
        if os.read(answer_r, 1) != b"R":
            self.close()
            raise RuntimeError("the judge could not read the job's expected values")

    def mismatches(self, lines: list[bytes]) -> list[bool]:
        """Which lines differ from their expected value; none, once the judge has been killed for stalling."""
        if not self.alive:
            return [False] * len(lines)
        try:
            write_frames(self.query_fd, {"count": len(lines)}, b"\n".join(lines))
            answer = self._read_answer(len(lines), time.monotonic() + QUERY_BUDGET_S)
        except (OSError, TimeoutError):
            self.alive = False
            os.kill(self.pid, signal.SIGKILL)
            return [False] * len(lines)
        return [flag == ord("1") for flag in answer]

    def _read_answer(self, size: int, deadline: float) -> bytes:
        chunks: list[bytes] = []
        while size:
            if not select.select([self.answer_fd], [], [], max(0.0, deadline - time.monotonic()))[0]:
                raise TimeoutError("the judge stalled")
            chunk = os.read(self.answer_fd, size)
            if not chunk:
                raise OSError("the judge exited")
            chunks.append(chunk)
            size -= len(chunk)
        return b"".join(chunks)

    def close(self) -> None:
        os.close(self.query_fd)
        os.close(self.answer_fd)
        if self.alive:
            try:  # a judge still decoding a huge value would hold the zygote here: it is not needed any more
                os.kill(self.pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass


def _judge_main(protocol_in: int, query_r: int, answer_w: int) -> None:
    sealed, _ = read_frames(protocol_in)
    expected = {int(index): (sandbox_codec.decode(tagged), json.dumps(tagged).encode())
                for index, tagged in sealed["stop_expected"]}
    _write_all(answer_w, b"R")
    decoder = JobDecoder()  # the budget the parent decodes the same job's values with
    while True:
        try:
            header, blob = read_frames(query_r)
        except EOFError:
            return
        lines = blob.split(b"\n") if header["count"] else []
        _write_all(answer_w, bytes(ord("1") if _differs(line, expected, decoder) else ord("0") for line in lines))


def _differs(line: bytes, expected: dict, decoder: JobDecoder) -> bool:
    """Is this value line's value `!=` its expected value? Inputs without one never differ.

    Equal JSON text means equal values; otherwise both sides are decoded and compared with `==`, exactly as the
    parent will, and a comparison that raises counts as a difference (the parent scores it wrong too). Values are
    decoded within the job's decode budget, as the parent decodes them: one over it differs (the parent refuses it).
    """
    parts = line.split(b" ", 3)
    entry = expected.get(int(parts[0]))  # the zygote accepted the line only with the index it expected
    if entry is None:
        return False
    if len(parts) != 4:
        return True  # a value line without a value: the parent cannot match it either
    if parts[3] == entry[1]:
        return False
    try:
        decoder.charge(parts[3])
        return not bool(decoder.decode(json.loads(parts[3])) == entry[0])
    except BaseException:  # noqa: BLE001 - undecodable or incomparable
        return True
