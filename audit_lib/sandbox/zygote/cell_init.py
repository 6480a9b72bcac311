"""A job cell's init: PID 1 of its own PID and mount namespace, serving jobs one after another (stdlib only).

Started by the template (`template._start_cell`). It never reads a job's program, inputs or tests: per job it gets
only a small header (op, limits, the job's number) and the job's pipes and memfd from the zygote, so a worker forked
from it holds no earlier job's data. Once, at start: its own /proc (`hidepid=2,subset=pid`), `no_new_privs`
(inherited by every worker), SIGINT back at its default (PID 1 then gets no signal from its own namespace) and a
session of its own. Per job:

  cover each benchmark data folder (`jail.hidden_data_dirs`) with an empty read-only tmpfs, or take the covers off
  for an upstream replay's job (covers stay on from one job to the next: nothing in them can change), and mount a
  fresh /tmp and /dev/shm (tmpfs sized with this job's memory limit), and (root) enter a fresh IPC namespace -> fork
  the job's worker, which inherits the header, the job's fds and that IPC namespace (not root: it makes its own),
  drops to the job's uid at once and reads ITS job's spec from the memfd -> wait until the worker exits, or until
  the zygote asks to end the job (`K <number>`: SIGKILL to every other process of the namespace) -> SIGKILL every
  other process of the namespace (kill(-1)) and reap until none is left -> report the worker's wait status and the
  CPU time of every process reaped (the job's) on the job's control pipe (`X ...`) and close it -> unmount /tmp and
  /dev/shm -> tell the zygote it is ready (`R`).

Ending a job that ran out of time is the init's work, not the zygote's: the cell stays, so whether a job was cut
short (the job's own doing, or what its judge decided) is nothing the next job in the cell can observe.

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
import select
import signal
import socket
import sys
import time

from audit_lib.sandbox.zygote import jail
from audit_lib.sandbox.zygote.protocol import JOB_FDS, SAFE_PATH, report_exception

READY = b"R"
END_JOB = b"K"  # + b" <job number>": the zygote asks the init to end that job now
JOB_MOUNTS = ("/tmp", "/dev/shm")
# kill(-1) + reap rounds before a process that will not go retires the cell (a process in uninterruptible sleep).
REAP_ROUNDS = 2000
PR_SET_NO_NEW_PRIVS = 38
PROC_FLAGS = jail.MS_NOSUID | jail.MS_NODEV | jail.MS_NOEXEC
MS_NOATIME = 0x400
HIDING_FLAGS = jail.MS_RDONLY | jail.MS_NOSUID | jail.MS_NODEV | jail.MS_NOEXEC | MS_NOATIME
_libc = ctypes.CDLL(None, use_errno=True)


def serve_jobs(sock: socket.socket, setup: dict, worker) -> None:
    """The init's life: its own /proc, then one job after another until the zygote closes the socket."""
    last_pid = _own_proc()
    # Out of reach of its jobs' signals: PID 1 gets from its own namespace only the signals it handles, and Python
    # handles SIGINT (each worker puts Python's handler back for the code). Its own session, so its scheduling group
    # (autogroup) is not the zygote's: not root, a job has the init's kernel uid and may renice that group.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    os.setsid()
    forget_the_harness(setup)
    # Inherited by every worker: no exec of theirs can gain privileges (setuid binaries, file capabilities).
    if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
    if len(os.listdir("/proc/self/task")) != 1:
        raise RuntimeError("a cell's init must be single-threaded (its workers are forked without Python's at-fork "
                           "handlers)")
    # Only what the jail shows needs covering: a folder of the zygote's sys.path outside the bound prefixes (a .pth
    # file's) is not there at all.
    visible_data_dirs = [path for path in setup["hidden_dirs"] if os.path.isdir(path)]
    hiding = False  # whether the data folders are covered now
    gc.freeze()  # a collection in a worker then leaves the init's objects, and so their pages, alone
    sock.send(READY)
    while True:
        message, fds = _next_job(sock)
        if not message:
            _end_all_others()
            return  # the zygote is gone
        ctl = fds[JOB_FDS.index("ctl")]
        header = json.loads(message)
        judge_uid = setup.get("judge_uid")
        owner = judge_uid if header["op"] in ("judge", "call_judge") and judge_uid is not None else setup["tmp_owner"]
        options = f"size={int(header['limits']['memory_mb'])}m,mode=700,uid={owner},gid={owner}"
        # First the data folders (empty and read-only over each), then /tmp and /dev/shm, which cover a prefix
        # under /tmp (a checkout's venv there) and its folders with it. The data folders' covers hold nothing a job
        # can change (read-only, no access times): they stay over as long as the jobs want the data hidden, and
        # come off (before /tmp goes on) for a job that shows it.
        hide = header["limits"].get("hide_benchmark_data", True) is not False
        if hide != hiding and not _set_hiding(visible_data_dirs, hide):
            return  # something still holds a cover: this cell serves no further job
        hiding = hide
        for target in JOB_MOUNTS:
            jail.mount("tmpfs", target, "tmpfs", jail.MS_NOSUID | jail.MS_NODEV, options)
        os.pwrite(last_pid, b"1", 0)  # see `_own_proc`
        if setup.get("uid") is not None:
            # Root: the job's IPC namespace, made here for the worker to inherit (in a fresh fork the worker's own
            # call through ctypes copied about 70 pages). The last job's namespace, and whatever SysV objects and
            # message queues it held, goes once its processes, all reaped by now, and this init have left it.
            jail.unshare(jail.CLONE_NEWIPC)
        reaped_before = resource.getrusage(resource.RUSAGE_CHILDREN)
        worker_pid = _fork_worker(sock, setup, worker, header, fds)
        for fd in fds:
            if fd != ctl:
                os.close(fd)
        status, usage = _wait_for(worker_pid, sock, f"{END_JOB.decode()} {header.get('number')}".encode())
        clean = _end_all_others()
        # Every process of the job, the worker and whatever it left behind, has been reaped by now (here, or by its
        # parent before it): their CPU time is the job's, not only the worker's.
        reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (reaped.ru_utime + reaped.ru_stime) - (reaped_before.ru_utime + reaped_before.ru_stime)
        os.write(ctl, f"X {status} {cpu!r} {usage.ru_maxrss}\n".encode())
        os.close(ctl)
        if not clean:
            return
        for target in JOB_MOUNTS:
            if _libc.umount2(target.encode(), 0) != 0:
                return  # something still holds it: this cell serves no further job
        sock.send(READY)


def _set_hiding(data_dirs: list[str], hide: bool) -> bool:
    """Cover each data folder with an empty read-only tmpfs, or take the covers off; False when one will not go."""
    if hide:
        for target in data_dirs:
            jail.mount("tmpfs", target, "tmpfs", HIDING_FLAGS, "size=4k,mode=555")
        return True
    return all(_libc.umount2(target.encode(), 0) == 0 for target in reversed(data_dirs))


def forget_the_harness(setup: dict) -> None:
    """Once, in a cell's init (so in every worker it forks): the job's environment, and no harness to import."""
    os.environ.clear()
    # BLAS in one thread: its work is then the calling thread's, as per-input time limits assume (call mode charges
    # an input the CPU of the job's other threads).
    os.environ.update({"PATH": SAFE_PATH, "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8",
                       "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"})
    tempfile_module = sys.modules.get("tempfile")
    if tempfile_module is not None:
        tempfile_module.tempdir = "/tmp"
    sys.path[:] = [p for p in sys.path if p != setup["package_parent"]]
    sys.argv[:] = ["-c"]
    for name in [n for n in sys.modules if n == "audit_lib" or n.startswith("audit_lib.")]:
        del sys.modules[name]


def _own_proc() -> int:
    """Mount the cell's /proc; return a descriptor of its `ns_last_pid`, which the jobs' /proc does not show.

    `hidepid=2`: a worker (another uid, as root) sees no process of the cell but its own, so nothing the init
    accumulates over the jobs it served (its reaped children's CPU time, its start time) reaches the next job.
    `subset=pid`: no file of the machine's own counters (`/proc/stat`'s count of every fork since boot,
    `/proc/loadavg`, `/proc/meminfo`, `/proc/vmstat`, `/proc/sys`...), which one job could move and the next read.
    Every worker is PID 2 of the namespace: the last PID handed out would otherwise carry how many processes the
    last job made to the next job, so the init resets it through a full /proc mounted first, under the jobs' one.
    """
    jail.mount("proc", "/proc", "proc", PROC_FLAGS, "hidepid=2")
    last_pid = os.open("/proc/sys/kernel/ns_last_pid", os.O_WRONLY | os.O_CLOEXEC)
    jail.mount("proc", "/proc", "proc", PROC_FLAGS, "hidepid=2,subset=pid")
    return last_pid


def _next_job(sock: socket.socket) -> tuple[bytes, list[int]]:
    """The next job's header and fds; an end-of-job request left over from a job already over is skipped."""
    while True:
        try:
            message, fds, _flags, _address = socket.recv_fds(sock, 1 << 16, len(JOB_FDS))
        except OSError:  # the zygote closed its end with a message unread
            return b"", []
        if not message.startswith(END_JOB):
            return message, fds
        for fd in fds:
            os.close(fd)


def _wait_for(worker_pid: int, sock: socket.socket, end_request: bytes) -> tuple[int, resource.struct_rusage]:
    """Wait until the worker exits; its wait status and rusage.

    Wait until the worker exits, ending the job first (SIGKILL to every other process of the namespace) when the zygote
    asks with `end_request`; the worker's wait status and rusage.
    """
    pidfd = os.pidfd_open(worker_pid)
    try:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        poller.register(sock, select.POLLIN)
        while True:
            for fd, _event in poller.poll():
                if fd == pidfd:
                    pid, status, usage = os.wait4(worker_pid, 0)
                    return status, usage
                try:
                    request = sock.recv(64)
                except OSError:
                    request = b""
                if not request or request == end_request:  # the zygote is gone, or asks to end this job
                    _kill_all_others()
                    if not request:
                        poller.unregister(sock)
    finally:
        os.close(pidfd)


def _kill_all_others() -> None:
    try:
        os.kill(-1, signal.SIGKILL)  # from PID 1: every process of the namespace (nested ones too) but itself
    except ProcessLookupError:
        pass


def _fork_worker(sock: socket.socket, setup: dict, worker, header: dict, fds: list[int]) -> int:
    """This job's worker, forked from this init (which holds no job data but the header) with the job's fds.

    libc's fork, not `os.fork`: Python's at-fork handlers (re-initialising thread state and locks, reseeding
    `random`) are for processes with other threads, and this init has none (checked at its start); running them
    would make every worker touch ~50 more pages (measured with `ru_minflt`). `random` is reseeded here instead, just
    before the fork, from the system's entropy as at-fork and a fresh interpreter would: each worker starts from a
    state of its own that no earlier job saw (reseeding in the worker copied about 40 pages there).
    """
    random_module = sys.modules.get("random")
    if random_module is not None:
        random_module.seed()
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
        _kill_all_others()
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
