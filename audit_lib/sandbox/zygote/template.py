"""The pristine template and the three processes it starts per job (stdlib only).

The zygote forks the template right after warm-up, before it reads any request, so no request data ever enters
the template's memory: it joins the zygote's job cgroups (so every job process is born inside the job's limits;
the zygote sets them before each job), enters the jail (`jail.build_and_enter`) and then only receives, per job, a small
header of limits and the job's pipes over a socket (SCM_RIGHTS). Per job it forks:

  leader (unshares a PID and a mount namespace, waits for the init)
    -> init (PID 1 of the job's namespace: mounts the job's /proc, /tmp and /dev/shm, reaps, reports the worker's
             wait status and CPU time on the control pipe; when it exits the kernel kills the whole namespace)
      -> worker (fds, rlimits, unprivileged uid, reports setup done, then reads ITS OWN job's spec from a memfd
                 and runs the code: the only job data its memory ever holds)

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


def start(jail_dir: str | None, keep_fds: tuple[int, ...], worker_main) -> tuple[int, socket.socket]:
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
            _serve(template_end, worker_main)
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


def _serve(sock: socket.socket, worker_main) -> None:
    template_pid = os.getpid()
    while True:
        message, fds, _flags, _address = socket.recv_fds(sock, 1 << 16, len(JOB_FDS))
        if not message:
            return  # the zygote is gone
        header = json.loads(message)
        pid = os.fork()
        if pid == 0:
            try:
                sock.close()
                _leader(template_pid, header, dict(zip(JOB_FDS, fds)), worker_main)
            except BaseException:  # noqa: BLE001 - the zygote sees no init pid and fails the job as its own error
                _report(fds[JOB_FDS.index("err")])
            finally:
                os._exit(1)
        for fd in fds:
            os.close(fd)
        _reap_finished()


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


def _leader(template_pid: int, header: dict, fds: dict[str, int], worker_main) -> None:
    die_with_parent(template_pid)
    jail.unshare(CLONE_NEWPID | jail.CLONE_NEWNS)
    leader_pid = os.getpid()
    pid = os.fork()
    if pid == 0:
        try:
            _init(leader_pid, header, fds, worker_main)
        finally:
            os._exit(1)
    for name, fd in fds.items():
        if name != "ctl":
            os.close(fd)
    os.write(fds["ctl"], f"P {pid}\n".encode())
    os.close(fds["ctl"])
    os.waitpid(pid, 0)
    os._exit(0)


def _init(leader_pid: int, header: dict, fds: dict[str, int], worker_main) -> None:
    """PID 1 of the job: private /proc, /tmp, /dev/shm; run the worker, reap everything, report, exit."""
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # the leader is outside this namespace: ppid reads 0
    limits = header["limits"]
    owner = header.get("tmp_owner", 0)
    size = f"size={int(limits['memory_mb'])}m"
    jail.mount("proc", "/proc", "proc", jail.MS_NOSUID | jail.MS_NODEV | jail.MS_NOEXEC)
    jail.mount("tmpfs", "/tmp", "tmpfs", jail.MS_NOSUID | jail.MS_NODEV, f"{size},mode=700,uid={owner},gid={owner}")
    jail.mount("tmpfs", "/dev/shm", "tmpfs", jail.MS_NOSUID | jail.MS_NODEV,
               f"{size},mode=700,uid={owner},gid={owner}")
    worker = os.fork()
    if worker == 0:
        try:
            worker_main(header, fds)
        except BaseException:  # noqa: BLE001 - the worker's own setup failed; its stderr says why
            _report(2)
        finally:
            os._exit(1)
    for name, fd in fds.items():
        if name != "ctl":
            os.close(fd)
    while True:
        pid, status, usage = os.wait4(-1, 0)
        if pid == worker:
            break
    try:
        os.kill(-1, signal.SIGKILL)  # everything else in the namespace
    except OSError:
        pass
    cpu = usage.ru_utime + usage.ru_stime
    os.write(fds["ctl"], f"X {status} {cpu!r} {usage.ru_maxrss}\n".encode())
    os._exit(0)
