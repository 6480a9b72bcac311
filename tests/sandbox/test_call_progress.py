"""How the zygote reads a call job's result lines: each input's kind and times decided outside the job (pure).

`call_job.CallProgress` takes the worker's result pipe chunk by chunk with clocks the test moves, so every decision
(load failures, protocol violations, the supervisor's timeouts, memory marks, stops after a failure, a judge's
backlog) is reached without a sandbox. test_input_timing.py and the sandbox tests show the same end to end.
"""

from __future__ import annotations

import hashlib
import json
import math

import pytest

from audit_lib.sandbox.zygote import call_job, call_judging
from audit_lib.sandbox.zygote.call_job import JUDGE_BACKLOG, CallProgress, _as_timeout, _is_failure, _preview
from audit_lib.sandbox.zygote.input_groups import InputGroups


class Clocks:
    """The supervisor's clocks and the job's: wall, job CPU and the main thread's CPU, moved by the test."""

    def __init__(self) -> None:
        self.now = 0.0
        self.cpu = 0.0
        self.own: float | None = 0.0
        self.gos: list[float] = []
        self.memory = 0

    def progress(self, timeouts: list[float], **options: object) -> CallProgress:
        options.setdefault("grace", 1.0)
        options.setdefault("load_timeout", 5.0)
        grace, load_timeout = options.pop("grace"), options.pop("load_timeout")
        return CallProgress(options.pop("first", 0), timeouts, grace, options.pop("total", 1e9), load_timeout,
                            clock=lambda: (self.now, self.cpu), go=lambda: self.gos.append(self.now),
                            wall_clock=lambda: self.now, own_cpu=lambda: self.own,
                            memory_failures=lambda: self.memory, **options)


class Judge:
    """A JudgeLink's stand-in: values submitted, and a backlog the test sets."""

    def __init__(self) -> None:
        self.submitted: list[tuple[int, bytes]] = []
        self.waiting = 0
        self.on_record = None

    def submit(self, index: int, payload: bytes) -> None:
        self.submitted.append((index, payload))
        self.waiting += 1

    def backlog(self) -> int:
        return self.waiting


def measured(line: bytes) -> tuple[bytes, list[str], bytes]:
    """(kind, [wall, cpu, background, flags...], payload) of an accepted line."""
    _index, kind, times, payload = line.split(b" ", 3)
    return kind, times.decode().split(":"), payload


def loaded(clocks: Clocks, timeouts: list[float], **options: object) -> CallProgress:
    progress = clocks.progress(timeouts, **options)
    assert progress.feed(b"L ok\n")
    return progress


# ---- the load ------------------------------------------------------------------------------------------------------

def test_the_load_marker_starts_the_first_input() -> None:
    clocks = Clocks()
    progress = clocks.progress([2.0], grace=1.0, load_timeout=5.0)
    assert progress.current_deadline() == 0.0 + 5.0 + 1.0  # the load's own deadline
    clocks.now, clocks.cpu = 1.5, 0.5
    assert progress.feed(b"L ok\n") and progress.loaded and clocks.gos == [1.5]
    assert (progress.last_cpu, progress.last_event) == (0.5, 1.5)
    assert progress.current_deadline() == 1.5 + 2.0 + 1.0 + 0.25 * 2.0


def test_a_load_failure_is_read_and_a_timeout_claimed_early_is_an_error() -> None:
    clocks = Clocks()
    failure = {"kind": "error", "exc_type": "SyntaxError", "exc_message": "bad"}
    progress = clocks.progress([1.0])
    assert progress.feed(b"L " + json.dumps(failure).encode() + b"\n") and progress.load_failure == failure
    assert not progress.loaded and clocks.gos == []
    for text in (b"not json", b"[1, 2]", json.dumps({"kind": "error", "exc_type": "X"}).encode(),
                 b"[" * 100_000):
        progress = clocks.progress([1.0])
        assert progress.feed(b"L " + text + b"\n")
        assert progress.load_failure == {"kind": "error", "exc_type": "?", "exc_message": "unreadable load error"}
    timeout = {"kind": "timeout", "exc_type": "Timeout", "exc_message": "load"}
    early = clocks.progress([1.0], load_timeout=5.0)
    clocks.now = 4.9
    early.feed(b"L " + json.dumps(timeout).encode() + b"\n")
    assert early.load_failure["kind"] == "error"  # a timeout is the supervisor's word
    clocks.now = 0.0
    on_time = clocks.progress([1.0], load_timeout=5.0)
    clocks.now = 5.0
    on_time.feed(b"L " + json.dumps(timeout).encode() + b"\n")
    assert on_time.load_failure["kind"] == "timeout"


def test_anything_else_before_the_load_marker_is_a_violation() -> None:
    progress = Clocks().progress([1.0])
    assert not progress.feed(b"0 value 0 1\n") and progress.violation == "unexpected line before the load marker"
    assert not Clocks().progress([1.0]).feed(b"Lok\n")


# ---- lines and markers ---------------------------------------------------------------------------------------------

def test_lines_must_come_in_input_order_and_end_with_the_marker() -> None:
    clocks = Clocks()
    progress = loaded(clocks, [1.0, 1.0])
    assert not progress.feed(b"1 value 0 1\n") and progress.violation == "result for input b'1' when 0 was expected"
    progress = loaded(clocks, [1.0, 1.0])
    assert not progress.feed(b"x" * 30 + b" value 0 1\n")
    assert progress.violation == f"result for input {b'x' * 20!r} when 0 was expected"
    progress = loaded(clocks, [1.0, 1.0])
    assert progress.feed(b"0 value 0 1\n") and not progress.feed(b"D\n")
    assert progress.violation == "end marker before every input was answered" and not progress.done
    progress = loaded(clocks, [1.0])
    assert progress.feed(b"0 value 0 1\n") and progress.feed(b"D\n") and progress.done
    assert clocks.gos[-1] == clocks.now and progress.current_deadline() == clocks.now + 1.0  # the end's go: grace
    assert not progress.feed(b"D\n") and progress.violation == "data after the end marker"


def test_only_the_inputs_of_this_run_are_answered() -> None:
    clocks = Clocks()
    progress = loaded(clocks, [1.0, 1.0, 1.0, 1.0], first=1, end=3)
    assert progress.feed(b"1 value 0 1\n") and progress.feed(b"2 value 0 1\n") and progress.feed(b"D\n")
    assert progress.done and [line[:1] for line in progress.lines] == [b"1", b"2"]


def test_a_partial_line_waits_for_its_end() -> None:
    clocks = Clocks()
    progress = loaded(clocks, [1.0])
    clocks.now = 0.25
    assert progress.feed(b"0 val") and progress.lines == [] and progress.chunk_clock == (0.0, 0.0)
    clocks.now = 0.5
    assert progress.feed(b"ue 0 7\n") and progress.lines == [b"0 value 0.5:0.0:0.0 7"]


def test_the_result_channel_has_a_size_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(call_job, "MAX_RESULT_BYTES", 10)
    progress = Clocks().progress([1.0])
    assert progress.feed(b"L ok\n") and progress.feed(b"01234")  # 10 bytes: at the cap
    assert not progress.feed(b"5") and progress.violation == "result channel exceeded its size cap"


def test_after_a_stop_on_a_mismatch_nothing_more_is_read() -> None:
    progress = Clocks().progress([1.0])
    progress.stopped_on_mismatch = True
    assert progress.feed(b"garbage\n") and progress.violation is None and not progress.loaded


# ---- the supervisor's times and verdicts ---------------------------------------------------------------------------

def test_times_are_measured_here_and_the_child_s_dropped() -> None:
    clocks = Clocks()
    progress = loaded(clocks, [2.0])
    clocks.now, clocks.cpu, clocks.own = 1.5, 1.25, 0.75
    assert progress.feed(b"0 value 99.0 [1]\n")
    assert measured(progress.lines[0]) == (b"value", ["1.5", "1.25", "0.5"], b"[1]")


def test_background_cpu_is_nothing_when_the_main_thread_is_unreadable() -> None:
    clocks = Clocks()
    clocks.own = None
    progress = loaded(clocks, [2.0])
    clocks.now, clocks.cpu = 1.0, 1.0
    progress.feed(b"0 value 0 1\n")
    assert measured(progress.lines[0])[1] == ["1.0", "1.0", "0.0"]
    clocks = Clocks()
    progress = loaded(clocks, [2.0, 2.0])
    clocks.now, clocks.cpu, clocks.own = 1.0, 1.0, None  # the worker ended just after its answer
    progress.feed(b"0 value 0 1\n")
    assert measured(progress.lines[0])[1] == ["1.0", "1.0", "0.0"]


def test_wall_time_plus_background_cpu_over_the_limit_is_a_timeout() -> None:
    clocks = Clocks()
    progress = loaded(clocks, [2.0, 2.0, 2.0])
    clocks.now, clocks.cpu, clocks.own = 1.0, 2.0, 0.5  # 1.5 s of background CPU: 2.5 > 2
    assert progress.feed(b"0 value 0 [1]\n")
    assert measured(progress.lines[0]) == (b"timeout", ["1.0", "2.0", "1.5"], b"null")
    clocks.now, clocks.cpu, clocks.own = 3.0, 2.0, 0.5  # exactly at the limit: not over it
    assert progress.feed(b"1 value 0 [1]\n") and measured(progress.lines[1])[0] == b"value"
    clocks.now = 5.5
    assert progress.feed(b"2 exception 0 [\"E\", \"m\"]\n") and measured(progress.lines[2])[0] == b"timeout"


def test_a_timeout_the_child_claims_well_before_its_limit_is_an_exception() -> None:
    clocks = Clocks()
    progress = loaded(clocks, [2.0, 2.0])
    clocks.now = 0.99  # under half the limit
    assert progress.feed(b"0 timeout 0 null\n")
    kind, _times, payload = measured(progress.lines[0])
    assert (kind, json.loads(payload)) == (b"exception", ["FalseTimeout", "reported a timeout well before its time limit"])
    clocks.now = 0.99 + 1.0  # half the limit exactly: the child's own clock may have started earlier
    assert progress.feed(b"1 timeout 0 null\n") and measured(progress.lines[1])[0] == b"timeout"


def test_a_line_without_its_value_is_kept_as_the_child_wrote_it() -> None:
    clocks = Clocks()
    progress = loaded(clocks, [2.0, 2.0], stop_after_failure=True)
    clocks.now = 5.0
    assert progress.feed(b"0 value 0\n") and progress.lines == [b"0 value 0"]
    assert progress.stopped_after_failure and not progress.go_due  # a value line without its value fails


def test_an_exception_while_memory_ran_out_is_marked() -> None:
    clocks = Clocks()
    progress = loaded(clocks, [2.0, 2.0, 2.0])
    clocks.memory = 1  # since the group's start (0 failures then)
    assert progress.feed(b"0 exception 0 [\"MemoryError\", \"\"]\n")
    assert measured(progress.lines[0])[1][3] == "m"
    assert progress.feed(b"1 value 0 1\n") and len(measured(progress.lines[1])[1]) == 3  # only exceptions
    progress.failures_before = 1
    assert progress.feed(b"2 exception 0 [\"MemoryError\", \"\"]\n") and len(measured(progress.lines[2])[1]) == 3


# ---- stops, the judge, previews --------------------------------------------------------------------------------

def test_stop_after_failure_stops_at_the_first_line_that_is_not_a_value() -> None:
    clocks = Clocks()
    progress = loaded(clocks, [1.0, 1.0, 1.0], stop_after_failure=True)
    assert progress.feed(b"0 value 0 1\n") and clocks.gos == [0.0, 0.0] and not progress.stopped_after_failure
    assert progress.feed(b"1 exception 0 [\"E\", \"m\"]\n") and progress.stopped_after_failure
    assert clocks.gos == [0.0, 0.0] and progress.feed(b"D\n") and progress.done  # the end marker comes early
    without = loaded(clocks, [1.0, 1.0])
    assert without.feed(b"0 exception 0 [\"E\", \"m\"]\n") and not without.stopped_after_failure
    assert not without.feed(b"D\n")


def test_values_go_to_the_judge_and_the_parent_gets_none_of_them() -> None:
    clocks, judge = Clocks(), Judge()
    progress = loaded(clocks, [1.0, 1.0, 1.0], judge=judge, preview=True)
    assert judge.on_record == progress._on_record
    progress.feed(b"0 value 0 [1, 2]\n")
    progress.feed(b"1 exception 0 [\"E\", \"m\"]\n")
    assert judge.submitted == [(0, b"[1, 2]")]
    assert progress.lines[0] == b"0 value 0.0:0.0:0.0 null" and measured(progress.lines[1])[0] == b"exception"
    unjudged = loaded(clocks, [1.0], judge=Judge())
    unjudged.feed(b"0 value 0 [1, 2]\n")
    assert measured(unjudged.lines[0])[2] == b"[1, 2]"  # without preview the line is the parent's to decode


def test_without_a_judge_a_preview_stands_in_for_the_value() -> None:
    clocks = Clocks()
    progress = loaded(clocks, [1.0], preview=True)
    big = b'"' + b"x" * (call_job.PREVIEW_WHOLE_BYTES + 1) + b'"'
    progress.feed(b"0 value 0 " + big + b"\n")
    assert measured(progress.lines[0])[2] == _preview(big) != big


def test_the_next_go_waits_while_the_judge_is_behind() -> None:
    clocks, judge = Clocks(), Judge()
    progress = loaded(clocks, [1.0] * 10, judge=judge)
    for index in range(JUDGE_BACKLOG):
        assert progress.feed(f"{index} value 0 1\n".encode())
    assert len(clocks.gos) == 1 + JUDGE_BACKLOG and not progress.go_held  # a backlog of JUDGE_BACKLOG is allowed
    assert progress.feed(f"{JUDGE_BACKLOG} value 0 1\n".encode())
    assert progress.go_held and progress.deadline == math.inf and len(clocks.gos) == 1 + JUDGE_BACKLOG
    progress.total_deadline = 50.0
    assert progress.current_deadline() == 50.0
    judge.waiting -= 1
    progress._on_record(0, b'{"v": "match"}')
    assert not progress.go_held and len(clocks.gos) == 2 + JUDGE_BACKLOG


def test_with_a_stop_after_failure_the_next_input_runs_while_one_value_is_judged() -> None:
    clocks, judge = Clocks(), Judge()
    stops: list[str] = []
    progress = loaded(clocks, [1.0, 1.0, 1.0, 1.0], judge=judge, stop_after_failure=True,
                      stop=lambda: stops.append("stop"), halt=lambda: stops.append("halt"))
    assert progress.feed(b"0 value 0 1\n") and not progress.go_held and clocks.gos == [0.0, 0.0]  # one behind
    assert progress.feed(b"1 value 0 2\n") and progress.go_held and clocks.gos == [0.0, 0.0]  # two: input 2 waits
    judge.waiting = 1
    progress._on_record(0, b'{"v": "match"}')
    assert not progress.go_held and clocks.gos == [0.0, 0.0, 0.0] and stops == []
    judge.waiting = 0
    progress._on_record(1, b'{"v": "wrong_value"}')  # input 2 is running: the child is ended at once
    assert stops == ["halt"] and progress.stopped_after_failure and progress.stopped_on_mismatch and progress.done
    assert not progress.go_held and not progress.go_due
    assert progress.feed(b"2 value 0 3\n") and len(progress.lines) == 2  # what ran past the failure is not taken
    progress._on_record(2, b'{"v": "wrong_value"}')  # once done, records change nothing
    assert stops == ["halt"]


def test_a_failure_found_while_the_child_waits_closes_its_go_pipe() -> None:
    clocks, judge = Clocks(), Judge()
    stops: list[str] = []
    progress = loaded(clocks, [1.0, 1.0, 1.0], judge=judge, stop_after_failure=True,
                      stop=lambda: stops.append("stop"), halt=lambda: stops.append("halt"))
    assert progress.feed(b"0 value 0 1\n") and progress.feed(b"1 value 0 2\n") and progress.go_held
    progress._on_record(0, b'{"v": "wrong_value"}')
    assert stops == ["stop"] and progress.done


def _line(index: int, kind: str = "value", payload: str = "null") -> bytes:
    return f"{index} {kind} 0.1:0.1:0.0 {payload}".encode()


def test_a_fast_check_is_cut_after_its_first_failed_value() -> None:
    blob = b"\n".join([_line(0), _line(1), _line(2, "exception", '["ValueError", "x"]'), _line(3)])
    records = {0: b'{"v": "match"}', 1: b'{"v": "wrong_value"}', 3: b'{"v": "wrong_value"}'}
    header = {"status": "timeout", "load_error": "past the total budget", "stopped_on_mismatch": False}
    cut_header, cut_blob = call_job.cut_after_first_failure(header, blob, records)
    assert cut_blob == b"\n".join([_line(0), _line(1)])
    assert (cut_header["status"], cut_header["load_error"], cut_header["stopped_on_mismatch"]) == ("pass", None, True)
    refused = {0: call_judging.JUDGE_LOST}  # a value the judge could not judge fails too
    assert call_job.cut_after_first_failure(header, blob, refused)[1] == _line(0)
    passing = {0: b'{"v": "match"}', 1: b'{"v": "match"}', 3: b'{"v": "match"}'}
    assert call_job.cut_after_first_failure(header, blob, passing) == (header, blob)  # nothing failed: as it ran


def test_a_failed_record_without_stop_after_failure_only_releases_the_go() -> None:
    clocks, judge = Clocks(), Judge()
    progress = loaded(clocks, [1.0, 1.0], judge=judge)
    progress.go_held = True
    progress._on_record(0, b'{"v": "wrong_value"}')
    assert not progress.done and not progress.go_held and len(clocks.gos) == 2
    quiet = loaded(clocks, [1.0, 1.0], judge=Judge())
    quiet._on_record(0, b'{"v": "match"}')  # no go held: none sent
    assert len(clocks.gos) == 3


# ---- deadlines -----------------------------------------------------------------------------------------------------

def test_each_input_s_deadline_is_its_limit_plus_grace_and_a_quarter() -> None:
    clocks = Clocks()
    progress = loaded(clocks, [4.0, 2.0], grace=0.5)
    assert progress.deadline == 4.0 + 0.5 + 1.0
    clocks.now = 3.0
    progress.feed(b"0 value 0 1\n")
    assert progress.deadline == 3.0 + 2.0 + 0.5 + 0.5 and progress.last_event == 3.0
    clocks.now = 4.0
    progress.feed(b"1 value 0 1\n")
    assert progress.deadline == 4.0 + 0.5  # the end's go: grace only
    assert progress.current_deadline() == 4.5 and loaded(clocks, [1.0], total=2.0).current_deadline() == 2.0


def test_a_group_s_deadline_starts_with_its_first_run_and_holds() -> None:
    clocks = Clocks()
    groups = InputGroups([0, 2], [3.0, 10.0], 3)
    clocks.now = 1.0
    progress = clocks.progress([5.0, 5.0, 5.0], groups=groups, grace=1.0, load_timeout=50.0,
                               output_mark=lambda: (7, 8))
    assert progress.deadline == 1.0 + 3.0  # the group's 3 s cover its load
    assert progress.feed(b"L ok\n") and progress.deadline == 4.0
    clocks.memory = 2
    progress.feed(b"0 value 0 1\n")
    assert groups.marks == {0: (7, 8)} and progress.deadline == 4.0 and progress.failures_before == 0
    progress.feed(b"1 value 0 1\n")
    assert groups.deadlines[1] == 1.0 + 10.0 and progress.deadline == 1.0 + 5.0 + 1.0 + 1.25  # the sooner one
    assert progress.failures_before == 2  # the second group starts: its memory failures are counted from here
    later = clocks.progress([5.0, 5.0, 5.0], groups=groups, first=3)  # past the inputs: no group deadline
    assert later.deadline == 1.0 + 5.0 + 1.0


# ---- helpers -------------------------------------------------------------------------------------------------------

def test_as_timeout_keeps_the_times_and_marks_the_supervisor_s_word() -> None:
    assert _as_timeout(b"3 value 1.5:0.5:0.25 [1]") == b"3 timeout 1.5:0.5:0.25:s null"
    assert _as_timeout(b"3 exception 1.5:0.5:0.25:m [\"E\", \"\"]") == b"3 timeout 1.5:0.5:0.25:s null"
    assert _as_timeout(b"3 timeout 1.5:0.5:0.25 null") == b"3 timeout 1.5:0.5:0.25 null"


def test_is_failure_reads_the_judge_s_record() -> None:
    assert not _is_failure(b'{"v": "match"}') and not _is_failure(b'{"v": null}')
    assert _is_failure(b'{"v": "wrong_value"}')
    assert _is_failure(b'{"k": "unserializable", "t": "JudgeLimit"}')  # a refused value
    assert _is_failure(b"not json") and _is_failure(b'["match"]')


def test_preview_is_whole_up_to_its_bound_and_else_the_start_with_size_and_hash() -> None:
    whole = b"x" * call_job.PREVIEW_WHOLE_BYTES
    assert _preview(whole) is whole
    long = "é".encode() * 40_000
    shown = json.loads(_preview(long))
    assert shown == {"$preview": long[:call_job.PREVIEW_CHARS].decode("utf-8", "replace"), "bytes": len(long),
                     "sha256": hashlib.sha256(long).hexdigest()}
    assert len(shown["$preview"]) == call_job.PREVIEW_CHARS // 2


def test_a_line_is_read_whole_across_several_partial_chunks() -> None:
    clocks = Clocks()
    progress = loaded(clocks, [1.0])
    assert progress.feed(b"0 va") and progress.feed(b"lue 0") and progress.feed(b" 7\n")
    assert progress.lines == [b"0 value 0.0:0.0:0.0 7"] and progress.load_failure is None


def test_fields_are_split_at_single_spaces_only() -> None:
    clocks, judge = Clocks(), Judge()
    progress = loaded(clocks, [1.0, 1.0], judge=judge)
    assert progress.feed(b"0 value 0  [1]\n")  # the payload is relayed as written, its leading space too
    assert judge.submitted == [(0, b" [1]")] and measured(progress.lines[0])[2] == b" [1]"
    tabbed = loaded(clocks, [1.0, 1.0], judge=Judge(), stop_after_failure=True)
    assert tabbed.feed(b"0 value\t0 1 2\n")  # "value\t0" is no value kind: not judged, and it stops the run
    assert tabbed.judge.submitted == [] and tabbed.stopped_after_failure
    assert not loaded(clocks, [1.0]).feed(b"0\tvalue 0 1\n")  # the index field is "0\tvalue": not input 0


def test_background_cpu_is_the_job_s_cpu_less_the_main_thread_s_since_the_last_answer() -> None:
    clocks = Clocks()
    clocks.own = 0.25
    progress = loaded(clocks, [2.0])
    clocks.now, clocks.cpu, clocks.own = 1.5, 1.25, 0.75  # main thread 0.5 of the job's 1.25
    assert progress.feed(b"0 value 0 [1]\n")
    assert measured(progress.lines[0])[1] == ["1.5", "1.25", "0.75"]


def test_a_load_timeout_is_timed_from_this_run_s_start() -> None:
    clocks = Clocks()
    clocks.now = 10.0
    progress = clocks.progress([1.0], load_timeout=5.0)
    clocks.now = 14.9
    progress.feed(b'L {"kind": "timeout", "exc_type": "Timeout", "exc_message": "load"}\n')
    assert progress.load_failure["kind"] == "error"
    clocks.now = 10.0
    late = clocks.progress([1.0], load_timeout=5.0)
    clocks.now = 15.0
    late.feed(b'L {"kind": "timeout", "exc_type": "Timeout", "exc_message": "load"}\n')
    assert late.load_failure["kind"] == "timeout"


def test_an_end_marker_right_after_the_load_is_a_violation() -> None:
    progress = loaded(Clocks(), [1.0])
    assert not progress.feed(b"D\n") and progress.violation == "end marker before every input was answered"


def test_a_run_that_starts_past_the_inputs_has_no_group_deadline() -> None:
    clocks = Clocks()
    clocks.now = 1.0
    groups = InputGroups([0], [0.5], 3)
    progress = clocks.progress([5.0, 5.0, 5.0], groups=groups, first=3)
    assert progress.deadline == 1.0 + 5.0 + 1.0 and groups.deadlines == {}


def test_a_preview_cut_inside_a_character_is_still_text() -> None:
    long = b"a" + "é".encode() * 40_000  # the cut at PREVIEW_CHARS bytes splits an é
    shown = json.loads(_preview(long))
    assert shown["$preview"].endswith("\ufffd") and len(shown["$preview"]) == 1 + (call_job.PREVIEW_CHARS - 1) // 2 + 1
