"""Supervising one job: bounded capture, deadlines, time and status measured outside the job, killing it."""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import time

from audit_lib.sandbox.zygote.protocol import _write_all
from audit_lib.sandbox.zygote.state import ZygoteState

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


class Capture:
    """Keeps the first `cap` bytes of a stream and counts the rest, which is read and dropped."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.kept = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        room = self.cap - len(self.kept)
        if room > 0:
            self.kept += chunk[:room]
        self.dropped += max(0, len(chunk) - max(room, 0))

    def text(self) -> str:
        text = self.kept.decode("utf-8", errors="replace")
        return text + (f"\n[... {self.dropped} more bytes dropped]" if self.dropped else "")


class ChildRun:
    """One job run: the template starts it (leader -> init -> worker); supervised until its namespace is gone.

    Everything that decides a verdict is measured here, outside the job: wall time (monotonic clock of the zygote),
    CPU time (the job's cpuacct cgroup, else the worker's /proc stat and its init's wait4), whether the worker
    got through its trusted setup (a control line written before any code runs), its wait status (reported by the
    job's init, which the code cannot replace) and out-of-memory kills (the memory cgroup's counter).
    """

    def __init__(self, state: ZygoteState, limits: dict, op: str, spec: bytes, start: int = 0) -> None:
        self.state = state
        self.limits = limits
        self.memory_mb = limits.get("memory_mb")
        if state.cgroup is not None:
            state.cgroup.prepare(int(limits["memory_mb"]), int(limits["processes"]))
        header = {"op": op, "limits": limits, "start": start, "uid": state.uid, "cgroup": state.cgroup is not None,
                  "nested_userns": state.nested_userns, "package_parent": state.package_parent,
                  "tmp_owner": state.uid if state.uid is not None else 0}
        spec_fd = os.memfd_create("job-spec", os.MFD_CLOEXEC)
        _write_all(spec_fd, spec)
        os.lseek(spec_fd, 0, os.SEEK_SET)
        pipes = [os.pipe() for _ in range(4)]  # out, err, res, ctl
        self.started = time.monotonic()
        try:
            socket.send_fds(state.template_sock, [json.dumps(header).encode()],
                            [spec_fd] + [w for _r, w in pipes])
        finally:
            os.close(spec_fd)
            for _r, w in pipes:
                os.close(w)
        (out_r, _), (err_r, _), (res_r, _), (ctl_r, _) = pipes
        self.fds = {out_r: "out", err_r: "err", res_r: "res", ctl_r: "ctl"}
        self.ctl = bytearray()
        try:
            self.pid = self._read_init_pid(ctl_r)
        except RuntimeError as exc:
            raise RuntimeError(f"{exc}: {_drain(err_r)}") from None
        try:
            self.pidfd: int | None = os.pidfd_open(self.pid)
        except ProcessLookupError:  # already over: its leader reaps it only once it and its namespace are gone
            self.pidfd = None
        self.worker_pid: int | None = None
        self.setup_done = False
        self.exit_status: int | None = None
        self.reported_cpu_s = 0.0
        self.killed_by_us = False
        self.cpu_s = 0.0
        self.last_cpu_s = 0.0
        self.oom_killed = False
        self.hit_memory_limit = False

    def _read_init_pid(self, ctl_r: int) -> int:
        """The init's pid, from the leader's `P <pid>` line (the worker's `S` may come first; it is kept)."""
        deadline = time.monotonic() + 30
        while True:
            lines = bytes(self.ctl).split(b"\n")
            for position, line in enumerate(lines[:-1]):
                if line.startswith(b"P "):
                    del lines[position]
                    self.ctl = bytearray(b"\n".join(lines))
                    return int(line[2:])
            ready, _, _ = select.select([ctl_r], [], [], max(0.0, deadline - time.monotonic()))
            chunk = os.read(ctl_r, 4096) if ready else b""
            if not chunk:
                raise RuntimeError("the sandbox template did not start the job")
            self.ctl += chunk

    def clock(self) -> tuple[float, float]:
        """(monotonic now, CPU seconds the job has used so far), both read here, outside the job."""
        return time.monotonic(), self._cpu_now()

    def _cpu_now(self) -> float:
        if self.state.cgroup is not None:
            return self.state.cgroup.cpu_s()
        # Without cgroups: the init's own and reaped children's CPU plus the live worker's. Read the init twice: if
        # its children's total moved, the worker was reaped in between and is in the second reading already.
        if self.worker_pid is None:
            try:
                with open(f"/proc/{self.pid}/task/{self.pid}/children") as handle:
                    self.worker_pid = int(handle.read().split()[0])
            except (OSError, IndexError, ValueError):
                return max(self.reported_cpu_s, self.last_cpu_s)
        before = _stat_cpu(self.pid)
        worker = _stat_cpu(self.worker_pid)
        after = _stat_cpu(self.pid)
        if after is None or before is None:  # the init is gone: its report (the worker's rusage) is all there is
            return max(self.reported_cpu_s, self.last_cpu_s)
        total = sum(after)
        if worker is not None and before[1] == after[1]:  # not reaped in between: the worker is not counted yet
            total += sum(worker)
        self.last_cpu_s = max(total, self.last_cpu_s)
        return self.last_cpu_s

    def supervise(self, captures: dict, on_result, deadline_of) -> None:
        """Read the pipes until every one is closed, killing the job's namespace when `deadline_of()` passes."""
        poller = select.poll()
        for fd in self.fds:
            poller.register(fd, select.POLLIN)
        open_fds = set(self.fds)
        self._parse_ctl()
        while open_fds:
            remaining = deadline_of() - time.monotonic()
            if remaining <= 0 and not self.killed_by_us:
                self.kill()
                remaining = 0.05
            for fd, _event in poller.poll(max(1, int(min(remaining, 1.0) * 1000) + 1)):
                chunk = os.read(fd, 1 << 16)
                name = self.fds[fd]
                if not chunk:
                    poller.unregister(fd)
                    open_fds.discard(fd)
                    os.close(fd)
                elif name == "res":
                    if not on_result(chunk) and not self.killed_by_us:
                        self.kill()
                elif name == "ctl":
                    self.ctl += chunk
                    self._parse_ctl()
                else:
                    captures[name].add(chunk)
        self.ended = time.monotonic()
        self.duration = self.ended - self.started
        self.cpu_s = self._cpu_now() if self.state.cgroup is not None else self.reported_cpu_s
        if self.pidfd is not None:
            # The init turns zombie only after every other task of its namespace is gone: wait for that.
            if not select.select([self.pidfd], [], [], 5.0)[0]:
                self.kill()
                select.select([self.pidfd], [], [], 5.0)
            os.close(self.pidfd)
        if self.state.cgroup is not None:
            self.oom_killed = self.state.cgroup.job_was_oom_killed()
            self.hit_memory_limit = self.state.cgroup.hit_memory_limit()

    def _parse_ctl(self) -> None:
        while b"\n" in self.ctl:
            line, _, rest = bytes(self.ctl).partition(b"\n")
            self.ctl = bytearray(rest)
            parts = line.split(b" ")
            if parts == [b"S"]:
                self.setup_done = True
            elif parts[0] == b"X" and len(parts) == 4:
                self.exit_status, self.reported_cpu_s = int(parts[1]), float(parts[2])

    def kill(self) -> None:
        """SIGKILL the job's init: the kernel then kills every process of its PID namespace."""
        self.killed_by_us = True
        if self.pidfd is None:
            return
        try:
            signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
        except OSError:
            pass

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


def _stat_cpu(pid: int) -> tuple[float, float] | None:
    """(its threads' run time from schedstat, its reaped children's CPU) in seconds; None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
        children = (int(fields[13]) + int(fields[14])) / CLOCK_TICKS  # cutime + cstime
    except (OSError, IndexError, ValueError):
        return None
    try:
        running = 0
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/schedstat") as handle:
                running += int(handle.read().split()[0])
        return running / 1e9, children
    except (OSError, IndexError, ValueError):  # exited, not yet reaped: its final utime + stime, in clock ticks
        return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS, children


def _drain(fd: int) -> str:
    ready, _, _ = select.select([fd], [], [], 0.5)
    return os.read(fd, 8192).decode(errors="replace") if ready else ""


# ---------------------------------------------------------------------------------------------------- jobs

def _status_from_exit(run: ChildRun, timed_out: bool) -> tuple[str, str, str]:
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
