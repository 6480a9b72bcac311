"""One cgroup v1 set (memory, pids, cpuacct) per zygote, holding one job at a time: limits per job, not per process.

The zygote creates the groups under its own cgroup in each hierarchy, opens their `cgroup.procs` for the template
to join itself once (so every job process is born inside them and nothing escapes the limits), sets the
limits and clears the counters before each job, and after it reads the CPU time and the OOM-kill count, which the
code under test cannot forge. Where the hierarchies are not writable (not root, no cgroup
v1), `JobCgroup.create` returns None and the job falls back to rlimits (documented in README "Sandbox").
"""

from __future__ import annotations

import os
import signal
import time

CGROUP_ROOT = "/sys/fs/cgroup"
CONTROLLERS = ("memory", "pids", "cpuacct")
GROUP_PREFIX = "benchaudit-"


def _own_path(controller: str) -> str | None:
    try:
        with open("/proc/self/cgroup") as handle:
            for line in handle:
                _id, names, path = line.rstrip("\n").split(":", 2)
                if controller in names.split(","):
                    return path
    except OSError:
        return None
    return None


def _remove_stale(parent: str) -> None:
    """Remove the groups zygotes left behind when they were killed before their cleanup (their pid is gone): left,
    they pile up on a long-lived machine, and one whose pid comes round again would keep that zygote from making
    its own. A group that still holds a task is not removed (rmdir refuses it)."""
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        pid_text = name[len(GROUP_PREFIX):]
        if not name.startswith(GROUP_PREFIX) or not pid_text.isdigit() or _alive(int(pid_text)):
            continue
        try:
            os.rmdir(os.path.join(parent, name))
        except OSError:
            pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _read(path: str) -> str:
    with open(path) as handle:
        return handle.read()


class JobCgroup:
    """The zygote's memory / pids / cpuacct groups; `procs_fds` are inherited by the job process that joins them."""

    def __init__(self, dirs: dict[str, str]) -> None:
        self.dirs = dirs
        self.procs_fds = tuple(os.open(os.path.join(d, "cgroup.procs"), os.O_WRONLY | os.O_CLOEXEC)
                               for d in dirs.values())
        self.memsw = os.path.exists(os.path.join(dirs["memory"], "memory.memsw.limit_in_bytes"))
        # Read and written around every job: kept open (an open() and close() per access showed in the zygote's
        # profile).
        files = [("cpuacct", "cpuacct.usage", os.O_RDWR), ("memory", "memory.failcnt", os.O_RDWR),
                 ("memory", "memory.oom_control", os.O_RDONLY), ("memory", "memory.limit_in_bytes", os.O_WRONLY),
                 ("pids", "pids.current", os.O_RDONLY), ("pids", "pids.max", os.O_WRONLY)]
        if self.memsw:
            files.append(("memory", "memory.memsw.limit_in_bytes", os.O_WRONLY))
        self._fds = {name: os.open(os.path.join(dirs[controller], name), mode | os.O_CLOEXEC)
                     for controller, name, mode in files}
        # The limits as last set (the job cannot reach the cgroup files): a job with the same ones writes nothing.
        self._memory_limit: str | None = None
        self._pids_max: str | None = None
        self._oom_kills_before = 0

    def _write(self, name: str, value: str) -> None:
        os.pwrite(self._fds[name], value.encode(), 0)

    def _read(self, name: str) -> str:
        return os.pread(self._fds[name], 4096, 0).decode()

    @classmethod
    def create(cls) -> JobCgroup | None:
        if os.geteuid() != 0:
            return None
        dirs: dict[str, str] = {}
        try:
            for controller in CONTROLLERS:
                own = _own_path(controller)
                base = os.path.join(CGROUP_ROOT, controller)
                if own is None or not os.path.isdir(base):
                    raise OSError(f"no cgroup v1 {controller} hierarchy")
                _remove_stale(base + own)
                path = os.path.join(base + own, f"{GROUP_PREFIX}{os.getpid()}")
                os.mkdir(path, 0o700)  # never exist_ok: the name is ours alone
                dirs[controller] = path
            return cls(dirs)
        except OSError:
            for path in dirs.values():
                try:
                    os.rmdir(path)
                except OSError:
                    pass
            return None

    def prepare(self, memory_mb: int, processes: int) -> None:
        """Limits for the next job, counters cleared; the group must be empty."""
        limit = str(int(memory_mb) * 1024 * 1024)
        if self._memory_limit != limit:
            self._memory_limit = None
            if self.memsw:  # memory+swap: raise it last when growing, first when shrinking; try both orders
                written = set()
                for name in ("memory.limit_in_bytes", "memory.memsw.limit_in_bytes", "memory.limit_in_bytes"):
                    try:
                        self._write(name, limit)
                        written.add(name)
                    except OSError:
                        pass
                if len(written) == 2:
                    self._memory_limit = limit
            else:
                self._write("memory.limit_in_bytes", limit)
                self._memory_limit = limit
        self._write("memory.failcnt", "0")
        # The template, the cell's leader, init and worker, the judge's leader, init and worker (tests jobs), a
        # replacement cell the template may be starting, plus the
        # code's processes. Tasks of a retired cell that are dead but not yet released by the kernel (pid namespace
        # teardown defers it) still count for a moment: added too.
        lingering = int(self._read("pids.current"))
        pids_max = str(int(processes) + 10 + lingering)
        if pids_max != self._pids_max:
            self._pids_max = None
            self._write("pids.max", pids_max)
            self._pids_max = pids_max
        self._write("cpuacct.usage", "0")
        self._oom_kills_before = self.oom_kills()

    def cpu_s(self) -> float:
        return int(os.pread(self._fds["cpuacct.usage"], 64, 0)) / 1e9  # once per result line

    def oom_kills(self) -> int:
        for line in self._read("memory.oom_control").splitlines():
            name, _, value = line.partition(" ")
            if name == "oom_kill":
                return int(value)
        return 0

    def job_was_oom_killed(self) -> bool:
        return self.oom_kills() > self._oom_kills_before

    def memory_failures(self) -> int:
        """How often the job's memory ran out so far: charges refused at the limit (`memory.failcnt`, since the job
        started) plus the group's OOM kills; it only grows while a job runs."""
        return int(self._read("memory.failcnt")) + self.oom_kills()

    def hit_memory_limit(self) -> bool:
        return int(self._read("memory.failcnt")) > 0

    def remove(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        for fd in self.procs_fds:
            os.close(fd)
        for pid in (int(p) for p in _read(os.path.join(self.dirs["pids"], "cgroup.procs")).split()):
            try:  # whatever is left once the template is gone (its prepared job processes die with it anyway)
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        for _attempt in range(200):  # until the template and the last job's tasks are released
            remaining = [path for path in self.dirs.values() if os.path.isdir(path)]
            for path in remaining:
                try:
                    os.rmdir(path)
                except OSError:
                    pass
            if not remaining:
                return
            time.sleep(0.01)
