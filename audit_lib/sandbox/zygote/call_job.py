"""One call-mode request: load once, one result line per input, restart after a kill or crash."""

from __future__ import annotations

import hashlib
import json
import math
import select
import time

from audit_lib.sandbox.zygote.call_judging import JudgeLink, supervise_with_judge
from audit_lib.sandbox.zygote.fast_json import loads_bytes
from audit_lib.sandbox.zygote.input_groups import InputGroups
from audit_lib.sandbox.zygote.protocol import MAX_RESULT_BYTES, read_raw_frames
from audit_lib.sandbox.zygote.state import ZygoteState
from audit_lib.sandbox.zygote.supervise import Capture, ChildRun, status_from_exit as _status_from_exit

FALSE_TIMEOUT_FRACTION = 0.5
# values="preview": a value's tagged JSON up to this size comes back whole, a longer one as its start and its size.
PREVIEW_WHOLE_BYTES = 64 * 1024
PREVIEW_CHARS = 2000
# Values the judge may have waiting before the next input's go waits for it.
JUDGE_BACKLOG = 4
# ... when a failure stops the run (`stop_after_failure`): the next input runs while the judge judges this one's value.
FAST_CHECK_BACKLOG = 1
# After the job, the judge has until the job's total limit, and this much more, to judge the last values.
JUDGE_END_GRACE_S = 5.0


class CallProgress:
    """Parses the child's result lines as they arrive, and tells the child when to start each input.

    The child starts an input only when the supervisor sends it a go byte, which it does after it took the previous
    line's arrival time (or the load marker's), and, when the judge is behind, its record of an earlier value; so
    each input's wall time runs from its own go to its line's arrival, and its CPU time from the
    previous arrival to this one, both measured here by `clock`; the child's own timing field is dropped. A line that
    reaches the supervisor before its input's go was sent is a protocol violation: the harness never does that.

    Work outside an input's window counts toward it: of the job's CPU time since the previous answer, what the
    worker's main thread (which runs the calls) did not use is the work of other threads and processes of the job,
    in the window or between inputs (`own_cpu` reads the main thread, and as root the judge, which shares the job's
    cgroup). It is recorded with the input (`background`) and charged to it: an input whose wall time plus that
    background CPU exceeds its limit is `timeout`, whatever the child said, so work banked in a thread while earlier
    inputs ran cannot make a slow input look instant.

    With input groups (`InputGroups`, shared by the restarts of one job), a group's deadline starts with its first
    input's go and holds across restarts, and the output positions of each line are noted for each group's output.

    When a failure stops the run (`stop_after_failure`, EvalPlus's fast check), the next input runs while the judge
    judges a value (at most one value behind): a failed record ends the child at once (`halt`, or its go pipe closed
    when it is waiting), and `run_call` cuts every line after the first failure, so what ran past it is never seen.
    """

    def __init__(self, first: int, timeouts: list, grace: float, total_deadline: float, load_timeout: float,
                 stop_after_failure: bool = False, judge: JudgeLink | None = None, clock=None, go=None,
                 wall_clock=time.monotonic, groups: InputGroups | None = None, output_mark=None,
                 memory_failures=None, end: int | None = None, stop=None, own_cpu=None, preview: bool = False,
                 halt=None):
        self.groups = groups
        # Ends the child without a kill (its go pipe closed): a stop the judge decides is no signal to the next job,
        # as a retired cell would be.
        self.stop = stop or (lambda: None)
        self.halt = halt or self.stop  # ends the child while it runs an input past a failure (its cell stays)
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
        self.go_held = False  # ... and once the judge's record of the last value came (`stop_after_failure`)
        self.own_cpu = own_cpu or (lambda: None)
        self.last_event, self.last_cpu = self.clock()
        self.last_own = self.own_cpu()
        self.chunk_own = self.last_own
        self.preview = preview
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
        # With a judge, each value line is judged (`call_judging`); with `stop_after_failure` a failed comparison
        # stops the child, as EvalPlus's fast check stops at the first failing input.
        self.judge = judge
        if judge is not None:
            judge.on_record = self._on_record
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
        self.chunk_own = self.own_cpu()
        if self.output_mark is not None:
            self.chunk_mark = self.output_mark()
        for line in complete:
            if not self._accept(line):
                return False
        if self.go_due:
            if rest:
                self.violation = f"data for input {self.next_index} before it was started"
                return False
            if self._judge_behind():
                self.go_held = True  # `_on_record` decides: the next go, or the stop
                self.deadline = math.inf  # no input runs while its go is held (the total deadline still holds)
            else:
                self._start_next()
        return True

    def _judge_behind(self) -> bool:
        """Whether the next go waits for the judge.

        Whether the next go waits for the judge: it has more than `FAST_CHECK_BACKLOG` values to judge when its
        records decide a stop (`stop_after_failure`), else more than `JUDGE_BACKLOG` (the judge's time is the job's, as
        upstream compares in the sample's own process within its overall limit).
        """
        if self.judge is None:
            return False
        return self.judge.backlog() > (FAST_CHECK_BACKLOG if self.stop_after_failure else JUDGE_BACKLOG)

    def _on_record(self, index: int, record: bytes) -> None:
        """Act on the judge's record of value `index`.

        The judge's record of value `index`: with `stop_after_failure`, a failure stops the child (ended at once when
        it runs a later input, whose line `run_call` cuts); a go held for it is sent otherwise.
        """
        if self.done:
            return
        if self.stop_after_failure and _is_failure(record):
            running = self.loaded and not (self.go_due or self.go_held) and self.next_index < self.end
            self.stopped_after_failure = self.stopped_on_mismatch = self.done = True
            self.go_due = self.go_held = False
            (self.halt if running else self.stop)()
        elif self.go_held and not self._judge_behind():
            self.go_held = False
            self._start_next()

    def _accept(self, line: bytes) -> bool:
        if self.done:
            self.violation = "data after the end marker"
            return False
        if not self.loaded:
            if line == b"L ok":
                self.loaded = True
                self.last_cpu, self.last_own = self.chunk_clock[1], self.chunk_own
                self.go_due = True
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
        whole = line.count(b" ") >= 3  # a value line without its value is the parent's `unserializable`: a failure
        self.stopped_after_failure = self.stop_after_failure and (kind != [b"value"] or not whole)
        if kind == [b"value"] and (self.judge is not None or self.preview) and whole:
            index, _kind, measured, payload = line.split(b" ", 3)
            if self.judge is not None:
                self.judge.submit(int(index), payload)
            if self.preview:  # the value stays here: the parent gets the judge's record, or a short stand-in
                self.lines[-1] = b" ".join((index, b"value", measured,
                                            b"null" if self.judge is not None else _preview(payload)))
        self.go_due = not self.stopped_after_failure  # after the last input too: its go lets the child end
        return True

    def _measured(self, line: bytes) -> bytes:
        """The line with the child's timing replaced by ours, and the timeout verdict made here.

        The line with the child's timing replaced by ours (`wall:cpu:background`) and the timeout verdict made here (on
        wall time plus background CPU).
        """
        now, cpu = self.chunk_clock
        wall, cpu_used = max(0.0, now - self.last_event), max(0.0, cpu - self.last_cpu)
        # Unreadable (the worker is gone, its answer sent just before it ended): nothing of this input is charged.
        background = 0.0 if self.chunk_own is None or self.last_own is None \
            else max(0.0, cpu_used - max(0.0, self.chunk_own - self.last_own))
        self.last_event, self.last_cpu, self.last_own = now, cpu, self.chunk_own
        parts = line.split(b" ", 3)
        if len(parts) != 4:
            return line
        index, kind, _child_time, payload = parts
        limit = self.timeouts[self.next_index]
        if wall + background > limit:
            kind, payload = b"timeout", b"null"
        elif kind == b"timeout" and wall < FALSE_TIMEOUT_FRACTION * limit:
            # The child's alarm fires at the limit on its own clock; our clock may start a little later (when we
            # read the previous line), never this much.
            kind, payload = b"exception", b'["FalseTimeout", "reported a timeout well before its time limit"]'
        flags = b":m" if kind == b"exception" and self.memory_failures() > self.failures_before else b""
        return b" ".join((index, kind, f"{wall!r}:{cpu_used!r}:{background!r}".encode() + flags, payload))

    def _start_next(self) -> None:
        """Send the go for the next input: its wall time and its deadline start now.

        Send the go for the next input: its wall time and its deadline start now. After the last input, the go that lets
        the child end (with its end marker).
        """
        self.go_due = False
        now = self.wall_clock()
        if self.next_index >= self.end:
            self.deadline = now + self.grace
            self.go()
            return
        limit = self.timeouts[self.next_index]
        self.deadline = now + limit + self.grace + limit * 0.25
        if self.groups is not None:
            self.deadline = min(self.deadline, self.groups.deadline(self.next_index, now))
            if self.next_index in self.groups.first_set:
                self.failures_before = self.memory_failures()
        self.last_event = now
        self.go()

    def current_deadline(self) -> float:
        return min(self.deadline, self.total_deadline)


def _as_timeout(line: bytes) -> bytes:
    """A result line turned into the supervisor's timeout for its input (its measured times kept)."""
    index, kind, measured, _payload = line.split(b" ", 3)
    if kind == b"timeout":
        return line
    wall, cpu, background = measured.split(b":")[:3]
    return b" ".join((index, b"timeout", b":".join((wall, cpu, background, b"s")), b"null"))


def _is_failure(record: bytes) -> bool:
    """A judge's record that fails its input: a wrong value, or a value the judge refused."""
    try:
        parsed = loads_bytes(record)
    except ValueError:
        return True
    return not isinstance(parsed, dict) or parsed.get("v") == "wrong_value" or "k" in parsed


def _preview(payload: bytes) -> bytes:
    """What the parent gets of a value with values="preview" and no judge.

    What the parent gets of a value with values="preview" and no judge: its tagged JSON when short (the parent decodes
    it), else the start of it with its size and sha256 (never parsed here).
    """
    if len(payload) <= PREVIEW_WHOLE_BYTES:
        return payload
    return json.dumps({"$preview": payload[:PREVIEW_CHARS].decode("utf-8", "replace"), "bytes": len(payload),
                       "sha256": hashlib.sha256(payload).hexdigest()}).encode()


def run_call(state: ZygoteState, request: dict, raw: bytes, protocol_in: int) -> tuple[dict, bytes]:
    """One call job; with `sealed_follows` the judge's spec follows the request, and goes to the judge unread.

    `raw` is the request's JSON text: each job worker reads it, and only it, from a memfd (see `template`).
    """
    judge = None
    if request.get("sealed_follows"):
        spec, _blob = read_raw_frames(protocol_in)
        judge = JudgeLink(state, spec, float(request["total_timeout"]))
    until = time.monotonic() + float(request["total_timeout"]) + JUDGE_END_GRACE_S
    try:
        header, blob = _run_call_children(state, request, raw, judge)
    finally:
        if judge is not None:
            judge.finish(until)
    if judge is not None:
        if request.get("stop_after_failure"):
            header, blob = cut_after_first_failure(header, blob, judge.records)
        header["judged"] = {str(index): loads_bytes(record) for index, record in judge.records.items()}
    return header, blob


def cut_after_first_failure(header: dict, blob: bytes, records: dict[int, bytes]) -> tuple[dict, bytes]:
    """A fast check's result as if it had stopped at its first failed value: the lines after it cut.

    The next input ran while the judge judged a value (`FAST_CHECK_BACKLOG`); when that value failed, the lines of
    what ran after it (a value, an exception, the supervisor's record of a crash or a kill) are dropped, and so is
    how the job ended after it: the run stopped at the failure, with its status `pass`, as a run that waited for each
    record would have.
    """
    failed = [index for index, record in records.items() if _is_failure(record)]
    if not failed:
        return header, blob
    first = min(failed)
    lines = blob.split(b"\n") if blob else []
    kept = [line for line in lines if int(line.split(b" ", 1)[0]) <= first]
    header = {**header, "stopped_on_mismatch": True}
    if len(kept) < len(lines) or header.get("status") != "pass":
        header.update(status="pass", load_error=None)
    return header, b"\n".join(kept)


def _own_cpu(run: ChildRun, judge: JudgeLink | None, state: ZygoteState):
    """What of the job's CPU reading is not background work.

    What of the job's CPU reading is not background work: its worker's main thread and its cell's init, and as root (the
    judge in the job's cgroup) the judge's; None when one of them cannot be read any more.
    """
    if judge is None or state.cgroup is None:
        return run.main_thread_cpu

    def own() -> float | None:
        main, judged = run.main_thread_cpu(), judge.cpu_s()
        return None if main is None or (judged is None and not judge.lost) else main + (judged or 0.0)
    return own


def _run_call_children(state: ZygoteState, request: dict, raw: bytes, judge: JudgeLink | None) -> tuple[dict, bytes]:
    limits = request["limits"]
    timeouts = [float(t) for t in request["timeouts"]]
    total_deadline = time.monotonic() + float(request["total_timeout"])
    grace = float(request.get("grace_s", 1.0))
    captures = {"out": Capture(limits["output_bytes"]), "err": Capture(limits["output_bytes"])}
    lines: list[bytes] = []
    start, restarts, status, load_error, started = 0, 0, "pass", None, time.monotonic()
    stop_after_failure = bool(request.get("stop_after_failure", False))
    preview = request.get("values") == "preview"
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
                                halt=lambda run=run: None if run.killed_by_us or not run.open_fds else run.kill(),
                                output_mark=None if groups is None else lambda run=run: run.drain(captures),
                                memory_failures=run.memory_failures, end=end, own_cpu=_own_cpu(run, judge, state),
                                preview=preview)
        supervise_with_judge(run, captures, progress.feed, progress.current_deadline, judge)
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
        if progress.stopped_after_failure:  # ended after its first failure (fast check): nothing after it runs
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
        cpu_used = max(0.0, run.cpu_s - progress.last_cpu)
        background = 0.0  # the worker is gone: its main thread's part cannot be told from the rest
        measured = f"{max(0.0, run.ended - progress.last_event)!r}:{cpu_used!r}:{background!r}"
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
