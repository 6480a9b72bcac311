"""The benchmarks' original tests (HumanEval's `check`, MBPP's assert lines) run in the sandbox's judge against the
program's answers: an overloaded `__eq__` cannot pass them, and no shape of test runs any other way."""

from __future__ import annotations

from audit_lib.benchmarks.humaneval_plus.checks_original import original_tests_vs_canonical_from
from audit_lib.benchmarks.humaneval_plus.programs import check_snippet
from audit_lib.benchmarks.humaneval_plus.replay import run_original_tests

HUMANEVAL_TEST = "def check(candidate):\n    assert candidate(1) == [1, 2]\n    assert candidate(2) == [2, 4]\n"
MBPP_TEST = "assert double(1) == [1, 2]\nassert double(2) == [2, 4]\n"
RIGHT = "def double(x):\n    return [x, 2 * x]\n"
WRONG = "def double(x):\n    return [x, x]\n"
OVERLOADED = ("class AlwaysEqual(list):\n    def __eq__(self, other):\n        return True\n\n"
              "def double(x):\n    return AlwaysEqual()\n")
LOOPING = ("def check(candidate):\n    import random\n    for x in (1, 2):\n"
           "        assert candidate(random.randint(x, x)) == [x, 2 * x]\n")


def _run(program: str, snippet: str) -> object:
    return run_original_tests([("k", program, snippet, "double")])["k"]


def test_humaneval_check_and_mbpp_asserts_are_decided_by_the_judge() -> None:
    for snippet in (check_snippet(HUMANEVAL_TEST, "double"), MBPP_TEST):
        right, wrong = _run(RIGHT, snippet), _run(WRONG, snippet)
        assert (right.status, right.snippets[0].trust) == ("pass", "judge")
        assert (wrong.status, wrong.snippets[0].trust) == ("fail", "judge")


def test_an_overloaded_eq_fails_the_original_tests() -> None:
    # In plain assert mode (`python -c program + test`) this program passes both tests.
    for snippet in (check_snippet(HUMANEVAL_TEST, "double"), MBPP_TEST):
        assert _run(OVERLOADED, snippet).status == "fail"


def test_every_shape_of_test_is_judged_and_counted() -> None:
    results = run_original_tests([("evalplus::T/0", RIGHT, check_snippet(HUMANEVAL_TEST, "double"), "double"),
                                  ("evalplus::T/1", RIGHT, check_snippet(LOOPING, "double"), "double"),
                                  ("evalplus::T/2", WRONG, check_snippet(LOOPING, "double"), "double")])
    assert [results[f"evalplus::T/{i}"].status for i in range(3)] == ["pass", "pass", "fail"]
    check = original_tests_vs_canonical_from([], results, test_name="toy")
    assert check.meta["sandbox_trust"] == {"test_runs": 3, "judged": 3}
