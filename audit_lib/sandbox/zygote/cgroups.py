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


def _write(path: str, value: str) -> None:
    with open(path, "w") as handle:
        handle.write(value)


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
        self._cpu_file = os.path.join(dirs["cpuacct"], "cpuacct.usage")
        self._cpu_fd = os.open(self._cpu_file, os.O_RDONLY | os.O_CLOEXEC)  # read once per result line: kept open
        self._oom_kills_before = 0

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
                path = os.path.join(base + own, f"benchaudit-{os.getpid()}")
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
        memory = self.dirs["memory"]
        limit = str(int(memory_mb) * 1024 * 1024)
        if self.memsw:  # memory+swap: raise it last when growing, first when shrinking; try both orders
            for name in ("memory.limit_in_bytes", "memory.memsw.limit_in_bytes", "memory.limit_in_bytes"):
                try:
                    _write(os.path.join(memory, name), limit)
                except OSError:
                    pass
        else:
            _write(os.path.join(memory, "memory.limit_in_bytes"), limit)
        _write(os.path.join(memory, "memory.max_usage_in_bytes"), "0")
        _write(os.path.join(memory, "memory.failcnt"), "0")
        # The template, the cell's leader, init and worker, a replacement cell the template may be starting, plus the
        # code's processes. Tasks of a retired cell that are dead but not yet released by the kernel (pid namespace
        # teardown defers it) still count for a moment: added too.
        pids = self.dirs["pids"]
        lingering = int(_read(os.path.join(pids, "pids.current")))
        _write(os.path.join(pids, "pids.max"), str(int(processes) + 7 + lingering))
        _write(self._cpu_file, "0")
        self._oom_kills_before = self.oom_kills()

    def cpu_s(self) -> float:
        return int(os.pread(self._cpu_fd, 64, 0)) / 1e9

    def oom_kills(self) -> int:
        for line in _read(os.path.join(self.dirs["memory"], "memory.oom_control")).splitlines():
            name, _, value = line.partition(" ")
            if name == "oom_kill":
                return int(value)
        return 0

    def job_was_oom_killed(self) -> bool:
        return self.oom_kills() > self._oom_kills_before

    def hit_memory_limit(self) -> bool:
        return int(_read(os.path.join(self.dirs["memory"], "memory.failcnt"))) > 0

    def remove(self) -> None:
        os.close(self._cpu_fd)
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
