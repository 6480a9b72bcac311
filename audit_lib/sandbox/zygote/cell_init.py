"""A job cell's init: PID 1 of its own PID and mount namespace, serving jobs one after another (stdlib only).

Started by the template (`template._start_cell`). It never reads a job's program, inputs or tests: per job it gets
only a small header (op, limits) and the job's pipes and memfd from the zygote, so a worker forked from it holds no
earlier job's data. Once, at start: `no_new_privs` (inherited by every worker), an IPC namespace of its own, SIGINT
back at its default (PID 1 then gets no signal from its own namespace) and a session of its own. Per job:

  mount a fresh /tmp and /dev/shm (tmpfs sized with this job's memory limit) -> fork the job's worker, which
  inherits the header and the job's fds (it drops to the job's uid at once and reads ITS job's spec from the
  memfd) -> reap until the worker exits -> SIGKILL every other process of the namespace (kill(-1)) and reap until
  none is left -> report the worker's wait status and the CPU time of every process reaped (the job's) on the job's
  control pipe (`X ...`) and close it ->
  move to a fresh IPC namespace (the job's SysV objects and message queues go with the old one) -> unmount /tmp
  and /dev/shm -> tell the zygote it is ready (`R`).

The worker is forked when its job comes, not before: a worker forked in advance shares every page with the init
while the init serves the job, so each page the init then touches is copied (measured: about 5 % more CPU per job in
`perf/bench_sandbox.py`'s assert mode).

Anything off (a process that outlives the kill, a mount that will not go, a fork that fails) ends the init: the
kernel then kills whatever is left in the namespace, and the zygote retires the cell.
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import resource
import signal
import socket
import time

from audit_lib.sandbox.zygote import jail
from audit_lib.sandbox.zygote.child import forget_the_harness
from audit_lib.sandbox.zygote.protocol import JOB_FDS, report_exception

READY = b"R"
JOB_MOUNTS = ("/tmp", "/dev/shm")
# kill(-1) + reap rounds before a process that will not go retires the cell (a process in uninterruptible sleep).
REAP_ROUNDS = 2000
PR_SET_NO_NEW_PRIVS = 38
CLONE_NEWIPC = 0x08000000
_libc = ctypes.CDLL(None, use_errno=True)


def serve_jobs(sock: socket.socket, setup: dict, worker) -> None:
    """The init's life: its own /proc, then one job after another until the zygote closes the socket."""
    # hidepid=2: a worker (another uid, as root) sees no process of the cell but its own, so nothing the init
    # accumulates over the jobs it served (its reaped children's CPU time, its start time) reaches the next job.
    jail.mount("proc", "/proc", "proc", jail.MS_NOSUID | jail.MS_NODEV | jail.MS_NOEXEC, "hidepid=2")
    # Out of reach of its jobs' signals: PID 1 gets from its own namespace only the signals it handles, and Python
    # handles SIGINT (each worker puts Python's handler back for the code). Its own session, so its scheduling group
    # (autogroup) is not the zygote's: not root, a job has the init's kernel uid and may renice that group.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.setsid()
    forget_the_harness(setup)
    # Inherited by every worker: no exec of theirs can gain privileges (setuid binaries, file capabilities).
    if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    jail.unshare(CLONE_NEWIPC)  # the first job's; see below
    if len(os.listdir("/proc/self/task")) != 1:
        raise RuntimeError("a cell's init must be single-threaded (its workers are forked without Python's at-fork "
                           "handlers)")
    gc.freeze()  # a collection in a worker then leaves the init's objects, and so their pages, alone
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
        judge_uid = setup.get("judge_uid")
        owner = judge_uid if header["op"] == "judge" and judge_uid is not None else setup["tmp_owner"]
        options = f"size={int(header['limits']['memory_mb'])}m,mode=700,uid={owner},gid={owner}"
        for target in JOB_MOUNTS:
            jail.mount("tmpfs", target, "tmpfs", jail.MS_NOSUID | jail.MS_NODEV, options)
        _reset_last_pid()
        reaped_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        worker_pid = _fork_worker(sock, setup, worker, header, fds)
        for fd in fds:
            if fd != ctl:
                os.close(fd)
        while True:
            pid, status, usage = os.wait4(-1, 0)
            if pid == worker_pid:
                break
        clean = _end_all_others()
        # Every process of the job, the worker and whatever it left behind, has been reaped by now (here, or by its
        # parent before it): their CPU time is the job's, not only the worker's.
        reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (reaped.ru_utime + reaped.ru_stime) - (reaped_before.ru_utime + reaped_before.ru_stime)
        os.write(ctl, f"X {status} {cpu!r} {usage.ru_maxrss}\n".encode())
        os.close(ctl)
        if not clean:
            return
        # SysV objects and POSIX message queues live in the IPC namespace: each job's worker inherits a fresh one
        # from the init, and leaving it frees the last job's (no process of the job is left in it).
        jail.unshare(CLONE_NEWIPC)
        for target in JOB_MOUNTS:
            if _libc.umount2(target.encode(), 0) != 0:
                return  # something still holds it: this cell serves no further job
        sock.send(READY)


def _reset_last_pid() -> None:
    """Every worker is PID 2 of the namespace: the last PID handed out would otherwise carry how many processes the
    last job made to the next job (a channel between jobs, and between the snippets of one request)."""
    fd = os.open("/proc/sys/kernel/ns_last_pid", os.O_WRONLY)
    try:
        os.write(fd, b"1")
    finally:
        os.close(fd)


def _fork_worker(sock: socket.socket, setup: dict, worker, header: dict, fds: list[int]) -> int:
    """This job's worker, forked from this init (which holds no job data but the header) with the job's fds.

    libc's fork, not `os.fork`: Python's at-fork handlers (re-initialising thread state and locks, reseeding
    `random`) are for processes with other threads, and this init has none (checked at its start); running them
    would make every worker touch ~50 more pages (measured with `ru_minflt`). The worker reseeds `random` itself.
    """
    worker_pid = _libc.fork()
    if worker_pid < 0:
        raise OSError(ctypes.get_errno(), "fork")
    if worker_pid == 0:
        try:
            sock.close()
            worker(setup, header, fds)
        except BaseException:  # noqa: BLE001 - the worker's own setup failed; its stderr says why
            report_exception(2)
        finally:
            os._exit(1)
    return worker_pid


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
