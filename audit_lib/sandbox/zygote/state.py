"""What the zygote sets up once: subreaper, job uid, network namespace, temp root, preloaded modules."""

from __future__ import annotations

import ctypes
import fcntl
import os

from audit_lib.sandbox.zygote.protocol import CLONE_NEWNET, PR_SET_CHILD_SUBREAPER, PR_SET_DUMPABLE, PRELOADED_MODULES


class ZygoteState:
    """What the zygote set up once: the job uid, its temp root and whether the network is isolated."""

    def __init__(self, config: dict) -> None:
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        self.libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
        self.package_parent = config["package_parent"]
        self.uid: int | None = None
        self.lock_fd: int | None = None
        if config.get("drop_uid"):
            self.uid, self.lock_fd = _claim_uid(config["uid_base"], config["uid_count"], config["uid_lock_dir"])
        if config.get("network_isolation") and os.geteuid() == 0 and not config.get("already_unshared"):
            self.libc.unshare(CLONE_NEWNET)  # failure shows up in the namespace comparison below
        self.network_isolated = os.stat("/proc/self/ns/net").st_ino != config["parent_netns"]
        self.tmp_root = os.path.join(config["tmp_root"], f"benchaudit-sandbox-{os.getpid()}")
        os.makedirs(self.tmp_root, mode=0o711, exist_ok=True)
        os.chmod(self.tmp_root, 0o711)
        self.job_counter = 0
        self.protected_pids: set[int] = set()  # the zygote's own helpers (a job's judge), never killed as leftovers
        self.tid_children = f"/proc/self/task/{os.getpid()}/children"
        self.has_children_file = os.path.exists(self.tid_children)
        for name in PRELOADED_MODULES:
            try:
                __import__(name)
            except ImportError:
                pass

    def hello(self) -> dict:
        return {"ok": True, "pid": os.getpid(), "uid": self.uid, "network_isolated": self.network_isolated,
                "subreaper_children_file": self.has_children_file}


def _claim_uid(base: int, count: int, lock_dir: str) -> tuple[int, int]:
    """A dedicated uid for this zygote's jobs, held by an exclusive lock for the zygote's lifetime."""
    os.makedirs(lock_dir, mode=0o700, exist_ok=True)
    for uid in range(base, base + count):
        fd = os.open(os.path.join(lock_dir, f"{uid}.lock"), os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        return uid, fd
    raise RuntimeError(f"no free sandbox uid in [{base}, {base + count})")
