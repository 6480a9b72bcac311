"""A sandbox result as a cache entry and back, and which results are `deterministic` enough to be served again.

Only a result no clock, load or resource ceiling could have changed is `deterministic`: every input answered (or,
with `stop_after_failure`, left unrun only after a deterministic failure), no timeout, kill, memory limit, decode
or judge budget refusal, harness error, and every input's measured time (its wall time plus the CPU its job's
other processes used) at most `NEAR_LIMIT_FRACTION` of its limit, the job's at most that fraction of the job's.
Everything else is `timing`: never stored, so always measured again.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

# The sandbox's own modules, not its package face: `executors.run_many` imports this package.
from audit_lib.sandbox.api import AssertJob, AssertJobResult, CallJob, CallJobResult
from audit_lib.sandbox.codec import ValueDigest, decode, digest_from_json, encode
from audit_lib.sandbox.limits import Limits
from audit_lib.sandbox.results import CallOutcome, SnippetResult
from audit_lib.sandbox.testrun import TestsJob, TestsResult

Kind = Literal["deterministic", "timing"]
# An input (or job) that used more than this share of its time limit could have gone over it on a busier machine.
NEAR_LIMIT_FRACTION = 0.5
# Endings that may depend on CPU time, memory or the judge's own limits, not on the value alone.
RESOURCE_REFUSALS = frozenset({"MemoryError", "BudgetExceeded", "MalformedResult", "JudgeLimit", "JudgeError",
                               "JudgeRulesError"})
DETERMINISTIC_SNIPPET_STATUSES = frozenset({"pass", "fail", "error"})


def classify(job: Any, result: Any) -> Kind:
    """`deterministic` when the result may be served again for the same key, else `timing`."""
    if isinstance(job, CallJob) and isinstance(result, CallJobResult):
        return _call_kind(job, result)
    if isinstance(job, (TestsJob, AssertJob)) and isinstance(result, (TestsResult, AssertJobResult)):
        return _snippets_kind(job, result)
    return "timing"


def _call_kind(job: CallJob, result: CallJobResult) -> Kind:
    if result.status not in ("pass", "error", "fail") or len(result.outcomes) != len(job.inputs):
        return "timing"
    if result.duration_s > NEAR_LIMIT_FRACTION * job.limits.total_timeout_s:
        return "timing"
    limits = job.per_input_timeout_s or (job.limits.timeout_s,) * len(job.inputs)
    stopped = False
    for outcome, limit in zip(result.outcomes, limits):
        if outcome.kind == "not_run":
            if not (job.stop_after_failure and stopped):
                return "timing"
            continue
        if stopped or outcome.kind not in ("value", "exception", "unserializable"):
            return "timing"  # a timeout, or an input run after the stop
        if outcome.by_supervisor or outcome.memory_limit_hit or outcome.exc_type in RESOURCE_REFUSALS:
            return "timing"
        if outcome.wall_s + outcome.background_cpu_s > NEAR_LIMIT_FRACTION * limit:
            return "timing"
        stopped = job.stop_after_failure and (outcome.kind != "value" or outcome.verdict == "wrong_value")
    return "deterministic"


def _snippets_kind(job: TestsJob | AssertJob, result: TestsResult | AssertJobResult) -> Kind:
    if len(result.snippets) != len(job.snippets):
        return "timing"
    for snippet in result.snippets:
        if snippet.status not in DETERMINISTIC_SNIPPET_STATUSES or snippet.reason == "judge_limit" \
                or snippet.error_type == "MemoryError":
            return "timing"
        if snippet.wall_s > NEAR_LIMIT_FRACTION * job.limits.timeout_s:
            return "timing"
        if getattr(job, "exit_code", False) and snippet.exit_code is None:
            return "timing"
    return "deterministic"


# ---------------------------------------------------------------------------------------------------- to JSON

def result_to_json(result: Any) -> dict[str, Any]:
    """The result as plain JSON (values tagged by the codec); `ValueError` for a result that cannot be kept."""
    if isinstance(result, CallJobResult):
        payload = {field.name: getattr(result, field.name) for field in dataclasses.fields(result)}
        payload["limits"] = result.limits.to_json()
        payload["outcomes"] = [_outcome_to_json(outcome) for outcome in result.outcomes]
        payload["group_output"] = [list(pair) for pair in result.group_output]
        payload["group_cpu_s"] = list(result.group_cpu_s)
        return {"type": "call", "result": payload}
    if isinstance(result, (TestsResult, AssertJobResult)):
        payload = {field.name: getattr(result, field.name) for field in dataclasses.fields(result)}
        payload["limits"] = result.limits.to_json()
        payload["snippets"] = [dataclasses.asdict(snippet) for snippet in result.snippets]
        return {"type": "tests" if isinstance(result, TestsResult) else "asserts", "result": payload}
    raise ValueError(f"{type(result).__name__} results are not cached")


def _outcome_to_json(outcome: CallOutcome) -> dict[str, Any]:
    payload = {field.name: getattr(outcome, field.name) for field in dataclasses.fields(outcome)}
    value = outcome.value
    try:
        payload["value"] = {"digest": value.to_json()} if isinstance(value, ValueDigest) else {"tagged": encode(value)}
    except Exception as exc:  # noqa: BLE001 - a value the codec cannot hold is not cached
        raise ValueError(f"outcome {outcome.index}'s value does not encode: {type(exc).__name__}") from exc
    return payload


def result_from_json(entry: dict[str, Any]) -> Any:
    """The result `result_to_json` wrote; `ValueError` (or KeyError/TypeError) for anything else."""
    kind, payload = entry["type"], dict(entry["result"])
    payload["limits"] = Limits(**payload["limits"])
    if kind == "call":
        payload["outcomes"] = tuple(_outcome_from_json(item) for item in payload["outcomes"])
        payload["group_output"] = tuple((str(out), str(err)) for out, err in payload["group_output"])
        payload["group_cpu_s"] = tuple(float(cpu) for cpu in payload["group_cpu_s"])
        return CallJobResult(**payload)
    if kind in ("tests", "asserts"):
        payload["snippets"] = tuple(SnippetResult(**item) for item in payload["snippets"])
        return (TestsResult if kind == "tests" else AssertJobResult)(**payload)
    raise ValueError(f"unknown result type {kind!r}")


def _outcome_from_json(item: dict[str, Any]) -> CallOutcome:
    fields = dict(item)
    value = fields.pop("value")
    if "digest" in value:
        digest = digest_from_json(value["digest"])
        if digest is None:
            raise ValueError("malformed digest")
        fields["value"] = digest
    else:
        fields["value"] = decode(value["tagged"])
    return CallOutcome(**fields)
