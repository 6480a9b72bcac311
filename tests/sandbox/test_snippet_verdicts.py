"""How the zygote turns what it saw of a tests job into a status, without starting one (pure, for mutation runs).

`tests_job.SnippetRun` decides a snippet's verdict from frames and from the job's end as the supervisor measured it
(`supervise.status_from_exit`); these tests drive those decisions with recorded runs, so every branch is reached
without a sandbox. The sandbox tests (test_sandbox_decisions.py and others) show the same statuses end to end.
"""

from __future__ import annotations

import json
import os
import signal

import pytest

from audit_lib.sandbox.zygote import tests_job
from audit_lib.sandbox.zygote.frames import ANSWER, LOAD, REQUEST, VERDICT, FrameCutter, frame
from audit_lib.sandbox.zygote.supervise import Capture, ChildRun, status_from_exit
from audit_lib.sandbox.zygote.tests_job import SnippetRun

SIGNALLED_KILL = signal.SIGKILL  # a wait status of "killed by SIGKILL" is the signal number itself


def exited(code: int) -> int:
    return code << 8  # a wait status for "exited with `code`"


def child_run(*, setup_done: bool = True, exit_status: int | None = exited(0), oom_killed: bool = False,
              hit_memory_limit: bool = False, cpu_s: float = 0.0, cpu_limit: float = 10.0, memory_mb: int = 512,
              open_fds: tuple[int, ...] = (), go_fd: int | None = None) -> ChildRun:
    """A ChildRun as `finish` leaves it, without a process: only what the decisions read."""
    run = ChildRun.__new__(ChildRun)
    run.setup_done, run.exit_status, run.oom_killed = setup_done, exit_status, oom_killed
    run.hit_memory_limit, run.cpu_s, run.limits, run.memory_mb = hit_memory_limit, cpu_s, {"cpu_s": cpu_limit}, memory_mb
    run.open_fds, run.go_fd, run.killed_by_us = set(open_fds), go_fd, False
    run.closed_go = 0
    return run


class RecordingRun(ChildRun):
    """A ChildRun whose go pipe and kill are recorded instead of acted on."""

    def close_go(self) -> None:
        self.closed_go += 1

    def kill(self) -> None:
        self.killed_by_us = True


def recording(**fields: object) -> RecordingRun:
    run = child_run(**fields)  # type: ignore[arg-type]
    run.__class__ = RecordingRun
    return run


class Pushes:
    """A Relay's stand-in: the frames pushed, in order."""

    def __init__(self) -> None:
        self.frames: list[bytes] = []

    def push(self, data: bytes) -> None:
        self.frames.append(data)


def snippet(job: ChildRun | None = None, judge: ChildRun | None = None, *, err: str = "",
            judge_err: str = "") -> SnippetRun:
    """A SnippetRun between frames: nothing seen yet."""
    run = SnippetRun.__new__(SnippetRun)
    run.job, run.judge = job or recording(), judge or recording()
    run.captures = {"out": Capture(100), "err": Capture(10_000)}
    run.captures["err"].add(err.encode())
    run.judge_captures = {"out": Capture(100), "err": Capture(10_000)}
    run.judge_captures["err"].add(judge_err.encode())
    run.to_judge, run.to_job = Pushes(), Pushes()
    run.from_job, run.from_judge = FrameCutter(), FrameCutter()
    run.loaded, run.in_flight, run.calls, run.call_wall_s = False, None, 0, 0.0
    run.verdict, run.job_ended_first, run.violation, run.timed_out = None, False, None, False
    return run


def verdict_frame(**verdict: object) -> bytes:
    return frame(VERDICT, json.dumps(verdict).encode())


# ---- status_from_exit: the job's end, from evidence outside it --------------------------------------------------------

def test_status_from_exit_in_order_of_precedence() -> None:
    assert status_from_exit(child_run(oom_killed=True, setup_done=False), True) == \
        ("timeout", "Timeout", "wall-clock limit reached")
    assert status_from_exit(child_run(setup_done=False, oom_killed=True), False) == \
        ("harness_error", "SandboxSetupError", "the job could not be set up")
    assert status_from_exit(child_run(oom_killed=True, cpu_s=99.0, memory_mb=256), False) == \
        ("memory", "MemoryError", "out of memory under the 256 MB limit (killed by the kernel)")
    assert status_from_exit(child_run(cpu_s=10.0, exit_status=SIGNALLED_KILL), False) == \
        ("timeout", "Timeout", "CPU time limit reached")  # at the limit exactly
    assert status_from_exit(child_run(cpu_s=9.99, exit_status=SIGNALLED_KILL), False) == \
        ("killed", "SIGKILL", "killed by SIGKILL")
    assert status_from_exit(child_run(exit_status=None), False) == \
        ("killed", "SIGKILL", "the job's init was killed")
    assert status_from_exit(child_run(exit_status=exited(3)), False) == \
        ("error", "EarlyExit", "exited with code 3 before the test completed")
    # A memory-limit hit without an OOM kill is not `memory` here: the code may have caught its MemoryError.
    assert status_from_exit(child_run(hit_memory_limit=True, exit_status=exited(0)), False)[0] == "error"


def test_exit_description_reads_the_wait_status() -> None:
    assert child_run(exit_status=None).exit_description() == ("lost", None, None)
    assert child_run(exit_status=exited(0)).exit_description() == ("exited", 0, None)
    assert child_run(exit_status=exited(7)).exit_description() == ("exited", 7, None)
    assert child_run(exit_status=int(signal.SIGSEGV)).exit_description() == ("signal", None, "SIGSEGV")
    unnamed = 64 if 64 not in {int(s) for s in signal.Signals} else 63  # a real-time signal has no name
    assert child_run(exit_status=unnamed).exit_description() == ("signal", None, str(unnamed))
    assert os.WIFSIGNALED(unnamed)


def test_cpu_limit_is_reached_at_the_limit() -> None:
    assert child_run(cpu_s=2.0, cpu_limit=2.0).cpu_limit_reached()
    assert not child_run(cpu_s=1.999, cpu_limit=2.0).cpu_limit_reached()
    run = child_run(cpu_s=3.0)
    run.limits = {"cpu_s": "2.5"}  # the request's JSON may carry it as text
    assert run.cpu_limit_reached()


# ---- frames: what each side may send, and when ---------------------------------------------------------------------

def test_frames_are_relayed_in_protocol_order() -> None:
    run = snippet()
    load, request, answer = frame(LOAD, b"{}"), frame(REQUEST, b"[1]"), frame(ANSWER, b"2")
    assert run._on_judge(request) is False and run.violation == "the judge broke the protocol"  # before the load
    run = snippet()
    assert run._on_job(load) and run.loaded and run.to_judge.frames == [load]
    assert run._on_judge(request) and run.in_flight is not None and run.calls == 1 and run.to_job.frames == [request]
    assert run._on_judge(request) is False and run.violation == "the judge broke the protocol"  # one call at a time
    run = snippet()
    run._on_job(load)
    run._on_judge(request)
    assert run._on_job(answer) and run.in_flight is None and run.to_judge.frames == [load, answer]
    assert run.call_wall_s >= 0.0
    assert run._on_judge(request + request[:3]) and run.calls == 2  # a partial frame waits for the rest
    assert run._on_job(answer) and run._on_judge(request[3:]) and run.calls == 3  # completed once its call is over
    assert run.to_job.frames == [request, request, request] and run.violation is None


def test_a_verdict_counts_only_with_no_call_in_flight() -> None:
    run = snippet()
    run._on_job(frame(LOAD, b"{}"))
    run._on_judge(frame(REQUEST, b"[]"))
    assert run._on_judge(verdict_frame(status="pass")) is False and run.verdict is None
    assert run.violation == "the judge broke the protocol"
    run = snippet()
    run._on_job(frame(LOAD, b"{}"))
    assert run._on_judge(verdict_frame(status="pass")) and run.verdict == {"status": "pass"}
    assert run.job.closed_go == 1  # the job ends by itself now
    assert run._on_judge(verdict_frame(status="fail")) is False and run.verdict == {"status": "pass"}  # one verdict
    # A verdict before the load is as good as one after (a test that calls nothing).
    early = snippet()
    assert early._on_judge(verdict_frame(status="fail")) and early.verdict == {"status": "fail"}


def test_a_request_after_the_verdict_is_a_violation() -> None:
    run = snippet()
    run._on_job(frame(LOAD, b"{}"))
    run._on_judge(verdict_frame(status="pass"))
    assert run._on_judge(frame(REQUEST, b"[]")) is False and run.to_job.frames == []


def test_job_frames_nobody_asked_for_are_a_violation_until_the_verdict() -> None:
    run = snippet()
    assert run._on_job(frame(ANSWER, b"1")) is False and run.violation == "the job wrote a frame nobody asked for"
    run = snippet()
    run._on_job(frame(LOAD, b"{}"))
    assert run._on_job(frame(LOAD, b"{}")) is False  # a second load
    run = snippet()
    assert run._on_job(frame(VERDICT, b"{}")) is False  # the job cannot speak for the judge
    run = snippet()
    run._on_job(frame(LOAD, b"{}"))
    run._on_judge(verdict_frame(status="pass"))
    assert run._on_job(frame(ANSWER, b"1") + frame(LOAD, b"{}")) and run.violation is None  # after it: ignored
    assert run.to_judge.frames == [frame(LOAD, b"{}")]


def test_an_oversized_frame_from_the_job_is_a_violation() -> None:
    run = snippet()
    huge = (2 ** 40).to_bytes(8, "little")
    assert run._on_job(huge) is False and run.violation and run.violation.startswith("a frame of ")
    ok = snippet()
    assert ok._on_job(frame(LOAD, b"{}")[:5]) and ok.violation is None  # a frame's start only: wait for the rest


def test_parse_verdict_refuses_what_is_not_a_json_object() -> None:
    assert tests_job._parse_verdict(b'{"status": "pass"}') == {"status": "pass"}
    assert tests_job._parse_verdict(b"not json") == {"status": "?"}
    assert tests_job._parse_verdict(b'["pass"]') == {"status": "?"}
    assert tests_job._parse_verdict(b'"pass"') == {"status": "?"}


# ---- _decide: the snippet's status -------------------------------------------------------------------------------

def decided(run: SnippetRun) -> tuple:
    return run._decide()


def test_a_deadline_decides_before_anything_else() -> None:
    run = snippet()
    run.timed_out, run.violation, run.job_ended_first, run.verdict = True, "x", True, {"status": "pass"}
    assert decided(run) == ("timeout", "Timeout", "wall-clock limit reached", None)


def test_a_violation_is_an_error_naming_it() -> None:
    run = snippet()
    run.violation, run.job_ended_first, run.verdict = "the judge broke the protocol", True, {"status": "pass"}
    assert decided(run) == ("error", "ProtocolViolation", "the judge broke the protocol", None)


def test_a_job_that_ended_first_has_the_status_of_its_ending() -> None:
    run = snippet(recording(exit_status=int(signal.SIGKILL)))
    run.job_ended_first, run.verdict = True, {"status": "pass"}
    assert decided(run) == ("killed", "SIGKILL", "killed by SIGKILL", None)
    early_exit = snippet(recording(exit_status=exited(0)))  # exit code 0 means nothing
    early_exit.job_ended_first = True
    assert decided(early_exit) == ("error", "EarlyExit", "exited with code 0 before the test completed", None)
    unset = snippet(recording(setup_done=False), err="x" * 2500 + "the setup's own words")
    unset.job_ended_first = True
    status, error_type, message, reason = decided(unset)
    assert (status, error_type, reason) == ("harness_error", "SandboxSetupError", None)
    assert message == "the job could not be set up: " + ("x" * 2500 + "the setup's own words")[-2000:]
    oom = snippet(recording(oom_killed=True), err="stderr is not shown")
    oom.job_ended_first = True
    assert decided(oom)[0] == "memory" and "stderr" not in decided(oom)[2]


def test_no_verdict_from_a_judge_that_was_not_set_up() -> None:
    run = snippet(judge=recording(setup_done=False), judge_err="y" * 2100 + "why")
    assert decided(run) == ("harness_error", "SandboxSetupError",
                            "the judge could not be set up: " + ("y" * 2100 + "why")[-2000:], None)


def test_no_verdict_from_a_judge_that_ended() -> None:
    ended_by_test = snippet(judge=recording(exit_status=exited(4)))
    assert decided(ended_by_test) == ("error", "JudgeEnded",
                                      "the test ended the judge (exit code 4) before a verdict", None)
    killed = snippet(judge=recording(exit_status=int(signal.SIGXCPU)))
    assert decided(killed) == ("error", "JudgeLimit", "the judge ended without a verdict (signal SIGXCPU)",
                               "judge_limit")
    lost = snippet(judge=recording(exit_status=None))
    assert decided(lost) == ("error", "JudgeLimit", "the judge ended without a verdict (lost )", "judge_limit")


# ---- _from_verdict: the judge's word, checked against the job's memory evidence -----------------------------------

def from_verdict(verdict: dict, **job: object) -> tuple:
    run = snippet(recording(**job))  # type: ignore[arg-type]
    run.verdict = verdict
    return decided(run)


def test_a_verdict_passes_through_its_own_words() -> None:
    for status in ("pass", "fail", "error"):
        assert from_verdict({"status": status, "error_type": "T", "error_message": "m", "reason": "r"}) == \
            (status, "T", "m", "r")
    assert from_verdict({"status": "pass"}) == ("pass", None, None, None)


def test_an_unknown_verdict_is_a_protocol_violation() -> None:
    unknown = ("error", "ProtocolViolation", "the judge wrote an unknown verdict", None)
    assert from_verdict({"status": "timeout"}) == unknown  # the judge cannot claim what only the supervisor sees
    assert from_verdict({"status": "?"}) == unknown
    assert from_verdict({}) == unknown


def test_a_load_error_is_a_failure_only_for_an_assertion() -> None:
    words = {"error_type": "E", "error_message": "m", "reason": "ignored"}
    assert from_verdict({"status": "load_error", "base": "AssertionError", **words}) == ("fail", "E", "m", None)
    assert from_verdict({"status": "load_error", "base": "ValueError", **words}) == ("error", "E", "m", None)
    assert from_verdict({"status": "load_error", **words}) == ("error", "E", "m", None)


@pytest.mark.parametrize("evidence", [{"oom_killed": True}, {"hit_memory_limit": True}])
def test_memory_needs_the_supervisor_s_evidence(evidence: dict) -> None:
    words = {"error_type": "MemoryError", "error_message": "m"}
    assert from_verdict({"status": "load_error", "base": "MemoryError", **words}, **evidence) == \
        ("memory", "MemoryError", "m", None)
    assert from_verdict({"status": "load_error", "base": "MemoryError", **words}) == ("error", "MemoryError", "m", None)
    assert from_verdict({"status": "error", "program_base": "MemoryError", **words}, **evidence) == \
        ("memory", "MemoryError", "m", None)
    assert from_verdict({"status": "error", "program_base": "MemoryError", **words}) == \
        ("error", "MemoryError", "m", None)
    assert from_verdict({"status": "error", "reason": "judge_limit", **words}, **evidence) == \
        ("memory", "MemoryError", "m", None)
    assert from_verdict({"status": "error", "reason": "judge_limit", **words}) == \
        ("error", "MemoryError", "m", "judge_limit")
    # Only an error can become `memory`: a failed or passed test keeps its status whatever the job's memory did.
    assert from_verdict({"status": "fail", "program_base": "MemoryError", **words}, **evidence)[0] == "fail"
    assert from_verdict({"status": "error", "program_base": "ValueError", **words}, **evidence)[0] == "error"


def test_the_judge_is_left_for_the_next_snippet_only_alive_after_a_verdict() -> None:
    run = snippet(judge=recording(open_fds=(5,)))
    assert run.judge_left() is None
    run.verdict = {"status": "pass"}
    assert run.judge_left() is run.judge
    gone = snippet(judge=recording())
    gone.verdict = {"status": "pass"}
    assert gone.judge_left() is None


def test_a_judge_killed_after_its_verdict_is_reaped_not_left_for_the_next_snippet(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The job ended first and its judge was killed, then the judge's verdict frame was read in the same round.
    drained: list[ChildRun] = []
    monkeypatch.setattr(tests_job, "_drain_all", lambda runs, until: drained.extend(runs))
    run = snippet(judge=recording(open_fds=(5,)))
    run.verdict = {"status": "pass"}
    run.judge.killed_by_us = True
    assert run.judge_left() is None
    assert drained == [run.judge]


def test_call_wall_time_adds_each_call_from_its_request_to_its_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [100.0]
    monkeypatch.setattr(tests_job, "time", type("Clock", (), {"monotonic": staticmethod(lambda: clock[0])}))
    run = snippet()
    run._on_job(frame(LOAD, b"{}"))
    for sent, answered in ((100.0, 101.5), (103.0, 103.25)):
        clock[0] = sent
        run._on_judge(frame(REQUEST, b"[]"))
        clock[0] = answered
        run._on_job(frame(ANSWER, b"1"))
    assert run.call_wall_s == 1.5 + 0.25 and run.calls == 2
