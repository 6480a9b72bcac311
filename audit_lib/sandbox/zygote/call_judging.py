"""The zygote's link to a call job's judge: value lines go to it unopened, one record per line comes back.

The judge (`call_judge_child`) runs in a judge cell, apart from the job, from a spec the zygote never parses: the
sealed message that followed the request on the protocol pipe, written as is into the judge's memfd. The zygote
relays each value line (`Q` frame: `<index> <tagged JSON>`) and reads the judge's records (`V` frames) in the same
order. A judge that ends (its limits, a crash) leaves every line it did not answer, and every later one, with a
record that refuses the value (`JudgeLimit`): an output the judge could not judge is never a match.
"""

from __future__ import annotations

import collections
import json
import math
import select
import time

from audit_lib.sandbox.zygote.frames import REQUEST, VERDICT, FrameCutter, Relay, body_of, frame, kind_of
from audit_lib.sandbox.zygote.state import ZygoteState
from audit_lib.sandbox.zygote.supervise import Capture, ChildRun

JUDGE_MEMORY_MB = 4096  # EvalPlus's own cap for the process that holds and compares a sample's outputs
JUDGE_OUTPUT_BYTES = 4096
END_GRACE_S = 2.0  # a judge whose go pipe is closed ends by itself within this, or is ended
JUDGE_LOST = json.dumps({"k": "unserializable", "t": "JudgeLimit",
                         "m": "the judge ended before it judged this value (its memory or CPU limit)"}).encode()


def judge_limits(total_timeout_s: float) -> dict:
    """The judge's own limits: its CPU time covers the whole job's values (each value has its own budget too)."""
    return {"memory_mb": JUDGE_MEMORY_MB, "file_size_mb": 1, "open_files": 32, "processes": 0,
            "output_bytes": JUDGE_OUTPUT_BYTES, "cpu_s": math.ceil(min(total_timeout_s, 1e6)) + 10}


class JudgeLink:
    """One call job's judge: lines sent to it, records received, in order."""

    def __init__(self, state: ZygoteState, spec: bytes, total_timeout_s: float) -> None:
        self.run = ChildRun(state, judge_limits(total_timeout_s), "call_judge", spec, judge=True)
        self.run.captures = {"out": Capture(JUDGE_OUTPUT_BYTES), "err": Capture(JUDGE_OUTPUT_BYTES)}
        self.relay = Relay(self.run)
        self.cutter = FrameCutter()
        self.waiting: collections.deque[int] = collections.deque()  # input indices sent, not yet answered
        self.records: dict[int, bytes] = {}
        self.on_record = None  # set by the current run's CallProgress: called with (index, record)
        self.lost = False

    def submit(self, index: int, payload: bytes) -> None:
        """Send one value to be judged; with the judge gone its record is the refusal at once."""
        if self.lost:
            self._answer(index, JUDGE_LOST)
            return
        self.waiting.append(index)
        self.relay.push(frame(REQUEST, str(index).encode() + b" " + payload))

    def pending(self) -> bool:
        return bool(self.waiting)

    def backlog(self) -> int:
        """Values sent and not yet judged."""
        return len(self.waiting)

    def feed(self, chunk: bytes) -> bool:
        """Take a chunk of the judge's result pipe; False when the judge broke the protocol (it is then lost)."""
        for whole in self.cutter.feed(chunk):
            if kind_of(whole) != VERDICT or not self.waiting:
                self.lose()
                return False
            self._answer(self.waiting.popleft(), body_of(whole))
        if self.cutter.violation:
            self.lose()
            return False
        return True

    def lose(self) -> None:
        """The judge ended or broke the protocol: what it did not answer is refused."""
        if not self.lost:
            self.lost = True
            if self.run.open_fds and not self.run.killed_by_us:
                self.run.kill()
        while self.waiting:
            self._answer(self.waiting.popleft(), JUDGE_LOST)

    def _answer(self, index: int, record: bytes) -> None:
        self.records[index] = record
        if self.on_record is not None:
            self.on_record(index, record)

    def finish(self, until: float) -> None:
        """Let the judge answer what it has (until `until`), then end it.

        Let the judge answer what it has (until `until`), then end it: its go pipe closed, it ends by itself; what it
        leaves unanswered is refused.
        """
        run = self.run
        poller = select.poll()
        run.register(poller)
        while run.open_fds and self.pending() and not self.lost and time.monotonic() < until:
            self._exchange(poller, until)
        run.close_go()
        if self.pending():
            self.lose()  # refuses what is left, and ends a judge still at work
        give_up = time.monotonic() + END_GRACE_S
        while run.open_fds:
            if time.monotonic() > give_up and not run.killed_by_us:
                run.kill()
            if run.killed_by_us:
                run.enforce_end()
            for fd, _event in poller.poll(100):
                if fd in run.open_fds:
                    run.read_ready(fd, poller, run.captures, lambda _chunk: True)
        run.finish()

    def _exchange(self, poller, until: float) -> None:  # noqa: ANN001 - select.poll's type is private
        """One round: write what the judge's pipe takes, read what it answered."""
        run = self.run
        self.relay.flush()
        writing = self.relay.waiting() and run.go_fd is not None
        if writing:
            poller.register(run.go_fd, select.POLLOUT)
        for fd, _event in poller.poll(max(1, int(min(until - time.monotonic(), 1.0) * 1000))):
            if fd in run.open_fds:
                run.read_ready(fd, poller, run.captures, self.feed)
        if writing and run.go_fd is not None:
            poller.unregister(run.go_fd)

    def cpu_s(self) -> float | None:
        """The judge's own CPU time so far, read outside it; None once it is gone.

        The judge's own CPU time so far (its main thread and its cell's init, read outside them); None once it is gone.
        """
        return self.run.main_thread_cpu()


def supervise_with_judge(run: ChildRun, captures: dict, on_result, deadline_of, judge: JudgeLink | None) -> None:
    """`ChildRun.supervise`, with the judge's pipes too: values relayed to it, its records read as they come."""
    if judge is None or not judge.run.open_fds:
        run.supervise(captures, on_result, deadline_of)
        return
    poller = select.poll()
    run.register(poller)
    judge.run.register(poller)
    judge_fds = set(judge.run.open_fds)
    while run.open_fds:
        remaining = deadline_of() - time.monotonic()
        if remaining <= 0 and not run.killed_by_us:
            run.kill()
        if run.killed_by_us:
            run.enforce_end()
            remaining = 0.05
        judge.relay.flush()
        writing = judge.relay.waiting() and judge.run.go_fd is not None
        if writing:
            poller.register(judge.run.go_fd, select.POLLOUT)
        for fd, _event in poller.poll(max(1, int(min(remaining, 1.0) * 1000) + 1)):
            if fd in run.open_fds:
                run.read_ready(fd, poller, captures, on_result)
            elif fd in judge_fds and fd in judge.run.open_fds:
                before = set(judge.run.open_fds)
                judge.run.read_ready(fd, poller, judge.run.captures, judge.feed)
                if judge.run.fds[fd] == "res" and fd in before and fd not in judge.run.open_fds:
                    judge.lose()  # the judge ended: what it did not answer is refused
        if writing and judge.run.go_fd is not None:
            poller.unregister(judge.run.go_fd)
    for fd in list(judge.run.open_fds):
        try:
            poller.unregister(fd)
        except KeyError:
            pass
    run.finish()
