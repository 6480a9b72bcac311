"""Run test snippets against a program: the program answers calls in its job, the test runs in a jailed judge.

`run_tests(program, snippets, entry_points=...)` returns one `SnippetResult` per snippet. For each snippet the
zygote starts two processes (`zygote/tests_job`): the job, which loads the program as `__main__` and only answers
calls, and the judge, which runs the snippet under real CPython with the program's names bound to stubs that call
the job and get back decoded plain values (`zygote/judge_child`). Nothing is decided in the job's process, and
nothing of the verdict is computed in this one: the parent receives a small verdict record per snippet.

Verdicts: the test completed -> `pass`; an AssertionError (the test's, or one the program raised) -> `fail`; any
other exception -> `error` (MemoryError with the job's memory cgroup's evidence -> `memory`); the snippet's wall
limit -> `timeout`; the job ended before the verdict -> the status of its ending (`killed`, `memory`, `timeout` for
its CPU limit, `error` for an exit, whatever its code); a value the judge could not hold within its own limits ->
`error` with reason `judge_limit`. With `exit_code=True` each snippet also runs as one script (`program +
separator + snippet`, as `python -c` would) and its exit code is recorded as evidence: never a verdict.
"""

from __future__ import annotations

import ast
import builtins
import math
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from audit_lib.errors import ParameterError, SandboxHarnessError
from audit_lib.sandbox import pool as sandbox_pool
from audit_lib.sandbox.limits import Limits
from audit_lib.sandbox.results import SnippetResult, Status

TRUST = "judge"
# The judge's own limits: its address space holds the decoded values the program returns.
JUDGE_MEMORY_MB = 2048
JUDGE_PROCESSES = 4
_BUILTIN_NAMES = frozenset(dir(builtins))


def trust_counts(snippets: Any, runs_key: str) -> dict[str, int]:
    """How many runs there were and how many the judge decided (every one, in this engine), from `trust`."""
    trusts = [snippet.trust for snippet in snippets]
    return {runs_key: len(trusts), "judged": trusts.count(TRUST)}


@dataclass(frozen=True)
class TestsResult:
    """All snippets of one program; `status` is `pass` when every snippet passed, else the first non-pass."""

    __test__ = False  # not a pytest class

    status: Status
    snippets: tuple[SnippetResult, ...]
    limits: Limits
    duration_s: float
    network_isolated: bool


def names_read(snippet: str, entry_points: Collection[str]) -> list[str]:
    """The names the snippet may read from the program: every name it loads that is not a builtin, and the entry
    points (which may shadow one). Builtins are always the judge's own."""
    try:
        tree = ast.parse(snippet)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return sorted(set(entry_points))
    loaded = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
    declared = {name for node in ast.walk(tree) if isinstance(node, (ast.Global, ast.Nonlocal)) for name in node.names}
    return sorted(((loaded | declared) - _BUILTIN_NAMES) | set(entry_points))


def _judge_limits(timeout_s: float) -> dict[str, Any]:
    return {"memory_mb": JUDGE_MEMORY_MB, "file_size_mb": 16, "open_files": 64, "processes": JUDGE_PROCESSES,
            "output_bytes": 4096, "cpu_s": math.ceil(timeout_s) + 1}


def run_tests(program: str, snippets: Sequence[str], *, entry_points: Collection[str] = (), limits: Limits = Limits(),
              separator: str = "\n\n", exit_code: bool = False) -> TestsResult:
    """Judge each snippet against `program`; `entry_points` are names the snippets call the program by."""
    if isinstance(snippets, str):
        raise ParameterError("snippets must be a sequence of strings, not one string", field="snippets")
    started = time.monotonic()
    timeout = limits.timeout_s
    request = {"op": "tests", "program": program, "snippets": list(snippets),
               "names": [names_read(snippet, entry_points) for snippet in snippets],
               "entry_points": sorted(set(entry_points)),
               "timeouts": [timeout] * len(snippets), "total_timeout": limits.total_timeout_s,
               "limits": limits.wire(timeout), "judge_limits": _judge_limits(timeout)}
    budget = min(limits.total_timeout_s, timeout * len(snippets)) + 30.0 + 5.0 * len(snippets)
    try:
        answer, _blob, isolated = sandbox_pool.request(request, budget, network_isolation=limits.network_isolation)
        results = [_snippet_result(index, record) for index, record in enumerate(answer["results"])]
    except SandboxHarnessError as exc:
        isolated = False
        results = [SnippetResult(index=index, status="harness_error", duration_s=0.0, error_type="SandboxHarnessError",
                                 error_message=str(exc)[-3000:], trust=TRUST) for index in range(len(snippets))]
    if exit_code:
        results = [replace(result, exit_code=code)
                   for result, code in zip(results, script_exit_codes(program, snippets, limits=limits,
                                                                      separator=separator))]
    first_bad = next((r.status for r in results if r.status != "pass"), "pass")
    return TestsResult(status=first_bad, snippets=tuple(results), limits=limits,
                       duration_s=time.monotonic() - started, network_isolated=isolated)


def _snippet_result(index: int, record: dict[str, Any]) -> SnippetResult:
    wall = float(record.get("wall_s", 0.0))
    return SnippetResult(index=index, status=record["status"], duration_s=wall, error_type=record.get("error_type"),
                         error_message=record.get("error_message"), stdout=record.get("stdout", ""),
                         stderr=record.get("stderr", ""), wall_s=wall, cpu_s=float(record.get("cpu_s", 0.0)),
                         reason=record.get("reason"), trust=TRUST,
                         shadowed_modules=tuple(record.get("shadowed_modules") or ()))


def script_exit_codes(program: str, snippets: Sequence[str], *, limits: Limits = Limits(),
                      separator: str = "\n\n") -> list[int | None]:
    """What `python -c program+separator+snippet` exits with, per snippet, as the supervisor saw the process end
    (None on a timeout, a kill or a harness error): the evidence an exit-code harness decides on."""
    codes: list[int | None] = []
    for snippet in snippets:
        request = {"op": "script", "source": program + separator + snippet, "timeout": limits.timeout_s,
                   "limits": limits.wire(limits.timeout_s)}
        try:
            answer, _blob, _isolated = sandbox_pool.request(request, limits.timeout_s + 30.0,
                                                            network_isolation=limits.network_isolation)
        except SandboxHarnessError:
            codes.append(None)
            continue
        codes.append(answer.get("exit_code"))
    return codes


@dataclass(frozen=True)
class TestsJob:
    """A picklable unit of work for `executors.run_many`: `run_tests` on one program."""

    __test__ = False

    key: Any
    program: str
    snippets: tuple[str, ...]
    entry_points: tuple[str, ...]
    limits: Limits = field(default_factory=Limits)
    separator: str = "\n\n"
    exit_code: bool = False

    def run(self) -> TestsResult:
        return run_tests(self.program, self.snippets, entry_points=self.entry_points, limits=self.limits,
                         separator=self.separator, exit_code=self.exit_code)

    def harness_error(self, message: str) -> TestsResult:
        """The result to report when the executor itself failed to run this job."""
        snippets = tuple(SnippetResult(i, "harness_error", 0.0, "SandboxHarnessError", message, trust=TRUST)
                         for i in range(len(self.snippets)))
        return TestsResult("harness_error", snippets, self.limits, 0.0, False)
