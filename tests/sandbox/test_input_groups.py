"""Input groups: one call request runs each group (a lifted snippet) as a job of its own in the zygote's cell.

Each test that defends a property also runs the same inputs without groups (one process for all), where the
property does not hold, so the test is shown able to fail.
"""

from __future__ import annotations

import os

import pytest

from audit_lib import sandbox
from audit_lib.errors import ParameterError
from audit_lib.sandbox import Limits, run_tests
from audit_lib.sandbox.zygote.supervise import DRAIN_READS, Capture, ChildRun

STATEFUL = """
import os, sys, time
print("loaded")
seen = []

def f(x):
    seen.append(x)
    print("call", x)
    print("err", x, file=sys.stderr)
    if x == "loop":
        while True:
            pass
    if x == "exit":
        os._exit(3)
    if x == "daemon":
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
    if x == "pids":  # by signal 0, not /proc: hidepid hides the init and every non-dumpable process there
        alive = []
        for pid in range(1, 64):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                continue
            except PermissionError:
                pass
            alive.append(pid)
        return alive
    return len(seen)
"""


def test_no_state_crosses_groups() -> None:
    inputs = [[1], [2], [3], [4]]
    grouped = sandbox.call_function(STATEFUL, "f", inputs, input_groups=[2, 1, 1])
    assert grouped.status == "pass"
    assert [o.value for o in grouped.outcomes] == [1, 2, 1, 1]
    together = sandbox.call_function(STATEFUL, "f", inputs)  # without groups the state carries on
    assert [o.value for o in together.outcomes] == [1, 2, 3, 4]


def test_each_group_gets_the_load_output_and_its_own_output() -> None:
    job = sandbox.call_function(STATEFUL, "f", [[1], [2], [3]], input_groups=[2, 1])
    assert job.group_output == (("loaded\ncall 1\ncall 2\n", "err 1\nerr 2\n"), ("loaded\ncall 3\n", "err 3\n"))
    assert job.stdout == "loaded\ncall 1\ncall 2\nloaded\ncall 3\n"  # each group loads the program itself


def test_a_group_out_of_time_leaves_its_rest_unrun_and_the_next_group_runs() -> None:
    job = sandbox.call_function(STATEFUL, "f", [[1], ["loop"], [2], [3]], input_groups=[1, 2, 1],
                                group_timeout_s=[1.0, 1.0, 1.0], limits=Limits(timeout_s=5, total_timeout_s=30))
    assert [o.kind for o in job.outcomes] == ["value", "timeout", "not_run", "value"]
    assert job.outcomes[1].by_supervisor and job.outcomes[1].wall_s < 3.0  # the group's 1 s, not the input's 5 s
    assert job.status == "pass"  # the unrun input is the group's timeout, not a lost one


def test_a_group_that_ends_its_process_is_recorded_and_the_run_goes_on() -> None:
    job = sandbox.call_function(STATEFUL, "f", [["exit"], [1], [2]], input_groups=[2, 1])
    assert job.outcomes[0].kind == "exception" and job.outcomes[0].exc_type == "ProcessExit"
    assert job.outcomes[0].by_supervisor
    assert [o.value for o in job.outcomes[1:]] == [1, 1] and job.restarts == 1


def test_processes_a_group_left_behind_are_gone_before_the_next_group() -> None:
    grouped = sandbox.call_function(STATEFUL, "f", [["daemon"], ["pids"]], input_groups=[1, 1])
    assert grouped.outcomes[1].kind == "value" and len(grouped.outcomes[1].value) == 2  # the cell's init, the worker
    together = sandbox.call_function(STATEFUL, "f", [["daemon"], ["pids"]])
    assert len(together.outcomes[1].value) == 3  # the daemon is still there


@pytest.mark.parametrize("groups, timeouts, field", [
    ([2, 2], None, "input_groups"),  # sums to 4, not 3
    ([0, 3], None, "input_groups"),
    ([3], [1.0, 1.0], "group_timeout_s"),
    ([3], [float("nan")], "group_timeout_s"),
    (None, [1.0], "group_timeout_s"),
])
def test_bad_groups_are_refused_before_any_job(groups, timeouts, field) -> None:
    with pytest.raises(ParameterError) as raised:
        sandbox.call_function(STATEFUL, "f", [[1], [2], [3]], input_groups=groups, group_timeout_s=timeouts)
    assert raised.value.fields["field"] == field


def test_groups_cannot_stop_after_failure() -> None:
    with pytest.raises(ParameterError):
        sandbox.call_function(STATEFUL, "f", [[1]], input_groups=[1], stop_after_failure=True)


def test_run_tests_gives_each_snippet_a_fresh_job_with_its_own_output() -> None:
    snippets = ["assert f(1) == 1\nassert f(2) == 2", "assert f(5) == 1", "assert f(7) == 2", "assert f(8) == 1"]
    result = run_tests(STATEFUL, snippets, entry_points=("f",))
    assert [s.status for s in result.snippets] == ["pass", "pass", "fail", "pass"]
    assert [s.trust for s in result.snippets] == ["judge"] * 4
    assert result.snippets[1].stdout == "loaded\ncall 5\n" and result.snippets[1].stderr == "err 5\n"


SPOOFS = """
class MemoryError(Exception):
    pass

def f(name):
    raise type(name, (Exception,), {})("not what it says")
"""


@pytest.mark.parametrize("name", ["MemoryError", "SIGKILL", "SandboxSetupError", "Timeout"])
def test_an_exception_named_like_the_supervisors_evidence_is_the_codes_own_error(name: str) -> None:
    result = run_tests(SPOOFS, [f"assert f({name!r}) == 1"], entry_points=("f",))
    snippet = result.snippets[0]
    assert snippet.trust == "judge" and snippet.error_type == name
    assert snippet.status == "error"  # not memory, killed, harness_error or timeout



@pytest.mark.timeout(30)
def test_reading_a_groups_output_stops_even_if_the_job_never_stops_writing() -> None:
    # /dev/zero stands for a job whose threads keep its stdout pipe full: a read never finds it empty. Without a
    # bound on the reads, `drain` (run at each result line) would never return to send the next go or to enforce
    # a deadline.
    endless = os.open("/dev/zero", os.O_RDONLY | os.O_NONBLOCK)
    try:
        run = ChildRun.__new__(ChildRun)
        run.fds, run.open_fds = {endless: "out"}, {endless}
        captures = {"out": Capture(1 << 16), "err": Capture(1 << 16)}
        out_position, _err = run.drain(captures)
        assert out_position == DRAIN_READS * (1 << 16)  # kept up to its cap, the rest counted as dropped
    finally:
        os.close(endless)


HOG = """
import os

def f(x):
    if x == "hog":  # a child of the call fills the job's memory limit and is OOM-killed: the limit refused charges
        pid = os.fork()
        if pid == 0:
            chunks = []
            while True:
                chunks.append(bytearray(8 << 20))
        os.waitpid(pid, 0)
    raise MemoryError(x)
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="the evidence is the job's memory cgroup (cgroup v1 needs root)")
def test_a_raised_memory_error_is_memory_only_for_the_snippet_during_which_the_limit_was_hit() -> None:
    result = run_tests(HOG, ["assert f('hog') == 1", "assert f('plain') == 1"], entry_points=("f",),
                       limits=Limits(memory_mb=256, timeout_s=20, total_timeout_s=60))
    hog, plain = result.snippets
    assert (hog.trust, hog.status, hog.error_type) == ("judge", "memory", "MemoryError")
    assert (plain.trust, plain.status, plain.error_type) == ("judge", "error", "MemoryError")
    # Read for the job as a whole (no groups: one process), the evidence covers both calls: what a per-job reading
    # would have made of the second snippet.
    together = sandbox.call_function(HOG, "f", [["hog"], ["plain"]], limits=Limits(memory_mb=256, timeout_s=20,
                                                                                  total_timeout_s=60))
    assert [outcome.memory_limit_hit for outcome in together.outcomes] == [True, True]
