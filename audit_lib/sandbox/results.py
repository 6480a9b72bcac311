"""What the sandbox reports: the statuses a verdict can have, and the verdict on one test snippet."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

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
    # Names the test read that the program bound to something other than the module of that name: the judge bound
    # the real module instead (docs/SANDBOX.md, deliberate deviations).
    shadowed_modules: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if type(self.shadowed_modules) is not tuple:  # a list when read back from JSON
            object.__setattr__(self, "shadowed_modules", tuple(self.shadowed_modules))


OutcomeKind = Literal["value", "exception", "timeout", "unserializable", "not_run"]


@dataclass(frozen=True)
class CallOutcome:
    """What one call `entry_point(*args)` did; `value` is decoded from tagged JSON, never unpickled."""

    index: int
    kind: OutcomeKind
    value: Any = None
    exc_type: str | None = None
    exc_message: str | None = None
    duration_s: float = 0.0  # = wall_s, kept for callers of the first interface
    # Measured by the supervisor: from the arrival of the previous result line (or the load marker) to this one's,
    # and the job's CPU time over the same interval. Lines that arrive together: the first carries the interval.
    wall_s: float = 0.0
    cpu_s: float = 0.0
    # True when the supervisor wrote this outcome (the process ended or was killed while running the input): its
    # exc_type (MemoryError with the cgroup's OOM kill, SIG..., SandboxSetupError) is evidence, not the code's word.
    by_supervisor: bool = False
    # An exception raised while the job's memory ran out (its cgroup refused charges or OOM-killed a process, since
    # the input's group started): the evidence a raised MemoryError needs to be `memory` (as root; never without
    # cgroups).
    memory_limit_hit: bool = False
    # CPU seconds the job's other threads and processes used since the previous answer (outside the main thread that
    # runs the calls): charged to this input, whose wall time plus this over its limit made it `timeout`.
    background_cpu_s: float = 0.0
    # With a judge (`call_function(judge=...)`): "match" or "wrong_value" for an input with an expected value, None
    # otherwise; `reason` says why not a match. `preview`: the start of the output's repr, made in the judge (or with
    # values="preview" and no judge, the start of its tagged JSON); `value` is then None.
    verdict: str | None = None
    reason: str = ""
    preview: str | None = None
