"""Run untrusted code (solutions, samples, test snippets) outside our process.

Two modes:

* `run_asserts(program, snippets)` (and `testrun.run_tests`): the program runs in its job and only answers calls;
  each snippet runs in a jailed judge under real CPython (`zygote/tests_job`). Exit code 0 is never a pass.
* `call_function(program, entry_point, inputs)`: one child loads the program (module `__sandbox__`, so
  `if __name__ == "__main__"` blocks do not run), then calls `entry_point(*args)` per input, each started by the
  supervisor and timed by it (wall time plus the CPU the job's other threads and processes used, `zygote/call_job`).
  With a `CallJudge` the outputs are decoded and compared with their expected values in a jailed judge process, each
  within a CPU-time budget there, and this process gets a verdict and a preview per input; otherwise the outputs
  come back as tagged JSON (`codec`), decoded here within a budget of bytes, structure and CPU time: tuple vs list,
  set/frozenset, nan/inf, bytes, big ints. A value that is not plain data (including subclasses of int/str with
  rigged comparisons) is outcome kind `unserializable` with its type name. Nothing from the child is ever
  unpickled. After a hard kill (the code ignored or replaced the alarm, or looped inside C) or a crash on input k,
  input k is recorded (`timeout` or `exception` `ProcessExit`/signal name) and a fresh child is started for inputs
  k+1...; only inputs that the total time limit leaves unreached are `not_run`.

Isolation (see `zygote/` for the mechanics and docs/SANDBOX.md for what is not protected): every job is a fork of a
pristine template in a cell of its own PID and mount namespace, with its own IPC namespace, tmpfs /tmp and
/dev/shm, rlimits, cgroup limits (root), a dedicated unprivileged uid (root) or user namespace, and seccomp filters.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Literal

from audit_lib.errors import ParameterError, SandboxHarnessError
from audit_lib.sandbox import budget as sandbox_budget
from audit_lib.sandbox import call_options
from audit_lib.sandbox import codec as sandbox_codec
from audit_lib.sandbox import nesting as sandbox_nesting
from audit_lib.sandbox import pool as sandbox_pool
from audit_lib.sandbox.call_options import NO_EXPECTED, CallJudge  # noqa: F401 - part of the public face
from audit_lib.sandbox.limits import Limits
from audit_lib.sandbox.results import (  # noqa: F401
    ENVIRONMENT_STATUSES,
    STATUSES,
    CallOutcome,
    SnippetResult,
    Status,
)

EARLY_STOP_KINDS: frozenset[str] = frozenset({"exception", "timeout", "unserializable"})
# Extra wall time the supervisor allows past a per-input limit before it kills the child.
HARD_KILL_GRACE_S = 1.0


@dataclass(frozen=True)
class AssertJobResult:
    """All snippets of one assert job; `status` is `pass` when every snippet passed, else the first non-pass."""

    status: Status
    snippets: tuple[SnippetResult, ...]
    limits: Limits
    duration_s: float
    network_isolated: bool

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class CallJobResult:
    """A function-call job; `status` is `pass` when the program loaded and every input got an outcome."""

    status: Status
    outcomes: tuple[CallOutcome, ...]
    load_error: str | None
    limits: Limits
    duration_s: float
    stdout: str = ""
    stderr: str = ""
    network_isolated: bool = False
    restarts: int = 0
    cpu_s: float = 0.0  # every child of the job, measured by the supervisor
    # With `input_groups`: (stdout, stderr) of each group, the program's load output first.
    group_output: tuple[tuple[str, str], ...] = ()
    # With `input_groups`: each group's CPU seconds (its fork, its calls, its exit), read at group starts and the end.
    group_cpu_s: tuple[float, ...] = ()

    def to_json(self) -> dict[str, Any]:
        payload = asdict(replace(self, outcomes=()))  # values are encoded below, never deep-copied by asdict
        payload["outcomes"] = [{**{f.name: getattr(o, f.name) for f in fields(o)}, "value": _jsonable_value(o)}
                               for o in self.outcomes]
        return payload


def _jsonable_value(outcome: CallOutcome) -> Any:
    if outcome.kind != "value":
        return None
    if outcome.value is None and outcome.preview is not None:
        return {"$preview": outcome.preview}
    if isinstance(outcome.value, sandbox_codec.ValueDigest):
        return outcome.value.to_json()
    if isinstance(outcome.value, sandbox_budget.EncodedValue):
        return {"$encoded": len(outcome.value.text)}  # its size: the parent never decodes it to print it
    try:  # JSON must always come out (the CLI prints it), whatever the value
        return sandbox_codec.encode(outcome.value)
    except (sandbox_codec.Unserializable, RecursionError, ValueError) as exc:
        return {"$unprintable": f"{type(exc).__name__}: {exc}"[:300]}


# ---------------------------------------------------------------------------------------------------- assert mode

def run_asserts(program: str, snippets: Sequence[str], *, limits: Limits = Limits(),
                separator: str = "\n\n") -> AssertJobResult:
    """Judge each snippet against `program`: `testrun.run_tests` with every name the snippet reads from the
    program bound to the job (the snippet runs in the judge, the program in its job)."""
    from audit_lib.sandbox.testrun import run_tests  # noqa: PLC0415 - testrun builds on this module's results

    result = run_tests(program, snippets, limits=limits, separator=separator)
    return AssertJobResult(status=result.status, snippets=result.snippets, limits=limits,
                           duration_s=result.duration_s, network_isolated=result.network_isolated)


# ---------------------------------------------------------------------------------------------------- call mode

_UNPARSED = object()
BATCH_PARSE_MAX_BYTES = 1 << 20


def _decode_outcomes(blob: bytes, digestible: frozenset[int] | None,
                     budget: sandbox_budget.DecodeBudget | None = None, judged: Mapping[str, Any] | None = None,
                     preview: bool = False) -> list[CallOutcome]:
    """The outcome of every result line; the JSON payloads are parsed in one pass when they all parse.

    Every value is decoded within the job's `sandbox_budget.DecodeBudget` (bytes, structure and CPU time); one over
    it is `unserializable` (exc_type "BudgetExceeded") for its own input only, and one past what the job's values
    may keep decoded (`max_kept_bytes`) stays encoded (`EncodedValue`). With values="preview" no long value is
    decoded: a judge's record (`judged`) stands for each value, or the zygote's stand-in for a long one."""
    with sandbox_nesting.depth_room():  # values nested up to MAX_DEPTH: parsed and decoded with room on the stack
        return _decode_lines(blob, digestible, budget, judged, preview)


def _decode_lines(blob: bytes, digestible: frozenset[int] | None, budget: sandbox_budget.DecodeBudget | None,
                  judged: Mapping[str, Any] | None, preview: bool) -> list[CallOutcome]:
    lines = [line.split(b" ", 3) for line in blob.split(b"\n")] if blob else []
    decoder = sandbox_budget.JobDecoder(budget)
    refused: dict[int, str] = {}
    encoded: set[int] = set()
    room = decoder.budget.max_kept_bytes
    try:  # reserved before json.loads ever sees the text: the whole blob at once when it fits, else line by line
        estimate = sandbox_budget.decode_estimate(blob)
        if estimate[0] > room:
            raise sandbox_budget.BudgetExceeded("past what the job's values may keep decoded")
        decoder.charge(blob, estimate)
    except sandbox_budget.BudgetExceeded:
        for position, parts in enumerate(lines):
            if len(parts) == 4:
                estimate = sandbox_budget.decode_estimate(parts[3])
                cost = estimate[0]
                # kept encoded: a value that fits a decode budget of its own, not this job's room to keep values
                if room < cost <= decoder.budget.max_decoded_bytes and parts[1] == b"value" and not preview:
                    encoded.add(position)
                    continue
                try:
                    decoder.charge(parts[3], estimate)
                    room -= cost
                except sandbox_budget.BudgetExceeded as exc:
                    refused[position] = exc.reason
    payloads: list[Any] | None = None
    # Only small blobs in one parse: json.loads holds the GIL throughout, and a huge one would stall the other
    # pool threads (their zygotes would sit idle waiting for the next request).
    if lines and not refused and not encoded and len(blob) <= BATCH_PARSE_MAX_BYTES \
            and all(len(parts) == 4 for parts in lines):
        try:  # one C-level parse instead of one call per line; any oddity falls back to line by line
            payloads = json.loads(b"[" + b",".join(parts[3] for parts in lines) + b"]")
        except (ValueError, RecursionError):
            payloads = None
        if not isinstance(payloads, list) or len(payloads) != len(lines):
            payloads = None
    return [_decode_outcome(parts, digestible, _UNPARSED if payloads is None else payloads[position], decoder,
                            refused.get(position), judged, preview, position in encoded)
            for position, parts in enumerate(lines)]


def _measurements(field_text: bytes) -> tuple[float, float, float, bool, bool]:
    """The supervisor's measurements of one result line.

    The supervisor's measurements, `wall:cpu:background`, then `:s` on the lines it wrote itself and `:m` on an
    exception raised while the job's memory cgroup refused charges.
    """
    parts = field_text.split(b":")
    wall = float(parts[0])
    cpu = float(parts[1]) if len(parts) > 1 and parts[1] else 0.0
    background = float(parts[2]) if len(parts) > 2 and parts[2] else 0.0
    flag = parts[3] if len(parts) > 3 else b""
    return wall, cpu, background, flag == b"s", flag == b"m"


def _decode_outcome(parts: list[bytes], digestible: frozenset[int] | None, payload: Any,
                    decoder: sandbox_budget.JobDecoder, refusal: str | None = None,
                    judged: Mapping[str, Any] | None = None, preview: bool = False,
                    keep_encoded: bool = False) -> CallOutcome:
    index = int(parts[0])  # the zygote accepted the line only with the index it expected
    if len(parts) != 4:
        return CallOutcome(index, "unserializable", exc_type="MalformedResult", exc_message="truncated result line")
    if refusal is not None:
        return CallOutcome(index, "unserializable", exc_type="BudgetExceeded", exc_message=refusal)
    kind_name = parts[1].decode("ascii", errors="replace")
    duration = cpu = background = 0.0
    try:
        duration, cpu, background, by_supervisor, memory_limit_hit = _measurements(parts[2])
        times = {"duration_s": duration, "wall_s": duration, "cpu_s": cpu, "background_cpu_s": background}
        record = (judged or {}).get(str(index)) if kind_name == "value" else None
        if record is not None:
            return _judged_outcome(index, record, parts[3] if not preview else None, digestible, decoder, times,
                                   keep_encoded)
        if keep_encoded and kind_name == "value":
            return CallOutcome(index, "value", sandbox_budget.EncodedValue(parts[3]), **times)
        if payload is _UNPARSED:
            payload = json.loads(parts[3])
        if kind_name == "value":
            if preview and isinstance(payload, dict) and "$preview" in payload:  # too long to send: its start
                shown = (f"{str(payload['$preview'])[:sandbox_budget.PREVIEW_MAX_CHARS]}... "
                         f"({payload.get('bytes')} bytes of tagged JSON, sha256 {payload.get('sha256')})")
                return CallOutcome(index, "value", preview=shown, **times)
            return CallOutcome(index, "value", _decoded_value(index, payload, digestible, decoder), **times)
        if kind_name == "timeout":
            return CallOutcome(index, "timeout", by_supervisor=by_supervisor, **times)
        if kind_name in ("exception", "unserializable"):
            exc_type, message = (str(part) for part in payload)
            return CallOutcome(index, kind_name, exc_type=exc_type, exc_message=message, by_supervisor=by_supervisor,
                               memory_limit_hit=memory_limit_hit, **times)
    except sandbox_budget.BudgetExceeded as exc:
        return CallOutcome(index, "unserializable", exc_type="BudgetExceeded", exc_message=exc.reason,
                           duration_s=duration, wall_s=duration, cpu_s=cpu, background_cpu_s=background)
    except (ValueError, TypeError, RecursionError, sandbox_codec.MalformedTaggedValue) as exc:
        return CallOutcome(index, "unserializable", exc_type="MalformedResult",
                           exc_message=f"{type(exc).__name__}: {exc}"[:500])
    return CallOutcome(index, "unserializable", exc_type="MalformedResult", exc_message=f"kind {kind_name!r:.40}",
                       duration_s=duration)


def _decoded_value(index: int, payload: Any, digestible: frozenset[int] | None,
                   decoder: sandbox_budget.JobDecoder) -> Any:
    may_digest = digestible is None or index in digestible
    digest = sandbox_codec.digest_from_json(payload) if may_digest else None
    return digest if digest is not None else decoder.decode(payload)


def _judged_outcome(index: int, record: Any, text: bytes | None, digestible: frozenset[int] | None,
                    decoder: sandbox_budget.JobDecoder, times: dict[str, float],
                    keep_encoded: bool = False) -> CallOutcome:
    """An output the judge decided: its verdict and preview; the value too when the caller asked for values."""
    if not isinstance(record, dict):
        return CallOutcome(index, "unserializable", exc_type="MalformedResult", exc_message="judge record", **times)
    if "k" in record:  # the judge refused the value (over its budget, malformed, the judge out of its limits)
        return CallOutcome(index, "unserializable", exc_type=str(record.get("t"))[:200],
                           exc_message=str(record.get("m"))[:500], **times)
    verdict = record.get("v")
    value = None
    if text is not None and keep_encoded:
        value = sandbox_budget.EncodedValue(text)
    elif text is not None:
        decoder.charge(text)
        value = _decoded_value(index, json.loads(text), digestible, decoder)
    return CallOutcome(index, "value", value, verdict=verdict if verdict in ("match", "wrong_value") else None,
                       reason=str(record.get("r") or "")[:1000], preview=str(record.get("p") or "")[:1000], **times)


def call_function(program: str, entry_point: str, inputs: Sequence[Sequence[Any]], *, limits: Limits = Limits(),
                  per_input_timeout_s: Sequence[float] | None = None,
                  deepcopy_inputs: bool = True, stop_after_failure: bool = False,
                  stop_expected: Mapping[int, Any] | None = None, digest_above_bytes: int | None = None,
                  digest_inputs: Collection[int] | None = None, input_groups: Sequence[int] | None = None,
                  group_timeout_s: Sequence[float] | None = None, judge: CallJudge | None = None,
                  values: Literal["decoded", "preview"] = "decoded",
                  load_timeout_s: float | None = None) -> CallJobResult:
    """Load `program` once in a sandboxed child and call `entry_point(*args)` for each input.

    `judge` (a `CallJudge`) has every output decoded and compared with its expected value in a jailed judge process
    (the caller's rules as source, under real CPython; each value within the judge's CPU time budget): each outcome
    then carries the judge's `verdict`, `reason` and `preview`. With `values="preview"` no value reaches this
    process at all (`value` is None): the judge's preview stands for it, or without a judge the start of its tagged
    JSON (made in the zygote, never parsed); with "decoded" (the default) values are decoded here, within the job's
    `DecodeBudget` (bytes, structure, and CPU time: `max_cpu_s`).

    `input_groups` (sizes, summing to the number of inputs) runs each group's inputs as a job of its own in the
    zygote's cell (its own worker, which loads the program; fresh /tmp and IPC namespace; `zygote.call_job`), so
    nothing crosses groups; `group_timeout_s` gives each group a time limit for all its inputs together (the rest
    of a group out of time is `not_run`).

    `stop_after_failure` replays EvalPlus's `fast_check`: the child stops at the first input that raises, times
    out, returns a value that cannot be sent, or (with a judge) whose output the judge fails; the inputs after it
    are `not_run`. `stop_expected` ({input index: value}) is a judge that compares those inputs' outputs with `==`.

    An input's time is measured outside the child: its wall time from its start to its answer, plus the CPU time
    the job's other threads and processes used since the previous answer (`background_cpu_s`); over its limit it is
    `timeout` whatever the child wrote.

    With `digest_above_bytes`, a float-free value whose canonical encoding is larger comes back as its
    `sandbox_codec.ValueDigest` (for the inputs in `digest_inputs`, or all when None), which spares sending and
    decoding huge outputs that are only ever compared with a digest. Without it, a digest is never accepted.

    The program's load (its module-level code) runs outside every per-input limit, within the job's whole budget
    (`limits.total_timeout_s`), as EvalPlus loads a sample; `load_timeout_s` sets a shorter limit for it.
    """
    if load_timeout_s is not None and not (load_timeout_s > 0 and math.isfinite(load_timeout_s)):
        raise ParameterError(f"load_timeout_s must be a positive finite number, not {load_timeout_s!r}",
                             field="load_timeout_s")
    if per_input_timeout_s is not None and len(per_input_timeout_s) != len(inputs):
        raise ParameterError(f"per_input_timeout_s has {len(per_input_timeout_s)} entries for {len(inputs)} inputs",
                             field="per_input_timeout_s")
    timeouts = [float(t) for t in per_input_timeout_s] if per_input_timeout_s is not None \
        else [limits.timeout_s] * len(inputs)
    if any(not (t > 0 and math.isfinite(t)) for t in timeouts):
        raise ParameterError("every per-input timeout must be a positive finite number", field="per_input_timeout_s")
    if values not in ("decoded", "preview"):
        raise ParameterError(f"values must be 'decoded' or 'preview', not {values!r}", field="values")
    equality = call_options.stop_expected_judge(stop_expected, len(inputs), stop_after_failure)
    if equality is not None and judge is not None:
        raise ParameterError("give either stop_expected or a judge, not both", field="stop_expected")
    judge = judge or equality
    groups_wire = call_options.groups_wire(input_groups, group_timeout_s, len(inputs), stop_after_failure)
    try:
        with sandbox_nesting.depth_room():  # once for every input, not once each
            encoded_inputs = [sandbox_codec.encode(list(args)) for args in inputs]
    except sandbox_codec.Unserializable as exc:
        raise ParameterError(f"an input is not plain data: {exc}", field="inputs") from exc
    started = time.monotonic()
    request = {"op": "call", "program": program, "entry_point": entry_point, "inputs": encoded_inputs,
               "timeouts": timeouts, "deepcopy": deepcopy_inputs, "total_timeout": limits.total_timeout_s,
               "load_timeout": limits.total_timeout_s if load_timeout_s is None else float(load_timeout_s),
               "grace_s": HARD_KILL_GRACE_S,
               "stop_after_failure": stop_after_failure, "limits": limits.wire(limits.total_timeout_s),
               "values": values}
    if groups_wire is not None:
        request.update(groups=groups_wire[0], group_timeouts=groups_wire[1])
    digestible: frozenset[int] | None = frozenset()  # the inputs whose value may come back as a digest; None: all
    if digest_above_bytes is not None:
        if isinstance(digest_above_bytes, bool) or not isinstance(digest_above_bytes, int) or digest_above_bytes < 0:
            raise ParameterError(f"digest_above_bytes must be an int >= 0, not {digest_above_bytes!r}",
                                 field="digest_above_bytes")
        digestible = None if digest_inputs is None else frozenset(int(i) for i in digest_inputs)
        request.update({"digest_above_bytes": digest_above_bytes,
                        "digest_inputs": None if digestible is None else sorted(digestible)})
    sealed = judge.wire(encoded_inputs, len(inputs), digestible) if judge is not None else None
    try:
        answer, blob, network_isolated = sandbox_pool.request(
            request, limits.total_timeout_s + 60.0, network_isolation=limits.network_isolation, sealed=sealed)
    except SandboxHarnessError as exc:
        outcomes = tuple(CallOutcome(i, "not_run") for i in range(len(inputs)))
        return CallJobResult(status="harness_error", outcomes=outcomes, load_error=str(exc)[-3000:], limits=limits,
                             duration_s=time.monotonic() - started)
    by_index = {outcome.index: outcome
                for outcome in _decode_outcomes(blob, digestible, judged=answer.get("judged"),
                                                preview=values == "preview")}
    outcomes = tuple(by_index.get(i) or CallOutcome(i, "not_run") for i in range(len(inputs)))
    status = answer["status"]
    stopped_early = stop_after_failure and (bool(answer.get("stopped_on_mismatch"))
                                            or any(o.kind in EARLY_STOP_KINDS for o in outcomes))
    cut = cut_short(outcomes, groups_wire[0]) if groups_wire is not None else frozenset()
    if status == "pass" and any(o.kind == "not_run" and o.index not in cut for o in outcomes) and not stopped_early:
        status = "error"
    return CallJobResult(status=status, outcomes=outcomes, load_error=answer["load_error"], limits=limits,
                         duration_s=answer["duration_s"], stdout=answer["stdout"], stderr=answer["stderr"],
                         network_isolated=network_isolated, restarts=answer["restarts"],
                         cpu_s=answer.get("cpu_s", 0.0),
                         group_output=tuple((out, err) for out, err in answer.get("group_output", ())),
                         group_cpu_s=tuple(float(cpu) for cpu in answer.get("group_cpu_s", ())))


def cut_short(outcomes: Sequence[CallOutcome], firsts: list[int]) -> frozenset[int]:
    """The inputs left unrun because an earlier input of their group timed out (the group was out of time)."""
    cut: set[int] = set()
    ends = [*firsts[1:], len(outcomes)]
    for first, end in zip(firsts, ends):
        timed_out = next((o.index for o in outcomes[first:end] if o.kind == "timeout"), None)
        if timed_out is not None:
            cut.update(o.index for o in outcomes[timed_out + 1:end] if o.kind == "not_run")
    return frozenset(cut)


# ---------------------------------------------------------------------------------------------------- jobs

@dataclass(frozen=True)
class AssertJob:
    """A picklable unit of work for `executors.run_many`: `run_asserts` on one program."""

    key: Any
    program: str
    snippets: tuple[str, ...]
    limits: Limits = field(default_factory=Limits)
    separator: str = "\n\n"

    def run(self) -> AssertJobResult:
        return run_asserts(self.program, self.snippets, limits=self.limits, separator=self.separator)

    def harness_error(self, message: str) -> AssertJobResult:
        """The result to report when the executor itself failed to run this job."""
        snippets = tuple(SnippetResult(i, "harness_error", 0.0, "SandboxHarnessError", message)
                         for i in range(len(self.snippets)))
        return AssertJobResult("harness_error", snippets, self.limits, 0.0, False)


@dataclass(frozen=True)
class CallJob:
    """A picklable unit of work for `executors.run_many`: `call_function` on one program."""

    key: Any
    program: str
    entry_point: str
    inputs: tuple[Sequence[Any], ...]
    limits: Limits = field(default_factory=Limits)
    per_input_timeout_s: tuple[float, ...] | None = None
    deepcopy_inputs: bool = True
    stop_after_failure: bool = False
    # (input index, expected value) pairs: with stop_after_failure, a value `!=` its pair also stops the run.
    stop_expected: tuple[tuple[int, Any], ...] = ()
    digest_above_bytes: int | None = None
    digest_inputs: tuple[int, ...] | None = None
    judge: CallJudge | None = None
    values: str = "decoded"
    load_timeout_s: float | None = None  # the program's load; None: the job's budget, `limits.total_timeout_s`

    def run(self) -> CallJobResult:
        return call_function(self.program, self.entry_point, self.inputs, limits=self.limits,
                             per_input_timeout_s=self.per_input_timeout_s, deepcopy_inputs=self.deepcopy_inputs,
                             stop_after_failure=self.stop_after_failure, stop_expected=dict(self.stop_expected),
                             digest_above_bytes=self.digest_above_bytes, digest_inputs=self.digest_inputs,
                             judge=self.judge, values=self.values, load_timeout_s=self.load_timeout_s)

    def harness_error(self, message: str) -> CallJobResult:
        """The result to report when the executor itself failed to run this job."""
        outcomes = tuple(CallOutcome(i, "not_run") for i in range(len(self.inputs)))
        return CallJobResult("harness_error", outcomes, message, self.limits, 0.0)


def shutdown() -> None:
    """Stop this process's warmed zygotes (they also stop on their own when this process exits)."""
    sandbox_pool.POOL.shutdown()
