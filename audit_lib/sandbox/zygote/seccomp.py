"""The seccomp filter every job process runs under: installed once in the template, so every cell and job process
inherits it (stdlib only).

It refuses (EPERM) the system calls that reach kernel state a job's namespaces and cgroups do not separate from other
jobs (found by attacking the sandbox, each a working channel from one job to a later or a concurrent one):

- **key rings** (`add_key`, `request_key`, `keyctl`): a uid's user key ring outlives its jobs (as root, later zygotes
  take the same job uids again), a named session key ring can be joined from another uid, and a worker inherits the
  parent's session key ring;
- **what the page cache holds of shared files** (`mincore`, `cachestat`, `fadvise64`, `preadv2`/`pwritev2` with
  `RWF_NOWAIT`, `madvise` with `MADV_COLD`/`MADV_PAGEOUT`, `process_madvise`, io_uring): one page of a read-only
  system file per bit, set by reading it, cleared by evicting it, tested without loading it.

- **network sockets** (`socket` of the IPv4, IPv6, netlink and packet families): a job's network namespace has no
  interface up, and every job of a zygote shares it, so its counters (`/proc/self/net/snmp`: a datagram sent to
  nowhere counts as `OutNoRoutes`) would carry exact numbers from one job to the next. Unix sockets stay.

What remains of the page cache is the time a read takes (a page read from disk is slower than a cached one): a
noisy, set-only channel that reading shared files cannot avoid (README "Sandbox", limits).

- **namespaces of the job's own**: namespaces are numbered from counters the whole machine shares (and a mount
  namespace has a 64-bit id that only ever grows), so a job that made them could leave a number for a later job to
  read. As root a job holds no capability, so a user namespace is the only one it could make (and in it the others):
  the template's filter refuses `unshare` and `clone` with CLONE_NEWUSER, and `clone3` (whose flags a filter cannot
  read) answers ENOSYS, so the C library falls back to `clone`. Not root, each job's worker makes its own user
  namespace, where it could make more: once its setup is done it adds a second filter (`install_job_filter`: no
  `unshare`/`clone` with any namespace flag, no `setns`). Installing a filter per job costs about 0.5 ms of CPU (the
  kernel compiles it and frees it): only where the template's cannot do it.

Installing it needs `no_new_privs` or CAP_SYS_ADMIN in the process's user namespace (the template has the latter,
as root or as root of its `unshare -r` namespace); it holds for every process forked after it, the code's own
included, and cannot be removed.
x86_64 only: a system call of another ABI kills the process, x32 ones are refused, and on another architecture
`install` raises and the sandbox does not start, loudly.
"""

from __future__ import annotations

import ctypes
import errno
import platform
import struct

PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
AUDIT_ARCH_X86_64 = 0xC000003E
X32_SYSCALL_BIT = 0x40000000
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
SECCOMP_RET_KILL_PROCESS = 0x80000000
# x86_64 system call numbers
REFUSED_SYSCALLS = {
    "mincore": 27, "fadvise64": 221, "add_key": 248, "request_key": 249, "keyctl": 250, "io_uring_setup": 425,
    "io_uring_enter": 426, "io_uring_register": 427, "process_madvise": 440, "cachestat": 451,
}
MADVISE = 28
REFUSED_MADVICE = {"MADV_COLD": 20, "MADV_PAGEOUT": 21}
# refused with RWF_NOWAIT in their flags (argument 5) only: os.preadv/os.pwritev use them for every call
FLAGGED_RW = {"preadv2": 327, "pwritev2": 328}
RWF_NOWAIT = 0x8
SOCKET = 41
REFUSED_SOCKET_FAMILIES = {"AF_INET": 2, "AF_INET6": 10, "AF_NETLINK": 16, "AF_PACKET": 17}
# The job filter: system calls that would give the job a namespace of its own.
CLONE, UNSHARE, SETNS, CLONE3 = 56, 272, 308, 435
NAMESPACE_FLAGS = 0x7E020000 | 0x80  # CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET; NEWTIME
CLONE_NEWUSER = 0x10000000
# Not root (no cgroup to count CPU): any change to SIGCHLD's handling (argument 0). Ignored (or SA_NOCLDWAIT), the
# kernel reaps the job's children itself and their CPU time reaches no parent's count, the init's included.
RT_SIGACTION, SIGCHLD = 13, 17
# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6] (the low half of each comes first)
_NR, _ARCH = 0, 4
_ARG_LOW = {0: 16, 2: 16 + 2 * 8, 5: 16 + 5 * 8}
# classic BPF opcodes
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06

_libc = ctypes.CDLL(None, use_errno=True)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _instruction(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("<HBBI", code, jt, jf, k)


def filter_program(refuse_sigchld: bool = False, refuse_user_namespaces: bool = False
                   ) -> list[tuple[int, int, int, int]]:
    """The filter as (code, jump if true, jump if false, k) instructions; `refuse_sigchld` where no cgroup counts
    the job's CPU time; `refuse_user_namespaces` where no sandbox process makes one after the template (root)."""
    numbers = sorted(REFUSED_SYSCALLS.values())
    advice = sorted(REFUSED_MADVICE.values())
    # (code, label or offset if true, label or offset if false, k); labels are resolved below
    labelled: list[tuple[int, int | str, int | str, int]] = [
        (_LD_W_ABS, 0, 0, _ARCH),
        (_JEQ_K, 1, 0, AUDIT_ARCH_X86_64),
        (_RET_K, 0, 0, SECCOMP_RET_KILL_PROCESS),  # another ABI's numbers mean other calls: never run them
        (_LD_W_ABS, 0, 0, _NR),
        (_JGE_K, "refuse", 0, X32_SYSCALL_BIT),  # the x32 ABI's numbers
        *((_JEQ_K, "refuse", 0, number) for number in numbers),
        *((_JEQ_K, "flags", 0, number) for number in sorted(FLAGGED_RW.values())),
        (_JEQ_K, "socket", 0, SOCKET),
        *(((_JEQ_K, "sigaction", 0, RT_SIGACTION),) if refuse_sigchld else ()),
        *(((_JEQ_K, "no_such_call", 0, CLONE3), (_JEQ_K, "user_ns", 0, UNSHARE), (_JEQ_K, "user_ns", 0, CLONE))
          if refuse_user_namespaces else ()),
        (_JEQ_K, 0, "allow", MADVISE),  # madvise: refused for the listed advice (argument 2) only
        (_LD_W_ABS, 0, 0, _ARG_LOW[2]),
        *((_JEQ_K, "refuse", 0, value) for value in advice),
        (_JEQ_K, 0, "allow", 0xFFFFFFFF),  # never true: on to the end
    ]
    labels = {"flags": len(labelled)}
    labelled += [(_LD_W_ABS, 0, 0, _ARG_LOW[5]), (_JSET_K, "refuse", "allow", RWF_NOWAIT)]
    labels["socket"] = len(labelled)
    labelled += [(_LD_W_ABS, 0, 0, _ARG_LOW[0]),
                 *((_JEQ_K, "refuse", 0, family) for family in sorted(REFUSED_SOCKET_FAMILIES.values())),
                 (_JEQ_K, "allow", "allow", 0)]
    if refuse_sigchld:
        labels["sigaction"] = len(labelled)
        labelled += [(_LD_W_ABS, 0, 0, _ARG_LOW[0]), (_JEQ_K, "refuse", "allow", SIGCHLD)]
    if refuse_user_namespaces:
        labels["user_ns"] = len(labelled)
        labelled += [(_LD_W_ABS, 0, 0, _ARG_LOW[0]), (_JSET_K, "refuse", "allow", CLONE_NEWUSER)]
    labels.update(allow=len(labelled), refuse=len(labelled) + 1, no_such_call=len(labelled) + 2)
    labelled += [(_RET_K, 0, 0, SECCOMP_RET_ALLOW), (_RET_K, 0, 0, SECCOMP_RET_ERRNO | errno.EPERM),
                 (_RET_K, 0, 0, SECCOMP_RET_ERRNO | errno.ENOSYS)]

    def offset(position: int, target: int | str) -> int:
        return target if isinstance(target, int) else labels[target] - position - 1

    return [(code, offset(position, jt), offset(position, jf), k)
            for position, (code, jt, jf, k) in enumerate(labelled)]


def job_filter_program() -> list[tuple[int, int, int, int]]:
    """The second filter, installed (not root) by each worker after its own setup: no namespace of the job's own."""
    allow, refuse, no_such_call = 8, 9, 10  # positions of the three returns below
    return [
        (_LD_W_ABS, 0, 0, _NR),
        (_JEQ_K, no_such_call - 2, 0, CLONE3),
        (_JEQ_K, refuse - 3, 0, SETNS),
        (_JEQ_K, 2, 0, UNSHARE),
        (_JEQ_K, 1, 0, CLONE),
        (_JEQ_K, allow - 6, allow - 6, 0),
        (_LD_W_ABS, 0, 0, _ARG_LOW[0]),
        (_JSET_K, refuse - 8, allow - 8, NAMESPACE_FLAGS),
        (_RET_K, 0, 0, SECCOMP_RET_ALLOW),
        (_RET_K, 0, 0, SECCOMP_RET_ERRNO | errno.EPERM),
        (_RET_K, 0, 0, SECCOMP_RET_ERRNO | errno.ENOSYS),
    ]


def install(refuse_sigchld: bool = False, refuse_user_namespaces: bool = False) -> None:
    """Install the filter in this process (and so in every process it starts); raises if it cannot."""
    _install(filter_program(refuse_sigchld, refuse_user_namespaces))


def install_job_filter() -> None:
    """Install the job filter (`job_filter_program`) in this worker, on top of the template's; raises if it cannot."""
    _install(job_filter_program())


def _install(program: list[tuple[int, int, int, int]]) -> None:
    if platform.machine() != "x86_64":
        raise OSError(errno.ENOSYS, f"the job seccomp filter is written for x86_64, not {platform.machine()}")
    code = b"".join(_instruction(*instruction) for instruction in program)
    buffer = ctypes.create_string_buffer(code, len(code))
    program = _SockFprog(len(code) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    if _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(program), 0, 0) != 0:
        number = ctypes.get_errno()
        raise OSError(number, f"seccomp filter: {errno.errorcode.get(number, number)}")
