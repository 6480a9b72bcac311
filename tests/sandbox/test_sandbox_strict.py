"""Issue 13, class 4: in assert mode, an overloaded comparison or truth test is a `fail` (comparison_overload).

Every attack passes under the naive harness (`python -c program+snippet`, exit code 0) and must fail under ours.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from audit_lib import sandbox
from audit_lib.sandbox import Limits
from audit_lib.sandbox import strict as sandbox_strict

pytestmark = pytest.mark.timeout(120)

QUICK = Limits(timeout_s=5, total_timeout_s=30, memory_mb=512)

RIGGED_LIST = "class Rigged(list):\n    def __eq__(self, other):\n        return True\n    __hash__ = None\n"
ALWAYS_EQUAL = "class AlwaysEqual:\n    def __eq__(self, other):\n        return True\n"
# Each attack: (program, snippet). The program's answers are wrong; the asserts hold only through an overload.
ATTACKS = {
    "list_subclass_eq": (RIGGED_LIST + "def solution(n):\n    return Rigged([0])\n",
                         "assert solution(2) == [2, 4]\n"),
    "list_subclass_on_the_right": (RIGGED_LIST + "def solution(n):\n    return Rigged([0])\n",
                                   "assert [2, 4] == solution(2)\n"),
    "object_eq_returns_true": (ALWAYS_EQUAL + "def solution(n):\n    return AlwaysEqual()\n",
                               "result = solution(2)\nassert result == [2, 4], f'got {result}'\n"),
    "rigged_item_inside_a_list": (ALWAYS_EQUAL + "def solution(n):\n    return [AlwaysEqual(), AlwaysEqual()]\n",
                                  "assert solution(2) == [2, 4]\n"),
    "rigged_value_inside_a_dict": (ALWAYS_EQUAL + "def solution(n):\n    return {'a': AlwaysEqual()}\n",
                                   "assert solution(2) == {'a': 5}\n"),
    "int_subclass_eq": ("class I(int):\n    def __eq__(self, other):\n        return True\n"
                        "    __hash__ = int.__hash__\n"
                        "def solution(n):\n    return I(0)\n", "assert solution(2) == 4\n"),
    "ne_returns_false": ("class N:\n    def __ne__(self, other):\n        return False\n"
                         "def solution(n):\n    return N()\n", "assert not (solution(2) != 4)\n"),
    "ne_returns_true": ("class N:\n    def __ne__(self, other):\n        return True\n"
                        "def solution(n):\n    return N()\n", "assert solution(0) != 0\n"),
    "bool_trick_for_truthiness": ("class Yes:\n    def __bool__(self):\n        return True\n"
                                  "def is_prime(n):\n    return Yes()\n", "assert is_prime(4)\n"),
    "bool_trick_under_not": ("class No:\n    def __bool__(self):\n        return False\n"
                             "def is_prime(n):\n    return No()\n", "assert not is_prime(7)\n"),
    "len_trick_for_truthiness": ("class Full(list):\n    def __len__(self):\n        return 1\n"
                                 "def items(n):\n    return Full()\n", "assert items(3)\n"),
    "lt_returns_true": ("class Tiny:\n    def __lt__(self, other):\n        return True\n"
                        "def solution(n):\n    return Tiny()\n", "assert solution(9) < 3\n"),
    "contains_returns_true": ("class Everything:\n    def __contains__(self, item):\n        return True\n"
                              "def solution(n):\n    return Everything()\n", "assert 7 in solution(3)\n"),
    "humaneval_check_candidate": (ALWAYS_EQUAL + "def add(a, b):\n    return AlwaysEqual()\n",
                                  "def check(candidate):\n    assert candidate(1, 2) == 3\n"
                                  "    assert candidate(2, 2) == 4\n\ncheck(add)\n"),
    "comparison_in_a_helper": (RIGGED_LIST + "def solution(n):\n    return Rigged([0])\n",
                               "def same(a, b):\n    return a == b\n\nassert same(solution(2), [2, 4])\n"),
    "if_not_equal_raise": (ALWAYS_EQUAL + "def solution(n):\n    return AlwaysEqual()\n",
                           "if not solution(2) == [2, 4]:\n    raise AssertionError('wrong')\n"),
    "if_truth_raise": ("class No:\n    def __bool__(self):\n        return False\n"
                       "def is_prime(n):\n    return No()\n", "if is_prime(4):\n    raise AssertionError\n"),
    "flag_set_in_a_loop": ("class N:\n    def __ne__(self, other):\n        return False\n"
                           "def solution(n):\n    return [N(), N()]\n",
                           "ok = True\nfor got, want in zip(solution(2), [2, 4]):\n    if got != want:\n"
                           "        ok = False\nassert ok\n"),
    "chained_comparison": ("class Mid:\n    def __gt__(self, other):\n        return True\n"
                           "    def __lt__(self, other):\n        return True\n"
                           "def solution(n):\n    return Mid()\n", "assert 5 < solution(1) < 7\n"),
}


def naive_exit_code(program: str, snippet: str) -> int:
    """The naive harness: run program + snippet with `python -c`, exit code 0 means pass."""
    return subprocess.run([sys.executable, "-c", program + "\n\n" + snippet], capture_output=True,
                          timeout=60).returncode


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_overloaded_comparison_passes_naive_harness_and_fails_ours(attack: str) -> None:
    program, snippet = ATTACKS[attack]
    assert naive_exit_code(program, snippet) == 0  # the attack works against the naive harness
    (result,) = sandbox.run_asserts(program, [snippet], limits=QUICK).snippets
    assert result.status == "fail"
    assert result.reason == sandbox_strict.REASON
    assert result.error_type == sandbox_strict.OVERLOAD_ERROR
    assert result.trust == "in_process"


@pytest.mark.parametrize("attack", ["list_subclass_eq", "object_eq_returns_true", "bool_trick_for_truthiness"])
def test_without_strict_comparisons_the_attack_passes(attack: str) -> None:
    """The guard is what stops it: the same run without it passes."""
    program, snippet = ATTACKS[attack]
    (result,) = sandbox.run_asserts(program, [snippet], limits=QUICK, strict_comparisons=False).snippets
    assert result.status == "pass" and result.reason is None


HONEST = textwrap.dedent("""
    import collections, decimal
    def solution(n):
        return [n, n * 2]
    def nothing(n):
        return None
    def table(n):
        return {'a': [1, (2, 3)], 'b': {4, 5}}
    def special(n):
        return (collections.OrderedDict(a=1), collections.deque([1, 2]), decimal.Decimal('1.5'), float('nan'))
""")


@pytest.mark.parametrize(("snippet", "status"), [
    ("assert solution(2) == [2, 4]\n", "pass"),
    ("assert solution(2) == [2, 5]\n", "fail"),
    ("assert solution(2) != [2, 5] and not solution(0) == [1]\n", "pass"),
    ("assert nothing(1) is None and solution(1) is not None\n", "pass"),
    ("assert 4 in solution(2) and 5 not in solution(2)\n", "pass"),
    ("assert 0 <= solution(3)[0] < 4 <= 6 == solution(3)[1]\n", "pass"),
    ("assert 5 < solution(1)[0] < solution(None)[0]\n", "fail"),  # short-circuits: solution(None) never runs
    ("assert table(0) == {'b': {5, 4}, 'a': [1, (2, 3)]} and table(0).keys() == {'a', 'b'}\n", "pass"),
    ("assert special(0)[:3] == (collections.OrderedDict(a=1), collections.deque([1, 2]), decimal.Decimal('1.5'))\n",
     "pass"),
    ("assert special(0)[3] != special(0)[3]\n", "pass"),
    ("assert solution(2)\nassert not nothing(2)\n", "pass"),
    ("assert all(x == y for x, y in zip(solution(2), [2, 4]))\n", "pass"),
    ("assert solution(2) < [2]\n", "fail"),
    ("assert solution(2) < 3\n", "error"),  # TypeError, as in plain Python
    ("def same(a, b):\n    return a == b\nassert same(solution(2), [2, 4]) and not same(solution(2), [4])\n", "pass"),
    ("if solution(2) != [2, 4]:\n    raise AssertionError\n", "pass"),
    ("if solution(2) != [2, 5]:\n    raise AssertionError\n", "fail"),
    ("if not nothing(2):\n    pass\nelif table(0):\n    raise AssertionError\n", "pass"),
    ("assert sorted([3, 1, 2], key=lambda v: v > 1) == [1, 3, 2]\n", "pass"),
])
def test_exact_builtin_comparisons_keep_python_semantics(snippet: str, status: str) -> None:
    (result,) = sandbox.run_asserts(HONEST, [snippet], limits=QUICK).snippets
    assert (result.status, result.reason) == (status, None), result
    assert naive_exit_code(HONEST, snippet) == (0 if status == "pass" else 1)


def test_rewrite_leaves_snippets_without_asserts_and_unparsable_ones_alone() -> None:
    assert sandbox_strict.rewrite_snippet("print(1)\n", "_g") is None
    assert sandbox_strict.rewrite_snippet("if x != 2:\n    raise ValueError\n", "_g") == \
        "if _g.cmp('!=', x, 2):\n    raise ValueError\n"
    assert sandbox_strict.rewrite_snippet("if x:\n    y = 1\n", "_g") is None  # a plain branch: untouched
    assert sandbox_strict.rewrite_snippet("assert (\n", "_g") is None
    rewritten = sandbox_strict.rewrite_snippet("assert f(1) == 2, 'msg'\n", "_g")
    assert rewritten == "assert _g.cmp('==', f(1), 2), 'msg'\n"


PATCHED_BUILTINS = ("import builtins\nclass Yes(set):\n    def __contains__(self, item):\n        return True\n"
                    "builtins.set = Yes\nbuiltins.all = lambda items: True\n")


@pytest.mark.parametrize("attack", ["object_eq_returns_true", "rigged_item_inside_a_list", "bool_trick_for_truthiness"])
def test_patched_builtins_do_not_reach_the_guard(attack: str) -> None:
    program, snippet = ATTACKS[attack]
    program = PATCHED_BUILTINS + program
    assert naive_exit_code(program, snippet) == 0
    (result,) = sandbox.run_asserts(program, [snippet], limits=QUICK).snippets
    assert (result.status, result.reason) == ("fail", sandbox_strict.REASON)


COUNTERS = "import collections, re\ndef count(s):\n    return collections.Counter(s)\ndef match(s):\n    return re.match('a', s)\n"


@pytest.mark.parametrize(("snippet", "status", "reason"), [
    ("assert count('aab') == {'a': 2, 'b': 1}\n", "pass", None),
    ("assert count('aab') == collections.Counter(a=2, b=1, c=0)\n", "pass", None),  # zero counts as missing (3.10+)
    ("assert count('aab') != count('ab') and 'a' in count('a')\n", "pass", None),
    ("assert count('a') == [1]\n", "fail", None),
    ("assert match('abc') and not match('b')\n", "pass", None),
    ("assert count('ab') <= count('abc')\n", "pass", None),  # inclusion, as Python 3.10+ orders Counters
    ("assert not count('abd') <= count('abc')\n", "pass", None),
    ("assert count('ab') < count('abc') and not count('abc') < count('abc')\n", "pass", None),
    ("assert [count('a')] == [count('a')]\n", "fail", sandbox_strict.REASON),
])
def test_counters_and_match_objects_compare_as_python_does(snippet: str, status: str, reason: str | None) -> None:
    """Honest MBPP+ canonicals return Counters and re.Match objects; the guard keeps their verdicts."""
    (result,) = sandbox.run_asserts(COUNTERS, [snippet], limits=QUICK).snippets
    assert (result.status, result.reason) == (status, reason), result


# The guard checks a value, then compares it: code that runs between the two (a gc callback, or a finalizer, at the
# collection the check's own allocations start) swapped the checked list's items for always-equal objects, and these
# asserts passed (before the guard held collections, signals and tracing; a trace function is refused in assert mode).
ALWAYS_EQ = """
class AlwaysEq:
    def __eq__(self, other):
        return True
    __hash__ = None
"""
SWAP_AFTER_THE_CHECK = {
    "gc_callback": ALWAYS_EQ + """
import gc
_out, _armed = None, [0]
def _swap(phase, info):
    if phase == "start" and _armed[0]:
        _armed[0] -= 1
        if _armed[0] == 0:
            _out[:] = [AlwaysEq() for _ in _out]
            gc.set_threshold(700, 10, 10)
gc.callbacks.append(_swap)
def f(xs):
    global _out
    _out = [0] * (len(xs) - 1) + [{}]
    gc.set_threshold(1, 1000, 1000)
    _armed[0] = 2
    return _out
""",
    "finalizer": ALWAYS_EQ + """
import gc
_out, _armed = None, [0]
class _Swap:
    def __del__(self):
        _out[:] = [AlwaysEq() for _ in _out]
        gc.set_threshold(700, 10, 10)
def _arm(phase, info):
    if phase == "stop" and _armed[0]:
        _armed[0] -= 1
        if _armed[0] == 1:  # after the first collection: a cycle only the next one frees
            swap = _Swap()
            swap.cycle = swap
def f(xs):
    global _out
    _out = [0] * (len(xs) - 1) + [{}]
    gc.callbacks.append(_arm)
    gc.set_threshold(1, 1000, 1000)
    _armed[0] = 2
    return _out
""",
}


@pytest.mark.parametrize("attack", sorted(SWAP_AFTER_THE_CHECK))
def test_no_code_of_the_programs_runs_between_the_guards_check_and_its_comparison(attack: str) -> None:
    snippets = ["assert f([3, 1, 2]) == [1, 2, 3]", "assert f([5, 4]) == [4, 5]"]
    results = sandbox.run_asserts(SWAP_AFTER_THE_CHECK[attack], snippets, limits=QUICK).snippets
    assert all(r.status == "fail" for r in results), results


# A program that drops to assert mode (it reads __name__, or binds a builtin the snippet uses) and rebinds the
# helpers the snippet compares with: `math.isclose`, `builtins.abs`, a module-level `abs`. The guard's own copies,
# bound before the program ran, decide instead (before, these wrong answers passed).
REBOUND_HELPERS = {
    "math_isclose_and_builtins_abs": "import math, builtins\nmath.isclose = lambda *a, **k: True\n"
                                     "builtins.abs = lambda v: 0\n_ = __name__\ndef f(x):\n    return -12345.0\n",
    "module_level_abs": "def abs(v):\n    return 0\ndef f(x):\n    return -12345.0\n",
}
HELPER_SNIPPETS = ["import math\nassert math.isclose(f(2.0), 4.0)",
                   "from math import isclose as close\nassert close(f(3.0), 9.0, rel_tol=1e-9)",
                   "assert abs(f(1.5) - 2.25) < 1e-6"]


@pytest.mark.parametrize("attack", sorted(REBOUND_HELPERS))
def test_rebound_comparison_helpers_do_not_decide_an_assert(attack: str) -> None:
    program = REBOUND_HELPERS[attack]
    result = sandbox.run_tests(program, HELPER_SNIPPETS, entry_points=["f"], limits=QUICK)
    in_process = [r for r in result.snippets if r.trust == "in_process"]
    assert in_process and all(r.status == "fail" for r in result.snippets), result.snippets
    honest = sandbox.run_asserts("def f(x):\n    return x * x\n", HELPER_SNIPPETS, limits=QUICK)
    assert [r.status for r in honest.snippets] == ["pass"] * 3  # the routed helpers keep Python's semantics


def test_a_helper_the_snippet_never_bound_is_still_a_name_error() -> None:
    # MBPP+'s Mbpp/120 original test calls math.isclose without importing math: upstream's NameError is the finding.
    program = "def f(x):\n    return x * x\n"
    (result,) = sandbox.run_asserts(program, ["assert math.isclose(f(2.0), 4.0)"], limits=QUICK).snippets
    assert (result.status, result.error_type) == ("error", "NameError"), result


# Code the guard cannot hold still (an audit hook on the `id()` its scan called, another thread with a tiny switch
# interval) swapped the checked list's items for always-equal objects before the comparison of the live list, and
# these asserts passed: the guard now compares copies made of exact builtin objects as it checks them.
CHANGED_DURING_THE_CHECK = {
    "audit_hook": ALWAYS_EQ + """
import sys
_out, _events = [], [0]
def _hook(event, args):
    if event == "builtins.id" and _events[0]:
        _events[0] += 1
        if _events[0] == 4:
            _events[0] = 0
            _out[:] = [AlwaysEq() for _ in _out]
sys.addaudithook(_hook)
def f(xs):
    _out[:] = [[0]] + [0] * (len(xs) - 1)
    _events[0] = 1
    return _out
""",
    "thread": ALWAYS_EQ + """
import sys, threading, time
sys.setswitchinterval(1e-5)
_armed, _out = threading.Event(), []
def _swap():
    while True:
        _armed.wait()
        _armed.clear()
        time.sleep(0.003)
        _out[:] = [AlwaysEq() for _ in _out]
threading.Thread(target=_swap, daemon=True).start()
def f(xs):
    _out[:] = [[0] * 300000] + [0] * (len(xs) - 1)
    _armed.set()
    return _out
""",
}


@pytest.mark.parametrize("attack", sorted(CHANGED_DURING_THE_CHECK))
def test_a_value_changed_during_the_guards_check_is_not_what_it_compares(attack: str) -> None:
    snippets = ["assert f([3, 1, 2]) == [1, 2, 3]", "assert f([5, 4]) == [4, 5]", "assert f([9, 8, 7]) == [7, 8, 9]"]
    results = sandbox.run_asserts(CHANGED_DURING_THE_CHECK[attack], snippets * 2, limits=QUICK).snippets
    assert all(r.status == "fail" for r in results), [(r.status, r.reason) for r in results]


# The value's own methods decided these helpers: a wrong answer passed through `__sub__`, `__rsub__`,
# `__getitem__`, `__round__` and `__len__`. Arithmetic, indexing, `abs`, `len` and `round` in asserts now take
# exact builtin values only.
RIGGED_HELPERS = """
class Rigged:
    def __sub__(self, other):
        return 0.0
    def __rsub__(self, other):
        return 0.0
    def __getitem__(self, index):
        return [4.0, 9.0][index]
    def __round__(self, digits=None):
        return 4.0
    def __len__(self):
        return 3
def f(x):
    return Rigged()
"""


@pytest.mark.parametrize("snippet", ["assert abs(f(1.5) - 2.25) < 1e-6", "assert abs(2.25 - f(1.5)) < 1e-6",
                                     "assert f(2.0)[0] == 4.0", "assert f(2.0)[0:1] == [4.0]",
                                     "assert round(f(2.0), 2) == 4.0", "assert len(f(2.0)) == 3"])
def test_the_values_own_operators_do_not_decide_an_assert(snippet: str) -> None:
    (result,) = sandbox.run_asserts(RIGGED_HELPERS, [snippet], limits=QUICK).snippets
    assert (result.status, result.reason) == ("fail", sandbox_strict.REASON), result
    assert naive_exit_code(RIGGED_HELPERS, snippet) == 0  # the attack works against the naive harness


# A third attack round: wrong answers the guard passed (an OrderedDict copied in storage order, a class whose
# `__class_getitem__` answered `[0]`, a values view compared live while a thread changed it, a tuple operand of `%`
# formatted by the value's own `__float__`), and honest asserts it broke (a walrus or a class body in a chained
# comparison, Counter ordering, a list that holds itself). Plain Python's verdicts are in the second column.
ROUND_THREE = """
import collections, threading, time
def od_moved():
    d = collections.OrderedDict([("a", 1), ("b", 2)])
    d.move_to_end("a")
    return d
class Four:
    def __class_getitem__(cls, key):
        return 4
def a_class():
    return Four
class AlwaysEq:
    def __eq__(self, other):
        return True
    __hash__ = object.__hash__
def values_race():
    d = {i: -1 for i in range(300000)}
    def swap():
        time.sleep(0.02)
        d[0] = AlwaysEq()
    threading.Thread(target=swap).start()
    return d
class Pi:
    def __float__(self):
        return 3.14159
def pi():
    return Pi()
"""


@pytest.mark.parametrize(("snippet", "status"), [
    ("import collections\nassert od_moved() == collections.OrderedDict([('a', 1), ('b', 2)])", "fail"),
    ("import collections\nassert od_moved() == collections.OrderedDict([('b', 2), ('a', 1)])", "pass"),
    ("assert a_class()[0] == 4", "fail"),
    ("assert 5 in values_race().values()", "fail"),
    ("assert '%.2f' % (pi(),) == '3.14'", "fail"),
    ("assert 0 < (n := len('abc')) < 10 and n == 3", "pass"),
    ("class T:\n    lo, hi = 1, 3\n    assert lo < 2 < hi", "pass"),
    ("from collections import Counter\nassert Counter('ab') <= Counter('abc')", "pass"),
    ("a = [1]\na.append(a)\nassert a == a", "pass"),
])
def test_round_three_wrong_answers_fail_and_honest_asserts_keep_pythons_verdict(snippet: str, status: str) -> None:
    (result,) = sandbox.run_asserts(ROUND_THREE, [snippet], limits=QUICK).snippets
    assert result.status == status, result
