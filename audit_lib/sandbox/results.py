"""What the sandbox reports: the statuses a verdict can have, and the verdict on one test snippet."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Status = Literal["pass", "fail", "error", "timeout", "memory", "killed", "harness_error"]
STATUSES: tuple[str, ...] = ("pass", "fail", "error", "timeout", "memory", "killed", "harness_error")
# Failures caused by the environment, not by the code under test.
ENVIRONMENT_STATUSES: frozenset[str] = frozenset({"memory", "harness_error"})


@dataclass(frozen=True)
class SnippetResult:
    """The verdict on one test snippet run against the program."""

    index: int
    status: Status
    duration_s: float
    error_type: str | None = None
    error_message: str | None = None
    stdout: str = ""
    stderr: str = ""
    # What `python -c program+snippet` would have exited with: 0 on completion, the SystemExit / os._exit code,
    # 1 for an uncaught exception; None on timeout, kill or harness error. Evidence only: never a verdict.
    exit_code: int | None = None
    # Measured by the supervisor, outside the child: wall time from start to the end of the job's processes, and
    # the CPU time of all of them (the job's cpuacct cgroup; without one, the worker's own rusage).
    wall_s: float = 0.0
    cpu_s: float = 0.0
    # "judge_limit" when the judge could not hold what the program sent within its own limits.
    reason: str | None = None
    # Who decided the verdict: "judge", the jailed process that ran the test (`testrun`).
    trust: str = "judge"
