"""What running a check cost on this machine: wall time, CPU time here and in child processes, sandbox jobs.

These are measurements of one run on one machine, never properties of the benchmark: the session stores them in
each check's `meta["cost"]` (with `"machine_dependent": true`), and golden comparisons and `diff` ignore `meta`.
Child CPU time is what `getrusage(RUSAGE_CHILDREN)` reports for ended children plus, read from `/proc`, what the
live descendants (the sandbox's warmed zygotes, with the jobs they have reaped) have used. Sandbox jobs are
counted where they start in this process (`note_sandbox_job`): `run_many`'s jobs as they take a worker slot, and
the direct sandbox calls of quiet reruns.
"""

from __future__ import annotations

import os
import resource
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

COST_META_KEY = "cost"
_PROC = Path("/proc")
_TICKS_PER_S = float(os.sysconf("SC_CLK_TCK")) if hasattr(os, "sysconf") else 100.0

_jobs_lock = threading.Lock()
_jobs_started = 0


def note_sandbox_job(count: int = 1) -> None:
    """Count sandbox jobs started in this process (call it where a job is handed to the sandbox)."""
    global _jobs_started
    with _jobs_lock:
        _jobs_started += count


def sandbox_jobs_so_far() -> int:
    """Sandbox jobs started in this process since it began."""
    with _jobs_lock:
        return _jobs_started


@dataclass(frozen=True)
class Usage:
    """Running totals at one moment (`usage_now`), or what was spent between two moments (their difference)."""

    wall_s: float
    cpu_s: float  # this process, every thread
    children_cpu_s: float  # its descendant processes, ended and live
    sandbox_jobs: int

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.wall_s + other.wall_s, self.cpu_s + other.cpu_s,
                     self.children_cpu_s + other.children_cpu_s, self.sandbox_jobs + other.sandbox_jobs)

    def __sub__(self, other: Usage) -> Usage:
        return Usage(self.wall_s - other.wall_s, self.cpu_s - other.cpu_s,
                     self.children_cpu_s - other.children_cpu_s, self.sandbox_jobs - other.sandbox_jobs)


ZERO = Usage(0.0, 0.0, 0.0, 0)


def usage_now() -> Usage:
    """This process's totals now: monotonic clock, own CPU, descendants' CPU, sandbox jobs started."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    return Usage(time.monotonic(), own.ru_utime + own.ru_stime, descendants_cpu_s(), sandbox_jobs_so_far())


def descendants_cpu_s(pid: int | None = None) -> float:
    """CPU seconds of every descendant of `pid` (default: this process): ended ones and live ones.

    Ended children are `getrusage(RUSAGE_CHILDREN)` (only for this process); each live descendant adds its own time
    and that of the children it has reaped (`/proc/<pid>/stat`). A process that ends between two reads may be
    missed once; a descendant whose parent died before reaping it is lost, as the kernel loses it."""
    total = 0.0
    if pid is None:
        ended = resource.getrusage(resource.RUSAGE_CHILDREN)
        total = ended.ru_utime + ended.ru_stime
    for child in live_descendants(os.getpid() if pid is None else pid):
        total += _process_cpu_s(child)
    return total


def live_descendants(pid: int) -> Iterator[int]:
    """The pids below `pid` in the process tree, read from `/proc/<pid>/task/<tid>/children` (none without it)."""
    pending, seen = [pid], {pid}
    while pending:
        parent = pending.pop()
        try:
            tasks = list((_PROC / str(parent) / "task").iterdir())
        except OSError:  # ended, or no /proc here
            continue
        for task in tasks:
            try:
                children = (task / "children").read_text().split()
            except OSError:
                continue
            for text in children:
                child = int(text)
                if child not in seen:
                    seen.add(child)
                    pending.append(child)
                    yield child


def _process_cpu_s(pid: int) -> float:
    """utime + stime + cutime + cstime of a live process (0 once it has ended)."""
    try:
        stat = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return 0.0
    fields = stat.rsplit(")", 1)[-1].split()  # the command name may hold spaces and parentheses
    try:  # fields 14-17 of proc(5), counted from the state (field 3) here
        return sum(int(value) for value in fields[11:15]) / _TICKS_PER_S
    except (ValueError, IndexError):
        return 0.0


class CostMeter:
    """Measures nested spans (a check and the checks it needs, run inside it), each without the spans inside it."""

    def __init__(self, clock: Callable[[], Usage] = usage_now) -> None:
        self._clock = clock
        self._open: list[tuple[Usage, Usage]] = []  # (totals at the start, spent by spans nested inside)

    def start(self) -> None:
        self._open.append((self._clock(), ZERO))

    def stop(self) -> Usage:
        """What the innermost open span spent, less its nested spans; it counts as nested in the span around it."""
        started, nested = self._open.pop()
        spent = self._clock() - started
        if self._open:
            outer_start, outer_nested = self._open[-1]
            self._open[-1] = (outer_start, outer_nested + spent)
        exclusive = spent - nested
        return Usage(max(0.0, exclusive.wall_s), max(0.0, exclusive.cpu_s), max(0.0, exclusive.children_cpu_s),
                     max(0, exclusive.sandbox_jobs))


@dataclass(frozen=True)
class CheckCost:
    """One check's cost in one run: `meta["cost"]`. `sandbox_jobs` is None where jobs ran elsewhere (Dask)."""

    wall_s: float
    cpu_s: float  # the kernel process (parsing, encoding, decoding, comparing)
    children_cpu_s: float  # its child processes: the sandbox's zygotes and jobs, and any other subprocess
    sandbox_jobs: int | None

    @classmethod
    def of(cls, spent: Usage, *, jobs_counted: bool = True) -> CheckCost:
        return cls(spent.wall_s, spent.cpu_s, spent.children_cpu_s, spent.sandbox_jobs if jobs_counted else None)

    @property
    def total_cpu_s(self) -> float:
        return self.cpu_s + self.children_cpu_s

    def to_meta(self) -> dict[str, Any]:
        return {"wall_s": round(self.wall_s, 3), "cpu_s": round(self.cpu_s, 3),
                "children_cpu_s": round(self.children_cpu_s, 3), "sandbox_jobs": self.sandbox_jobs,
                "machine_dependent": True}

    @classmethod
    def from_meta(cls, meta: Mapping[str, Any] | None) -> CheckCost | None:
        """The cost a check's `meta` records, or None when it records none (findings from before, or malformed)."""
        cost = (meta or {}).get(COST_META_KEY)
        if not isinstance(cost, Mapping):
            return None
        try:
            jobs = cost.get("sandbox_jobs")
            return cls(float(cost["wall_s"]), float(cost["cpu_s"]), float(cost["children_cpu_s"]),
                       None if jobs is None else int(jobs))
        except (KeyError, TypeError, ValueError):
            return None

    def text(self) -> str:
        """`12.3 s wall · 20.1 s CPU · 164 sandbox jobs` (the jobs left out when not counted)."""
        parts = [f"{seconds(self.wall_s)} wall", f"{seconds(self.total_cpu_s)} CPU"]
        if self.sandbox_jobs is not None:
            parts.append(f"{self.sandbox_jobs:,} sandbox job{'s' if self.sandbox_jobs != 1 else ''}")
        return " · ".join(parts)


def seconds(value: float) -> str:
    """`12.3 s`, or `0.04 s` under a second (where one decimal would say 0.0)."""
    return f"{value:.2f} s" if value < 1 else f"{value:.1f} s"


__all__ = ["COST_META_KEY", "CheckCost", "CostMeter", "Usage", "descendants_cpu_s", "live_descendants",
           "note_sandbox_job", "sandbox_jobs_so_far", "seconds", "usage_now"]
