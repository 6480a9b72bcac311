"""Code that runs inside a job child: setup (fds, limits, uid) and the assert / call harnesses."""

from __future__ import annotations

import _signal
import ctypes
import fcntl
import json
import os
import resource
import signal
import sys
import traceback

from audit_lib.sandbox.zygote import jail, seccomp
from audit_lib.sandbox.zygote.call_child import GO_FD, call_child_main as _call_child
from audit_lib.sandbox.zygote.call_judge_child import call_judge
from audit_lib.sandbox.zygote.judge_child import judge
from audit_lib.sandbox.zygote.serve_child import serve
from audit_lib.sandbox.zygote.harness_io import (
    PristineBaseException as _BaseException,
    flush_std_streams as _flush_std_streams,
    fresh_module as _fresh_module,
    pristine_issubclass as _issubclass,
    python_exit_code as _python_exit_code,
    PristineSystemExit as _SystemExit,
    pristine_type as _type,
)
from audit_lib.sandbox.zygote.protocol import JOB_FDS, RESULT_FD

CTL_FD, SPEC_FD = 4, 5  # and GO_FD = 6 (call mode)
JOB_UID_IN_USERNS = 1000
OOM_SCORE_ADJ_MAX = 1000
CLONE_NEWUSER = 0x10000000
CLONE_NEWIPC = 0x08000000
PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
_LINUX_CAPABILITY_VERSION_3 = 0x20080522
_libc = ctypes.CDLL(None, use_errno=True)


def _set_limit(which: int, value: int) -> None:
    resource.setrlimit(which, (value, value))


def worker_main(setup: dict, header: dict, fds: list[int]) -> None:
    """A job's worker: drop privileges, set up with the job's fds, say so, then read the job and run it."""
    judging = header["op"] in ("judge", "call_judge")
    _drop_privileges({**setup, "uid": setup.get("judge_uid")} if judging else setup, oom_victim=not judging)
    _setup_job(header, dict(zip(JOB_FDS, fds)), address_space_limit=judging)
    chunks = []
    while chunk := os.read(SPEC_FD, 1 << 20):
        chunks.append(chunk)
    os.close(SPEC_FD)
    spec = json.loads(b"".join(chunks))
    if header["op"] == "call_judge":
        call_judge(spec)
        _flush_std_streams((sys.stdout, sys.stderr))
        os._exit(0)
    if judging:
        judge(spec["snippets"], int(spec["first"]), spec.get("entry_points") or ())
        _flush_std_streams((sys.stdout, sys.stderr))
        os._exit(0)
    if header["op"] == "serve":
        serve(spec["program"], spec["names"])
        _flush_std_streams((sys.stdout, sys.stderr))
        os._exit(0)
    if header["op"] == "script":
        os.close(GO_FD)
        _script_child(spec["source"])
    else:
        digests = None
        if spec.get("digest_above_bytes") is not None:
            chosen = spec.get("digest_inputs")
            digests = (int(spec["digest_above_bytes"]), None if chosen is None else frozenset(chosen))
        _call_child(spec["program"], spec["entry_point"], spec["inputs"], [float(t) for t in spec["timeouts"]],
                    int(header["start"]), bool(spec["deepcopy"]), float(spec["load_timeout"]),
                    bool(spec.get("stop_after_failure", False)), digests, spec.get("groups"))


def _drop_privileges(setup: dict, *, oom_victim: bool = True) -> None:
    """First thing in a worker: own session and IPC namespace, unprivileged uid, the job filter.

    First thing in a worker: own session, own IPC namespace, unprivileged uid (root: the template's filter keeps it from
    making a user namespace, the only one it could) or a user namespace of its own, then the job filter.

    The IPC namespace is the job's own (SysV objects and POSIX message queues go with it when its last process ends;
    root: the cell's init entered it for this job just before the fork, not root: made here with the user namespace);
    `no_new_privs` comes from the cell's init (`cell_init`). A judge is not made the OOM killer's first choice: the job
    beside it is.
    """
    if oom_victim:
        prefer_as_oom_victim()  # while the process is still its own: after the uid change it is not dumpable
    os.setsid()
    uid = setup.get("uid")
    if uid is not None:  # its IPC namespace is the one the cell's init entered for this job (`cell_init`)
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
        if os.getresuid() != (uid,) * 3 or os.getresgid() != (uid,) * 3:
            raise RuntimeError("could not drop privileges")
    elif setup.get("nested_userns"):
        _enter_unprivileged_userns()
        # Not root, no cpuacct: the zygote reads this worker's CPU time in /proc, which shows it only for a
        # dumpable process. Other processes of the same user cannot see this PID namespace; its init stays
        # non-dumpable, and the worker holds no capability to trace it.
        _libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
        seccomp.install_job_filter()  # in its own user namespace it could make more: no namespace from here on
    else:
        raise RuntimeError("no unprivileged identity for the job (neither root nor a user namespace)")


def prefer_as_oom_victim() -> None:
    """Every process of the job (they inherit it) is the OOM killer's first choice, before any sandbox process;
    raising one's own score needs no privilege."""
    # os.open, not open(): a text file object in a fresh fork touches pages of the io stack (about 0.2 ms per job).
    fd = os.open("/proc/self/oom_score_adj", os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, str(OOM_SCORE_ADJ_MAX).encode())
    finally:
        os.close(fd)


def _setup_job(header: dict, fds: dict[str, int], *, address_space_limit: bool = False) -> None:
    """With the job's fds: fds 0-3 (control, spec and go on 4-6), /tmp as cwd, rlimits; then `S` on control."""
    devnull = os.open(os.devnull, os.O_RDWR)
    # Out of the way first, so no dup2 below overwrites a descriptor still to be moved.
    sources = [fcntl.fcntl(fd, fcntl.F_DUPFD, 64) for fd in (devnull, fds["out"], fds["err"], fds["res"],
                                                              fds["ctl"], fds["spec"], fds["go"])]
    for fd, target in zip(sources, (0, 1, 2, RESULT_FD, CTL_FD, SPEC_FD, GO_FD)):
        os.dup2(fd, target)
    os.closerange(GO_FD + 1, 1 << 16)
    os.chdir("/tmp")  # the job's own tmpfs, mounted by its init once the job came
    limits = header["limits"]
    mb = 1024 * 1024
    _set_limit(resource.RLIMIT_CORE, 0)
    _set_limit(resource.RLIMIT_FSIZE, int(limits["file_size_mb"] * mb))
    _set_limit(resource.RLIMIT_NOFILE, int(limits["open_files"]))
    # Without a memory cgroup, the address space is the only memory limit; a judge shares the job's cgroup and is
    # held to its own address space besides, so decoding what the job sends is bounded by the judge's own limit.
    if address_space_limit or not header.get("cgroup"):
        _set_limit(resource.RLIMIT_AS, int(limits["memory_mb"] * mb))
    cpu = int(limits["cpu_s"]) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    # Counted per uid (root: the job uid, which only this job's processes have) or per user namespace (not root:
    # this worker's own).
    _set_limit(resource.RLIMIT_NPROC, int(limits["processes"]) + 2)
    # The init ignores it; the code gets Python's usual. `_signal`'s own function: `signal.signal` converts both
    # handlers through the enum machinery, which in a fresh fork copies about 90 pages (0.3 ms per job).
    _signal.signal(signal.SIGINT, signal.default_int_handler)
    os.write(CTL_FD, b"S\n")  # setup done: what happens from here on is the code's doing
    os.close(CTL_FD)


def _enter_unprivileged_userns() -> None:
    """Not root: a nested user namespace where the job holds no capability.

    Not root: a nested user namespace where the job is uid 1000 (not 0) and holds no capability at all, and an IPC
    namespace of the job's own.
    """
    if _libc.unshare(CLONE_NEWUSER | CLONE_NEWIPC) != 0:
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWUSER | CLONE_NEWIPC)")
    outer_uid, outer_gid = 0, 0  # the zygote is uid 0 of its own user namespace (`unshare -r`)
    for name, text in (("setgroups", "deny"), ("uid_map", f"{JOB_UID_IN_USERNS} {outer_uid} 1"),
                       ("gid_map", f"{JOB_UID_IN_USERNS} {outer_gid} 1")):
        with open(f"/proc/self/{name}", "w") as handle:
            handle.write(text)
    for cap in range(64):
        _libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    header = (ctypes.c_uint32 * 2)(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()
    if _libc.capset(header, data) != 0:
        raise OSError(ctypes.get_errno(), "capset")
    with open("/proc/self/status") as handle:
        if any(line.startswith("CapEff:") and int(line.split()[1], 16) for line in handle):
            raise RuntimeError("capabilities left after dropping them")


def _script_child(source: str) -> None:
    """Run `source` as `__main__` and exit as `python -c` would: 0 on completion, SystemExit's code, 1 for an
    uncaught exception (its traceback on stderr). The exit code is evidence the supervisor reads, never a verdict."""
    exit_now = os._exit
    code = 0
    try:
        exec(compile(source, "<sandbox>", "exec"), _fresh_module("__main__").__dict__)
    except _BaseException as exc:  # noqa: BLE001 - SystemExit and KeyboardInterrupt end the script too
        code = _python_exit_code(exc) if _issubclass(_type(exc), _SystemExit) else 1
        if code == 1 and not _issubclass(_type(exc), _SystemExit):
            try:
                traceback.print_exception(exc)
            except _BaseException:  # noqa: BLE001, S110
                pass
    _flush_std_streams((sys.stdout, sys.stderr))
    exit_now(code)
