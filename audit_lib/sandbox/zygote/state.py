"""What the zygote sets up once: job uid, network namespace, job cgroups, preloaded modules, the template, cells."""

from __future__ import annotations

import ctypes
import fcntl
import os
import sys
import tempfile

from audit_lib.sandbox.zygote import jail, template
from audit_lib.sandbox.zygote.cell import CellKeeper
from audit_lib.sandbox.zygote.cgroups import JobCgroup
from audit_lib.sandbox.zygote.protocol import CLONE_NEWNET, PR_SET_DUMPABLE


class ZygoteState:
    """The job uid (root) or nested user namespace (not root), the job cgroups, the pristine template and the cells."""

    def __init__(self, config: dict, protocol_fds: tuple[int, int]) -> None:
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
        self.package_parent = config["package_parent"]
        self.uid: int | None = None
        self.judge_uid: int | None = None
        self.lock_fd: int | None = None
        self.judge_lock_fd: int | None = None
        root = os.geteuid() == 0 and not config.get("already_unshared")
        if config.get("drop_uid"):
            self.uid, self.lock_fd = _claim_uid(config["uid_base"], config["uid_count"], config["uid_lock_dir"])
            # Tests jobs' judges run under a uid of their own, which no job ever has.
            self.judge_uid, self.judge_lock_fd = _claim_uid(config["uid_base"], config["uid_count"],
                                                            config["uid_lock_dir"])
        # Not root, under `unshare -r`: the job gets a user namespace of its own where it is uid 1000.
        self.nested_userns = self.uid is None and bool(config.get("already_unshared"))
        if config.get("network_isolation") and root:
            self.libc.unshare(CLONE_NEWNET)  # failure shows up in the namespace comparison below
        self.network_isolated = os.stat("/proc/self/ns/net").st_ino != config["parent_netns"]
        self.cgroup = JobCgroup.create() if root else None
        # An empty dir of an unpredictable name, only ever a mount point inside the template's own namespace.
        self.jail_dir = tempfile.mkdtemp(prefix="benchaudit-root-", dir=config.get("tmp_root"))
        keep = tuple(self.cgroup.procs_fds) if self.cgroup is not None else ()
        setup = {"uid": self.uid, "judge_uid": self.judge_uid, "nested_userns": self.nested_userns, "package_parent": self.package_parent,
                 "tmp_owner": self.uid if self.uid is not None else 0,
                 "hidden_dirs": jail.hidden_data_dirs(sys.path)}
        try:
            self.template_pid, self.template_sock = template.start(self.jail_dir, keep, setup)
        finally:
            # Ready means the template has pivoted into its root: the host's dir is no one's mount point any more,
            # and removed now it cannot outlive a zygote that is killed.
            _remove_dir(self.jail_dir)
        # Not root, every job gets a cell of its own (see `supervise.ChildRun.finish`), made before the job before it
        # runs (`cell.CellKeeper`).
        self.cells = CellKeeper(self.template_sock, fresh_per_job=self.uid is None)
        self.cells.request()  # the first cell is prepared while the zygote reports ready
        # Judges' cells come from the same template: any ready cell serves either keeper.
        self.judge_cells = CellKeeper(self.template_sock)
        self.protocol_fds = protocol_fds

    def hello(self) -> dict:
        return {"ok": True, "pid": os.getpid(), "uid": self.uid, "network_isolated": self.network_isolated,
                "cgroup": self.cgroup is not None, "nested_userns": self.nested_userns}

    def close(self) -> None:
        self.cells.close()
        self.judge_cells.close()
        self.template_sock.close()
        try:
            os.waitpid(self.template_pid, 0)
        except ChildProcessError:
            pass
        if self.cgroup is not None:
            self.cgroup.remove()


def _remove_dir(path: str) -> None:
    try:
        os.rmdir(path)
    except OSError:
        pass


def _claim_uid(base: int, count: int, lock_dir: str) -> tuple[int, int]:
    """A dedicated uid for this zygote's jobs, held by an exclusive lock for the zygote's lifetime."""
    os.makedirs(lock_dir, mode=0o700, exist_ok=True)
    if os.lstat(lock_dir).st_uid != os.geteuid() or not os.path.isdir(lock_dir) or os.path.islink(lock_dir):
        raise RuntimeError(f"{lock_dir} is not a directory of ours")
    for uid in range(base, base + count):
        fd = os.open(os.path.join(lock_dir, f"{uid}.lock"), os.O_CREAT | os.O_RDWR | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        return uid, fd
    raise RuntimeError(f"no free sandbox uid in [{base}, {base + count})")
