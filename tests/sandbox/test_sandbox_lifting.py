"""Issue 13, class 3: assert-mode tests lifted into call mode; the parent decides from decoded values.

For honest code the lifted verdict must be the one the snippet gets when run in-process (assert mode); the
overload attacks that pass a naive harness must fail.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from audit_lib import sandbox
from audit_lib.sandbox import LiftedTest, Limits, NotLiftable, TestsJob, lift_snippet, run_tests
from audit_lib.sandbox import strict as sandbox_strict

pytestmark = pytest.mark.timeout(180)

QUICK = Limits(timeout_s=3, total_timeout_s=60, memory_mb=512)
ENTRY = frozenset({"solution"})

LIFTABLE = {
    "equality": ("assert solution(2) == [2, 4]\n", 1),
    "bound_result_with_message": ("result = solution(2)\nassert result == [2, 4], f'got {result}'\n", 1),
    "truthiness_and_not": ("assert solution(1)\nassert not solution(0) == [1]\n", 2),
    "membership": ("got = solution(2)\nassert 4 in got and 5 not in got\n", 1),
    "is_none": ("assert solution(None) is not None\n", 1),
    "comparisons": ("got = solution(3)\nassert got[0] < 4 <= got[1] != 5\n", 1),
    "isclose": ("import math\nassert math.isclose(solution(0.1)[1], 0.2, rel_tol=1e-9)\n", 1),
    "abs_difference": ("assert abs(solution(0.1)[1] - 0.2) < 1e-9\n", 1),
    "literal_table": ("for a, b in [(1, [1, 2]), (2, [2, 4]), (3, [3, 6])]:\n    assert solution(a) == b\n", 3),
    "humaneval_check": ("def check(candidate):\n    assert candidate(1) == [1, 2]\n    assert candidate(2)[1] == 4\n"
                        "\ncheck(solution)\n", 2),
    "alias": ("candidate = solution\nassert candidate(5) == [5, 10]\n", 1),
    "tuple_of_result": ("result = solution(1)\nassert tuple(result) == (1, 2)\n", 1),
    "generator_over_result": ("assert all(x > 0 for x in solution(3))\n", 1),
    "mutation_check": ("inp = [1, 2]\n_ = solution(inp)\nassert inp == [1, 2], f'mutated: {inp}'\n", 1),
    "constant_expression": ("import math\nexpected = round((5**2 * math.sqrt(3)) / 4, 2)\n"
                            "assert solution(10.83)[0] == expected\n", 1),
}
NOT_LIFTABLE = {
    "argument_read_in_the_calling_expression": "inp = [1, 2]\nassert inp == solution(inp)\n",
    "argument_passed_twice": "inp = [1, 2]\nsolution(inp)\nassert solution(inp) == [1, 2]\n",
    "keyword_argument": "assert solution(n=2) == [2, 4]\n",
    "non_literal_argument": "assert solution(len('ab')) == [2, 4]\n",
    "call_in_comprehension_body": "assert all(solution(x) == [x, 2 * x] for x in range(3))\n",
    "other_import": "import os\nassert solution(2) == [2, 4]\n",
    "try_except": "try:\n    solution(None)\nexcept TypeError:\n    pass\nassert True\n",
    "two_entry_points": "assert solution(2) == other(2)\n",
    "no_assert": "solution(2)\n",
    "unknown_name": "assert solution(2) == EXPECTED\n",
    "syntax_error": "assert solution(2) ==\n",
}


@pytest.mark.parametrize("shape", sorted(LIFTABLE))
def test_liftable_shapes(shape: str) -> None:
    snippet, calls = LIFTABLE[shape]
    lifted = lift_snippet(snippet, ENTRY)
    assert isinstance(lifted, LiftedTest), lifted
    assert len(lifted.calls) == calls and lifted.entry_point == "solution"


@pytest.mark.parametrize("shape", sorted(NOT_LIFTABLE))
def test_shapes_left_in_assert_mode(shape: str) -> None:
    assert isinstance(lift_snippet(NOT_LIFTABLE[shape], ENTRY), NotLiftable)


HONEST = "def solution(x):\n    return [x, x * 2]\n"
# (program, snippet): every verdict kind, each compared with the same snippet run in-process.
SEMANTICS = {
    "pass": (HONEST, "assert solution(2) == [2, 4]\n"),
    "fail": (HONEST, "assert solution(2) == [2, 5]\n"),
    "second_assert_fails": (HONEST, "assert solution(1) == [1, 2]\nassert solution(2) == [2, 5], 'no'\n"),
    "index_error_in_assert": (HONEST, "assert solution(2)[5] == 1\n"),
    "type_error_in_comparison": (HONEST, "assert solution(2) < 3\n"),
    "message_raises_on_failure": (HONEST, "r = solution(2)\nassert r == 1, f'{r:.2f}'\n"),
    "call_raises": (HONEST, "assert solution(None) == [None, None]\n"),
    "call_asserts": ("def solution(x):\n    assert x > 0\n    return x\n", "assert solution(-1) == -1\n"),
    "call_exits": ("import sys\ndef solution(x):\n    sys.exit(0)\n", "assert solution(1) == 1\n"),
    "call_os_exit": ("import os\ndef solution(x):\n    os._exit(0)\n", "assert solution(1) == 1\n"),
    "call_times_out": ("def solution(x):\n    while True:\n        pass\n", "assert solution(1) == 1\n"),
    "short_circuit_without_a_call": (HONEST, "got = solution(1)\nassert got == [1, 2] or got[5]\n"),
    "load_error": ("raise ValueError('broken')\ndef solution(x):\n    return x\n", "assert solution(1) == 1\n"),
    "missing_entry_point": ("def other(x):\n    return x\n", "assert solution(1) == 1\n"),
    "unpacking_result": ("def solution(x):\n    return (x, -x)\n", "a, b = solution(3)\nassert a + b == 0\n"),
    "unpacking_wrong_length": ("def solution(x):\n    return (x, -x, 0)\n", "a, b = solution(3)\nassert a == 3\n"),
    "float_and_int_equal": ("def solution(x):\n    return 8.0\n", "assert solution(1) == 8\n"),
    "tuple_vs_list": ("def solution(x):\n    return (1, 2)\n", "assert solution(1) == [1, 2]\n"),
    "big_int": ("def solution(x):\n    return 10 ** x\n", "assert solution(5000) == 10 ** 5000\n"),
    "set_and_dict": ("def solution(x):\n    return {'a': {1, 2}, 'b': (x,)}\n",
                     "assert solution(3) == {'b': (3,), 'a': {2, 1}}\n"),
    "mutation_seen": ("def solution(xs):\n    xs.append(0)\n    return len(xs)\n",
                      "inp = [3, 1]\nresult = solution(inp)\nassert result == 3\nassert inp == [3, 1], f'{inp}'\n"),
    # The argument-returning wrapper runs in the program's globals: a module-level `list` must not decide what the
    # parent sees as the arguments after the call (this in-place sort fails the check in-process).
    "mutation_seen_despite_a_module_level_list": (
        "import builtins, copy\n_before = []\ndef solution(xs):\n    _before.append(copy.deepcopy(xs))\n"
        "    xs.sort()\n    return xs\ndef list(args):\n    return builtins.list(_before.pop(0) for _ in args)\n",
        "inp = [3, 1, 2]\nr = solution(inp)\nassert r == [1, 2, 3]\nassert inp == [3, 1, 2], 'input was modified'\n"),
    "no_mutation": ("def solution(xs):\n    return sorted(xs)\n",
                    "for inp in [[3, 1], [2, 5, 4]]:\n    result = solution(inp)\n    assert inp != result\n"),
    "state_per_snippet": ("calls = []\ndef solution(x):\n    calls.append(x)\n    return len(calls)\n",
                          "assert solution(7) == 1\nassert solution(7) == 2\n"),
}


def in_process(program: str, snippet: str) -> sandbox.SnippetResult:
    return sandbox.run_asserts(program, [snippet], limits=QUICK).snippets[0]


@pytest.mark.parametrize("case", sorted(SEMANTICS))
def test_lifted_verdict_equals_the_in_process_verdict(case: str) -> None:
    program, snippet = SEMANTICS[case]
    result = run_tests(program, [snippet], entry_points=ENTRY, limits=QUICK)
    (lifted,) = result.snippets
    assert lifted.trust == "parent" and result.lifted == 1
    expected = in_process(program, snippet)
    assert lifted.status == expected.status, (lifted, expected)
    if lifted.status in ("fail", "error"):
        assert lifted.error_type == expected.error_type or case in ("call_os_exit", "missing_entry_point")


OVERLOADS = {
    "object_eq_returns_true": "class A:\n    def __eq__(self, other):\n        return True\n"
                              "def solution(x):\n    return A()\n",
    "list_subclass_eq": "class L(list):\n    def __eq__(self, other):\n        return True\n"
                        "def solution(x):\n    return L([0])\n",
    "bool_trick": "class B:\n    def __bool__(self):\n        return True\n    def __eq__(self, other):\n"
                  "        return True\ndef solution(x):\n    return B()\n",
}


@pytest.mark.parametrize("attack", sorted(OVERLOADS))
def test_overloads_pass_the_naive_harness_and_fail_here(attack: str) -> None:
    program, snippet = OVERLOADS[attack], "assert solution(2) == [2, 4]\nassert solution(0)\n"
    naive = subprocess.run([sys.executable, "-c", program + "\n\n" + snippet], capture_output=True, timeout=60)
    assert naive.returncode == 0
    (result,) = run_tests(program, [snippet], entry_points=ENTRY, limits=QUICK).snippets
    # The value cannot come back as plain data: the snippet falls back to assert mode, whose guard stops it.
    assert (result.status, result.reason, result.trust) == ("fail", sandbox_strict.REASON, "in_process")


def test_not_liftable_snippets_and_main_blocks_run_in_process() -> None:
    main_block = HONEST + "if __name__ == '__main__':\n    raise SystemExit(3)\n"
    snippets = ["assert solution(1) == [1, 2]\n", NOT_LIFTABLE["non_literal_argument"]]
    result = run_tests(HONEST, snippets, entry_points=ENTRY, limits=QUICK)
    assert [(s.status, s.trust) for s in result.snippets] == [("pass", "parent"), ("pass", "in_process")]
    assert result.lifted == 1 and result.not_lifted[0][0] == 1
    blocked = run_tests(main_block, snippets[:1], entry_points=ENTRY, limits=QUICK)
    assert [(s.status, s.trust) for s in blocked.snippets] == [("error", "in_process")]
    assert blocked.snippets[0].exit_code == 3


def test_tests_job_runs_through_run_many() -> None:
    from audit_lib.sandbox import run_many

    job = TestsJob("k", HONEST, ("assert solution(1) == [1, 2]\n", "assert solution(1) == 0\n"), ("solution",), QUICK)
    ((key, result),) = list(run_many([job], "local", progress=False))
    assert key == "k" and [s.status for s in result.snippets] == ["pass", "fail"] and result.status == "fail"


def test_parent_replay_work_is_bounded() -> None:
    """A quadratic assert over a big returned value stops at the snippet's time limit instead of stalling us."""
    program = "def solution(n):\n    return list(range(n))\n"
    snippet = "result = solution(200000)\nassert sum(1 for x in result for y in result) > 0\n"
    limits = Limits(timeout_s=1, total_timeout_s=30)
    (result,) = run_tests(program, [snippet], entry_points=ENTRY, limits=limits).snippets
    assert (result.status, result.error_type, result.trust) == ("timeout", "ParentTimeout", "parent")
    assert result.duration_s < 100


def test_colliding_values_in_a_parent_set_fall_back_to_the_child() -> None:
    program = "def solution(n):\n    return [k * (2**61 - 1) for k in range(1, n)]\n"
    snippet = "assert len(set(solution(5000))) == 4999\n"
    (result,) = run_tests(program, [snippet], entry_points=ENTRY, limits=QUICK).snippets
    assert (result.status, result.trust) == ("pass", "in_process")  # the quadratic set is built in the child


def test_a_program_that_shadows_a_builtin_the_test_uses_is_not_lifted() -> None:
    """In assert mode the snippet's `len` is the program's own, so it stays in-process, where the guard refuses to let
    a rebound `len` decide an assert (upstream's harness would pass this wrong answer)."""
    program = HONEST + "def len(items):\n    return 99\n"
    snippet = "assert len(solution(1)) == 99\n"
    (result,) = run_tests(program, [snippet], entry_points=ENTRY, limits=QUICK).snippets
    assert (result.status, result.reason, result.trust) == ("fail", "comparison_overload", "in_process")
    assert in_process(program, snippet).status == "fail"
    local_only = HONEST + "def total(items):\n    len = 0\n    return len\n"
    (lifted,) = run_tests(local_only, ["assert len(solution(1)) == 2\n"], entry_points=ENTRY, limits=QUICK).snippets
    assert (lifted.status, lifted.trust) == ("pass", "parent")


# A fourth attack round: a returned set iterates in the child's order, which the parent's rebuilt set need not share,
# so `list(f(x))` or `str(f(x))` gave the lifted verdict the opposite of Python's; and a short snippet over a huge
# value ran in the parent far past its time limit (sorted() of an 11-million-character string, 3.5 s a call).
SET_IN_AN_ORDER = "def solution(x):\n    s = set(range(40))\n    s.intersection_update({9, 16})\n    return s\n"


@pytest.mark.parametrize("snippet", ["assert list(solution(1)) == [9, 16]\n", "assert list(solution(1)) == [16, 9]\n",
                                     "assert str(solution(1)) == '{9, 16}'\n", "a, b = solution(1)\nassert a == 9\n",
                                     "assert [v for v in solution(1)] == [9, 16]\n"])
def test_the_order_of_a_returned_set_is_never_the_parents(snippet: str) -> None:
    (result,) = run_tests(SET_IN_AN_ORDER, [snippet], entry_points=ENTRY, limits=QUICK).snippets
    assert result.trust == "in_process", result
    assert result.status == in_process(SET_IN_AN_ORDER, snippet).status
    (lifted,) = run_tests(SET_IN_AN_ORDER, ["got = solution(1)\nassert 9 in got and len(got) == 2\n"],
                          entry_points=ENTRY, limits=QUICK).snippets
    assert (lifted.status, lifted.trust) == ("pass", "parent")  # order-free uses stay lifted


def test_a_value_too_long_to_replay_runs_in_the_child() -> None:
    program = "def solution(x):\n    return 'ab' * 600_000\n"
    (result,) = run_tests(program, ["assert sorted(solution(1)) != []\n"], entry_points=ENTRY, limits=QUICK).snippets
    assert (result.status, result.trust) == ("pass", "in_process"), result
