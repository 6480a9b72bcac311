"""Run test snippets against a program: lifted to call mode where their shape allows, assert mode otherwise.

`run_tests(program, snippets, entry_points=...)` returns one `SnippetResult` per snippet, like `run_asserts`, with
`trust` saying who decided it: "parent" when the snippet was lifted (`sandbox_lifting`), its calls ran in the child
through `call_function` and the parent replayed the asserts on the decoded values (`sandbox_lifted_eval`);
"in_process" when it ran in assert mode (exact builtin types only, `sandbox_strict`). A lifted snippet falls back
to assert mode when a value cannot be sent back (not plain data, over the decode budget) or the replay meets
something it does not model. Each lifted snippet gets its own call job, so no state crosses snippets, as in
assert mode.

Verdicts of a lifted snippet: an assert that is false -> `fail` (AssertionError); a call that raised -> `fail` for
AssertionError, `memory` for MemoryError, else `error`; a call that timed out or was not reached -> `timeout`; a
child killed by a signal -> `killed`; an exception raised by the assert expression itself (TypeError, IndexError...)
-> `error`, all as the same snippet run in-process would end. `exit_code` is None: nothing ran as `python -c`.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from audit_lib import sandbox
from audit_lib.errors import ParameterError
from audit_lib.sandbox import CallJobResult, CallOutcome, Limits, SnippetResult, Status
from audit_lib.sandbox.budget import safe_repr
from audit_lib.sandbox.lift_program import (
    WRAPPER_NAME,
    append_harness,
    module_level_names,
    names_read,
    plain_imports,
    program_allows_lifting,
    wrapper_source,
)
from audit_lib.sandbox.lifted_eval import CallFailed, ParentTimeout, Replay, Unsupported
from audit_lib.sandbox.lifting import LiftedTest, NotLiftable, lift_snippet
from audit_lib.sandbox.replay_values import holds_nan

_SIGNAL_PREFIX = "SIG"
_MESSAGE_CHARS = 2000


def trust_counts(snippets: Iterable[Any], runs_key: str) -> dict[str, int]:
    """How many runs the parent decided (lifted to call mode) and how many ran in-process (assert mode), from each
    verdict's `trust` (a `SnippetResult` or an audit's own verdict); `runs_key` names what a run is for the reader
    (`constraint_runs`, `test_runs`...)."""
    trusts = [snippet.trust for snippet in snippets]
    lifted = trusts.count("parent")
    return {runs_key: len(trusts), "lifted": lifted, "in_process": len(trusts) - lifted}


@dataclass(frozen=True)
class TestsResult:
    """All snippets of one program; `status` is `pass` when every snippet passed, else the first non-pass.

    `lifted` counts the snippets decided by the parent; `not_lifted` says why each other one ran in-process."""

    __test__ = False  # not a pytest class

    status: Status
    snippets: tuple[SnippetResult, ...]
    limits: Limits
    duration_s: float
    network_isolated: bool
    lifted: int
    not_lifted: tuple[tuple[int, str], ...]


def run_tests(program: str, snippets: Sequence[str], *, entry_points: Collection[str], limits: Limits = Limits(),
              separator: str = "\n\n", lift: bool = True) -> TestsResult:
    """Judge each snippet against `program`; `entry_points` are the names the snippets call the program by.

    The lifted snippets that call the same entry point share one call request (`call_function(input_groups=...)`),
    each snippet a job of its own in the zygote's cell, within its own time limit; the others then run in assert
    mode, one child each, in order."""
    if isinstance(snippets, str):
        raise ParameterError("snippets must be a sequence of strings, not one string", field="snippets")
    started = time.monotonic()
    total_deadline = started + limits.total_timeout_s
    plans = _plans(program, snippets, frozenset(entry_points), lift)
    decided: dict[int, SnippetResult] = {}
    why_not: dict[int, str] = {}
    network_isolated = False
    for batch in _batches(plans):
        remaining = total_deadline - time.monotonic()
        if remaining <= 0:
            break
        verdicts, isolated = _run_lifted_batch(program, batch, limits, remaining)
        network_isolated = network_isolated or isolated
        for index, (verdict, reason) in verdicts.items():
            if verdict is not None:
                decided[index] = verdict
            else:
                why_not[index] = reason
    results: list[SnippetResult] = []
    not_lifted: list[tuple[int, str]] = []
    for index, snippet in enumerate(snippets):
        if index in decided:
            results.append(decided[index])
            continue
        plan = plans[index]
        remaining = total_deadline - time.monotonic()
        if remaining <= 0:
            results.append(SnippetResult(index=index, status="timeout", duration_s=0.0, error_type="NotRun",
                                         error_message="not run: the job's total time limit was used up"))
            continue
        not_lifted.append((index, why_not.get(index) or getattr(plan, "reason", "not run lifted")))
        job = sandbox.run_asserts(program, [snippet], separator=separator,
                                  limits=replace(limits, total_timeout_s=remaining))
        network_isolated = network_isolated or job.network_isolated
        results.append(replace(job.snippets[0], index=index))
    first_bad = next((r.status for r in results if r.status != "pass"), "pass")
    return TestsResult(status=first_bad, snippets=tuple(results), limits=limits,
                       duration_s=time.monotonic() - started, network_isolated=network_isolated,
                       lifted=sum(1 for r in results if r.trust == "parent"), not_lifted=tuple(not_lifted))


def _plans(program: str, snippets: Sequence[str], chosen: frozenset[str], lift: bool) -> list[LiftedTest | NotLiftable]:
    blocked = program_allows_lifting(program) if lift else "lifting switched off"
    plans: list[LiftedTest | NotLiftable] = []
    bound: frozenset[str] | None = None
    read: frozenset[str] | None = None
    imports: dict[str, str] | None = None
    for snippet in snippets:
        plan = NotLiftable(blocked) if blocked else lift_snippet(snippet, chosen)
        if isinstance(plan, LiftedTest) and plan.builtins_used:
            bound = module_level_names(program) if bound is None else bound
            shadowed = plan.builtins_used & bound
            if shadowed:
                plan = NotLiftable(f"the program binds {', '.join(sorted(shadowed))}, which the snippet uses")
        if isinstance(plan, LiftedTest) and plan.module_names:
            read = names_read(program) if read is None else read
            imports = plain_imports(program) if imports is None else imports
            same_module = {name for name, module in plan.module_imports if imports.get(name) == module}
            shared = (plan.module_names if read is None else plan.module_names & read) - same_module
            if shared:
                plan = NotLiftable(f"the snippet binds {', '.join(sorted(shared))} in the globals it shares with "
                                   "the program, which reads them")
        plans.append(plan)
    return plans


def _batches(plans: Sequence[LiftedTest | NotLiftable]) -> list[list[tuple[int, LiftedTest]]]:
    """The lifted snippets by the function their calls go to (the entry point, or its argument-returning wrapper)."""
    batches: dict[tuple[str, bool, bool] | int, list[tuple[int, LiftedTest]]] = {}
    for index, plan in enumerate(plans):
        if isinstance(plan, LiftedTest):  # one that makes no call has a job of its own: the load decides it
            key = (plan.entry_point, plan.reads_arguments, plan.routes is not None)
            batches.setdefault(key if plan.calls else index, []).append((index, plan))
    return list(batches.values())


def _run_lifted_batch(program: str, batch: list[tuple[int, LiftedTest]], limits: Limits,
                      remaining: float) -> tuple[dict[int, tuple[SnippetResult | None, str]], bool]:
    """{snippet index: (its verdict, "") or (None, why it must run in assert mode instead)}, isolated."""
    deadline = time.monotonic() + remaining
    timeout = min(limits.timeout_s, remaining)
    first = batch[0][1]
    source = append_harness(program, wrapper_source(first.entry_point, first.reads_arguments,
                                                    first.routes is not None))
    calls = [call for _index, plan in batch for call in _call_arguments(plan)]
    grouped = bool(calls)
    try:
        job = sandbox.call_function(
            source, WRAPPER_NAME, calls, limits=replace(limits, timeout_s=timeout,
                                                 total_timeout_s=remaining if grouped else timeout),
            input_groups=[len(plan.calls) for _index, plan in batch] if grouped else None,
            group_timeout_s=[timeout] * len(batch) if grouped else None)
    except ParameterError as exc:
        return {index: (None, f"arguments cannot be sent: {exc}") for index, _plan in batch}, False
    verdicts: dict[int, tuple[SnippetResult | None, str]] = {}
    # A snippet alone keeps the job's own times; one of several gets its calls' wall time and its group's CPU time
    # (its own job's load, calls and exit: `CallJobResult.group_cpu_s`).
    shared = grouped and len(batch) > 1
    if shared and _ended_the_shared_job(job):
        return _run_each_alone(program, batch, limits, deadline), job.network_isolated
    offset = 0
    for position, (index, plan) in enumerate(batch):
        own = job.outcomes[offset:offset + len(plan.calls)]
        stdout, stderr = job.group_output[position] if shared and job.group_output else (job.stdout, job.stderr)
        calls_job = replace(  # this snippet's share of the job
            job, outcomes=tuple(replace(outcome, index=outcome.index - offset) for outcome in own),
            duration_s=sum(outcome.wall_s for outcome in own) if shared else job.duration_s,
            cpu_s=job.group_cpu_s[position] if shared and job.group_cpu_s else job.cpu_s, stdout=stdout,
            stderr=stderr)
        offset += len(plan.calls)
        verdicts[index] = _lifted_verdict(calls_job, plan, index, timeout)
    return verdicts, job.network_isolated


def _call_arguments(plan: LiftedTest) -> list[list[Any]]:
    """Each call's arguments to the wrapper: with routes, the route first (`wrapper_source(routed=True)`)."""
    if plan.routes is None:
        return [list(args) for args in plan.calls]
    return [[[slot, list(captures)], *args] for (slot, captures), args in zip(plan.routes, plan.calls)]


def _ended_the_shared_job(job: CallJobResult) -> bool:
    """Whether something ended the shared job as a whole after its first load (a protocol violation, a failed
    reload after a crash, a harness error): one snippet's doing would then decide its neighbours' verdicts, so each
    snippet runs in a job of its own instead, as it would without batching. A failed first load is every snippet's
    own (each would load the same program first)."""
    if job.status == "harness_error" or (job.load_error or "").startswith("ProtocolViolation"):
        return True
    return job.load_error is not None and (job.restarts > 0 or any(o.kind != "not_run" for o in job.outcomes))


def _run_each_alone(program: str, batch: list[tuple[int, LiftedTest]], limits: Limits,
                    deadline: float) -> dict[int, tuple[SnippetResult | None, str]]:
    verdicts: dict[int, tuple[SnippetResult | None, str]] = {}
    for index, plan in batch:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            verdicts[index] = (SnippetResult(index=index, status="timeout", duration_s=0.0, error_type="NotRun",
                                             error_message="not run: the job's total time limit was used up",
                                             trust="parent"), "")
            continue
        verdicts.update(_run_lifted_batch(program, [(index, plan)], limits, remaining)[0])
    return verdicts


def _lifted_verdict(job: CallJobResult, plan: LiftedTest, index: int,
                    timeout: float) -> tuple[SnippetResult | None, str]:
    """(the verdict, "") or (None, why the snippet must run in assert mode instead)."""

    def verdict(status: str, error_type: str | None = None, message: str | None = None,
                extra_s: float = 0.0) -> SnippetResult:
        return SnippetResult(index=index, status=status, duration_s=job.duration_s + extra_s, error_type=error_type,
                             error_message=message, stdout=job.stdout, stderr=job.stderr, trust="parent",
                             wall_s=job.duration_s, cpu_s=job.cpu_s)

    if job.status == "harness_error":
        return verdict("harness_error", "SandboxHarnessError", job.load_error), ""
    if job.load_error is not None:
        error_type, _, message = job.load_error.partition(": ")
        return verdict(job.status, error_type, message), ""
    if any(outcome.kind == "unserializable" for outcome in job.outcomes):
        bad = next(o for o in job.outcomes if o.kind == "unserializable")
        return None, f"a value came back unserializable ({bad.exc_type})"
    replay_started = time.monotonic()  # the replay's deadline covers all the parent's work on the values from here
    values = [outcome.value if outcome.kind == "value" else None for outcome in job.outcomes]
    failed = frozenset(outcome.index for outcome in job.outcomes if outcome.kind != "value")
    arguments: list[Any] = []
    if plan.reads_arguments:
        unwrapped = [_unwrap(value, len(args)) for value, args in zip(values, plan.calls)]
        if any(pair is None for index, pair in enumerate(unwrapped) if index not in failed):
            return None, "the wrapped call returned an unexpected shape"
        values = [pair[0] if pair else None for pair in unwrapped]
        arguments = [pair[1] if pair else () for pair in unwrapped]
    try:
        if any(holds_nan(value) for value in (*values, *arguments)):
            # Containers compare a NaN by identity first (`[x] == [x]` for one NaN object), which decoding loses.
            return None, "a value holds a NaN"
    except Unsupported as exc:  # too large to look through (`replay_values.MAX_SCAN_WORK`)
        return None, f"replay: {exc}"
    replay = Replay(values, failed, replay_started + timeout, arguments)
    try:
        status, error_type, message = _replay(plan, replay)
    except Unsupported as exc:
        return None, f"replay: {exc}"
    except CallFailed as exc:
        status, error_type, message = _call_failure(job.outcomes[exc.index])
    except ParentTimeout as exc:
        status, error_type, message = "timeout", "ParentTimeout", str(exc)
    return verdict(status, error_type, message, time.monotonic() - replay_started), ""


def _unwrap(value: Any, count: int) -> tuple[Any, list[Any]] | None:
    """(return value, arguments after the call) from the wrapper's `[value, [*args]]`."""
    if type(value) is list and len(value) == 2 and type(value[1]) is list and len(value[1]) == count:
        return value[0], value[1]
    return None


def _replay(plan: LiftedTest, replay: Replay) -> tuple[str, str | None, str | None]:
    env: dict[str, Any] = {}
    for step in plan.steps:
        try:
            if step.kind == "bind":
                replay.bind(step.target, replay.eval(step.expr, env), env)
            elif step.kind == "run":
                replay.eval(step.expr, env)
            elif not replay.eval(step.expr, env):
                message = "" if step.msg is None else _message_text(replay.eval(step.msg, env))
                return "fail", "AssertionError", message
        except (Unsupported, CallFailed, ParentTimeout):
            raise
        except RecursionError:
            raise Unsupported("replay nested too deep") from None
        except MemoryError:
            raise Unsupported("replay ran out of memory") from None
        except Exception as exc:  # noqa: BLE001 - what the assert itself raised in Python: the snippet's error
            return "error", type(exc).__name__, str(exc)[:2000]
    return "pass", None, None


def _message_text(value: Any) -> str:
    """The assert message as the AssertionError prints it. Python evaluates the message but does not str() it to
    fail the assert, so one that cannot be printed (an int past the digit limit) gets a stand-in: still `fail`."""
    try:
        return str(value)[:_MESSAGE_CHARS]
    except (ValueError, RecursionError, MemoryError):
        return safe_repr(value, _MESSAGE_CHARS)


def _call_failure(outcome: CallOutcome) -> tuple[str, str | None, str | None]:
    """The snippet's verdict when one of its calls produced no value, as the in-process run would end.

    `memory`, `killed`, `harness_error` and a CPU `timeout` come only from the supervisor's own record of how the
    process ended (`CallOutcome.by_supervisor`), or for a raised MemoryError, the job's memory cgroup refusing
    charges while the snippet ran (`CallOutcome.memory_limit_hit`): an exception the code raised under such a name is
    its own `error`, as in assert mode."""
    if outcome.kind in ("timeout", "not_run"):
        return "timeout", "Timeout", "the call did not finish within the time limit"
    exc_type = outcome.exc_type or "?"
    if exc_type == "AssertionError":
        return "fail", exc_type, outcome.exc_message
    if exc_type == "MemoryError" and (outcome.by_supervisor or outcome.memory_limit_hit):
        return "memory", exc_type, outcome.exc_message
    if outcome.by_supervisor:
        if exc_type == "Timeout":
            return "timeout", exc_type, outcome.exc_message
        if exc_type.startswith(_SIGNAL_PREFIX):
            return "killed", exc_type, outcome.exc_message
        if exc_type == "SandboxSetupError":
            return "harness_error", exc_type, outcome.exc_message
    return "error", exc_type, outcome.exc_message


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
    lift: bool = True

    def run(self) -> TestsResult:
        return run_tests(self.program, self.snippets, entry_points=self.entry_points, limits=self.limits,
                         separator=self.separator, lift=self.lift)

    def harness_error(self, message: str) -> TestsResult:
        """The result to report when the executor itself failed to run this job."""
        snippets = tuple(SnippetResult(i, "harness_error", 0.0, "SandboxHarnessError", message)
                         for i in range(len(self.snippets)))
        return TestsResult("harness_error", snippets, self.limits, 0.0, False, 0, ())
