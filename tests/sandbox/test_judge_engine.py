"""Engine v3: the program only answers calls in its job; the test runs under real CPython in a jailed judge.

Each test is an attack class of issue 24 (at least two variants each) or a correct program upstream passes. Every
attack here won against the engine before v3 (lifted replay in the parent, in-process assert mode behind a per-run
secret): run this file against commit 530b761 to see them fail there.
"""

from __future__ import annotations

import os
import resource
import textwrap

import pytest

from audit_lib import sandbox
from audit_lib.sandbox import Limits

QUICK = Limits(timeout_s=5, total_timeout_s=60, memory_mb=512)


def verdicts(program: str, snippets: list[str], entry_points: tuple[str, ...] = ("f",),
             limits: Limits = QUICK) -> list[str]:
    result = sandbox.run_tests(textwrap.dedent(program), snippets, entry_points=entry_points, limits=limits)
    return [snippet.status for snippet in result.snippets]


# ------------------------------------------------------------------ 1. no weaker path to choose

def test_a_value_the_codec_refuses_gains_nothing() -> None:
    """A result whose class lies about equality cannot cross as data: the test sees an opaque handle, equal only
    to itself, so the lie never reaches a comparison."""
    program = """
        class Liar:
            def __eq__(self, other): return True
            def __ne__(self, other): return False
            def __bool__(self): return True
            def __hash__(self): return 0
        def f(x):
            return Liar()
    """
    assert verdicts(program, ["assert f(1) == 2", "assert not (f(1) != 2)", "assert f(1) == [1, 2]"]) \
        == ["fail", "fail", "fail"]


@pytest.mark.parametrize("snippet", ["assert f(2)", "assert f(7) and f(101)", "if not f(3):\n    raise AssertionError",
                                     "assert bool(f(5)) is True", "assert f(1) or f(2)"])
def test_the_truth_of_an_object_left_in_the_program_is_the_jobs_bool_of_it(snippet: str) -> None:
    """A non-plain result's truth value is what `bool()` of it gives in the job, as upstream asks it.

    Before, object's default (always true) passed a wrong program whose result says False; then the truth value was
    refused, which failed correct programs returning a `re.Match` (three of EvalPlus's MBPP+ canonicals)."""
    for truth, verdict in (("False", "fail"), ("True", "pass")):
        program = f"class Verdict:\n    def __bool__(self):\n        return {truth}\ndef f(n):\n    return Verdict()\n"
        assert verdicts(program, [snippet]) == [verdict], (truth, snippet)
    assert verdicts("def f(n):\n    return object()\n", [snippet]) == ["pass"]
    assert verdicts("def f(n):\n    return n > 1\n", [snippet]) == ["pass"]  # plain data: its own truth
    wrong_type = "class Verdict:\n    def __bool__(self):\n        return 1\ndef f(n):\n    return Verdict()\n"
    assert verdicts(wrong_type, [snippet]) == ["error"]  # CPython's TypeError: __bool__ should return bool


def test_a_forged_completion_record_or_exit_is_no_pass() -> None:
    """Writing a pass marker on any descriptor, exiting 0 mid-call, or ending right after answering: the judge's
    verdict counts only while the job is alive and answering."""
    forged = """
        import os
        def f(x):
            for fd in range(3, 10):
                try:
                    os.write(fd, b"pass 0\\n" + bytes(64) + b"\\x08\\x00\\x00\\x00\\x00\\x00\\x00\\x00V{}\\n")
                except OSError:
                    pass
            os._exit(0)
    """
    exits_later = """
        import os, threading, time
        def f(x):
            threading.Thread(target=lambda: (time.sleep(0.05), os._exit(0))).start()
            return 2
    """
    assert verdicts(forged, ["assert f(1) == 2"]) == ["error"]
    assert verdicts(exits_later, ["assert f(1) == 2\nimport time\ntime.sleep(0.5)"]) == ["error"]


def test_a_snippet_that_cannot_be_lifted_runs_the_same_way() -> None:
    """Loops, helper functions, globals(), exec in the test: all real CPython in the judge, none a fallback."""
    program = "def f(x):\n    return x * 2\n"
    snippets = ["def check(candidate):\n    for i in range(5):\n        assert candidate(i) == 2 * i\ncheck(f)",
                "exec('assert f(3) == 6')", "assert globals()['f'](4) == 8", "g = f\nassert g(1) == 3"]
    assert verdicts(program, snippets) == ["pass", "pass", "pass", "fail"]


# ------------------------------------------------------------------ 2. the test's Python is CPython, unpatched

def test_patched_builtins_and_modules_do_not_reach_the_test() -> None:
    program = """
        import builtins as b, math as m
        b.len = lambda value: 3
        m.isclose = lambda *args, **kwargs: True
        setattr(b, "sorted", lambda value: [1, 2, 3])
        def f(x):
            return [x]
    """
    snippets = ["assert len(f(1)) == 3", "import math\nassert math.isclose(f(1)[0], 5)",
                "assert sorted(f(9)) == [1, 2, 3]", "assert len(f(1)) == 1"]
    assert verdicts(program, snippets) == ["fail", "fail", "fail", "pass"]


@pytest.mark.parametrize("patch", [
    "import sys\nsys.modules['builtins'].abs = lambda value: 7",  # an alias through sys.modules
    "globals()['__builtins__'].__dict__['abs'] = lambda value: 7",  # a subscript
    "import builtins\nclass Holder:\n    where = builtins\nHolder.where.abs = lambda value: 7",  # a class attribute
    "import builtins\ndef patch(module=builtins):\n    module.abs = lambda value: 7\npatch()",  # a parameter
    "import importlib\nsetattr(importlib.import_module('math'), 'fabs', lambda value: 7)\n"
    "import builtins\nbuiltins.abs = lambda value: 7",  # a module imported by name
])
def test_builtins_patched_through_any_name_do_not_reach_the_test(patch: str) -> None:
    """Class 2: the test runs on the judge's own builtins and modules, whatever name the program patched them by
    (upstream's test would see the patch: the program and the test share one process there)."""
    program = patch + "\ndef f(x):\n    return -x\n"
    assert verdicts(program, ["assert abs(f(3)) == 7", "import math\nassert math.fabs(f(3)) == 3 == abs(f(3))"]) \
        == ["fail", "pass"], patch
    naive = sandbox.script_exit_codes(program, ["assert abs(f(3)) == 7"], limits=QUICK)
    assert naive == [0], f"the naive harness should be fooled: {patch}"


def test_exceptions_are_judged_by_their_real_class_not_their_name() -> None:
    program = """
        class Mine(AssertionError):
            pass
        class AssertionErrorLookalike(Exception):
            pass
        AssertionErrorLookalike.__name__ = "AssertionError"
        def f(x):
            raise Mine("sub") if x else AssertionErrorLookalike("named")
    """
    result = sandbox.run_tests(textwrap.dedent(program), ["f(1)", "f(0)"], entry_points=("f",), limits=QUICK)
    assert [(s.status, s.error_type) for s in result.snippets] == [("fail", "Mine"), ("error", "AssertionError")]


@pytest.mark.parametrize(("raised", "expected"), [
    ("class E(AssertionError):\n    pass", "fail"),  # a subclass: CPython's `except AssertionError` catches it
    ("class E(Exception):\n    pass\nE.__name__ = E.__qualname__ = 'AssertionError'", "error"),  # only the name
    ("class M(type):\n    def mro(cls):\n        return [cls, AssertionError, Exception, BaseException, object]\n"
     "class E(Exception, metaclass=M):\n    pass", "fail"),  # a metaclass's MRO is the real one: CPython catches it
    ("class M(type):\n    @property\n    def __mro__(cls):\n        return (cls, AssertionError, object)\n"
     "class E(Exception, metaclass=M):\n    pass", "error"),  # a property named __mro__ is not the MRO
    ("class E(KeyError, AssertionError):\n    pass", "fail"),  # AssertionError further up its real MRO
])
def test_a_programs_exception_is_judged_by_its_real_mro(raised: str, expected: str) -> None:
    """Class 2: the exception the test sees has the program's class's name and the first builtin exception class of
    the class's real MRO (`type.__mro__`, read through `type`'s own descriptor) as its base: what CPython's `except`
    would match, whatever the class claims about itself."""
    program = raised + "\ndef f(x):\n    raise E('raised')\n"
    assert verdicts(program, ["f(1)"]) == [expected], raised


# ------------------------------------------------------------------ 3. correct code passes as upstream passes it

def test_numpy_fraction_and_honest_subclasses_compare_as_upstream_does() -> None:
    program = """
        import enum, fractions, collections
        import numpy as np
        class Colour(enum.IntEnum):
            RED = 1
        Point = collections.namedtuple("Point", "x y")
        def f(kind):
            return {"int": np.int64(3), "float": np.float64(2.5), "frac": fractions.Fraction(1, 3),
                    "enum": Colour.RED, "tuple": Point(1, 2), "bool": np.bool_(True)}[kind]
    """
    snippets = ["assert f('int') == 3", "assert f('float') == 2.5", "from fractions import Fraction\n"
                "assert f('frac') == Fraction(1, 3)", "assert f('enum') == 1", "assert f('tuple') == (1, 2)",
                "assert f('bool') is True or f('bool') == True"]
    assert verdicts(program, snippets) == ["pass"] * len(snippets)


def test_arguments_a_call_changes_are_changed_for_the_test_too() -> None:
    program = "def f(items, seen):\n    items.sort()\n    seen.add(1)\n    return None\n"
    snippet = "a = [3, 1, 2]\ns = set()\nf(a, s)\nassert a == [1, 2, 3] and s == {1}"
    assert verdicts(program, [snippet]) == ["pass"]


def test_program_objects_generators_and_helpers_work_through_handles() -> None:
    program = """
        class Stack:
            def __init__(self): self.items = []
            def push(self, x): self.items.append(x); return self
            def top(self): return self.items[-1]
        def f(n):
            for i in range(n):
                yield i * i
        def helper(s):
            return s[::-1]
    """
    snippets = ["assert Stack().push(1).push(5).top() == 5", "assert list(f(4)) == [0, 1, 4, 9]",
                "assert helper(f.__name__ if False else 'ab') == 'ba'"]
    assert verdicts(program, snippets, entry_points=("f", "Stack", "helper")) == ["pass", "pass", "pass"]


# ------------------------------------------------------------------ 4. the parent never holds the values

def test_a_huge_result_costs_the_parent_nothing() -> None:
    """The judge decodes the program's values; the parent gets a small record whatever their size."""
    program = "def f(x):\n    return 'ab' * 20_000_000\n"
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = sandbox.run_tests(program, ["assert len(f(1)) == 40_000_000", "assert f(1) == 'x'"],
                               entry_points=("f",), limits=QUICK)
    grown_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert [s.status for s in result.snippets] == ["pass", "fail"]
    assert grown_kb < 20_000  # 40 MB went to the judge twice; the parent grew by far less than one copy
    assert len(result.snippets[1].error_message or "") < 3000


def test_a_value_the_judge_cannot_hold_is_an_error_never_a_pass() -> None:
    nested = "def f(x):\n    value = []\n    for _ in range(150):\n        value = [value]\n    return value\n"
    wide = "def f(x):\n    return [[0] * 1000 for _ in range(60_000)]\n"  # ~60M items: past the judge's memory
    assert verdicts(nested, ["assert f(1) != 0"]) == ["pass"]
    # A generous limit (it takes ~20 s on a busy machine): only a hang, never the load, may make it a timeout.
    assert verdicts(wide, ["assert f(1) == 1"], limits=Limits(timeout_s=90, total_timeout_s=120, memory_mb=2048)) \
        in (["error"], ["memory"], ["fail"])


# ------------------------------------------------------------------ 5. time stays with its snippet

def test_work_banked_in_a_thread_stays_inside_the_snippets_limit() -> None:
    """A thread started at load works while the test runs: its time is the snippet's own, as in one process."""
    program = """
        import threading, time
        answer = {}
        def work():
            deadline = time.process_time() + 3.0
            while time.process_time() < deadline:
                pass
            answer["value"] = 42
        threading.Thread(target=work, daemon=True).start()
        def f(x):
            while "value" not in answer:
                time.sleep(0.01)
            return answer["value"]
    """
    assert verdicts(program, ["assert f(1) == 42"], limits=Limits(timeout_s=1, total_timeout_s=30)) == ["timeout"]


def test_nothing_crosses_from_one_snippet_to_the_next() -> None:
    program = """
        import os
        calls = []
        def f(x):
            calls.append(x)
            with open("/tmp/mark", "a") as handle:
                handle.write("x")
            return len(calls) + os.path.getsize("/tmp/mark") * 10
    """
    assert verdicts(program, ["assert f(1) == 11", "assert f(1) == 11", "assert f(2) == 11"]) == ["pass"] * 3


def test_one_tests_changes_to_the_judge_do_not_reach_the_next_test() -> None:
    """Upstream runs each constraint (IntentSpec's `python -c`, ImpossibleBench's assertions) in a process of its
    own: what one test's code changes (a module's attribute, a builtin, its own globals in `__main__`) is gone for
    the next. Before, one judge ran a program's tests in turn, so the first test's patch made the second pass."""
    patches = ("import math\nmath.isclose = lambda *a, **k: True\nassert f(1) == 1",
               "import builtins\nbuiltins.sorted = lambda *a, **k: [1, 2, 3]\nassert f(1) == 1",
               "import sys\nsys.modules['__main__'].leftover = 5\nassert f(1) == 1")
    reads = ("import math\nassert not math.isclose(f(1), 5)",
             "assert sorted(f([3, 1])) == [1, 3]",
             "import sys\nassert not hasattr(sys.modules['__main__'], 'leftover')")
    for patch, read in zip(patches, reads):
        assert verdicts("def f(x):\n    return x\n", [patch, read]) == ["pass", "pass"], patch


# ------------------------------------------------------------------ 6. no channel between jobs

def test_the_cells_init_and_earlier_jobs_are_invisible() -> None:
    """hidepid: the job sees no process of its cell but its own, so no counter its init accumulates (as root)."""
    probe = textwrap.dedent("""
        import os
        others = [p for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]
        try:
            open("/proc/1/stat").read()
            init_visible = True
        except OSError:
            init_visible = False
        def f():
            return [others, init_visible]
    """)
    result = sandbox.run_tests(probe, ["assert f() == [[], False], f()"], entry_points=("f",), limits=QUICK)
    if sandbox.run_tests("x = 1", ["pass"]).snippets[0].status != "pass":
        pytest.skip("the sandbox does not start here")
    import os

    if os.geteuid() != 0:
        pytest.skip("not root: each job has a cell of its own, and its init the job's own kernel uid")
    assert result.snippets[0].status == "pass", result.snippets[0]


def test_a_stop_the_judge_decides_does_not_retire_the_cell() -> None:
    """Call mode's early stop on a mismatch ends the child (its go pipe closed, or through its cell's init when the
    next input already runs): the cell is kept, so the next job's cell (its mount namespace) is the same whether or
    not the previous job was stopped early.

    Not root every job gets a cell of its own, whose namespace numbers the kernel takes from one pool for the whole
    machine (they vary with what every process on it does). There the next job's cell must have been made before the
    stopped job started, so nothing about how that job ended can show in it: the probe's /proc, mounted when its cell
    was made, is no younger than the stopped job's /dev/shm, mounted when that job started. Before, the cell was made
    once the stopped job had ended (it sleeps 50 ms to tell the two apart on the kernel's coarse clock)."""
    stopped = ("import os, time\n"
               "def f(x):\n"
               "    time.sleep(0.05)\n"
               "    return os.stat('/dev/shm').st_ctime_ns\n")
    probe = "import os\ndef f(x):\n    return [os.readlink('/proc/self/ns/mnt'), os.stat('/proc').st_mtime_ns]\n"
    seen, order = [], []
    for expected in ("no", "mnt:[0]", "no"):
        stop = sandbox.call_function(stopped, "f", [[1], [2]], stop_after_failure=True, stop_expected={0: expected})
        assert [o.kind for o in stop.outcomes] == ["value", "not_run"], stop
        namespace, cell_made = sandbox.call_function(probe, "f", [[0]]).outcomes[0].value
        seen.append(namespace)
        order.append((cell_made, stop.outcomes[0].value))
    assert all(cell_made <= stopped_started for cell_made, stopped_started in order), order
    if os.geteuid() == 0:
        assert len(set(seen)) == 1, seen


def test_what_runs_past_a_fast_check_s_first_failure_is_never_seen() -> None:
    """With `stop_after_failure` the next input runs while the judge judges a value; once that value fails, the next
    input is ended at once and its line cut: it is `not_run`, as if never started, however it would have ended (an
    exit, a crash, a hang far past the budget). Shown able to fail: with the cut left out (`run_call` returning
    the lines as they came) the first program's input 1 reads `exception` ProcessExit, and without the halt the
    hang holds the job to its 60 s budget."""
    for program in ("import os\ndef f(x):\n    if x == 1:\n        os._exit(3)\n    return x\n",
                    "import time\ndef f(x):\n    if x == 1:\n        time.sleep(120)\n    return x\n"):
        result = sandbox.call_function(program, "f", [[0], [1], [2]], stop_after_failure=True,
                                       stop_expected={0: 99, 1: 1, 2: 2}, per_input_timeout_s=[60.0] * 3,
                                       limits=Limits(timeout_s=60.0, total_timeout_s=60.0))
        if result.status == "harness_error":
            pytest.skip("the sandbox does not start here")
        assert [o.kind for o in result.outcomes] == ["value", "not_run", "not_run"], result
        assert result.outcomes[0].verdict == "wrong_value" and result.status == "pass", result
        assert result.duration_s < 30.0, result  # a generous bound only the hang breaks: it is ended at once


# ------------------------------------------------------------------ every cheat above wins a naive harness

CHEATS = {
    "lying __eq__": ("class Liar:\n    def __eq__(self, other):\n        return True\n"
                     "def f(x):\n    return Liar()\n", "assert f(1) == 2"),
    "exit 0 mid-call": ("import os\ndef f(x):\n    os._exit(0)\n", "assert f(1) == 2"),
    "exit 0 from a thread": ("import os, threading, time\ndef f(x):\n"
                             "    threading.Thread(target=lambda: (time.sleep(0.05), os._exit(0))).start()\n"
                             "    time.sleep(1)\n    return 1\n", "assert f(1) == 2"),
    "patched builtins.len": ("import builtins as b\nb.len = lambda value: 3\ndef f(x):\n    return [x]\n",
                             "assert len(f(1)) == 3"),
    "patched math.isclose": ("import math as m\nm.isclose = lambda *a, **k: True\ndef f(x):\n    return x\n",
                             "import math\nassert math.isclose(f(1), 5)"),
    "int subclass equal to all": ("class Any(int):\n    def __eq__(self, other):\n        return True\n"
                                  "    __hash__ = int.__hash__\ndef f(x):\n    return Any(0)\n", "assert f(1) == 7"),
}


@pytest.mark.parametrize("name", sorted(CHEATS))
def test_each_cheat_passes_a_naive_exit_code_harness_and_fails_here(name: str) -> None:
    program, snippet = CHEATS[name]
    naive = sandbox.script_exit_codes(program, [snippet], limits=QUICK)  # `python -c program+test`, pass on 0
    assert naive == [0], f"{name}: the naive harness should be fooled"
    assert verdicts(program, [snippet]) != ["pass"], name


def test_a_test_that_ends_its_own_judge_is_an_error_and_the_next_snippet_gets_a_new_judge() -> None:
    result = sandbox.run_tests("def f(x):\n    return x\n", ["import os\nos._exit(0)", "assert f(2) == 2"],
                               entry_points=("f",), limits=QUICK)
    first, second = result.snippets
    assert (first.status, first.error_type, first.reason) == ("error", "JudgeEnded", None)
    assert second.status == "pass"
