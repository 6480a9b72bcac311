"""One call-mode request: load once, one result line per input, restart after a kill or crash."""

from __future__ import annotations

import bisect
import json
import time

from audit_lib.sandbox.zygote.judge import Judge
from audit_lib.sandbox.zygote.protocol import MAX_RESULT_BYTES
from audit_lib.sandbox.zygote.state import ZygoteState
from audit_lib.sandbox.zygote.supervise import Capture, ChildRun, status_from_exit as _status_from_exit

FALSE_TIMEOUT_FRACTION = 0.5


class CallProgress:
    """Parses the child's result lines as they arrive, and tells the child when to start each input.

    The child starts an input only when the supervisor sends it a go byte, which it does after it took the previous
    line's arrival time (or the load marker's) and the judge's verdict on it; so each input's wall time runs from
    its own go to its line's arrival, and its CPU time from the previous arrival to this one, both measured here by
    `clock`, and the supervisor's own work between the two is charged to no input; the child's own timing field is
    dropped. A line that reaches the supervisor before its input's go was sent (sent together with
    the previous line) is a protocol violation: the harness never does that. An input whose wall time here exceeds
    its limit is `timeout`, whatever the child said.

    With input groups (`InputGroups`, shared by the restarts of one job), a group's deadline starts with its first
    input's go and holds across restarts, and the output positions of each line are noted for each group's output.
    """

    def __init__(self, first: int, timeouts: list, grace: float, total_deadline: float, load_timeout: float,
                 stop_after_failure: bool = False, judge: Judge | None = None, clock=None, go=None,
                 wall_clock=time.monotonic, groups: InputGroups | None = None, output_mark=None,
                 memory_failures=None, end: int | None = None, stop=None):
        self.groups = groups
        # Ends the child without a kill (its go pipe closed): a stop the judge decides is no signal to the next job,
        # as a retired cell would be.
        self.stop = stop or (lambda: None)
        self.end = len(timeouts) if end is None else end  # this run answers inputs [first, end): with groups, one
        # group's (each group runs in a worker of its own)
        # How often the job's memory ran out (cgroup: refused charges, OOM kills), read at each group's start and at
        # each exception line: an exception raised while it grew is marked (`:m`), the evidence a raised MemoryError
        # needs to be `memory`.
        self.memory_failures = memory_failures or (lambda: 0)
        self.failures_before = 0
        # With groups: (stdout, stderr) positions once a chunk's output is read, so each group gets its own output.
        self.output_mark = output_mark
        self.chunk_mark = (0, 0)
        self.next_index = first
        self.loaded = False
        self.load_failure: dict | None = None
        self.done = False
        self.lines: list[bytes] = []
        self.partial = bytearray()
        self.size = 0
        self.timeouts, self.grace, self.total_deadline = timeouts, grace, total_deadline
        self.clock = clock or (lambda: (time.monotonic(), 0.0))
        self.go = go or (lambda: True)
        self.wall_clock = wall_clock
        self.go_due = False  # an input is due to start: its go is sent once this chunk is taken (and judged)
        self.last_event, self.last_cpu = self.clock()
        self.deadline = self.last_event + load_timeout + grace
        if groups is not None and first < len(timeouts):
            # A group's time limit covers its load too, as a process of its own running the snippet would: its
            # deadline starts with its first run's load (and holds across restarts).
            self.deadline = min(self.deadline, groups.deadline(first, self.last_event))
        self.load_timeout = load_timeout
        self.started = self.last_event
        self.chunk_clock: tuple[float, float] | None = None
        self.violation: str | None = None
        self.stop_after_failure = stop_after_failure
        self.stopped_after_failure = False
        # With a judge, a value line that differs from its expected value stops the child (see `Judge`).
        self.judge = judge
        self.awaiting_judgement: list[tuple[int, bytes]] = []  # (position in self.lines, line)
        self.stopped_on_mismatch = False

    def feed(self, chunk: bytes) -> bool:
        """Take a chunk of the result pipe; False asks the supervisor to kill the child now."""
        if self.stopped_on_mismatch:
            return True  # the child is being killed; what it still sent is not needed
        self.size += len(chunk)
        if self.size > MAX_RESULT_BYTES:
            self.violation = "result channel exceeded its size cap"
            return False
        if b"\n" not in chunk:  # part of a long line: appending in place keeps a huge value O(size)
            self.partial += chunk
            return True
        self.partial += chunk
        *complete, rest = bytes(self.partial).split(b"\n")
        self.partial = bytearray(rest)
        self.chunk_clock = self.clock()
        if self.output_mark is not None:
            self.chunk_mark = self.output_mark()
        for line in complete:
            if not self._accept(line):
                return False
        if not self._judge_pending():
            return False
        if self.go_due:
            if rest:
                self.violation = f"data for input {self.next_index} before it was started"
                return False
            self._start_next()
        return True

    def _judge_pending(self) -> bool:
        """Ask the judge about this chunk's value lines; keep lines up to the first mismatch and stop there."""
        if not self.awaiting_judgement:
            return True
        pending, self.awaiting_judgement = self.awaiting_judgement, []
        verdicts = self.judge.mismatches([line for _position, line in pending])
        first = next((position for (position, _line), differs in zip(pending, verdicts) if differs), None)
        if first is None:
            return True
        del self.lines[first + 1:]  # inputs after the first mismatch count as not run, however fast they were
        self.next_index = int(self.lines[first].split(b" ", 1)[0]) + 1
        self.stopped_after_failure = self.stopped_on_mismatch = self.done = True
        self.go_due = False
        self.stop()
        return True

    def _accept(self, line: bytes) -> bool:
        if self.done:
            self.violation = "data after the end marker"
            return False
        if not self.loaded:
            if line == b"L ok":
                self.loaded = True
                self.last_cpu = self.chunk_clock[1]
                self.go_due = self.next_index < self.end
                return True
            if line.startswith(b"L "):
                try:
                    self.load_failure = json.loads(line[2:])
                except (ValueError, RecursionError):  # written by the code (fd 3 is reachable): any text at all
                    self.load_failure = {"kind": "error", "exc_type": "?", "exc_message": "unreadable load error"}
                if not isinstance(self.load_failure, dict) or not {"kind", "exc_type", "exc_message"} <= set(
                        self.load_failure):
                    self.load_failure = {"kind": "error", "exc_type": "?", "exc_message": "unreadable load error"}
                if self.load_failure["kind"] == "timeout" and self.chunk_clock[0] - self.started < self.load_timeout:
                    self.load_failure["kind"] = "error"  # a timeout is the supervisor's word, not the child's
                return True
            self.violation = "unexpected line before the load marker"
            return False
        if line == b"D":
            self.done = self.next_index == self.end or self.stopped_after_failure
            if not self.done:
                self.violation = "end marker before every input was answered"
            return self.done
        head = line.split(b" ", 1)[0]
        if head != str(self.next_index).encode():
            self.violation = f"result for input {head[:20]!r} when {self.next_index} was expected"
            return False
        if self.go_due:
            self.violation = f"result for input {self.next_index} before it was started"
            return False
        line = self._measured(line)
        self.lines.append(line)
        if self.groups is not None:
            self.groups.marks[self.next_index] = self.chunk_mark
        self.next_index += 1
        kind = line.split(b" ", 2)[1:2]
        self.stopped_after_failure = self.stop_after_failure and kind != [b"value"]
        if self.judge is not None and kind == [b"value"]:
            self.awaiting_judgement.append((len(self.lines) - 1, line))
        self.go_due = self.next_index < self.end and not self.stopped_after_failure
        return True

    def _measured(self, line: bytes) -> bytes:
        """The line with the child's timing replaced by ours (`wall:cpu`) and the timeout verdict made here."""
        now, cpu = self.chunk_clock
        wall, cpu_used = max(0.0, now - self.last_event), max(0.0, cpu - self.last_cpu)
        self.last_event, self.last_cpu = now, cpu
        parts = line.split(b" ", 3)
        if len(parts) != 4:
            return line
        index, kind, _child_time, payload = parts
        limit = self.timeouts[self.next_index]
        if wall > limit:
            kind, payload = b"timeout", b"null"
        elif kind == b"timeout" and wall < FALSE_TIMEOUT_FRACTION * limit:
            # The child's alarm fires at the limit on its own clock; our clock may start a little later (when we
            # read the previous line), never this much.
            kind, payload = b"exception", b'["FalseTimeout", "reported a timeout well before its time limit"]'
        flags = b":m" if kind == b"exception" and self.memory_failures() > self.failures_before else b""
        return b" ".join((index, kind, f"{wall!r}:{cpu_used!r}".encode() + flags, payload))

    def _start_next(self) -> None:
        """Send the go for the next input: its wall time and its deadline start now."""
        self.go_due = False
        limit = self.timeouts[self.next_index]
        now = self.wall_clock()
        self.deadline = now + limit + self.grace + limit * 0.25
        if self.groups is not None:
            self.deadline = min(self.deadline, self.groups.deadline(self.next_index, now))
            if self.next_index in self.groups.first_set:
                self.failures_before = self.memory_failures()
        self.last_event = now
        self.go()

    def current_deadline(self) -> float:
        return min(self.deadline, self.total_deadline)


class InputGroups:
    """The inputs' groups (`call_function(input_groups=...)`): each group's first input and the time limit of all its inputs
    together, and each group's deadline once its first run started (its load counts)."""

    def __init__(self, firsts: list[int], timeouts: list[float], count: int) -> None:
        if len(firsts) != len(timeouts) or firsts != sorted(set(firsts)) or (firsts and firsts[0] != 0) \
                or any(not 0 <= first < count for first in firsts):
            raise ValueError("input groups: one increasing first input per group, from 0, and one limit each")
        self.firsts, self.timeouts = firsts, timeouts
        self.first_set = frozenset(firsts)
        self.deadlines: dict[int, float] = {}
        # (stdout, stderr) positions after each answered input's output.
        self.marks: dict[int, tuple[int, int]] = {}
        # Each group's CPU seconds: the sum of its runs' (each run a worker of its own, read once all its processes
        # are gone: its load, its calls and its exit).
        self.cpu = [0.0] * len(firsts)

    def group_of(self, index: int) -> int:
        return bisect.bisect_right(self.firsts, index) - 1

    def deadline(self, index: int, now: float) -> float:
        group = self.group_of(index)
        return self.deadlines.setdefault(group, now + self.timeouts[group])

    def passed(self, index: int, now: float) -> bool:
        """Whether the group of `index` is out of time (its deadline was set and is over)."""
        deadline = self.deadlines.get(self.group_of(index))
        return deadline is not None and now >= deadline

    def outputs(self, captures: dict, count: int) -> list[list[str]]:
        """[stdout, stderr] of each group: what was written from the end of the previous group's last answered input
        to the end of its own (each group loads the program itself, so its load's output is in it too)."""
        outputs = []
        previous = (0, 0)
        for group, first in enumerate(self.firsts):
            end = self.firsts[group + 1] if group + 1 < len(self.firsts) else count
            answered = [self.marks[index] for index in range(first, end) if index in self.marks]
            until = answered[-1] if answered else previous
            outputs.append([captures[name].text_between(since, upto)
                            for name, since, upto in (("out", previous[0], until[0]), ("err", previous[1], until[1]))])
            previous = until
        return outputs

    def next_first(self, index: int, count: int) -> int:
        """The first input of the group after the one of `index` (`count` after the last group)."""
        group = self.group_of(index) + 1
        return self.firsts[group] if group < len(self.firsts) else count


def _as_timeout(line: bytes) -> bytes:
    """A result line turned into the supervisor's timeout for its input (its measured times kept)."""
    index, kind, measured, _payload = line.split(b" ", 3)
    if kind == b"timeout":
        return line
    wall, cpu = measured.split(b":")[:2]
    return b" ".join((index, b"timeout", wall + b":" + cpu + b":s", b"null"))


def run_call(state: ZygoteState, request: dict, raw: bytes, protocol_in: int) -> tuple[dict, bytes]:
    """One call job; a sealed message with expected values follows the request when `sealed_follows` is set.

    `raw` is the request's JSON text: each job worker reads it, and only it, from a memfd (see `template`).
    """
    judge = Judge(state, protocol_in) if request.get("sealed_follows") else None
    try:
        return _run_call_children(state, request, raw, judge)
    finally:
        if judge is not None:
            judge.close()


def _run_call_children(state: ZygoteState, request: dict, raw: bytes, judge: Judge | None) -> tuple[dict, bytes]:
    limits = request["limits"]
    timeouts = [float(t) for t in request["timeouts"]]
    total_deadline = time.monotonic() + float(request["total_timeout"])
    grace = float(request.get("grace_s", 1.0))
    captures = {"out": Capture(limits["output_bytes"]), "err": Capture(limits["output_bytes"])}
    lines: list[bytes] = []
    start, restarts, status, load_error, started = 0, 0, "pass", None, time.monotonic()
    stop_after_failure = bool(request.get("stop_after_failure", False))
    stopped_on_mismatch = False
    cpu_total = 0.0
    groups = InputGroups([int(first) for first in request["groups"]], [float(t) for t in request["group_timeouts"]],
                         len(timeouts)) if request.get("groups") is not None else None
    while start < len(timeouts) or (start == 0 and not timeouts):
        # With groups, each run is one group's (the rest of it after a crash): a worker of its own, forked from the
        # cell's init like any job's (fresh /tmp, /dev/shm and IPC namespace), so nothing one group's code does
        # reaches the next.
        end = groups.next_first(start, len(timeouts)) if groups is not None else None
        run = ChildRun(state, limits, "call", raw, start)
        progress = CallProgress(start, timeouts, grace, total_deadline, float(request["load_timeout"]),
                                stop_after_failure, judge, run.clock, run.send_go, groups=groups, stop=run.close_go,
                                output_mark=None if groups is None else lambda run=run: run.drain(captures),
                                memory_failures=run.memory_failures, end=end)
        run.supervise(captures, progress.feed, progress.current_deadline)
        cpu_total += run.cpu_s
        if groups is not None:
            groups.cpu[groups.group_of(start)] += run.cpu_s
        lines.extend(progress.lines)
        stopped_on_mismatch = progress.stopped_on_mismatch
        if progress.violation:
            status, load_error = "error", f"ProtocolViolation: {progress.violation}"
            break
        if progress.done:
            if end is not None and end < len(timeouts):
                start = end  # the next group
                continue
            break
        over_total = time.monotonic() >= total_deadline
        if progress.load_failure is not None or not progress.loaded:
            failure = progress.load_failure
            if failure is not None:
                evidence = run.oom_killed or run.hit_memory_limit
                status = "timeout" if failure["kind"] == "timeout" else (
                    "memory" if failure["exc_type"] == "MemoryError" and evidence else "error")
                load_error = f"{failure['exc_type']}: {failure['exc_message']}"
            else:
                status, error_type, message = _status_from_exit(run, run.killed_by_us)
                load_error = f"{error_type}: {message}"
                if status == "harness_error":
                    load_error += ": " + captures["err"].text()[-2000:]
            if restarts:
                load_error = f"after restart {restarts}: {load_error}"
            break
        if progress.next_index >= progress.end:
            # Every input of this run was answered, then the process ended without its end marker. Killed by us, it
            # ran past its group's deadline: that group timed out (its process did not finish in time, as a process
            # of its own running the snippet would not) and the next group runs as usual. Ended by itself, with
            # groups, the request as a whole is a violation (the caller runs each snippet alone); without groups
            # there is nothing left to charge it to.
            if groups is not None and run.killed_by_us:
                lines[-1] = _as_timeout(lines[-1])
                if end is not None and end < len(timeouts) and not over_total:
                    start = end
                    continue
            elif groups is not None:
                status = "error"
                load_error = "ProtocolViolation: the process ended after its last answer, without its end marker"
            break
        # The child died or was killed while running input `next_index`: record it, then carry on after it.
        index = progress.next_index
        measured = f"{max(0.0, run.ended - progress.last_event)!r}:{max(0.0, run.cpu_s - progress.last_cpu)!r}"
        if groups is not None:
            groups.marks[index] = run.drain(captures)
        # `:s` marks the supervisor's own record of how the process ended: the child's lines never carry it (their
        # timing field is replaced by `_measured`), so an exception class the code names "MemoryError" or
        # "SIGKILL" is never taken for this evidence.
        if run.killed_by_us:
            lines.append(f"{index} timeout {measured}:s null".encode())
        else:
            _status, error_type, message = _status_from_exit(run, False)
            payload = json.dumps(["ProcessExit" if error_type == "EarlyExit" else error_type, message])
            lines.append(f"{index} exception {measured}:s {payload}".encode())
        start = index + 1
        if groups is not None and run.killed_by_us and groups.passed(index, run.ended):
            start = groups.next_first(index, len(timeouts))  # the rest of an out-of-time group is not run
        if over_total:
            status = "timeout"
            break
        if stop_after_failure:  # the killed or crashed input is the sample's first failure
            break
        restarts += 1
        if not timeouts:
            break
    header = {"status": status, "load_error": load_error, "stdout": captures["out"].text(),
              "stderr": captures["err"].text(), "duration_s": time.monotonic() - started, "restarts": restarts,
              "stopped_on_mismatch": stopped_on_mismatch, "cpu_s": cpu_total}
    if groups is not None:
        header["group_output"] = groups.outputs(captures, len(timeouts))
        header["group_cpu_s"] = groups.cpu
    return header, b"\n".join(lines)
