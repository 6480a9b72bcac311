"""The pristine template and the three processes it starts per job (stdlib only).

The zygote forks the template right after warm-up, before it reads any request, so no request data ever enters
the template's memory: it joins the zygote's job cgroups (so every job process is born inside the job's limits;
the zygote sets them before each job), enters the jail (`jail.build_and_enter`) and then only receives, per job, a
small header of limits and the job's pipes over a socket (SCM_RIGHTS). It keeps the next job's processes ready
(forked while the current job runs, so their namespaces cost no latency):

  leader (unshares a PID and a mount namespace, waits for the init)
    -> init (PID 1 of the job's namespace: mounts its /proc; once the job's fds come, its /tmp and /dev/shm sized
             with the job's memory limit; reaps, reports the worker's wait status and CPU time on the control pipe;
             when it exits the kernel kills the whole namespace)
      -> worker (unprivileged uid and no_new_privs at once; once the job's fds come: fds, rlimits, reports setup
                 done, then reads ITS OWN job's spec from a memfd and runs the code: the only job data it holds)

Each of them dies with its parent (PR_SET_PDEATHSIG), so when the zygote dies, or the pool kills it, the template,
leader, init and with it every process of the job die too, whatever sessions they made.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import socket
import traceback

from audit_lib.sandbox.zygote import jail

PR_SET_PDEATHSIG = 1
CLONE_NEWPID = 0x20000000
JOB_FDS = ("spec", "out", "err", "res", "ctl")
_libc = ctypes.CDLL(None, use_errno=True)


def die_with_parent(expected_parent: int | None) -> None:
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if expected_parent is not None and os.getppid() != expected_parent:
        os._exit(1)  # the parent died before the death signal was armed


def start(jail_dir: str | None, keep_fds: tuple[int, ...], setup: dict, worker) -> tuple[int, socket.socket]:
    """Fork the template; returns its pid and the zygote's end of its socket once it is ready."""
    zygote_end, template_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    zygote_pid = os.getpid()
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            die_with_parent(zygote_pid)
            zygote_end.close()
            keep = {template_end.fileno(), 2, *keep_fds}
            for fd in _open_fds():
                if fd not in keep:
                    try:
                        os.close(fd)
                    except OSError:  # the listing's own descriptor
                        pass
            for fd in keep_fds:  # into the job cgroups once: a migration per job costs an RCU grace period
                os.write(fd, b"0")
                os.close(fd)
            if jail_dir is not None:
                jail.build_and_enter(jail_dir)
            template_end.send(b"ready")
            _serve(template_end, setup, worker)
            status = 0
        except BaseException as exc:  # noqa: BLE001 - reported to the zygote, which fails loudly
            try:
                template_end.send(f"failed: {type(exc).__name__}: {exc}".encode()[:4000])
            except OSError:
                pass
        finally:
            os._exit(status)
    template_end.close()
    answer = zygote_end.recv(4096)
    if answer != b"ready":
        raise RuntimeError(f"sandbox template: {answer.decode(errors='replace') or 'exited'}")
    return pid, zygote_end


def _open_fds() -> list[int]:
    return [int(name) for name in os.listdir("/proc/self/fd") if int(name) > 2]


def _serve(sock: socket.socket, setup: dict, worker) -> None:
    """Keep one job's processes ready; hand each job's fds to the ready ones, then prepare the next."""
    ready: _Ready | None = _prepare(setup, worker)
    while True:
        message, fds, _flags, _address = socket.recv_fds(sock, 1 << 16, len(JOB_FDS))
        if not message:
            return  # the zygote is gone
        try:
            if ready is None:
                ready = _prepare(setup, worker)
            for _attempt in range(2):
                try:
                    socket.send_fds(ready.sock, [message], fds)
                    break
                except OSError:  # the ready processes died meanwhile (an earlier job's OOM kill): prepare anew
                    ready.sock.close()
                    ready = _prepare(setup, worker)
            os.write(fds[JOB_FDS.index("ctl")], f"P {ready.init_pid}\n".encode())
        finally:
            for fd in fds:
                os.close(fd)
            ready.sock.close()
        _reap_finished()
        try:
            ready = _prepare(setup, worker)
        except (OSError, RuntimeError):  # e.g. the job just started fills its pids limit: prepare at the next job
            ready = None


class _Ready:
    def __init__(self, init_pid: int, sock: socket.socket) -> None:
        self.init_pid, self.sock = init_pid, sock


def _prepare(setup: dict, worker) -> _Ready:
    """Fork the next job's leader, init and worker; they wait for the job's fds, holding no job data."""
    template_end, init_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pid_r, pid_w = os.pipe()
    template_pid = os.getpid()
    leader = os.fork()
    if leader == 0:
        try:
            template_end.close()
            os.close(pid_r)
            _leader(template_pid, init_end, pid_w, setup, worker)
        except BaseException:  # noqa: BLE001 - the template sees no init pid and fails loudly
            _report(2)
        finally:
            os._exit(1)
    init_end.close()
    os.close(pid_w)
    answer = os.read(pid_r, 64)
    os.close(pid_r)
    if not answer:
        raise RuntimeError("the sandbox template could not prepare a job's processes")
    return _Ready(int(answer), template_end)


def _report(fd: int) -> None:
    try:
        os.write(fd, traceback.format_exc().encode()[-4000:])
    except BaseException:  # noqa: BLE001, S110 - nothing left to tell
        pass


def _reap_finished() -> None:
    while True:
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _leader(template_pid: int, init_end: socket.socket, pid_w: int, setup: dict, worker) -> None:
    die_with_parent(template_pid)
    jail.unshare(CLONE_NEWPID | jail.CLONE_NEWNS)
    leader_pid = os.getpid()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(pid_w)
            _init(init_end, setup, worker)
        except BaseException:  # noqa: BLE001
            _report(2)
        finally:
            os._exit(1)
    init_end.close()
    os.write(pid_w, str(pid).encode())
    os.close(pid_w)
    del leader_pid
    os.waitpid(pid, 0)
    os._exit(0)


def _init(init_end: socket.socket, setup: dict, worker) -> None:
    """PID 1 of the job: private /proc, /tmp, /dev/shm; run the worker, reap everything, report, exit."""
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # the leader is outside this namespace: ppid reads 0
    jail.mount("proc", "/proc", "proc", jail.MS_NOSUID | jail.MS_NODEV | jail.MS_NOEXEC)
    worker_end, own_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    worker_pid = os.fork()
    if worker_pid == 0:
        try:
            own_end.close()
            init_end.close()
            worker(setup, worker_end)
        except BaseException:  # noqa: BLE001 - the worker's own setup failed; its stderr says why
            _report(2)
        finally:
            os._exit(1)
    worker_end.close()
    message, fds, _flags, _address = socket.recv_fds(init_end, 1 << 16, len(JOB_FDS))
    init_end.close()
    if not message:
        os.kill(-1, signal.SIGKILL)
        os._exit(0)
    header = json.loads(message)
    options = f"size={int(header['limits']['memory_mb'])}m,mode=700,uid={setup['tmp_owner']},gid={setup['tmp_owner']}"
    jail.mount("tmpfs", "/tmp", "tmpfs", jail.MS_NOSUID | jail.MS_NODEV, options)
    jail.mount("tmpfs", "/dev/shm", "tmpfs", jail.MS_NOSUID | jail.MS_NODEV, options)
    socket.send_fds(own_end, [message], fds)
    own_end.close()
    ctl = fds[JOB_FDS.index("ctl")]
    for fd in fds:
        if fd != ctl:
            os.close(fd)
    while True:
        pid, status, usage = os.wait4(-1, 0)
        if pid == worker_pid:
            break
    try:
        os.kill(-1, signal.SIGKILL)  # everything else in the namespace
    except OSError:
        pass
    cpu = usage.ru_utime + usage.ru_stime
    os.write(ctl, f"X {status} {cpu!r} {usage.ru_maxrss}\n".encode())
    os._exit(0)
