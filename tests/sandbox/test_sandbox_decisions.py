"""How the parent decides: results and statuses from what the zygote answers, with the zygote replaced by a stub.

No process is started here, so every rule of `run_asserts` / `call_function` / `Limits` is pinned in milliseconds
(`tests/sandbox/test_sandbox_modes.py` runs the same rules end to end).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from audit_lib.errors import ParameterError, SandboxHarnessError
from audit_lib.sandbox import CallOutcome, Limits, SnippetResult, call_function, run_asserts
from audit_lib.sandbox import api as sandbox
from audit_lib.sandbox import codec as sandbox_codec
from audit_lib.sandbox.call_options import EQUALITY_RULES
from audit_lib.sandbox.limits import LIMIT_MAXIMA


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Zygote:
    """Stands in for `sandbox_pool.request`: records each call and answers with the next scripted reply."""

    def __init__(self, replies: list[Any], clock: Clock | None = None, step: float = 0.0) -> None:
        self.replies = list(replies)
        self.calls: list[dict[str, Any]] = []
        self.clock, self.step = clock, step

    def __call__(self, header: dict, timeout_s: float, *, network_isolation: bool, sealed: Any = None) -> Any:
        self.calls.append({"header": header, "timeout_s": timeout_s, "network_isolation": network_isolation,
                           "sealed": sealed})
        if self.clock is not None:
            self.clock.now += self.step
        reply = self.replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        return reply


@pytest.fixture()
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(sandbox.time, "monotonic", fake)
    return fake


def stub(monkeypatch: pytest.MonkeyPatch, replies: list[Any], clock: Clock | None = None,
         step: float = 0.0) -> Zygote:
    zygote = Zygote(replies, clock, step)
    monkeypatch.setattr(sandbox.sandbox_pool, "request", zygote)
    return zygote


# ---------------------------------------------------------------------------------------------------- Limits

@pytest.mark.parametrize("name", ["timeout_s", "total_timeout_s", "memory_mb", "file_size_mb", "open_files",
                                  "output_bytes"])
@pytest.mark.parametrize("bad", [0, -1, True, "5", float("inf"), float("nan")])
def test_each_limit_must_be_a_positive_finite_number(name: str, bad: Any) -> None:
    with pytest.raises(ParameterError) as caught:
        Limits(**{name: bad})
    assert str(caught.value) == f"Limits.{name} must be a positive number, got {bad!r}"
    assert caught.value.fields["field"] == name


@pytest.mark.parametrize("name", ["timeout_s", "total_timeout_s", "cpu_s", "memory_mb", "file_size_mb", "open_files",
                                  "processes", "output_bytes"])
def test_each_limit_has_an_upper_bound(name: str) -> None:
    # A timeout of 1e300 s would overflow select (a traceback) or the child's setitimer (`error`).
    most = LIMIT_MAXIMA[name]
    assert getattr(Limits(**{name: int(most)}), name) == most  # the bound itself is accepted
    for bad in (int(most) + 1, *((1e300,) if name != "processes" else ())):  # processes: an int
        with pytest.raises(ParameterError) as caught:
            Limits(**{name: bad})
        assert str(caught.value) == f"Limits.{name} must be at most {most:,}, got {bad!r}"
        assert caught.value.fields["field"] == name
    if name == "cpu_s":
        for bad in (float("inf"), float("nan")):
            with pytest.raises(ParameterError):
                Limits(cpu_s=bad)


def test_cpu_processes_and_open_files_rules() -> None:
    for bad in (0, -0.5, True):
        with pytest.raises(ParameterError) as caught:
            Limits(cpu_s=bad)
        assert str(caught.value) == f"Limits.cpu_s must be positive or None, got {bad!r}"
        assert caught.value.fields["field"] == "cpu_s"
    for bad in (-1, 1.5, True):
        with pytest.raises(ParameterError) as caught:
            Limits(processes=bad)
        assert str(caught.value) == f"Limits.processes must be an int >= 0, got {bad!r}"
        assert caught.value.fields["field"] == "processes"
    with pytest.raises(ParameterError) as caught:
        Limits(open_files=7)
    assert caught.value.fields["field"] == "open_files" and "at least 8" in str(caught.value)
    accepted = Limits(timeout_s=0.5, cpu_s=0.25, processes=0, open_files=8, memory_mb=1)
    assert (accepted.cpu_s, accepted.processes, accepted.open_files) == (0.25, 0, 8)
    assert Limits(cpu_s=None).wire(2.5)["cpu_s"] == 3 and Limits(cpu_s=1.5).wire(9)["cpu_s"] == 1.5


# ---------------------------------------------------------------------------------------------------- assert mode

def test_one_string_is_not_a_list_of_snippets() -> None:
    with pytest.raises(ParameterError) as caught:
        run_asserts("x = 1", "assert x == 1")
    assert str(caught.value) == "snippets must be a sequence of strings, not one string"
    assert caught.value.fields["field"] == "snippets"


def _record(status: str, **extra: Any) -> dict[str, Any]:
    return {"status": status, "error_type": extra.get("error_type"), "error_message": extra.get("error_message"),
            "reason": extra.get("reason"), "stdout": "out", "stderr": "err", "wall_s": 0.25, "cpu_s": 0.125,
            "calls": 1, "call_wall_s": 0.01}


def test_snippet_results_come_from_the_judges_records_and_the_first_failure_decides(monkeypatch, clock) -> None:
    records = [_record("pass"), _record("fail", error_type="AssertionError", error_message="boom"),
               _record("timeout", error_type="Timeout")]
    zygote = stub(monkeypatch, [({"results": records}, b"", True)], clock, step=0.5)
    limits = Limits(timeout_s=2.0, total_timeout_s=10.0, network_isolation=False)
    result = run_asserts("x = 1", ["assert x", "assert not x", "while True: pass"], limits=limits, separator="\n#\n")
    assert result.status == "fail" and result.network_isolated is True and result.limits == limits
    assert result.snippets[1] == SnippetResult(index=1, status="fail", duration_s=0.25, error_type="AssertionError",
                                               error_message="boom", stdout="out", stderr="err", wall_s=0.25,
                                               cpu_s=0.125, trust="judge")
    assert [s.index for s in result.snippets] == [0, 1, 2] and result.snippets[2].status == "timeout"
    (call,) = zygote.calls  # one request for every snippet of the program
    header = call["header"]
    assert header["op"] == "tests" and header["program"] == "x = 1"
    assert header["snippets"] == ["assert x", "assert not x", "while True: pass"]
    assert header["names"] == [["x"], ["x"], []]  # builtins are the judge's own: never asked of the program
    assert header["timeouts"] == [2.0, 2.0, 2.0] and header["total_timeout"] == 10.0
    assert header["limits"] == limits.wire(2.0) and header["judge_limits"]["memory_mb"] >= 1024
    assert call["network_isolation"] is False


def test_names_read_are_the_snippets_free_names_and_the_entry_points() -> None:
    from audit_lib.sandbox import names_read

    snippet = "def check(candidate):\n    assert candidate(x) == len(y)\ncheck(f)\nglobal z\n"
    assert names_read(snippet, ("sum",)) == ["candidate", "check", "f", "sum", "x", "y", "z"]
    assert names_read("assert (", ("f",)) == ["f"]  # a snippet that does not parse fails in the judge itself


def test_a_harness_failure_is_every_snippets_harness_error(monkeypatch, clock) -> None:
    long_message = "x" * 3500 + "the end"
    stub(monkeypatch, [SandboxHarnessError(long_message)], clock, step=1.0)
    result = run_asserts("", ["a", "b"])
    assert result.snippets[0] == SnippetResult(index=0, status="harness_error", duration_s=0.0,
                                               error_type="SandboxHarnessError",
                                               error_message=long_message[-3000:], trust="judge")
    assert [s.status for s in result.snippets] == ["harness_error"] * 2 and result.status == "harness_error"
    assert result.network_isolated is False


def test_a_not_run_snippet_is_a_timeout(monkeypatch, clock) -> None:
    records = [_record("pass"), {"status": "timeout", "error_type": "NotRun", "error_message": "not run",
                                 "not_run": True}]
    stub(monkeypatch, [({"results": records}, b"", True)], clock)
    result = run_asserts("", ["a", "b"])
    assert [(s.status, s.error_type) for s in result.snippets] == [("pass", None), ("timeout", "NotRun")]


# ---------------------------------------------------------------------------------------------------- call mode

def line(index: int, kind: str, duration: str, payload: Any) -> bytes:
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return f"{index} {kind} {duration} ".encode() + body


def call_answer(status: str = "pass", **extra: Any) -> dict[str, Any]:
    return {"status": status, "load_error": None, "duration_s": 1.25, "stdout": "o", "stderr": "e", "restarts": 2,
            **extra}


def run_call(monkeypatch, lines: list[bytes], inputs: int, answer: dict | None = None,
             **kwargs: Any) -> tuple[sandbox.CallJobResult, Zygote]:
    zygote = stub(monkeypatch, [(answer or call_answer(), b"\n".join(lines), True)])
    return call_function("def f(x): return x", "f", [[i] for i in range(inputs)], **kwargs), zygote


def test_each_kind_of_result_line_is_decoded_with_its_duration(monkeypatch) -> None:
    lines = [line(0, "value", "0.5", sandbox_codec.encode((1, 2))), line(1, "timeout", "2.0", None),
             line(2, "exception", "0.1", ["ValueError", "bad"]), line(3, "unserializable", "0.2", ["Odd", "no"])]
    result, zygote = run_call(monkeypatch, lines, 4)
    assert result.outcomes == (CallOutcome(0, "value", (1, 2), duration_s=0.5, wall_s=0.5), CallOutcome(1, "timeout", duration_s=2.0, wall_s=2.0),
                               CallOutcome(2, "exception", exc_type="ValueError", exc_message="bad", duration_s=0.1, wall_s=0.1),
                               CallOutcome(3, "unserializable", exc_type="Odd", exc_message="no", duration_s=0.2, wall_s=0.2))
    assert (result.status, result.load_error, result.duration_s) == ("pass", None, 1.25)
    assert (result.stdout, result.stderr, result.restarts, result.network_isolated) == ("o", "e", 2, True)


def test_malformed_lines_become_unserializable_outcomes(monkeypatch) -> None:
    lines = [line(0, "value", "0.5", b"1,2"),            # valid only inside the batch array: must not shift
             line(1, "value", "0.5", 7),
             b"2 value",                                  # truncated
             line(3, "v\u00e4lue", "0.3", 1),              # unknown kind, not ASCII
             line(4, "value", "0.5", b"{not json"),
             line(5, "value", "0.5", {"$digest": ["ab", 3, "list"]})]  # a digest nobody asked for
    result, _ = run_call(monkeypatch, lines, 6)
    out = result.outcomes
    assert (out[0].kind, out[0].exc_type) == ("unserializable", "MalformedResult")
    assert out[0].exc_message.startswith("JSONDecodeError: ")
    assert out[1] == CallOutcome(1, "value", 7, duration_s=0.5, wall_s=0.5)
    assert out[2] == CallOutcome(2, "unserializable", exc_type="MalformedResult", exc_message="truncated result line")
    assert out[3] == CallOutcome(3, "unserializable", exc_type="MalformedResult",
                                 exc_message="kind 'v\ufffd\ufffdlue'", duration_s=0.3)
    assert out[4].exc_message.startswith("JSONDecodeError: ") and len(out[4].exc_message) <= 500
    assert out[5].kind == "unserializable" and out[5].exc_message.startswith("MalformedTaggedValue: ")


def test_a_long_parse_error_is_cut_at_500_characters(monkeypatch) -> None:
    payload = sandbox_codec.encode("x")
    deep = b"[" * 5000 + b"]" * 5000  # RecursionError's message is short; build a long ValueError text instead
    result, _ = run_call(monkeypatch, [line(0, "exception", "0.1", ["A" * 600, "m"]), line(1, "value", "0.1", deep),
                                       line(2, "value", "0.1", payload)], 3)
    assert result.outcomes[0].exc_type == "A" * 600  # the child's own strings are not cut here
    assert result.outcomes[1].kind == "unserializable" and len(result.outcomes[1].exc_message) <= 500
    assert result.outcomes[2].value == "x"


def test_digests_are_accepted_only_where_asked(monkeypatch) -> None:
    digest = {"$digest": ["ab" * 32, 70000, "list"]}
    lines = [line(0, "value", "0.1", digest), line(1, "value", "0.1", digest)]
    result, zygote = run_call(monkeypatch, lines, 2, digest_above_bytes=100, digest_inputs=[1])
    assert result.outcomes[0].kind == "unserializable"
    assert result.outcomes[1].value == sandbox_codec.ValueDigest("ab" * 32, 70000, "list")
    assert zygote.calls[0]["header"]["digest_above_bytes"] == 100 and zygote.calls[0]["header"]["digest_inputs"] == [1]
    everywhere, zygote = run_call(monkeypatch, lines, 2, digest_above_bytes=0)
    assert all(isinstance(o.value, sandbox_codec.ValueDigest) for o in everywhere.outcomes)
    assert zygote.calls[0]["header"]["digest_inputs"] is None


def test_the_request_carries_every_setting(monkeypatch) -> None:
    limits = Limits(timeout_s=3.0, total_timeout_s=20.0, network_isolation=False)
    result, zygote = run_call(monkeypatch, [line(0, "value", "0.1", 0)], 1, limits=limits)
    call = zygote.calls[0]
    assert call["header"] == {"op": "call", "program": "def f(x): return x", "entry_point": "f", "inputs": [[0]],
                              "timeouts": [3.0], "deepcopy": True, "total_timeout": 20.0, "load_timeout": 20.0,
                              "grace_s": 1.0, "stop_after_failure": False, "limits": limits.wire(20.0),
                              "values": "decoded"}
    assert call["timeout_s"] == 80.0 and call["network_isolation"] is False and call["sealed"] is None
    _, zygote = run_call(monkeypatch, [line(0, "value", "0.1", 0), line(1, "value", "0.1", 0)], 2,
                         per_input_timeout_s=[1, 2.5], deepcopy_inputs=False, stop_after_failure=True,
                         stop_expected={1: (1, 2)})
    header = zygote.calls[0]["header"]
    assert header["timeouts"] == [1.0, 2.5] and header["deepcopy"] is False and header["stop_after_failure"] is True
    sealed = zygote.calls[0]["sealed"]
    assert sealed["expected"] == [[1, sandbox_codec.encode((1, 2))]] and sealed["inputs"] == [[0], [1]]
    assert sealed["source"] == EQUALITY_RULES and sealed["digest_inputs"] == []


def test_missing_outcomes_make_a_pass_an_error_unless_the_run_stopped_early(monkeypatch) -> None:
    short = [line(0, "value", "0.1", 0)]
    result, _ = run_call(monkeypatch, short, 3)
    assert result.status == "error"
    assert result.outcomes[1:] == (CallOutcome(1, "not_run"), CallOutcome(2, "not_run"))
    stopped, _ = run_call(monkeypatch, short, 3, answer=call_answer(stopped_on_mismatch=True),
                          stop_after_failure=True)
    assert stopped.status == "pass"
    not_fast, _ = run_call(monkeypatch, short, 3, answer=call_answer(stopped_on_mismatch=True))
    assert not_fast.status == "error"  # a mismatch stop only counts in a fast-check run
    raised = [line(0, "exception", "0.1", ["E", "m"])]
    after_exception, _ = run_call(monkeypatch, raised, 3, stop_after_failure=True)
    assert after_exception.status == "pass"
    all_values, _ = run_call(monkeypatch, [line(0, "value", "0.1", 0)], 3, stop_after_failure=True)
    assert all_values.status == "error"  # nothing failed, so nothing excuses the inputs left out
    complete, _ = run_call(monkeypatch, [line(i, "value", "0.1", i) for i in range(3)], 3)
    assert complete.status == "pass"
    load_failure, _ = run_call(monkeypatch, [], 2, answer=call_answer("error", load_error="SyntaxError: x"))
    assert load_failure.status == "error" and load_failure.load_error == "SyntaxError: x"


def test_a_harness_failure_in_call_mode(monkeypatch, clock) -> None:
    stub(monkeypatch, [SandboxHarnessError("y" * 3100 + "tail")], clock, step=2.0)
    limits = Limits(timeout_s=1.0)
    result = call_function("", "f", [[1], [2]], limits=limits)
    assert result.status == "harness_error" and result.load_error == ("y" * 3100 + "tail")[-3000:]
    assert result.outcomes == (CallOutcome(0, "not_run"), CallOutcome(1, "not_run"))
    assert result.limits == limits and result.duration_s == pytest.approx(2.0)


Check = Callable[[], Any]


@pytest.mark.parametrize(("call", "message", "field"), [
    (lambda: call_function("", "f", [[1]], per_input_timeout_s=[1, 2]),
     "per_input_timeout_s has 2 entries for 1 inputs", "per_input_timeout_s"),
    (lambda: call_function("", "f", [[1]], per_input_timeout_s=[0]),
     "every per-input timeout must be a positive finite number", "per_input_timeout_s"),
    (lambda: call_function("", "f", [[1]], per_input_timeout_s=[float("inf")]),
     "every per-input timeout must be a positive finite number", "per_input_timeout_s"),
    (lambda: call_function("", "f", [[object()]]), "an input is not plain data: ", "inputs"),
    (lambda: call_function("", "f", [[1]], digest_above_bytes=True),
     "digest_above_bytes must be an int >= 0, not True", "digest_above_bytes"),
    (lambda: call_function("", "f", [[1]], digest_above_bytes=-1),
     "digest_above_bytes must be an int >= 0, not -1", "digest_above_bytes"),
    (lambda: call_function("", "f", [[1]], digest_above_bytes=2.0),
     "digest_above_bytes must be an int >= 0, not 2.0", "digest_above_bytes"),
    (lambda: call_function("", "f", [[1]], stop_expected={0: 1}),
     "stop_expected only applies with stop_after_failure=True", "stop_expected"),
    (lambda: call_function("", "f", [[1]], stop_after_failure=True, stop_expected={1: 1}),
     "stop_expected index 1 is not an input index (0..0)", "stop_expected"),
    (lambda: call_function("", "f", [[1]], stop_after_failure=True, stop_expected={True: 1}),
     "stop_expected index True is not an input index (0..0)", "stop_expected"),
    (lambda: call_function("", "f", [[1]], stop_after_failure=True, stop_expected={-1: 1}),
     "stop_expected index -1 is not an input index (0..0)", "stop_expected"),
    (lambda: call_function("", "f", [[1]], stop_after_failure=True, stop_expected={"0": 1}),
     "stop_expected index '0' is not an input index (0..0)", "stop_expected"),
    (lambda: call_function("", "f", [[1]], stop_after_failure=True, stop_expected={0: object()}),
     "stop_expected[0] is not plain data: ", "stop_expected"),
])
def test_bad_arguments_are_refused_before_anything_runs(monkeypatch, call: Check, message: str, field: str) -> None:
    zygote = stub(monkeypatch, [])
    with pytest.raises(ParameterError) as caught:
        call()
    assert str(caught.value).startswith(message) and caught.value.fields["field"] == field
    assert zygote.calls == []


def test_a_payload_that_only_parses_inside_the_batch_array_does_not_shift_the_others(monkeypatch) -> None:
    result, _ = run_call(monkeypatch, [line(0, "value", "0.5", b"1,2"), line(1, "value", "0.5", 7)], 2)
    assert (result.outcomes[0].kind, result.outcomes[0].exc_type) == ("unserializable", "MalformedResult")
    assert result.outcomes[1] == CallOutcome(1, "value", 7, duration_s=0.5, wall_s=0.5)


def test_open_files_message() -> None:
    with pytest.raises(ParameterError) as caught:
        Limits(open_files=7)
    assert str(caught.value) == "Limits.open_files must be at least 8 (the interpreter needs a few)"
