"""Kernel state no namespace or cgroup separates between jobs: key rings and what the page cache holds of shared
files. Each was a working channel from one job (or snippet) to a later one; the job's seccomp filter refuses the
calls (`zygote/seccomp.py`). Each probe is run bare too, in a plain process, to show it works where nothing stops it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap

import pytest

from audit_lib import sandbox
from audit_lib.sandbox import Limits
from audit_lib.sandbox.zygote import seccomp

QUICK = Limits(timeout_s=5, total_timeout_s=20, memory_mb=256)
pytestmark = pytest.mark.skipif(not seccomp.platform.machine() == "x86_64", reason="the filter is x86_64 only")

# Each prints one word per call: ok, or the errno's name.
KEY_RING_PROBE = """
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
def outcome(result):
    return "ok" if result >= 0 else errno.errorcode.get(ctypes.get_errno(), "?")
KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, KEY_SPEC_SESSION_KEYRING = 0, -4, -3
print(outcome(libc.syscall(250, KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 1)),
      outcome(libc.syscall(248, b"user", b"benchaudit-probe", b"1", 1, KEY_SPEC_SESSION_KEYRING)),
      outcome(libc.syscall(249, b"user", b"benchaudit-probe", None, 0)))
"""
PAGE_CACHE_PROBE = """
import ctypes, errno, mmap, os
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open("/usr/bin/env", os.O_RDONLY)
def attempt(call):
    try:
        call()
        return "ok"
    except OSError as exc:
        return errno.errorcode.get(exc.errno, "?")
mapping = mmap.mmap(fd, 4096, prot=mmap.PROT_READ)
vector = ctypes.create_string_buffer(1)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
def mincore():
    page = libc.mmap(None, 4096, mmap.PROT_READ, mmap.MAP_SHARED, fd, 0)
    if libc.mincore(ctypes.c_void_p(page), ctypes.c_size_t(4096), vector) != 0:
        raise OSError(ctypes.get_errno(), "mincore")
print(attempt(mincore),
      attempt(lambda: os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)),
      attempt(lambda: os.preadv(fd, [bytearray(8)], 0, os.RWF_NOWAIT)),
      attempt(lambda: mapping.madvise(21)),  # MADV_PAGEOUT
      attempt(lambda: os.preadv(fd, [bytearray(8)], 0)))
"""


def _in_a_job(probe: str) -> list[str]:
    result = sandbox.run_asserts(textwrap.dedent(probe), ["pass"], limits=QUICK).snippets[0]
    assert result.status == "pass", result
    return result.stdout.split()


def _bare(probe: str) -> list[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(probe)], capture_output=True, text=True,
                          check=True).stdout.split()


def test_a_job_reaches_no_key_ring() -> None:
    assert _in_a_job(KEY_RING_PROBE) == ["EPERM", "EPERM", "EPERM"]
    assert "EPERM" not in _bare(KEY_RING_PROBE)[:2]  # bare, the user key ring and the session one are there


def test_a_key_left_by_one_snippet_does_not_reach_the_next() -> None:
    # A snippet that saves its progress as a key must not let a later snippet of the same request read it back and
    # pass under a limit it could not meet alone.
    writer = """
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        for ring in (-4, -3, -5):  # user, session, user session
            libc.syscall(248, b"user", b"benchaudit-carry", b"42", 2, ring)
    """
    reader = """
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        found = [libc.syscall(250, 10, ring, b"user", b"benchaudit-carry", 0) for ring in (-4, -3, -5)]  # SEARCH
        assert all(key < 0 for key in found), found
    """
    program = "def f(x):\n    return x\n"
    result = sandbox.run_tests(program, [textwrap.dedent(writer) + "assert f(1) == 1\n",
                                         textwrap.dedent(reader) + "assert f(2) == 2\n"], entry_points=("f",),
                               limits=QUICK)
    assert [s.status for s in result.snippets] == ["pass", "pass"], result.snippets


def test_a_job_cannot_probe_or_evict_the_page_cache_of_shared_files() -> None:
    # mincore, fadvise(DONTNEED), preadv2(RWF_NOWAIT), madvise(MADV_PAGEOUT): one page of a system file per bit,
    # set by reading it, tested and cleared; plain reads still work
    assert _in_a_job(PAGE_CACHE_PROBE) == ["EPERM", "EPERM", "EPERM", "EPERM", "ok"]
    bare = _bare(PAGE_CACHE_PROBE)
    assert bare[0] == "ok" and bare[1] == "ok" and bare[4] == "ok", bare


@pytest.mark.parametrize("refuse_sigchld", [False, True])
def test_the_filter_refuses_exactly_the_listed_calls(refuse_sigchld: bool) -> None:
    # as the template installs it: not root, SIGCHLD's handling; root, user namespaces
    program = seccomp.filter_program(refuse_sigchld, refuse_user_namespaces=not refuse_sigchld)
    assert program[-2][3] == seccomp.SECCOMP_RET_ERRNO | 1 and program[-3][3] == seccomp.SECCOMP_RET_ALLOW
    sigchld = {seccomp.RT_SIGACTION, seccomp.SIGCHLD} if refuse_sigchld else set()
    user_namespaces = {seccomp.CLONE3, seccomp.UNSHARE, seccomp.CLONE} if not refuse_sigchld else set()
    refused = {k for code, _jt, _jf, k in program if code == 0x15} - {seccomp.AUDIT_ARCH_X86_64, 0xFFFFFFFF}
    assert refused == {*seccomp.REFUSED_SYSCALLS.values(), *seccomp.FLAGGED_RW.values(), seccomp.MADVISE,
                       *seccomp.REFUSED_MADVICE.values(), *sigchld, seccomp.SOCKET, *user_namespaces,
                       *seccomp.REFUSED_SOCKET_FAMILIES.values(), 0}  # 0: the socket branch's unconditional jump


# Namespaces are numbered from counters the whole machine shares: a job that could make them could leave a number for
# a later job to read. Each prints ok or the errno's name; the last word is what fork, threads and a subprocess did.
NAMESPACE_PROBE = """
import ctypes, errno, os, subprocess, threading
libc = ctypes.CDLL(None, use_errno=True)
def outcome(result):
    return "ok" if result >= 0 else errno.errorcode.get(ctypes.get_errno(), "?")
CLONE_NEWUSER, CLONE_NEWIPC, CLONE_NEWNS, CLONE_NEWUTS, SIGCHLD = 0x10000000, 0x08000000, 0x20000, 0x04000000, 17
words = []
for flags in (CLONE_NEWUSER | CLONE_NEWIPC, CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWUTS, CLONE_NEWIPC):
    pid = os.fork()
    if pid == 0:
        os._exit(0 if libc.unshare(flags) == 0 else ctypes.get_errno())
    code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    words.append("ok" if code == 0 else errno.errorcode.get(code, "?"))
child = libc.syscall(56, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0)  # clone, fork-like
if child == 0:
    os._exit(0)
if child > 0:
    os.waitpid(child, 0)
words.append(outcome(child))
fd = os.open("/proc/self/ns/uts", os.O_RDONLY)
words.append(outcome(libc.setns(fd, 0)))
thread = threading.Thread(target=lambda: None)
thread.start()
thread.join()
forked = os.fork()
if forked == 0:
    os._exit(0)
ran = subprocess.run(["/bin/true"]).returncode == 0 and os.waitpid(forked, 0)[1] == 0
words.append("works" if ran else "broken")
print(*words)
"""


def test_a_job_makes_no_namespace_and_still_forks_threads_and_runs_programs() -> None:
    # as root the filter refuses user namespaces and the job holds no capability for the rest (EPERM either way)
    assert _in_a_job(NAMESPACE_PROBE) == ["EPERM", "EPERM", "EPERM", "EPERM", "EPERM", "works"]
    bare = _bare(NAMESPACE_PROBE)
    assert bare[0] == "ok" and bare[-1] == "works", bare  # the kernel lets a plain process make a user namespace


# The machine's own counters: `/proc/stat` counts every fork since boot, so a job forking N times told a later job N.
MACHINE_COUNTERS_PROBE = """
import os
names = ["stat", "loadavg", "meminfo", "vmstat", "sys/kernel/ns_last_pid", "sys/fs/file-nr", "sysvipc/shm"]
print(*("shown" if os.path.exists("/proc/" + name) else "hidden" for name in names),
      "self" if os.path.exists("/proc/self/status") else "no-self")
"""


def test_a_job_reads_none_of_the_machines_own_counters_in_proc() -> None:
    assert _in_a_job(MACHINE_COUNTERS_PROBE) == ["hidden"] * 7 + ["self"]
    assert _bare(MACHINE_COUNTERS_PROBE)[:6] == ["shown"] * 6


# The jobs of a zygote share its network namespace, which has no interface up: a datagram sent nowhere still counts
# (`OutNoRoutes` in /proc/self/net/snmp), so a job sending N of them told a later job N.
NETWORK_PROBE = """
import errno, socket
def attempt(family, kind=socket.SOCK_DGRAM):
    try:
        socket.socket(family, kind).close()
        return "ok"
    except OSError as exc:
        return errno.errorcode.get(exc.errno, "?")
print(attempt(socket.AF_INET), attempt(socket.AF_INET6), attempt(socket.AF_NETLINK, socket.SOCK_RAW),
      attempt(socket.AF_UNIX), attempt(socket.AF_UNIX, socket.SOCK_STREAM))
"""
SEND_NOWHERE = """
import socket
def out_no_routes():
    lines = [line.split() for line in open("/proc/self/net/snmp") if line.startswith("Ip:")]
    return int(dict(zip(lines[0], lines[1]))["OutNoRoutes"])
before = out_no_routes()
sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range(7):
    try:
        sock.sendto(b"x", ("10.1.2.3", 9))
    except OSError:
        pass
print(out_no_routes() - before)
"""


def test_a_job_opens_no_network_socket_whose_counters_the_next_job_would_read() -> None:
    assert _in_a_job(NETWORK_PROBE) == ["EPERM", "EPERM", "EPERM", "ok", "ok"]
    unshare = shutil.which("unshare")
    if unshare is None or subprocess.run([unshare, "-rn", "true"], capture_output=True).returncode != 0:
        pytest.skip("no `unshare -rn` here to show the counter moving in a network namespace like a zygote's")
    moved = subprocess.run([unshare, "-rn", sys.executable, "-c", textwrap.dedent(SEND_NOWHERE)],
                           capture_output=True, text=True, check=True).stdout.split()
    assert moved == ["7"], moved  # where a socket can be opened, each datagram sent nowhere is counted
