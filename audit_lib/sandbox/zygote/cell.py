"""The zygote's side of job cells: a ready cell per job; a cell is retired only when its init fails (stdlib only).

A cell (`cell_init`) serves this zygote's jobs one after another in one PID and mount namespace. A job that runs out
of time is ended by the cell's init when the zygote asks (`Cell.end_job`): the cell stays, so how a job ended is
nothing the next job in it can observe. The zygote retires a cell (SIGKILL to its init through a pidfd: the kernel
then kills every process of the namespace, and the zygote waits until its leader is gone too, so the kernel has let
go of the cell's namespaces) only when its init did not report the end of a job, would not end one when asked, or
the cell did not become ready. Not root, it retires every cell after its job: the job then runs as its init's kernel
uid and could change what the kernel lets an owner change about the init, which the next job would inherit.

A keeper that retires every cell (`fresh_per_job`) has the next job's cell made and ready before it hands a job to
the current one: what the next job finds of its cell (its namespaces' numbers, which the kernel hands out from one
pool for the whole machine) is then fixed before the current job runs any code, and nothing that job does, nor how it
ends, can show in it.
"""

from __future__ import annotations

import os
import select
import signal
import socket
import time

from audit_lib.sandbox.zygote.cell_init import END_JOB, READY
from audit_lib.sandbox.zygote.template import CELL_REQUEST

READY_TIMEOUT_S = 30.0
RETIRE_WAIT_S = 5.0
ATTEMPTS = 5


class Cell:
    """One cell: the zygote's end of its init's socket, and pidfds of its init and of its leader."""

    def __init__(self, init_pid: int, leader_pid: int, sock: socket.socket) -> None:
        self.init_pid, self.sock = init_pid, sock
        self.pidfd: int | None = os.pidfd_open(init_pid)
        try:
            self.leader_pidfd: int | None = os.pidfd_open(leader_pid)
        except ProcessLookupError:  # already gone: nothing of it to wait for
            self.leader_pidfd = None
        self.ready = False

    def wait_ready(self, timeout_s: float) -> bool:
        """Whether the init reported ready for a job (once started, or after the cleanup of the last job)."""
        if not self.ready and select.select([self.sock], [], [], timeout_s)[0]:
            try:
                self.ready = self.sock.recv(16) == READY
            except OSError:
                self.ready = False
        return self.ready

    def submit(self, header: bytes, fds: list[int]) -> None:
        self.ready = False
        socket.send_fds(self.sock, [header], fds)

    def end_job(self, number: int) -> bool:
        """Ask the init to end job `number` now; False when it cannot be asked.

        Ask the init to end job `number` now (it kills every other process of the cell and reports as usual); False when
        the init cannot be asked.
        """
        try:
            return self.sock.send(END_JOB + f" {number}".encode()) > 0
        except OSError:
            return False

    def kill(self) -> None:
        if self.pidfd is not None:
            try:
                signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
            except OSError:
                pass

    def retire(self) -> None:
        """Kill the init and wait until it and the cell's leader are gone.

        Kill the init and wait until it is gone (every process of its namespace is gone with it), then until its leader,
        the last process that held the cell's namespaces, has exited too.
        """
        self.kill()
        deadline = time.monotonic() + RETIRE_WAIT_S
        for attribute in ("pidfd", "leader_pidfd"):
            pidfd = getattr(self, attribute)
            if pidfd is not None:
                select.select([pidfd], [], [], max(0.0, deadline - time.monotonic()))
                os.close(pidfd)
                setattr(self, attribute, None)
        self.sock.close()

    def close(self) -> None:
        """Let the cell end by itself: its init ends every process of its namespace and exits."""
        self.sock.close()
        for attribute in ("pidfd", "leader_pidfd"):
            pidfd = getattr(self, attribute)
            if pidfd is not None:
                os.close(pidfd)
                setattr(self, attribute, None)


class CellKeeper:
    """The zygote's current cell, and the next ones on their way.

    The zygote's current cell, at most one request for another outstanding at the template, and (with `fresh_per_job`)
    the next job's cell, ready.
    """

    def __init__(self, template_sock: socket.socket, *, fresh_per_job: bool = False) -> None:
        self.template_sock = template_sock
        self.fresh_per_job = fresh_per_job
        self.cell: Cell | None = None
        self.spare: Cell | None = None
        self.requested = False
        self.retired = 0  # cells retired so far (tests and measurements read it)

    def request(self) -> None:
        if not self.requested:
            self.template_sock.send(CELL_REQUEST)
            self.requested = True

    def _receive(self) -> Cell:
        self.request()
        if not select.select([self.template_sock], [], [], READY_TIMEOUT_S)[0]:
            raise RuntimeError("the sandbox template did not start a job cell in time")
        message, fds, _flags, _address = socket.recv_fds(self.template_sock, 4096, 1)
        self.requested = False
        if not message:
            raise RuntimeError("the sandbox template exited")
        if not message.startswith(b"C ") or len(fds) != 1:
            for fd in fds:
                os.close(fd)
            raise RuntimeError(f"sandbox template: {message.decode(errors='replace')}")
        sock = socket.socket(fileno=fds[0])
        try:
            init_pid, leader_pid = (int(part) for part in message[2:].split())
            return Cell(init_pid, leader_pid, sock)
        except ProcessLookupError:  # the init died at once
            sock.close()
            raise RuntimeError("a job cell's init died at start") from None

    def ready_cell(self) -> Cell:
        """A cell ready for a job.

        A cell ready for a job; a cell that fails to become ready is retired and replaced (a few times). With
        `fresh_per_job` the next job's cell is ready too before this one is handed out.
        """
        failure = "no attempt"
        for attempt in range(ATTEMPTS):
            try:
                if self.cell is None:
                    self.cell, self.spare = self.spare or self._receive(), None
                if self.cell.wait_ready(READY_TIMEOUT_S):
                    if self.fresh_per_job and self.spare is None:
                        self.spare = self._receive()
                    if self.spare is None or self.spare.wait_ready(READY_TIMEOUT_S):
                        return self.cell
                    self.cell, self.spare = self.spare, self.cell  # the spare failed: retired below
                failure = "a job cell did not become ready"
            except (OSError, RuntimeError) as exc:  # e.g. a retired cell still fills the pids limit for a moment
                failure = f"{type(exc).__name__}: {exc}"
            self.retire()
            # The last cell's tasks may still fill the pids limit (and its tmpfs the memory limit) until the kernel
            # releases them, later on a loaded machine: back off, about 1.5 s over all attempts.
            time.sleep(0.05 * 2 ** attempt)
        raise RuntimeError(f"the sandbox could not prepare a job cell: {failure}")

    def retire(self) -> None:
        """Retire the current cell, waiting until its processes are gone, and ask for the next one.

        The next one is asked for at once; with `fresh_per_job`, when a job needs it, after the spare has become
        current."""
        if self.cell is not None:
            self.cell.retire()
            self.cell = None
            self.retired += 1
        if not self.fresh_per_job:
            self.request()

    def close(self) -> None:
        for cell in (self.cell, self.spare):
            if cell is not None:
                cell.close()
        self.cell = self.spare = None
