"""Supervising one forked job child: bounded capture, deadlines, killing every descendant."""

from __future__ import annotations

import os
import select
import signal
import time
import traceback

from audit_lib.sandbox.zygote.child import _setup_child
from audit_lib.sandbox.zygote.protocol import CHILD_HARNESS_CRASHED, CHILD_OUT_OF_MEMORY, CHILD_SETUP_FAILED
from audit_lib.sandbox.zygote.state import ZygoteState


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
    """One forked child and its pipes, supervised until it and every descendant are gone."""

    def __init__(self, state: ZygoteState, limits: dict, target, args: tuple) -> None:
        state.job_counter += 1
        self.state = state
        self.memory_mb = limits.get("memory_mb")
        self.tmpdir = os.path.join(state.tmp_root, f"job-{state.job_counter}")
        os.mkdir(self.tmpdir, 0o700)
        if state.uid is not None:
            os.chown(self.tmpdir, state.uid, state.uid)
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        res_r, res_w = os.pipe()
        self.started = time.monotonic()
        pid = os.fork()
        if pid == 0:  # child
            exit_code = CHILD_SETUP_FAILED
            try:
                os.close(out_r), os.close(err_r), os.close(res_r)
                _setup_child(state, self.tmpdir, limits, out_w, err_w, res_w)
                exit_code = CHILD_HARNESS_CRASHED
                target(*args)
            except MemoryError:
                # The harness itself (encoding a result, building a traceback) hit the memory cap.
                exit_code = CHILD_OUT_OF_MEMORY if exit_code == CHILD_HARNESS_CRASHED else exit_code
            except BaseException:  # noqa: BLE001
                try:
                    os.write(2, traceback.format_exc().encode()[-4000:])
                except BaseException:
                    pass
            os._exit(exit_code)
        self.pid = pid
        for fd in (out_w, err_w, res_w):
            os.close(fd)
        self.pidfd = os.pidfd_open(pid)
        self.fds = {out_r: "out", err_r: "err", res_r: "res"}
        self.exit_status: int | None = None
        self.killed_by_us = False

    def supervise(self, captures: dict, on_result, deadline_of) -> None:
        """Read the pipes until EOF and the child exits, killing everything when `deadline_of()` passes."""
        poller = select.poll()
        for fd in self.fds:
            poller.register(fd, select.POLLIN)
        poller.register(self.pidfd, select.POLLIN)
        open_fds = set(self.fds)
        while open_fds or self.exit_status is None:
            remaining = deadline_of() - time.monotonic()
            if remaining <= 0 and not self.killed_by_us:
                self.kill_all()
                self.killed_by_us = True
                remaining = 0.05
            for fd, _event in poller.poll(max(1, int(min(remaining, 1.0) * 1000) + 1)):
                if fd == self.pidfd:
                    poller.unregister(fd)
                    self._reap_main()
                    continue
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    poller.unregister(fd)
                    open_fds.discard(fd)
                    os.close(fd)
                elif self.fds[fd] == "res":
                    if not on_result(chunk):
                        self.kill_all()
                        self.killed_by_us = True
                else:
                    captures[self.fds[fd]].add(chunk)
            if self.killed_by_us and self.exit_status is None:
                self._reap_main()
        for fd in open_fds:
            os.close(fd)
        os.close(self.pidfd)
        self.duration = time.monotonic() - self.started
        _remove_tree(self.tmpdir)

    def _reap_main(self) -> None:
        if self.exit_status is None:
            _pid, status = os.waitpid(self.pid, 0)
            self.exit_status = status
            # Anything the job left behind (daemons, setsid'd grandchildren) now belongs to us as subreaper.
            self.kill_descendants()

    def kill_all(self) -> None:
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except OSError:
            pass
        self.kill_descendants()

    def kill_descendants(self) -> None:
        """SIGKILL and reap every child of the zygote except the main child, until none is left."""
        for _round in range(10000):
            others = [pid for pid in _children(self.state) if pid != self.pid and pid not in self.state.protected_pids]
            if not others:
                return
            for pid in others:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            for pid in others:
                try:
                    os.waitpid(pid, 0)
                except ChildProcessError:
                    pass

    def exit_description(self) -> tuple[str, int | None, str | None]:
        """('exited', code, None) or ('signal', None, signal name)."""
        status = self.exit_status or 0
        if os.WIFSIGNALED(status):
            number = os.WTERMSIG(status)
            try:
                name = signal.Signals(number).name
            except ValueError:
                name = str(number)
            return "signal", None, name
        return "exited", os.WEXITSTATUS(status), None


def _children(state: ZygoteState) -> list[int]:
    if not state.has_children_file:
        return []
    try:
        with open(state.tid_children) as handle:
            return [int(pid) for pid in handle.read().split()]
    except OSError:
        return []


def _remove_tree(path: str) -> None:
    import shutil  # noqa: PLC0415 - only the zygote needs it, after the child is gone
    shutil.rmtree(path, ignore_errors=True)


# ---------------------------------------------------------------------------------------------------- jobs

def _status_from_exit(run: ChildRun, timed_out: bool) -> tuple[str, str, str]:
    how, code, signame = run.exit_description()
    if timed_out or signame == "SIGXCPU":
        return "timeout", "Timeout", "wall-clock limit reached" if timed_out else "CPU time limit reached"
    if how == "signal":
        return "killed", signame or "?", f"killed by {signame}"
    if code == CHILD_SETUP_FAILED:
        return "harness_error", "SandboxSetupError", "the child could not be set up"
    if code == CHILD_OUT_OF_MEMORY:
        return "memory", "MemoryError", f"out of memory under the {run.memory_mb} MB limit"
    if code == CHILD_HARNESS_CRASHED:
        return "harness_error", "SandboxHarnessCrash", "the harness inside the child crashed"
    return "error", "EarlyExit", f"exited with code {code} before the test completed"
