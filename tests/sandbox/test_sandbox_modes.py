"""Assert mode and function-call mode: verdicts, faithful values, limits, timeouts and restarts."""

from __future__ import annotations

import math
import os
import textwrap

import pytest

from audit_lib import sandbox
from audit_lib.errors import ParameterError
from audit_lib.sandbox import Limits

pytestmark = pytest.mark.timeout(60)

QUICK = Limits(timeout_s=2, total_timeout_s=15, memory_mb=256)
PROGRAM = "def add(a, b):\n    return a + b\n"


def test_assert_mode_statuses_per_snippet() -> None:
    program = PROGRAM + "def noisy():\n    import sys\n    print('out')\n    print('err', file=sys.stderr)\n"
    result = sandbox.run_asserts(program, [
        "assert add(1, 2) == 3", "assert add(1, 2) == 4, 'off by one'", "add(None, 1)", "x = [0] * (1 << 40)",
        "noisy()", "def broken(:\n    pass",
    ], limits=QUICK)
    statuses = [s.status for s in result.snippets]
    # A MemoryError the test raises (here: a request for 8 TiB refused at once, in the judge) is an error; `memory`,
    # an environment status, needs the kernel's word about the job (see test_isolation.py). The program's output is
    # the result's stdout/stderr, its exceptions the snippet's.
    assert statuses == ["pass", "fail", "error", "error", "pass", "error"]
    assert result.snippets[3].error_type == "MemoryError"
    assert result.status == "fail"  # the first snippet that did not pass
    assert result.snippets[1].error_message == "off by one"
    assert result.snippets[2].error_type == "TypeError"
    assert result.snippets[5].error_type == "SyntaxError"
    assert (result.snippets[4].stdout, result.snippets[4].stderr) == ("out\n", "err\n")
    assert result.limits == QUICK
    assert all(s.duration_s > 0 for s in result.snippets)


def test_assert_mode_all_pass_and_separator_and_main_name() -> None:
    result = sandbox.run_asserts("x = 1", ["assert x == 1", "assert __name__ == '__main__'"], limits=QUICK,
                                 separator="\n# separator\n")
    assert result.status == "pass"
    # The separator matters only to the script run that records an exit code: "x = 1y = x" does not compile.
    result = sandbox.run_tests("x = 1", ["y = x"], separator="", limits=QUICK, exit_code=True)
    assert (result.status, result.snippets[0].exit_code) == ("pass", 1)


def test_assert_mode_each_snippet_runs_in_a_fresh_child() -> None:
    """The program's side of each snippet is a fresh job: nothing one snippet's calls left reaches the next."""
    program = ("import os, builtins\n"
               "def mark():\n    open('marker', 'w').write('x')\n    return os.listdir('.')\n"
               "def listing():\n    return os.listdir('.')\n"
               "def leak():\n    builtins.leak = 1\n    return hasattr(builtins, 'leak')\n"
               "def leaked():\n    return hasattr(builtins, 'leak')\n")
    result = sandbox.run_asserts(program, ["assert mark() == ['marker']", "assert listing() == []",
                                           "assert leak()", "assert not leaked()"], limits=QUICK)
    assert [s.status for s in result.snippets] == ["pass"] * 4


def test_total_timeout_marks_the_rest_not_run() -> None:
    limits = Limits(timeout_s=1, total_timeout_s=1.5, memory_mb=256)
    result = sandbox.run_asserts(PROGRAM, ["while True: pass", "while True: pass", "assert True"], limits=limits)
    assert [s.status for s in result.snippets] == ["timeout", "timeout", "timeout"]
    assert result.snippets[2].error_type == "NotRun"


def test_call_mode_values_are_faithful() -> None:
    program = textwrap.dedent("""
        def f(kind):
            return {
                "tuple": (1, [2, (3,)]), "list": [1, 2], "set": {1, 2}, "frozenset": frozenset({"a"}),
                "nan": float("nan"), "inf": float("-inf"), "negzero": -0.0, "bytes": b"\\x00\\xff",
                "big": 2 ** 200, "intkeys": {1: "a", (2, 3): None}, "bool": True, "none": None,
                "float": 0.1 + 0.2,
            }[kind]
    """)
    kinds = ["tuple", "list", "set", "frozenset", "nan", "inf", "negzero", "bytes", "big", "intkeys", "bool", "none",
             "float"]
    result = sandbox.call_function(program, "f", [[k] for k in kinds], limits=QUICK)
    assert result.status == "pass" and result.load_error is None
    values = {k: o.value for k, o in zip(kinds, result.outcomes)}
    assert values["tuple"] == (1, [2, (3,)]) and type(values["tuple"][1][1]) is tuple
    assert type(values["list"]) is list and values["set"] == {1, 2} and type(values["frozenset"]) is frozenset
    assert math.isnan(values["nan"]) and values["inf"] == -math.inf
    assert math.copysign(1, values["negzero"]) == -1
    assert values["bytes"] == b"\x00\xff" and values["big"] == 2**200
    assert values["intkeys"] == {1: "a", (2, 3): None} and values["bool"] is True and values["none"] is None
    assert values["float"] == 0.1 + 0.2
    assert all(o.kind == "value" and o.duration_s >= 0 for o in result.outcomes)


def test_call_mode_exceptions_timeouts_and_deepcopy() -> None:
    program = textwrap.dedent("""
        def f(items, mode):
            items.append(1)
            if mode == "raise":
                raise ValueError("bad " + str(len(items)))
            if mode == "exit":
                raise SystemExit(3)
            if mode == "loop":
                while True:
                    pass
            return len(items)
    """)
    shared = [0]
    inputs = [[shared, "ok"], [shared, "ok"], [shared, "raise"], [shared, "exit"], [shared, "loop"], [shared, "ok"]]
    result = sandbox.call_function(program, "f", inputs, limits=Limits(timeout_s=0.5, total_timeout_s=10))
    kinds = [o.kind for o in result.outcomes]
    assert kinds == ["value", "value", "exception", "exception", "timeout", "value"]
    assert [result.outcomes[i].value for i in (0, 1, 5)] == [2, 2, 2]  # deep copies: no mutation carried over
    assert (result.outcomes[2].exc_type, result.outcomes[2].exc_message) == ("ValueError", "bad 2")
    assert result.outcomes[3].exc_type == "SystemExit"
    shallow = sandbox.call_function(program, "f", [[[0], "ok"]] * 1, limits=QUICK, deepcopy_inputs=False)
    assert shallow.outcomes[0].value == 2


def test_call_mode_per_input_timeouts_and_hard_kill_restart() -> None:
    # all(repeat(True)) loops inside C without ever checking for signals, so only the hard kill stops it.
    program = "import itertools\ndef f(n):\n    return n if n < 10 else all(itertools.repeat(True))\n"
    result = sandbox.call_function(program, "f", [[3], [64], [4]], limits=Limits(timeout_s=5, total_timeout_s=20),
                                   per_input_timeout_s=[1.0, 0.3, 1.0])
    assert [o.kind for o in result.outcomes] == ["value", "timeout", "value"]
    assert [result.outcomes[i].value for i in (0, 2)] == [3, 4]
    assert result.restarts == 1


def test_call_mode_total_timeout_leaves_not_run() -> None:
    program = "import time\ndef f(x):\n    time.sleep(x)\n    return x\n"
    result = sandbox.call_function(program, "f", [[0.6], [0.6], [0.6], [0.6]],
                                   limits=Limits(timeout_s=2, total_timeout_s=1.0))
    kinds = [o.kind for o in result.outcomes]
    assert result.status == "timeout"
    assert kinds[0] == "value" and "not_run" in kinds


def test_call_mode_loads_outside_every_per_input_limit_within_the_jobs_budget() -> None:
    """EvalPlus loads a sample outside its per-input limits, within the sample's budget (issue 24, class 3): module-
    level work longer than any input's limit loads; a load longer than the job's whole budget is a timeout."""
    busy = "import time\n_end = time.process_time() + 0.8\nwhile time.process_time() < _end:\n    pass\n"
    limits = Limits(timeout_s=0.2, total_timeout_s=30, memory_mb=256)
    result = sandbox.call_function(busy + PROGRAM, "add", [[1, 2], [3, 4]], per_input_timeout_s=[0.2, 0.2],
                                   limits=limits)
    assert result.load_error is None and [o.value for o in result.outcomes] == [3, 7], result
    endless = sandbox.call_function("while True:\n    pass\n" + PROGRAM, "add", [[1, 2]],
                                    limits=Limits(timeout_s=0.2, total_timeout_s=2, memory_mb=256))
    assert endless.status == "timeout" and [o.kind for o in endless.outcomes] == ["not_run"], endless


@pytest.mark.parametrize("program, entry, expected", [
    ("raise ImportError('nope')", "f", "ImportError: nope"),
    ("x = 1", "f", "NameError"),
    ("f = 3", "f", "NameError"),
    ("def f(:", "f", "SyntaxError"),
])
def test_call_mode_load_errors(program: str, entry: str, expected: str) -> None:
    result = sandbox.call_function(program, entry, [[1], [2]], limits=QUICK)
    assert result.status == "error"
    assert result.load_error.startswith(expected)
    assert [o.kind for o in result.outcomes] == ["not_run", "not_run"]


def test_call_mode_main_guard_does_not_run_and_output_is_captured() -> None:
    program = "print('loading')\nif __name__ == '__main__':\n    raise SystemExit(1)\ndef f():\n    return __name__\n"
    result = sandbox.call_function(program, "f", [[]], limits=QUICK)
    assert result.outcomes[0].value == "__sandbox__" and result.stdout == "loading\n"


def test_call_mode_crash_in_one_input_keeps_the_others() -> None:
    program = "import os\ndef f(x):\n    if x == 1:\n        os._exit(7)\n    return x\n"
    result = sandbox.call_function(program, "f", [[0], [1], [2]], limits=QUICK)
    assert [o.kind for o in result.outcomes] == ["value", "exception", "value"]
    assert result.outcomes[1].exc_type == "ProcessExit"


def test_limits_are_validated() -> None:
    with pytest.raises(ParameterError):
        Limits(timeout_s=0)
    with pytest.raises(ParameterError):
        Limits(memory_mb=-1)
    with pytest.raises(ParameterError):
        sandbox.call_function(PROGRAM, "add", [[1, 2]], per_input_timeout_s=[1.0, 2.0])
    with pytest.raises(ParameterError):
        sandbox.call_function(PROGRAM, "add", [[object(), 2]])


def test_jobs_are_picklable_and_run() -> None:
    import pickle

    job = sandbox.CallJob("k", PROGRAM, "add", ((1, 2), (3, 4)), limits=QUICK)
    clone = pickle.loads(pickle.dumps(job))
    assert [o.value for o in clone.run().outcomes] == [3, 7]
    assert_job = pickle.loads(pickle.dumps(sandbox.AssertJob("a", PROGRAM, ("assert add(1, 1) == 2",), QUICK)))
    assert assert_job.run().status == "pass"


def test_exit_code_reports_what_python_c_would_exit_with_but_never_decides_the_verdict():
    from audit_lib.sandbox import Limits, run_asserts

    snippets = ["assert solution(1) == 1", "assert solution(1) == 2", "import os; os._exit(0)",
                "import sys; sys.exit(0)", "import sys; sys.exit(3)", "raise ValueError('x')", "while True: pass"]
    result = sandbox.run_tests("def solution(x):\n    return x\n", snippets, entry_points=("solution",),
                               limits=Limits(timeout_s=1.0), exit_code=True)
    observed = [(s.status, s.exit_code) for s in result.snippets]
    assert observed == [("pass", 0), ("fail", 1), ("error", 0), ("error", 0), ("error", 3), ("error", 1),
                        ("timeout", None)]
    assert run_asserts("def solution(x):\n    return x\n", snippets[:1]).snippets[0].exit_code is None


def test_a_result_too_big_for_the_memory_cap_is_reported_as_memory_and_later_inputs_still_run():
    from audit_lib.sandbox import Limits, call_function

    result = call_function("def f(n):\n    return 'x' * n\n", "f", [[3], [300 * 10**6], [2]],
                           limits=Limits(timeout_s=5.0, memory_mb=512))
    kinds = [(o.kind, o.exc_type) for o in result.outcomes]
    if os.geteuid() == 0:  # the job's memory cgroup killed it: the kernel's evidence makes it a MemoryError
        assert kinds == [("value", None), ("exception", "MemoryError"), ("value", None)]
        assert "512 MB" in (result.outcomes[1].exc_message or "")
    else:  # the fallback: the harness died under RLIMIT_AS, which nothing outside the child can tell apart
        assert kinds == [("value", None), ("exception", "ProcessExit"), ("value", None)]


def test_stop_after_failure_replays_evalplus_fast_check_without_hiding_wrong_values():
    from audit_lib.sandbox import Limits, call_function

    program = ("def f(x):\n    if x == 2:\n        raise ValueError('two')\n    if x == 4:\n"
               "        while True:\n            pass\n    return x\n")
    inputs = [[1], [3], [2], [4], [5]]
    full = call_function(program, "f", inputs, limits=Limits(timeout_s=1.0))
    fast = call_function(program, "f", inputs, limits=Limits(timeout_s=1.0), stop_after_failure=True)
    assert [o.kind for o in full.outcomes] == ["value", "value", "exception", "timeout", "value"]
    assert [o.kind for o in fast.outcomes] == ["value", "value", "exception", "not_run", "not_run"]
    assert full.status == fast.status == "pass"
    swallower = ("def f(x):\n    if x == 4:\n        try:\n            while True:\n                pass\n"
                 "        except BaseException:\n            while True:\n                pass\n    return x\n")
    killed = call_function(swallower, "f", [[1], [4], [5]], limits=Limits(timeout_s=0.5), stop_after_failure=True)
    assert [o.kind for o in killed.outcomes] == ["value", "timeout", "not_run"]
    assert killed.restarts == 0


def test_stop_expected_stops_after_the_first_value_that_differs():
    program = "def f(x):\n    return x * 2 if x != 3 else -1\n"
    inputs = [[1], [2], [3], [4], [5]]
    result = sandbox.call_function(program, "f", inputs, limits=QUICK, stop_after_failure=True,
                                   stop_expected={0: 2, 1: 4, 2: 6, 3: 8, 4: 10})
    assert [o.kind for o in result.outcomes] == ["value", "value", "value", "not_run", "not_run"]
    assert result.outcomes[2].value == -1  # the wrong value itself still comes back for the caller to judge
    assert result.status == "pass"


def test_stop_expected_compares_values_not_encodings():
    # 1 == True == 1.0 and equal dicts in another order are equal values: none of them may stop the run.
    program = ("def f(x):\n    return {0: True, 1: 1.0, 2: {'b': 1, 'a': 2}, 3: [1, 2], 4: (1, 2)}[x]\n")
    inputs = [[0], [1], [2], [3], [4]]
    expected = {0: 1, 1: 1, 2: {"a": 2, "b": 1}, 3: [1, 2], 4: [1, 2]}  # (1, 2) != [1, 2]: the last one differs
    result = sandbox.call_function(program, "f", inputs, limits=QUICK, stop_after_failure=True,
                                   stop_expected=expected)
    assert [o.kind for o in result.outcomes] == ["value"] * 5
    assert result.outcomes[4].value == (1, 2)
    unhinted = sandbox.call_function(program, "f", inputs + [[0]], limits=QUICK, stop_after_failure=True,
                                     stop_expected={4: [1, 2]})
    assert [o.kind for o in unhinted.outcomes] == ["value"] * 5 + ["not_run"]


def test_stop_expected_is_never_visible_to_the_code_under_test():
    # The child searches every object and stack frame it inherited from the zygote; the expected values are only
    # in the judge process. The needle is built at run time so the program text itself does not contain it.
    program = textwrap.dedent("""
        import gc, sys
        def f(x):
            needle = ''.join(['SECRET', '-', 'EXPECTED'])
            for obj in gc.get_objects():
                if isinstance(obj, (list, dict, tuple)) and needle in repr(obj)[:1000000]:
                    return 'found in ' + type(obj).__name__
            frame = sys._getframe().f_back
            while frame is not None:
                if needle in repr(frame.f_locals)[:1000000]:
                    return 'found in a frame'
                frame = frame.f_back
            return 'not found'
    """)
    result = sandbox.call_function(program, "f", [[0], [1]], limits=QUICK, stop_after_failure=True,
                                   stop_expected={0: "SECRET-EXPECTED", 1: "SECRET-EXPECTED"})
    assert result.outcomes[0].value == "not found"
    assert result.outcomes[1].kind == "not_run"


def test_the_judge_process_does_not_outlive_its_job():
    import os

    from audit_lib.sandbox import pool as sandbox_pool

    before = _zygote_children()
    for _ in range(3):
        sandbox.call_function(PROGRAM, "add", [[1, 2], [2, 2]], limits=QUICK, stop_after_failure=True,
                              stop_expected={0: 3, 1: 5})
    assert _zygote_children() == before
    assert all(zygote.alive() for group in sandbox_pool.POOL._idle.values() for zygote in group)
    assert os.getpid()


def _zygote_children() -> set[int]:
    from audit_lib.sandbox import pool as sandbox_pool

    children: set[int] = set()
    for group in sandbox_pool.POOL._idle.values():
        for zygote in group:
            pid = zygote.process.pid
            try:
                with open(f"/proc/{pid}/task/{pid}/children") as handle:
                    children |= {int(p) for p in handle.read().split()}
            except OSError:
                pass
    return children


def test_stop_expected_needs_stop_after_failure_and_valid_indices():
    with pytest.raises(ParameterError, match="stop_after_failure"):
        sandbox.call_function(PROGRAM, "add", [[1, 2]], limits=QUICK, stop_expected={0: 3})
    with pytest.raises(ParameterError, match="not an input index"):
        sandbox.call_function(PROGRAM, "add", [[1, 2]], limits=QUICK, stop_after_failure=True,
                              stop_expected={1: 3})
    with pytest.raises(ParameterError, match="not plain data"):
        sandbox.call_function(PROGRAM, "add", [[1, 2]], limits=QUICK, stop_after_failure=True,
                              stop_expected={0: object()})


def test_large_float_free_outputs_can_come_back_as_digests():
    from audit_lib.sandbox import ValueDigest, digest_of

    program = "def f(n):\n    return list(range(n)) if n > 0 else [0.5] * -n\n"
    inputs = [[10], [50_000], [-50_000], [50_000]]
    result = sandbox.call_function(program, "f", inputs, limits=QUICK, digest_above_bytes=1000,
                                   digest_inputs=[0, 1, 2])
    small, big, floats, not_chosen = (o.value for o in result.outcomes)
    assert small == list(range(10))  # under the size: the value itself
    assert isinstance(big, ValueDigest) and big == digest_of(list(range(50_000)))
    assert floats == [0.5] * 50_000  # floats are compared with tolerances, so never digested
    assert not_chosen == list(range(50_000))
    plain = sandbox.call_function(program, "f", [[50_000]], limits=QUICK)
    assert plain.outcomes[0].value == list(range(50_000))


def test_a_digest_is_accepted_only_when_asked_for():
    forged = "def f():\n    return {'$digest': ['0' * 64, 10, 'list']}\n"
    result = sandbox.call_function(forged, "f", [[]], limits=QUICK)
    assert result.outcomes[0].kind == "value" and isinstance(result.outcomes[0].value, dict)
    # A child that writes its own result line with a digest tag gets nothing more than a malformed result.
    writer = textwrap.dedent("""
        import os
        def f():
            os.write(3, b'0 value 0.0 {"$digest": ["' + b'0' * 64 + b'", 10, "list"]}\\n')
            os._exit(0)
    """)
    result = sandbox.call_function(writer, "f", [[]], limits=QUICK)
    assert result.outcomes[0].kind == "unserializable"


def test_malformed_result_lines_from_the_child_are_reported_not_raised():
    # Code that writes its own result lines (each after waiting for its input's go, as the harness does) gets each
    # one judged on its own, whatever the others look like.
    writer = textwrap.dedent("""
        import os
        def f(x):
            lines = [b'0 value 0.0 {"$nope": 1}', b'1 value 0.0 [1', b'2 value 0.0 2]', b'3 value']
            for number, line in enumerate(lines):
                if number:
                    os.read(6, 1)
                os.write(3, line + b'\\n')
            os._exit(0)
    """)
    result = sandbox.call_function(writer, "f", [[0], [1], [2], [3]], limits=QUICK)
    kinds = [(o.kind, o.exc_type) for o in result.outcomes[:4]]
    assert kinds[:4] == [("unserializable", "MalformedResult")] * 4


def test_result_lines_sent_ahead_of_their_inputs_start_are_a_protocol_violation():
    # Lines written together reach the supervisor in one read: only the first could have been started.
    writer = textwrap.dedent("""
        import os
        def f(x):
            os.write(3, b'0 value 0.0 1\\n1 value 0.0 2\\n')
            os._exit(0)
    """)
    result = sandbox.call_function(writer, "f", [[0], [1]], limits=QUICK)
    assert result.status == "error" and "before it was started" in result.load_error, result
    assert result.outcomes[1].kind == "not_run"


def test_a_child_cannot_crash_the_judge_with_its_own_result_lines():
    writer = textwrap.dedent("""
        import os
        def f(x):
            os.write(3, b'0 value\\n')
            os._exit(0)
    """)
    result = sandbox.call_function(writer, "f", [[0], [1]], limits=QUICK, stop_after_failure=True,
                                   stop_expected={0: 1, 1: 2})
    assert result.status != "harness_error"
    assert [o.kind for o in result.outcomes] == ["unserializable", "not_run"]


def test_the_judge_decodes_a_childs_values_within_the_jobs_decode_budget():
    import tracemalloc  # noqa: PLC0415

    from audit_lib.sandbox.budget import DecodeBudget, JobDecoder  # noqa: PLC0415
    from audit_lib.sandbox.call_options import EQUALITY_RULES  # noqa: PLC0415
    from audit_lib.sandbox.zygote.call_judge_child import CallJudge  # noqa: PLC0415 - its decoding is what is tested

    spec = {"source": EQUALITY_RULES, "expected": [[0, []]], "inputs": [[]], "digest_inputs": []}
    # 100,000 empty sets: ~1 MB of text that decodes to ~25 MB (a 64 MB line of them would take the judge to 1.29 GB)
    payload = b"[" + b",".join([b'{"$set":[]}'] * 100_000) + b"]"
    judge = CallJudge(spec)
    judge.decoder = JobDecoder(DecodeBudget(max_decoded_bytes=8 * 1024 * 1024))
    tracemalloc.start()
    try:
        assert judge.record(0, payload)["k"] == "unserializable"  # refused, never compared: a failure
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * 1024 * 1024
    honest = CallJudge(spec)
    assert [honest.record(0, text).get("v") for text in (b"[ ]", b"[1]", b'{"$tuple":[]}')] \
        == ["match", "wrong_value", "wrong_value"]


def test_the_child_cannot_reach_the_judge_through_an_inherited_pipe():
    # With a judge alive, the child still holds only stdin, stdout, stderr, its result pipe and the read end of its
    # go pipe from the supervisor (fd 6; the listing itself opens one more descriptor): it cannot ask the judge
    # whether a guess equals an expected value.
    program = "import os\ndef f(x):\n    return sorted(int(n) for n in os.listdir('/proc/self/fd'))\n"
    result = sandbox.call_function(program, "f", [[0]], limits=QUICK, stop_after_failure=True,
                                   stop_expected={0: [0, 1, 2, 3]})
    assert result.outcomes[0].value in ([0, 1, 2, 3, 6], [0, 1, 2, 3, 4, 6])
