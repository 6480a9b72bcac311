"""The parent's replay of lifted asserts (an attack round, findings F6-F9 and F13-F15): its verdict is plain
Python's (`exec(program); exec(snippet)`), and its work on values the program chose is bounded, each hostile value
refused with a reason rather than a parent exception, a stall or a large allocation."""

from __future__ import annotations

import ast
import math
import resource
import time

import pytest

from audit_lib.sandbox import Limits, budget, run_tests
from audit_lib.sandbox.lifted_eval import Replay, Unsupported

QUICK = Limits(timeout_s=3, total_timeout_s=60, memory_mb=512)
P61 = (1 << 61) - 1


def plain_python(program: str, snippet: str) -> str:
    namespace: dict = {"__name__": "__main__"}
    try:
        exec(program, namespace)  # noqa: S102 - the tests' own programs
        exec(snippet, namespace)  # noqa: S102
    except AssertionError:
        return "fail"
    except Exception:  # noqa: BLE001
        return "error"
    return "pass"


def lifted(program: str, snippet: str, entry: str = "f") -> tuple[str, str]:
    (result,) = run_tests(program, [snippet], entry_points=[entry], limits=QUICK).snippets
    return result.status, result.trust


def replay(expression: str, *values: object) -> object:
    """Evaluate `expression` as the parent's replay does, `@0`, `@1`... standing for the calls' decoded values."""
    node = ast.parse(expression.replace("@", "_call_"), mode="eval").body
    for name in ast.walk(node):
        if isinstance(name, ast.Name) and name.id.startswith("_call_"):
            name.id = "@" + name.id[len("_call_"):]
    return Replay(values, frozenset(), time.monotonic() + 60).eval(node, {})


def timed_refusal(expression: str, *values: object) -> tuple[str, float]:
    started = time.perf_counter()
    with pytest.raises(Unsupported) as refused:
        replay(expression, *values)
    return str(refused.value), time.perf_counter() - started


_SET_OF = "def f(xs):\n    return set(xs)\n"
_BIG_TABLE = ("def _big(items):\n    s = set(range(100000, 104096)) | set(items)\n"
              "    for i in range(100000, 104096):\n        s.discard(i)\n    return s\n")


# ---- F6: set() and frozenset() with no argument ---------------------------------------------------------------------

@pytest.mark.parametrize("snippet", ["assert f([]) == set()\n", "assert f([]) == frozenset(set())\n",
                                     "assert set() == f([]) and len(set()) == 0\n"])
def test_empty_set_constructors_replay_as_python(snippet: str) -> None:
    assert lifted(_SET_OF, snippet) == ("pass", "parent") and plain_python(_SET_OF, snippet) == "pass"


def test_set_with_two_arguments_is_pythons_type_error_not_a_budget_override() -> None:
    # bounded_set's second parameter is the repeat limit: `set(x, 10**9)` must not reach it
    with pytest.raises(TypeError, match="at most 1 argument"):
        replay("set(@0, 10 ** 9)", [1, 2])


# ---- F7: set, frozenset, range and type are the real types -----------------------------------------------------

@pytest.mark.parametrize(("snippet", "expected"), [
    ("assert type(f([1, 2])) != set\n", "fail"),  # the cheat: a set passed as "not a set"
    ("assert type(f([1])) == set\n", "pass"),
    ("assert isinstance(f([1]), set)\n", "pass"),
    ("assert isinstance(f([1]), (set, frozenset))\n", "pass"),
    ("assert not isinstance(f([1]), range)\n", "pass"),
    ("assert isinstance(f([1]), frozenset) is False\n", "pass"),
])
def test_set_types_compare_as_the_real_types(snippet: str, expected: str) -> None:
    assert plain_python(_SET_OF, snippet) == expected
    assert lifted(_SET_OF, snippet) == (expected, "parent")


def test_calls_of_the_real_types_stay_bounded() -> None:
    assert replay("isinstance(range(3), range) and list(range(3)) == [0, 1, 2]") is True
    assert replay("isinstance(type(@0), type) and type(@0) == frozenset", frozenset({1})) is True
    assert "range too large" in timed_refusal("range(10 ** 100)")[0]
    colliding = [k * P61 for k in range(1, 2000)]
    assert "repeated hashes" in timed_refusal("frozenset(@0)", colliding)[0]
    with pytest.raises(TypeError):
        replay("set(iterable=@0)", [1])


# ---- F8: a set's order through dict views ------------------------------------------------------------------------

@pytest.mark.parametrize(("program", "snippet"), [
    (_BIG_TABLE + "def f():\n    return {'k': _big([1, 8])}\n", "assert str(f().values()) == 'dict_values([{8, 1}])'\n"),
    (_BIG_TABLE + "def f():\n    d = {'k': _big([1, 8])}\n    return d, str(d.values())\n",
     "r = f()\nassert str(r[0].values()) == r[1]\n"),
    (_BIG_TABLE + "def f():\n    d = {'k': _big([1, 8])}\n    return d, f'{d.items()}'\n",
     "r = f()\nassert f'{r[0].items()}' == r[1]\n"),
    (_BIG_TABLE + "def f():\n    d = {'k': _big([1, 8])}\n    return d, repr(d.items())\n",
     "r = f()\nassert repr(r[0].items()) == r[1]\n"),
])
def test_set_order_through_dict_views_is_not_the_parents(program: str, snippet: str) -> None:
    status, _trust = lifted(program, snippet)
    assert status == plain_python(program, snippet)


def test_dict_views_holding_a_set_are_refused_where_order_shows() -> None:
    assert "order of a set" in timed_refusal("str(@0.values())", {"k": {1, 8}})[0]
    assert "order of a set" in timed_refusal("f'{@0.items()}'", {"k": {1, 8}})[0]
    assert "order of a set" in timed_refusal("repr(@0.keys())", {frozenset({1, 8}): 0})[0]
    assert replay("str(@0.values())", {"k": [1, 8]}) == "dict_values([[1, 8]])"  # no set: replayed


# ---- F9: the assert message ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("snippet", ["r = f(5000)\nassert r == 5, r\n", "r = f(5000)\nassert r == 5, [r, 1]\n",
                                     "r = f(5000)\nassert r == 5, {'v': r}\n"])
def test_a_message_that_cannot_be_printed_still_fails(snippet: str) -> None:
    program = "def f(n):\n    return 10 ** n\n"
    assert plain_python(program, snippet) == "fail"
    (result,) = run_tests(program, [snippet], entry_points=["f"], limits=QUICK).snippets
    assert (result.status, result.trust, result.error_type) == ("fail", "parent", "AssertionError")
    assert result.error_message and len(result.error_message) <= 2000


# ---- F13: bytearray formatting and repetition -----------------------------------------------------------------

def test_bytearray_percent_formatting_is_refused_without_allocating() -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    reason, elapsed = timed_refusal("@0 % 2 == 0", bytearray(b"%0999999999d"))
    assert "%-formatting" in reason and elapsed < 20.0
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000  # KiB


def test_bytearray_repetition_is_bounded() -> None:
    assert "repetition too large" in timed_refusal("@0 * 10 ** 9", bytearray(b"ab"))[0]
    assert "repetition too large" in timed_refusal("10 ** 9 * @0", bytearray(b"ab"))[0]
    assert replay("@0 * 3", bytearray(b"ab")) == bytearray(b"ababab")


def test_bytearray_format_attack_ends_cleanly_end_to_end() -> None:
    program = "def f(n):\n    return bytearray(b'%0999999999d')\n"
    run = run_tests(program, ["assert f(4) % 2 == 0\n"], entry_points=["f"], limits=QUICK)
    assert run.snippets[0].trust == "in_process" and "%-formatting" in run.not_lifted[0][1]


# ---- F14: big-int division -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("expression", ["@0 // @1", "@0 % @1", "round(@0, -600000)", "math_gcd"])
def test_big_int_division_is_refused_quickly(expression: str) -> None:
    big, half = (1 << 4_000_000) - 12345, (1 << 2_000_000) - 777
    if expression == "math_gcd":
        from audit_lib.sandbox.replay_arith import bounded_gcd  # noqa: PLC0415

        started = time.perf_counter()
        with pytest.raises(Unsupported, match="gcd"):
            bounded_gcd(big, half + 2)
        elapsed = time.perf_counter() - started
    else:
        reason, elapsed = timed_refusal(expression, big, half)
        assert "too slow for the parent" in reason
    assert elapsed < 2.0  # ~8.6 s each before


def test_big_int_division_attack_ends_cleanly_end_to_end() -> None:
    # one call returns both ints (`f(1) // f(2)` is not lifted at all: call 0's value is read after call 1)
    program = "def f(n):\n    return (1 << 4_000_000) - 12345, (1 << 2_000_000) - 777\n"
    started = time.monotonic()
    run = run_tests(program, ["pair = f(1)\nassert pair[0] // pair[1] == 3\n"], entry_points=["f"],
                    limits=Limits(timeout_s=1, total_timeout_s=60, memory_mb=512))
    assert run.snippets[0].trust == "in_process" and "too slow for the parent" in run.not_lifted[0][1]
    assert time.monotonic() - started < 4.0  # 5 s wall before, most of it the parent's one division
    a, b = (1 << 116_000) - 3, (1 << 58_000) - 5  # HumanEval+'s largest honest ints are ~116,000 bits
    assert replay("@0 // @1 == @2 and @0 % @1 == @3", a, b, a // b, a % b) is True
    assert replay("@0 % 10 == @1 and round(@0, -3) == @2", a, a % 10, round(a, -3)) is True


# ---- F15: collisions among long keys -----------------------------------------------------------------------------

def _colliding_big_ints(count: int, bits: int) -> list[int]:
    base = 1 << bits
    return [base + i * P61 for i in range(count)]  # one hash, differing only in the low bits


@pytest.mark.parametrize("expression", ["set(@0)", "{x for x in @0}", "frozenset(@0)"])
def test_colliding_big_ints_are_refused_by_their_size(expression: str) -> None:
    reason, elapsed = timed_refusal(expression, _colliding_big_ints(1025, 240_000))
    assert "element comparisons" in reason and elapsed < 2.0  # 4.6 s per set() before


def test_decoding_colliding_big_ints_is_refused_by_their_size() -> None:
    from audit_lib.sandbox import codec  # noqa: PLC0415

    encoded = codec.encode(set(_colliding_big_ints(300, 240_000)))
    started = time.perf_counter()
    with pytest.raises(budget.BudgetExceeded, match="element comparisons"):
        budget.JobDecoder().decode(encoded)
    assert time.perf_counter() - started < 20.0
    honest = {-1, -2, 1, P61 + 1, 1 << 116_000, (1 << 116_000) + P61, *range(100)}
    assert budget.JobDecoder().decode(codec.encode(honest)) == honest


def test_colliding_long_strings_weigh_by_their_length() -> None:
    short, long_ = ["a"] * 2, ["a" * 1_000_000] * 2
    assert budget.collision_work(long_, [0, 0]) > 1000 * budget.collision_work(short, [0, 0])
    assert budget.collision_work([(1 << 240_000,)] * 2, [0, 0]) > 400


# ---- J6: sum() and math.prod() bounded by their work, not only their result -------------------------------------------

@pytest.mark.parametrize(("expression", "values"), [
    ("sum(@0)", lambda: [1 << 4_000_000] + [1] * 100_000),  # was 9.1 s: the 500 KB running sum copied 100,000 times
    ("sum(@0, 1 << 4_000_000)", lambda: [1] * 100_000),
    ("sum(x for x in @0)", lambda: [1 << 4_000_000] + [1] * 100_000),
    ("math.prod(@0)", lambda: [1 << 3_000_000] + [1] * 20_000),  # was 1.4 s
    ("math.prod(@0)", lambda: [(1 << 3_000_000) + 1] + [1.0, 1] * 10_000),
], ids=["sum", "sum-start", "sum-generator", "prod", "prod-mixed"])
def test_sum_and_prod_of_a_huge_int_and_many_items_are_refused(expression: str, values) -> None:
    reason, elapsed = timed_refusal(expression.replace("math.", "@1."), values(), _math_module())
    assert "too slow for the parent" in reason and "bit-steps" in reason
    assert elapsed < 20


def _math_module() -> object:
    from audit_lib.sandbox.lifted_eval import _MathModule
    return _MathModule


@pytest.mark.parametrize(("expression", "values", "expected"), [
    ("sum(@0)", lambda: list(range(1_000_000)), lambda: 499_999_500_000),
    ("sum(@0)", lambda: [0.5] * 999_999, lambda: 499_999.5),
    ("sum(@0)", lambda: [(1 << 116_000) + 1] * 30_000,  # HumanEval+'s largest honest ints
     lambda: ((1 << 116_000) + 1) * 30_000),
    ("sum(@0)", lambda: [1] * 100_000 + [1 << 4_000_000],  # the big one last: one big addition
     lambda: (1 << 4_000_000) + 100_000),
    ("math.prod(@0)", lambda: list(range(1, 2_000)), lambda: math.factorial(1_999)),
    ("math.prod(@0)", lambda: [1.0, -1.0] * 25_000, lambda: 1.0),
], ids=["small-ints", "floats", "honest-big-ints", "big-last", "factorial", "prod-floats"])
def test_honest_sums_and_products_still_replay(expression: str, values, expected) -> None:
    items, want = values(), expected()
    started = time.perf_counter()
    assert replay(expression.replace("math.", "@1."), items, _math_module()) == want
    assert time.perf_counter() - started < 20


def test_sum_attack_ends_cleanly_end_to_end() -> None:
    program = "def f(n):\n    return [1 << 4_000_000] + [1] * 100_000\n"
    started = time.perf_counter()
    result = run_tests(program, ["assert sum(f(1)) == 10\n"], entry_points=["f"], limits=QUICK)
    assert time.perf_counter() - started < 8  # the child's own work included; the parent's replay was 9.1 s
    # assert mode: the child's own sum runs under the job's time limit
    assert result.snippets[0].status in ("fail", "timeout") and "too slow for the parent" in result.not_lifted[0][1]


# ---- J7: the NaN, set and defaultdict checks are bounded -------------------------------------------------------------

@pytest.mark.parametrize("value", [
    lambda: [0] * 20_000_000,  # holds_nan walked this in Python: 5.9-9.3 s
    lambda: [[0]] * 2_000_000,
    lambda: {str(i): [i] for i in range(1_000_000)},
], ids=["flat", "nested", "dict"])
def test_looking_through_a_huge_value_is_refused_quickly(value: object) -> None:
    from audit_lib.sandbox.replay_values import holds_a_set, holds_nan
    value = value()
    for check in (holds_nan, holds_a_set):
        started = time.perf_counter()
        with pytest.raises(Unsupported, match="too large for the parent to look through"):
            check(value)
        assert time.perf_counter() - started < 10


@pytest.mark.parametrize(("value", "expected"), [
    (lambda: [0] * 3_000_000 + [float("nan")], True), (lambda: [0.5] * 3_000_000, False),
    (lambda: ["a", 1, (2, complex(0, math.nan))], True), (lambda: {1: [{"x": 2.0}], 2: {3}}, False),
    (lambda: [{1: [1, {2: math.nan}]}.values()], True), (lambda: math.nan, True),
], ids=["flat-nan", "flat-floats", "complex", "nested-none", "view", "scalar"])
def test_nan_check_still_finds_nans(value: object, expected: bool) -> None:
    from audit_lib.sandbox.replay_values import holds_nan
    assert holds_nan(value()) is expected


def test_a_huge_flat_value_ends_cleanly_end_to_end() -> None:
    program = "def f(n):\n    return [0] * 20_000_000\n"
    started_cpu = time.process_time()
    result = run_tests(program, ["assert f(1) == []\n"], entry_points=["f"],
                       limits=Limits(timeout_s=10, total_timeout_s=120, memory_mb=1024))
    (snippet,) = result.snippets
    assert snippet.status == "fail" and "too large for the parent to look through" in result.not_lifted[0][1]
    # decoding 60 MB stays; holds_nan's walk (5.9-9.3 s of parent CPU) is gone
    assert time.process_time() - started_cpu < 4


# ---- J8: a method's receiver, dict views and iterators count against MAX_REPLAY_ITEMS -------------------------------

@pytest.mark.parametrize(("expression", "value"), [
    ("@0.split()", lambda: "ab " * 20_000_000),  # took the parent to 1,457 MB
    ("@0.splitlines()", lambda: "a\n" * 2_000_000),
    ("@0.lower()", lambda: "A" * 2_000_000),
    ("@0.count(1)", lambda: [1] * 2_000_000),
    ("@0.items()", lambda: {i: i for i in range(1_500_000)}),
    ("@0.decode()", lambda: b"a" * 2_000_000),
], ids=["split", "splitlines", "lower", "list-count", "dict-items", "bytes-decode"])
def test_a_method_on_a_huge_receiver_is_refused(expression: str, value: object) -> None:
    value = value()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    reason, elapsed = timed_refusal(expression, value)
    assert "too long to replay in the parent" in reason and elapsed < 10
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000  # KB


@pytest.mark.parametrize("expression", ["sorted(@0.items())", "sorted(@0.values())", "max(@0.keys())",
                                        "list(@0.items())", "sorted(reversed(@1))", "list(reversed(@1))"])
def test_dict_views_and_iterators_count_as_their_length(expression: str) -> None:
    # @0.items() is refused by its receiver; a view or iterator passed on counts as its length
    big = {str(i): i for i in range(1_200_000)}
    reason, elapsed = timed_refusal(expression, big, list(range(1_200_000)))
    assert "too long to replay in the parent" in reason and elapsed < 10
    from audit_lib.sandbox.lifted_eval import _length
    assert _length(big.items()) == _length(iter(big.values())) == _length(reversed(list(big))) == 1_200_000


@pytest.mark.parametrize(("expression", "expected"), [
    ("@0.split()", ["ab"] * 1_000), ("sorted(@1.items())[:2]", [("a", 1), ("b", 2)]),
    ("max(@1.values())", 2), ("list(reversed(@2))[:2]", [9, 8]), ("@0.count('ab')", 1_000),
])
def test_receivers_under_the_limit_still_replay(expression: str, expected: object) -> None:
    assert replay(expression, "ab " * 1_000, {"b": 2, "a": 1}, list(range(10))) == expected


def test_split_attack_ends_cleanly_end_to_end() -> None:
    program = "def f(n):\n    return 'ab ' * 20_000_000\n"
    result = run_tests(program, ["assert f(1).split() == ['x']\n"], entry_points=["f"],
                       limits=Limits(timeout_s=10, total_timeout_s=120, memory_mb=1024))
    # assert mode: the child's own split() runs under the job's memory limit (not root, without a cgroup, its
    # MemoryError is `error`: see the README's Sandbox section)
    snippet = result.snippets[0]
    assert snippet.status in ("fail", "memory") or (snippet.status, snippet.error_type) == ("error", "MemoryError")
    assert "too long to replay" in result.not_lifted[0][1]
