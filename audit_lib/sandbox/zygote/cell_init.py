"""A job cell's init: PID 1 of its own PID and mount namespace, serving jobs one after another (stdlib only).

Started by the template (`template._start_cell`). It never reads a job's program, inputs or tests: per job it gets
only a small header (op, limits) and the job's pipes and memfd from the zygote, so a worker forked from it holds no
earlier job's data. Per job:

  mount a fresh /tmp and /dev/shm (tmpfs sized with this job's memory limit) -> hand the header and fds to the
  worker it forked before the job came (already unprivileged, in an IPC namespace of its own; it reads ITS job's
  spec from the memfd) -> reap until the worker exits -> SIGKILL every other process of the namespace (kill(-1))
  and reap until none is left -> report the worker's wait status and CPU time on the job's control pipe (`X ...`)
  and close it -> unmount /tmp and /dev/shm -> fork the next worker -> tell the zygote it is ready (`R`).

Anything off (a process that outlives the kill, a mount that will not go, a worker that cannot be handed its job)
ends the init: the kernel then kills whatever is left in the namespace, and the zygote retires the cell.
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import signal
import socket
import time

from audit_lib.sandbox.zygote import jail
from audit_lib.sandbox.zygote.child import forget_the_harness
from audit_lib.sandbox.zygote.template import JOB_FDS, report_exception

READY = b"R"
JOB_MOUNTS = ("/tmp", "/dev/shm")
# kill(-1) + reap rounds before a process that will not go retires the cell (a process in uninterruptible sleep).
REAP_ROUNDS = 2000
_libc = ctypes.CDLL(None, use_errno=True)


def serve_jobs(sock: socket.socket, setup: dict, worker) -> None:
    """The init's life: its own /proc, then one job after another until the zygote closes the socket."""
    jail.mount("proc", "/proc", "proc", jail.MS_NOSUID | jail.MS_NODEV | jail.MS_NOEXEC)
    forget_the_harness(setup)
    gc.freeze()  # a collection in a worker then leaves the init's objects, and so their pages, alone
    worker_pid, worker_sock = _fork_worker(sock, setup, worker)
    sock.send(READY)
    while True:
        try:
            message, fds, _flags, _address = socket.recv_fds(sock, 1 << 16, len(JOB_FDS))
        except OSError:  # the zygote closed its end with a message unread
            message, fds = b"", []
        if not message:
            _end_all_others()
            return  # the zygote is gone
        ctl = fds[JOB_FDS.index("ctl")]
        header = json.loads(message)
        owner = setup["tmp_owner"]
        options = f"size={int(header['limits']['memory_mb'])}m,mode=700,uid={owner},gid={owner}"
        for target in JOB_MOUNTS:
            jail.mount("tmpfs", target, "tmpfs", jail.MS_NOSUID | jail.MS_NODEV, options)
        worker_pid, worker_sock = _hand_over(worker_pid, worker_sock, message, fds, sock, setup, worker)
        for fd in fds:
            if fd != ctl:
                os.close(fd)
        while True:
            pid, status, usage = os.wait4(-1, 0)
            if pid == worker_pid:
                break
        clean = _end_all_others()
        cpu = usage.ru_utime + usage.ru_stime
        os.write(ctl, f"X {status} {cpu!r} {usage.ru_maxrss}\n".encode())
        os.close(ctl)
        if not clean:
            return
        for target in JOB_MOUNTS:
            if _libc.umount2(target.encode(), 0) != 0:
                return  # something still holds it: this cell serves no further job
        worker_pid, worker_sock = _fork_worker(sock, setup, worker)
        sock.send(READY)


def _fork_worker(sock: socket.socket, setup: dict, worker) -> tuple[int, socket.socket]:
    """The next job's worker, forked now from this init (which holds no job data); it waits for its job's fds."""
    worker_end, own_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    worker_pid = os.fork()
    if worker_pid == 0:
        try:
            own_end.close()
            sock.close()
            worker(setup, worker_end)
        except BaseException:  # noqa: BLE001 - the worker's own setup failed; its stderr says why
            report_exception(2)
        finally:
            os._exit(1)
    worker_end.close()
    return worker_pid, own_end


def _hand_over(worker_pid: int, worker_sock: socket.socket, message: bytes, fds: list[int], sock: socket.socket,
               setup: dict, worker) -> tuple[int, socket.socket]:
    """Give the job to the waiting worker; one that died meanwhile is replaced once."""
    for attempt in range(2):
        try:
            socket.send_fds(worker_sock, [message], fds)
            worker_sock.close()
            return worker_pid, worker_sock
        except OSError:
            worker_sock.close()
            if attempt:
                raise
            _end_all_others()
            worker_pid, worker_sock = _fork_worker(sock, setup, worker)
    raise AssertionError("unreachable")


def _end_all_others() -> bool:
    """SIGKILL every other process of this PID namespace and reap until none is left; False if one will not go."""
    for _round in range(REAP_ROUNDS):
        try:
            os.kill(-1, signal.SIGKILL)  # from PID 1: every process of the namespace (nested ones too) but itself
        except ProcessLookupError:
            pass
        try:
            os.waitpid(-1, 0)  # orphans of the killed are reparented here, so waiting reaps them all in turn
            continue
        except ChildProcessError:
            pass
        try:
            os.kill(-1, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.001)  # a process that is not (yet) our child: its parent is still exiting
    return False
