"""Supervising one job: bounded capture, deadlines, time and status measured outside the job, killing it."""

from __future__ import annotations

import itertools
import json
import os
import select
import signal
import time

from audit_lib.sandbox.zygote.protocol import write_all as _write_all
from audit_lib.sandbox.zygote.state import ZygoteState

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
# How long the cell's init has to end a job the zygote asked it to end, before the zygote kills the init (and with it
# the cell).
END_JOB_GRACE_S = 2.0
_job_numbers = itertools.count(1)
DRAIN_READS = 32  # x 64 KiB per read


class Capture:
    """Keeps the first `cap` bytes of a stream and counts the rest, which is read and dropped."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.kept = bytearray()
        self.dropped = 0

    def total(self) -> int:
        """Bytes seen so far, kept or not: a position in the stream."""
        return len(self.kept) + self.dropped

    def text_between(self, start: int, end: int) -> str:
        """The stream's text from position `start` to `end`, with a note of what of it was not kept."""
        text = self.kept[start:end].decode("utf-8", errors="replace")
        dropped = max(0, end - max(start, len(self.kept)))
        return text + (f"\n[... {dropped} more bytes dropped]" if dropped else "")

    def add(self, chunk: bytes) -> None:
        room = self.cap - len(self.kept)
        if room > 0:
            self.kept += chunk[:room]
        self.dropped += max(0, len(chunk) - max(room, 0))

    def text(self) -> str:
        return self.text_between(0, self.total())


class ChildRun:
    """One job run in the zygote's current cell (see `cell_init`); supervised until the cell reports it over.

    Everything that decides a verdict is measured here, outside the job: wall time (monotonic clock of the zygote),
    CPU time (the job's cpuacct cgroup, else /proc for its live processes and its init's count of the reaped ones),
    whether the worker got through its trusted setup (a control line written before any code runs), its wait status
    (reported by the cell's init after it killed and reaped every other process of the job, which the code cannot
    replace) and out-of-memory kills (the memory cgroup's counter). A job that ends any other way retires its cell.
    """

    def __init__(self, state: ZygoteState, limits: dict, op: str, spec: bytes, start: int = 0, *,
                 judge: bool = False) -> None:
        self.state = state
        self.limits = limits
        self.memory_mb = limits.get("memory_mb")
        # A judge (`tests_job`) runs in a cell of the judges' keeper, beside a job whose cgroup limits are set.
        self.cells = state.judge_cells if judge else state.cells
        self.prepares_cgroup = not judge
        self.number = next(_job_numbers)
        header = json.dumps({
            "op": op, "number": self.number, "limits": limits, "start": start, "uid": state.uid, "cgroup": state.cgroup is not None,
            "nested_userns": state.nested_userns, "package_parent": state.package_parent,
            "tmp_owner": state.uid if state.uid is not None else 0}).encode()
        spec_fd = os.memfd_create("job-spec", os.MFD_CLOEXEC)
        _write_all(spec_fd, spec)
        os.lseek(spec_fd, 0, os.SEEK_SET)
        pipes = [os.pipe() for _ in range(5)]  # out, err, res, ctl (job -> zygote); go (zygote -> job)
        (out_r, out_w), (err_r, err_w), (res_r, res_w), (ctl_r, ctl_w), (go_r, go_w) = pipes
        os.set_blocking(go_w, False)
        try:
            self.cell = self._submit(header, [spec_fd, out_w, err_w, res_w, ctl_w, go_r])
        except BaseException:
            for fd in (out_r, err_r, res_r, ctl_r, go_w):
                os.close(fd)
            raise
        finally:
            for fd in (spec_fd, out_w, err_w, res_w, ctl_w, go_r):
                os.close(fd)
        self.fds = {out_r: "out", err_r: "err", res_r: "res", ctl_r: "ctl"}
        for fd in (out_r, err_r):  # `drain` reads them whenever asked
            os.set_blocking(fd, False)
        self.open_fds = set(self.fds)
        self.go_fd = go_w
        self.ctl = bytearray()
        self.pid = self.cell.init_pid
        self.setup_done = False
        self.exit_status: int | None = None
        self.reported_cpu_s = 0.0
        self.cpu_at_exit: float | None = None
        self.killed_by_us = False
        self.end_asked_at: float | None = None
        self.cell_killed = False
        self.cpu_s = 0.0
        self.last_cpu_s = 0.0
        self.oom_killed = False
        self.hit_memory_limit = False
        self._worker_schedstat: int | None = None  # the worker's main thread's schedstat, once found
        self._init_schedstat: int | None = None
        self._worker_looked_up = False

    def _submit(self, header: bytes, fds: list[int]):
        """Hand the job to a ready cell (limits set, CPU counters cleared just before); a dead cell is replaced once."""
        for attempt in range(2):
            cell = self.cells.ready_cell()
            if self.state.cgroup is not None:
                if self.prepares_cgroup:
                    self.state.cgroup.prepare(int(self.limits["memory_mb"]), int(self.limits["processes"]))
            else:  # the init's own and reaped children's CPU so far belongs to earlier jobs
                self.cpu_base = sum(_stat_cpu(cell.init_pid) or (0.0, 0.0))
            self.started = time.monotonic()
            try:
                cell.submit(header, fds)
                return cell
            except OSError:
                self.cells.retire()
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def memory_failures(self) -> int:
        """How often the job's memory ran out so far (0 without a memory cgroup: no evidence)."""
        return self.state.cgroup.memory_failures() if self.state.cgroup is not None else 0

    def send_go(self) -> bool:
        """Let the job start its next input (call mode); False when the job no longer listens."""
        if self.go_fd is None:
            return False
        try:
            return os.write(self.go_fd, b"g") == 1
        except OSError:
            return False

    def clock(self) -> tuple[float, float]:
        """(monotonic now, CPU seconds the job has used so far), both read here, outside the job."""
        return time.monotonic(), self._cpu_now()

    def _cpu_now(self) -> float:
        if self.state.cgroup is not None:
            return self.state.cgroup.cpu_s()
        # Without cgroups: the init's own and reaped children's CPU plus every live process of the job (each with its
        # own reaped children). Read the init twice: if its children's total moved, a process was reaped in between
        # and is in the second reading already.
        before = _stat_cpu(self.pid)
        live = sum(sum(usage) for usage in map(_stat_cpu, _descendants(self.pid)) if usage is not None)
        after = _stat_cpu(self.pid)
        if after is None or before is None:  # the init is gone: its report is all there is
            return max(self.reported_cpu_s, self.last_cpu_s)
        total = sum(after) - self.cpu_base
        if before[1] == after[1]:  # nothing reaped in between: the live ones are not counted yet
            total += live
        self.last_cpu_s = max(total, self.last_cpu_s)
        return self.last_cpu_s

    def supervise(self, captures: dict, on_result, deadline_of) -> None:
        """Read the pipes until every one is closed, killing the job's namespace when `deadline_of()` passes."""
        poller = select.poll()
        self.register(poller)
        while self.open_fds:
            remaining = deadline_of() - time.monotonic()
            if remaining <= 0 and not self.killed_by_us:
                self.kill()
            if self.killed_by_us:
                self.enforce_end()
                remaining = 0.05
            for fd, _event in poller.poll(max(1, int(min(remaining, 1.0) * 1000) + 1)):
                self.read_ready(fd, poller, captures, on_result)
        self.finish()

    def register(self, poller) -> None:  # noqa: ANN001 - select.poll's type is private
        for fd in self.open_fds:  # a closed one's number may be another pipe's by now
            poller.register(fd, select.POLLIN)
        self._parse_ctl()

    def read_ready(self, fd: int, poller, captures: dict, on_result) -> None:  # noqa: ANN001
        """Read one chunk of a ready pipe of this run: result chunks go to `on_result` (False kills the job)."""
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:  # emptied by `drain` in this round
            return
        name = self.fds[fd]
        if not chunk:
            poller.unregister(fd)
            self.open_fds.discard(fd)
            os.close(fd)
        elif name == "res":
            if not on_result(chunk) and not self.killed_by_us:
                self.kill()
        elif name == "ctl":
            self.ctl += chunk
            self._parse_ctl()
        else:
            captures[name].add(chunk)

    def finish(self) -> None:
        """Once every pipe is closed: the run's times, its memory evidence, and its cell retired if anything was off."""
        self.ended = time.monotonic()
        self.duration = self.ended - self.started
        self.close_go()
        for fd in (self._worker_schedstat, self._init_schedstat):
            if fd is not None:
                os.close(fd)
        self._worker_schedstat = self._init_schedstat = None
        self._worker_looked_up = True  # nothing left to find
        if self.state.cgroup is not None:
            self.cpu_s = self.cpu_at_exit if self.cpu_at_exit is not None else self._cpu_now()
            self.oom_killed = self.state.cgroup.job_was_oom_killed()
            self.hit_memory_limit = self.state.cgroup.hit_memory_limit()
        else:  # the worker's rusage (clock ticks), and never less than what /proc showed while it ran
            self.cpu_s = max(self.reported_cpu_s, self.last_cpu_s)
        # A cell is retired only when its init did not report how the job ended (it died, or would not end the job
        # when asked): a job that ran out of time, or that the memory cgroup cut short, leaves the cell as any job
        # does, so how a job ended is not something the next job in the cell can observe.
        # Not root, the job runs as the init's kernel uid (uid 1000 of its own user namespace maps to it), so it can
        # change what the kernel lets an owner change about its init (priority, limits, OOM score, /proc/1 files):
        # each job then gets a fresh cell, and nothing it did to the init reaches the next job.
        if self.exit_status is None or self.cell_killed or self.state.uid is None:
            self.cells.retire()  # returns once the cell's init, and every process of its namespace, is gone

    def close_go(self) -> None:
        """Close the job's go pipe (once): a worker waiting on it then ends by itself."""
        if self.go_fd is not None:
            os.close(self.go_fd)
            self.go_fd = None

    def drain(self, captures: dict) -> tuple[int, int]:
        """Read what the job wrote to stdout and stderr so far; (stdout, stderr) positions after it.

        At most `DRAIN_READS` reads per stream: more than a full pipe (at most 1 MiB unprivileged), so everything
        written before the caller's line is read, while a job that keeps writing cannot hold the supervisor here
        past its deadline."""
        for fd, name in self.fds.items():
            if name in captures and fd in self.open_fds:
                for _read in range(DRAIN_READS):
                    try:
                        chunk = os.read(fd, 1 << 16)
                    except BlockingIOError:
                        break
                    if not chunk:  # the end: `supervise` closes it
                        break
                    captures[name].add(chunk)
        return captures["out"].total(), captures["err"].total()

    def _parse_ctl(self) -> None:
        while b"\n" in self.ctl:
            line, _, rest = bytes(self.ctl).partition(b"\n")
            self.ctl = bytearray(rest)
            parts = line.split(b" ")
            if parts == [b"S"]:
                self.setup_done = True
            elif parts[0] == b"X" and len(parts) == 4:
                # Written by the init once every process of the job is reaped: the job's CPU time is final now.
                self.exit_status, self.reported_cpu_s = int(parts[1]), float(parts[2])
                if self.state.cgroup is not None:
                    self.cpu_at_exit = self._cpu_now()

    def kill(self) -> None:
        """End the job: its cell's init SIGKILLs every process of the job, then reports as after any job (see
        `enforce_end` for an init that does not). Without cgroups the job's CPU time is read first."""
        if self.state.cgroup is None:
            self._cpu_now()
        self.killed_by_us = True
        self.end_asked_at = time.monotonic()
        if not self.cell.end_job(self.number):
            self._kill_cell()

    def enforce_end(self) -> None:
        """Kill the cell's init when it has not ended the job in time.

        Kill the cell's init when it has not ended the job `END_JOB_GRACE_S` after it was asked: the kernel then kills
        every process of its namespace, and the cell is retired.
        """
        if self.end_asked_at is not None and not self.cell_killed and self.open_fds \
                and time.monotonic() - self.end_asked_at > END_JOB_GRACE_S:
            self._kill_cell()

    def _kill_cell(self) -> None:
        if self.state.cgroup is None:
            self._cpu_now()  # its init, which would report it, dies
        self.cell_killed = True
        self.cell.kill()

    def main_thread_cpu(self) -> float | None:
        """CPU seconds of the worker's main thread and of the cell's init so far.

        CPU seconds of the worker's main thread (the thread that runs the harness and the calls) and of the cell's init
        so far, read in /proc outside them; None once the worker is gone (its last part is not readable).
        """
        if self._init_schedstat is None and not self._worker_looked_up:
            self._init_schedstat = _open_schedstat(self.pid)
        if not self._worker_looked_up:  # until found: the init forks the worker only once its job came
            self._worker_schedstat = _open_worker_schedstat(self.pid)
            self._worker_looked_up = self._worker_schedstat is not None
        if self._worker_schedstat is None:
            return None
        try:
            main = int(os.pread(self._worker_schedstat, 128, 0).split()[0]) / 1e9
        except (OSError, IndexError, ValueError):  # the worker is gone
            os.close(self._worker_schedstat)
            self._worker_schedstat = None
            return None
        try:
            init = int(os.pread(self._init_schedstat, 128, 0).split()[0]) / 1e9 if self._init_schedstat else 0.0
        except (OSError, IndexError, ValueError):
            init = 0.0
        return main + init

    def cpu_so_far(self) -> float:
        """The CPU seconds this run has used up to now, read outside it.

        The CPU seconds this run has used up to now, read outside it: live, from the cgroup or /proc; ended, what was
        read last (its init's report, or the reading taken before a kill).
        """
        if self.state.cgroup is not None:
            return self.state.cgroup.cpu_s()
        if self.open_fds and not self.killed_by_us:
            return self._cpu_now()
        return max(self.reported_cpu_s, self.last_cpu_s)

    def cpu_limit_reached(self) -> bool:
        return self.cpu_s >= float(self.limits["cpu_s"])

    def exit_description(self) -> tuple[str, int | None, str | None]:
        """('exited', code, None), ('signal', None, signal name) or ('lost', None, None) without a report."""
        if self.exit_status is None:
            return "lost", None, None
        status = self.exit_status
        if os.WIFSIGNALED(status):
            number = os.WTERMSIG(status)
            try:
                name = signal.Signals(number).name
            except ValueError:
                name = str(number)
            return "signal", None, name
        return "exited", os.WEXITSTATUS(status), None


def _descendants(pid: int) -> list[int]:
    """Every live descendant of `pid` (all its threads' children, recursively), as /proc shows them now."""
    found: list[int] = []
    pending = [pid]
    while pending:
        parent = pending.pop()
        try:
            tids = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{parent}/task/{tid}/children") as handle:
                    children = [int(child) for child in handle.read().split()]
            except (OSError, ValueError):
                continue
            found.extend(children)
            pending.extend(children)
    return found


def _open_schedstat(pid: int) -> int | None:
    try:
        return os.open(f"/proc/{pid}/task/{pid}/schedstat", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None


def _open_worker_schedstat(init_pid: int) -> int | None:
    """A descriptor of the schedstat of the main thread of the cell's worker, or None.

    A descriptor of the schedstat of the main thread of the cell's worker (PID 2 of the cell's namespace, a child of its
    init), or None when it is not there (any more).
    """
    try:
        with open(f"/proc/{init_pid}/task/{init_pid}/children") as handle:
            children = handle.read().split()
    except OSError:
        return None
    for child in children:
        try:
            with open(f"/proc/{child}/status") as handle:
                namespace_pids = next((line.split()[1:] for line in handle if line.startswith("NSpid:")), [])
            if namespace_pids[-1:] == ["2"]:
                return os.open(f"/proc/{child}/task/{child}/schedstat", os.O_RDONLY | os.O_CLOEXEC)
        except (OSError, StopIteration):
            continue
    return None


def _stat_cpu(pid: int) -> tuple[float, float] | None:
    """(its threads' run time, its reaped children's CPU) in seconds; None when it is gone.

    The run time is its live threads' from schedstat (nanoseconds), or its utime + stime (clock ticks, which also
    hold the threads that have exited) when that is more: a thread that did its work and exited shows in no
    schedstat."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        children = (int(fields[13]) + int(fields[14])) / CLOCK_TICKS  # cutime + cstime
        ticks = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime + stime, exited threads included
    except (OSError, IndexError, ValueError):
        return None
    try:
        running = 0
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/schedstat") as handle:
                running += int(handle.read().split()[0])
        return max(running / 1e9, ticks), children
    except (OSError, IndexError, ValueError):  # exited, not yet reaped: its final utime + stime
        return ticks, children


# ---------------------------------------------------------------------------------------------------- jobs

def status_from_exit(run: ChildRun, timed_out: bool) -> tuple[str, str, str]:
    """A job's status from evidence taken outside it; no exit code the code can choose maps to harness_error."""
    how, code, signame = run.exit_description()
    if timed_out:
        return "timeout", "Timeout", "wall-clock limit reached"
    if not run.setup_done:
        return "harness_error", "SandboxSetupError", "the job could not be set up"
    if run.oom_killed:
        return "memory", "MemoryError", f"out of memory under the {run.memory_mb} MB limit (killed by the kernel)"
    if run.cpu_limit_reached():
        return "timeout", "Timeout", "CPU time limit reached"
    if how == "signal":
        return "killed", signame or "?", f"killed by {signame}"
    if how == "lost":
        return "killed", "SIGKILL", "the job's init was killed"
    return "error", "EarlyExit", f"exited with code {code} before the test completed"
