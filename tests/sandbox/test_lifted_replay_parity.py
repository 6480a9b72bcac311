"""A lifted snippet's verdict equals plain Python's `exec(program); exec(snippet)` in one namespace.

Each case is a shape the parent's replay once got wrong (a fifth attack round): an honest program that Python passes
and the replay failed, or a wrong one that Python fails and the replay passed. Either the replay now models it, or
the snippet runs in assert mode; the verdict is Python's in both.
"""

from __future__ import annotations

import itertools
import math
import subprocess
import sys

import pytest

from audit_lib.sandbox import Limits, run_tests

pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")  # `is` with a literal, on purpose
QUICK = Limits(timeout_s=3, total_timeout_s=60, memory_mb=512)


# In a fresh interpreter: some programs below change interpreter-wide state (the builtins module, `math`, the int
# digit limit) that must not leak into the test process or the next case.
PLAIN_PYTHON = """
import sys
namespace = {"__name__": "__main__"}
try:
    exec(sys.argv[1], namespace)
    exec(sys.argv[2], namespace)
except AssertionError:
    print("fail")
except Exception:
    print("error")
else:
    print("pass")
"""


def plain_python(program: str, snippet: str) -> str:
    completed = subprocess.run([sys.executable, "-W", "ignore", "-c", PLAIN_PYTHON, program, snippet],
                               capture_output=True, text=True, timeout=60, check=True)
    return completed.stdout.strip()


def _set_with_big_table(items: list) -> set:
    # As the programs below build theirs: a set that kept its big table iterates by hash mod 8192; the parent
    # rebuilds it from the list in that order, in a small table.
    kept = set(range(100000, 104096)) | set(items)
    for i in range(100000, 104096):
        kept.discard(i)
    return kept


def _order_floats() -> tuple[float, ...]:
    values = [0.1 * k + 0.01 * j for k in range(1, 12) for j in range(1, 9)]
    return next(t for t in itertools.combinations(values, 3)
                if math.prod(list(_set_with_big_table(list(t)))) != math.prod(list(set(_set_with_big_table(list(t))))))


def _returning_a_set_and(items: str, computed: str) -> str:
    """A program returning a set and what `computed` gives over it in the child, where Python's verdict is made."""
    return ("import math\ndef value():\n    s = set(range(100000, 104096))\n    s |= " + items + "\n"
            "    for i in range(100000, 104096):\n        s.discard(i)\n    return s, " + computed + "\n")


_FROZENSETS = "{" + ", ".join(f"frozenset({{{i}}})" for i in range(1, 21)) + "}"
_WORDS = "{" + ", ".join(repr(chr(ord("a") + i)) for i in range(20)) + "}"
_SORT_IN_PLACE = "def sort_in_place(xs):\n    xs.sort()\n    return len(xs)\n"
_CLEAR_ROWS = "def clear_rows(rows):\n    for r in rows:\n        r.clear()\n"
_COUNT = "from collections import defaultdict\ndef count(words):\n    d = defaultdict(int)\n    for w in words:\n" \
         "        d[w] += 1\n    return d\n"
_SORTED_COPY = "def sorted_copy(xs):\n    xs.sort()\n    return xs\n"
_SCALED = "SCALE = 1\ndef scaled(x):\n    return x * SCALE\n"
_DOUBLE = "def double(n):\n    return n * 2\n"
# Attack round I: a shared buffer, a counter and an argument kept for the next call (programs with state).
_BUFFER = "_buf = []\ndef fill(n):\n    _buf.clear()\n    _buf.extend(range(n))\n    return _buf\n"
_COUNTER = "N = [0]\ndef tick(x):\n    N[0] += 1\n    return N[0]\n"
_KEEPS_ARGUMENT = ("_saved = []\ndef keep(x):\n    if _saved:\n        _saved[0].append(99)\n    _saved.append(x)\n"
                   "    return len(x)\n")
_REBINDS_TO_RIGHT = ("def twice(n):\n    global twice\n    _calls[0] += 1\n    twice = _good\n"
                     "    return n * 2 if _calls[0] == 1 else 0\n_calls = [0]\ndef _good(n):\n    return n * 2\n")
_REBINDS_TO_WRONG = "def twice(n):\n    global twice\n    twice = lambda n: 999\n    return n * 2\n"
_CHECK_TWICE = "def check(candidate):\n    assert candidate(1) == 2\n    assert candidate(2) == 4\ncheck(twice)\n"

CASES: dict[str, tuple[str, str]] = {
    # L5: the argument-returning wrapper ran `list(args)` in the program's globals.
    "wrapper_list_rebound": (
        "import builtins, copy\n_before = []\ndef sorted_copy(xs):\n    _before.append(copy.deepcopy(xs))\n"
        "    xs.sort()\n    return xs\ndef list(args):\n    return builtins.list(_before.pop(0) for _ in args)\n",
        "inp = [3, 1, 2]\nr = sorted_copy(inp)\nassert r == [1, 2, 3]\nassert inp == [3, 1, 2]\n"),
    "wrapper_decorated_by_program": (
        _SORTED_COPY + "@(lambda function: lambda *args: [[1, 2, 3], [[3, 1, 2]]])\n",
        "inp = [3, 1, 2]\nr = sorted_copy(inp)\nassert inp == [3, 1, 2]\n"),
    "entry_point_rebound_by_a_call": (
        "def double(n):\n    global double\n    double = lambda n: n * 3\n    return n * 2\n",
        "assert double(1) == 2\nassert double(2) == 4\n"),
    # L6: the snippet's module-level bindings are the program's globals in Python.
    "snippet_import_used_by_program": ("def root(x):\n    return math.sqrt(x)\n",
                                       "import math\nassert math.isclose(root(2.0), 1.41421356, rel_tol=1e-6)\n"),
    "snippet_rebinds_program_global": (_SCALED, "SCALE = 10\nassert scaled(3) == 30\n"),
    "snippet_rebinds_program_global_wrong": (_SCALED, "SCALE = 10\nassert scaled(3) == 3\n"),
    "snippet_global_the_program_writes": ("X = 0\ndef bump(n):\n    global X\n    X = 5\n    return n\n",
                                          "X = 1\nbump(1)\nassert X == 1\n"),
    # L2: aliases of a literal passed to a call.
    "loop_rows_alias_table": (_SORT_IN_PLACE,
                              "t = [[3, 1, 2], [5, 4]]\nfor row in t:\n    sort_in_place(row)\n"
                              "assert t == [[1, 2, 3], [4, 5]]\n"),
    "loop_rows_alias_table_wrong": (_SORT_IN_PLACE,
                                    "t = [[3, 1, 2], [5, 4]]\nfor row in t:\n    sort_in_place(row)\n"
                                    "assert t == [[3, 1, 2], [5, 4]]\n"),
    "container_built_before_the_call": (_SORT_IN_PLACE, "a = [3, 1, 2]\nb = [a]\nsort_in_place(a)\n"
                                                        "assert b == [[3, 1, 2]]\n"),
    "loop_over_a_literal_after_the_call": (_CLEAR_ROWS, "a = [[1], [2]]\nclear_rows(a)\nfor row in a:\n"
                                                        "    assert row != []\n"),
    # L1: a defaultdict's default factory.
    "defaultdict_missing_key": (_COUNT, "assert count(['a', 'b', 'a'])['z'] == 0\n"),
    "defaultdict_repr": (_COUNT, "assert repr(count(['a'])) == \"defaultdict(<class 'int'>, {'a': 1})\"\n"),
    "defaultdict_repr_wrong": (_COUNT, "assert repr(count(['a'])) == \"defaultdict(None, {'a': 1})\"\n"),
    # L3: identity.
    "is_interned_string": ("def name():\n    return 'hello'\n", "assert name() is 'hello'\n"),
    "is_not_interned_string": ("def name():\n    return 'hello'\n", "assert name() is not 'hello'\n"),
    "is_returned_argument": ("def ident(xs):\n    xs.append(0)\n    return xs\n", "a = [1]\nr = ident(a)\nassert r is a\n"),
    "is_not_same_big_int": ("def big():\n    return 10**20\n", "a = big()\nb = big()\nassert a is not b\n"),
    "nan_identity_in_a_list": ("import math\ndef vals():\n    return [math.nan, 1.0]\n", "assert vals() == vals()\n"),
    "nan_is_not_equal": ("def solution(x):\n    return float('nan')\n", "assert solution(1) != solution(1)\n"),
    # L4: the order a returned set iterates in.
    "sorted_set_of_frozensets": (_returning_a_set_and(_FROZENSETS, "sorted(s)"),
                                 "r = value()\nassert sorted(r[0]) == r[1]\n"),
    "prod_of_a_float_set": (_returning_a_set_and(repr(set(_order_floats())), "math.prod(s)"),
                            "import math\nr = value()\nassert math.prod(r[0]) == r[1]\n"),
    "join_of_a_set": (_returning_a_set_and(_WORDS, "''.join(s)"), "r = value()\nassert ''.join(r[0]) == r[1]\n"),
    # L7: check()'s own scope.
    "check_local_shadows_global": (_DOUBLE, "limit = 1\ndef check(candidate):\n    limit = 100\n"
                                            "    assert candidate(3) < limit\ncheck(double)\nassert limit == 1\n"),
    "check_local_read_before_assignment": (_DOUBLE, "want = 6\ndef check(candidate):\n"
                                                    "    assert candidate(3) == want\n    want = 0\ncheck(double)\n"),
    # I/F1: a returned object a later call changes; Python compares the object, the child encoded it at return.
    "returned_buffer_refilled_later": (_BUFFER, "a = fill(1)\nb = fill(2)\nassert a == [0]\nassert b == [0, 1]\n"),
    "returned_buffers_in_one_display": (_BUFFER, "assert [fill(1), fill(2)] == [[0], [0, 1]]\n"),
    "returned_mutable_default": ("def acc(x, seen=[]):\n    seen.append(x)\n    return seen\n",
                                 "a = acc(1)\nb = acc(2)\nassert a == [1]\n"),
    "returned_buffer_bound_then_copied_later": (_BUFFER, "a = fill(1)\nc = a\nfill(3)\nassert c == [0]\n"),
    # I/F2: an argument a later call (with other arguments) changes.
    "argument_changed_by_a_later_call": (_KEEPS_ARGUMENT, "inp = [1]\na = keep(inp)\nb = keep([2])\n"
                                                          "assert inp == [1]\n"),
    "argument_changed_by_a_later_call_in_check": (_KEEPS_ARGUMENT, "def check(candidate):\n    inp = [1]\n"
                                                                   "    candidate(inp)\n    candidate([2])\n"
                                                                   "    assert inp == [1]\ncheck(keep)\n"),
    # I/F3: calls Python's short-circuit skips (the child made them all: a counting program saw extra calls).
    "call_under_or": (_COUNTER, "assert tick('a') == 1 or tick('b') == 1\nassert tick('c') == 3\n"),
    "call_under_and": (_COUNTER, "r = tick('a') == 5 and tick('b') == 2\nassert tick('c') == 2\n"),
    "call_in_untaken_branch": (_COUNTER, "x = tick('a') if True else tick('b')\nassert tick('c') == 3\n"),
    "call_in_chained_comparison_tail": (_COUNTER, "r = 5 < tick('a') < tick('b')\nassert tick('c') == 3\n"),
    # I/F4: a dict display's calls in Python's order k1, v1, k2, v2.
    "dict_display_call_order": (_COUNTER, "assert {str(tick('a')): str(tick('b')), str(tick('c')): str(tick('d'))}"
                                          " == {'1': '2', '3': '4'}\n"),
    "dict_display_call_order_wrong": (_COUNTER, "assert {str(tick('a')): str(tick('b')), str(tick('c')): "
                                                "str(tick('d'))} == {'1': '3', '2': '4'}\n"),
    # I/F5: an alias holds the function object; the program rebinds its global name during a call.
    "alias_in_check_keeps_the_object_wrong": (_REBINDS_TO_RIGHT, _CHECK_TWICE),
    "alias_in_check_keeps_the_object": (_REBINDS_TO_WRONG, _CHECK_TWICE),
    "alias_assigned_keeps_the_object": (_REBINDS_TO_WRONG, "candidate = twice\nassert candidate(1) == 2\n"
                                                           "assert candidate(2) == 4\nassert twice(3) == 999\n"),
    # I/F12: a generator expression reads the names when it is iterated.
    "generator_reads_names_late": (_DOUBLE, "k = 1\ng = (x + k for x in [double(1)])\nk = 10\n"
                                            "assert list(g) == [12]\n"),
    "generator_reads_names_late_wrong": (_DOUBLE, "k = 1\ng = (x + k for x in [double(1)])\nk = 10\n"
                                                  "assert list(g) == [3]\n"),
}

# Attack round I, F10/F11: the program changes what the snippet's builtins, `math` or int printing mean in ways no
# module-level binding shows; plain Python then uses the program's versions, so the snippet runs in assert mode.
_POWER = "def power(a, b, m):\n    return (a ** b) % m\n"
_BIG = "def big(n):\n    return 10 ** n\n"
# `max`, not `len`: assert mode's guard refuses a rebound `len` (see the README), while `max` resolves as in Python.
_BIGGEST = "def biggest(xs):\n    return max(xs) + 1\n"
CASES.update({
    "int_digits_limit_raised": ("import sys\nsys.set_int_max_str_digits(0)\n" + _BIG,
                                "assert str(big(5000)) == '1' + '0' * 5000\n"),
    "int_digits_limit_lowered": ("import sys as s\ns.set_int_max_str_digits(640)\n" + _BIG,
                                 "assert len(str(big(1000))) == 1001\n"),
    "star_import_shadows_round": ("from numpy import *\n" + _POWER,
                                  "assert isinstance(round(power(2, 3, 5) + 0.5), int)\n"),
    "walrus_in_a_module_comprehension": ("[max := (lambda xs: 0) for _ in [0]]\n" + _BIGGEST,
                                         "assert biggest([1, 2]) == max([1, 2]) + 1\n"),
    "globals_update_binds_max": ("globals().update(max=lambda xs: 0)\n" + _BIGGEST,
                                 "assert biggest([1, 2]) == max([1, 2]) + 1\n"),
    "exec_binds_max": ("exec('max = lambda xs: 0')\n" + _BIGGEST, "assert biggest([1, 2]) == max([1, 2]) + 1\n"),
    "builtins_module_rebound": ("import builtins\nbuiltins.abs = lambda x: 0\n" + _POWER,
                                "assert abs(power(2, 3, 5)) == 3\n"),
    "math_attribute_patched": ("import math\nmath.isclose = lambda a, b: a != b\n" + _POWER,
                               "import math\nassert math.isclose(power(2, 3, 5), 3)\n"),
})

# Attack round J: a skipped call's argument read later; a loop table reached through another name; a snippet that
# rebinds a builtin the stale-read rule trusted by name.
_SORTS = "def sorts(x):\n    if isinstance(x, list):\n        x.sort()\n        return None\n    return x\n"
_APPENDS = "def appends(x):\n    x.append(9)\n    return len(x)\n"
_NESTED_BUFFER = "_buf = [[]]\ndef nested(n):\n    _buf[0].clear()\n    _buf[0].extend(range(n))\n    return _buf\n"
CASES.update({
    "skipped_call_argument_read_after": (_SORTS, "inp = [3, 1, 2]\nr = sorts(1) or sorts(inp)\n"
                                                 "assert inp == [1, 2, 3]\n"),
    "skipped_call_argument_unchanged": (_SORTS, "inp = [3, 1, 2]\nassert sorts(1) == 1 or sorts(inp) == 1\n"
                                                "assert inp == [3, 1, 2]\n"),
    "untaken_branch_argument_unchanged": (_SORTS, "inp = [3, 1, 2]\nx = 0 if True else sorts(inp)\n"
                                                  "assert inp == [3, 1, 2]\n"),
    "loop_table_bound_to_another_name": (_APPENDS, "t = [[1]]\nu = t\nfor x in t:\n    r = appends(x)\n"
                                                   "assert u == [[1]]\n"),
    "loop_table_row_bound_to_another_name": (_APPENDS, "t = [[1]]\ny = t[0]\nfor z in t:\n    r = appends(z)\n"
                                                       "assert y == [1]\n"),
    "scalar_builtin_rebound_to_max": (_NESTED_BUFFER, "len = max\na = nested(1)\nb = len(a)\nc = nested(2)\n"
                                                      "assert b == [0]\n"),
    "scalar_builtin_rebound_to_sorted": (_NESTED_BUFFER, "str = sorted\nb = str(nested(1))\nc = nested(2)\n"
                                                         "assert b == [[0]]\n"),
})

# ... and programs that bind a builtin the snippet uses where no module-level binding shows (round J).
_MAX_OF = "assert max([power(2, 3, 5), 1]) == 2\n"
CASES.update({
    "match_capture_binds_max": ("match (lambda v: 2):\n    case max:\n        pass\n" + _POWER, _MAX_OF),
    "match_star_binds_sorted": ("match [1, 2]:\n    case [*sorted]:\n        pass\n" + _POWER,
                                "assert sorted([power(2, 3, 5)]) == [1, 2]\n"),
    "function_globals_bind_max": (_POWER + "power.__globals__['max'] = lambda v: 2\n", _MAX_OF),
    "frame_globals_bind_max": ("import sys\nsys._getframe().f_globals['max'] = lambda v: 2\n" + _POWER, _MAX_OF),
    "object_setattr_on_builtins": ("import builtins\nobject.__setattr__(builtins, 'max', lambda v: 2)\n" + _POWER,
                                   _MAX_OF),
    "importlib_module_attribute_set": ("import importlib\nimportlib.import_module('builtins').max = lambda v: 2\n"
                                       + _POWER, _MAX_OF),
    "getattr_reaches_the_digit_limit": ("import sys\ngetattr(sys, 'set_int_max_str_digits')(640)\n" + _BIG,
                                        "assert len(str(big(1000))) == 1001\n"),
})


def test_a_call_python_skips_spends_none_of_the_requests_time() -> None:
    # Six snippets whose second call would hang, were it made, then one that makes no such call: Python skips the
    # hanging calls, so all seven pass at once; made by the child, each used its snippet's limit out of the total.
    program = "def slow_on(x):\n    if x == 'slow':\n        while True:\n            pass\n    return 1\n"
    snippets = ["assert slow_on(1) == 1 or slow_on('slow') == 1\n"] * 6 + ["assert slow_on(2) == 1\n"]
    result = run_tests(program, snippets, entry_points=["slow_on"],
                       limits=Limits(timeout_s=2, total_timeout_s=8, memory_mb=256))
    assert [s.status for s in result.snippets] == ["pass"] * 7, result


@pytest.mark.parametrize("case", sorted(CASES))
def test_verdict_equals_plain_python(case: str) -> None:
    program, snippet = CASES[case]
    entry = program.split("def ", 1)[1].split("(", 1)[0]
    (result,) = run_tests(program, [snippet], entry_points=[entry], limits=QUICK).snippets
    assert result.status == plain_python(program, snippet), (result, case)


LIFTED_STILL: dict[str, tuple[str, str]] = {
    "import_math_program_does_not_read": (_DOUBLE, "import math\nassert math.isclose(double(1.5), 3.0)\n"),
    "import_math_program_imports_too": ("import math\ndef root(x):\n    return math.sqrt(x)\n",
                                        "import math\nassert math.isclose(root(4.0), 2.0)\n"),
    "program_local_named_like_a_snippet_global": ("def double(n):\n    result = n * 2\n    return result\n",
                                                  "result = double(2)\nassert result == 4\n"),
    "is_none": ("def nothing(x):\n    return None\n", "assert nothing(1) is None\n"),
    "sorted_set_of_strings": (_returning_a_set_and(_WORDS, "sorted(s)"), "got = value()\nassert sorted(got[0]) == got[1]\n"),
    "loop_rows_read_not_changed": (_SORT_IN_PLACE, "t = [[3, 1, 2], [5, 4]]\nfor row in t:\n"
                                                   "    sort_in_place(row)\n    assert row == sorted(row)\n"),
    "defaultdict_present_key": (_COUNT, "assert count(['a', 'b', 'a'])['a'] == 2\n"),
    "mutation_check": (_SORTED_COPY, "inp = [3, 1, 2]\nsorted_copy(inp)\nassert inp == [1, 2, 3]\n"),
    # Attack round I: each value read before the next call starts; calls Python always makes; aliases.
    "returned_value_read_before_the_next_call": (_BUFFER, "a = fill(1)\nassert a == [0]\nb = fill(2)\n"
                                                          "assert b == [0, 1]\n"),
    "one_call_per_assert": (_BUFFER, "assert fill(1) == [0]\nassert [0, 1] == fill(2)\n"),
    "scalars_of_two_calls": (_BUFFER, "assert len(fill(1)) < len(fill(2))\n"),
    "dict_display_of_strings": (_COUNTER, "assert {str(tick('a')): str(tick('b'))} == {'1': '2'}\n"),
    "alias_of_a_rebinding_program": (_REBINDS_TO_WRONG, _CHECK_TWICE),
    "generator_consumed_in_its_assert": (_DOUBLE, "k = 1\nassert sum(x + k for x in [double(1)]) == 3\n"),
}


@pytest.mark.parametrize("case", sorted(LIFTED_STILL))
def test_faithful_shapes_stay_lifted(case: str) -> None:
    program, snippet = LIFTED_STILL[case]
    entry = program.split("def ", 1)[1].split("(", 1)[0]
    result = run_tests(program, [snippet], entry_points=[entry], limits=QUICK)
    assert (result.snippets[0].status, result.lifted) == (plain_python(program, snippet), 1), result
