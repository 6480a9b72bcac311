"""`audit.task(...)` for HumanEval+ / MBPP+: verdict rows from hand-made runs, and untrusted code only in the sandbox."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from audit_lib.benchmarks.humaneval_plus.data import HumanEvalTask, LoadedPlus, PlusTask
from audit_lib.benchmarks.humaneval_plus.groundtruth import GroundTruth
from audit_lib.benchmarks.humaneval_plus.inputs import Inputs
from audit_lib.benchmarks.humaneval_plus.runs import InputOutcome, SplitRun
from audit_lib.benchmarks.humaneval_plus.tasks import canonical_rows, scored_rows, task_view
from audit_lib.benchmarks.humaneval_plus.timing_rerun import Classification, InputRerun
from audit_lib.errors import UnknownTaskError
from audit_lib.timing import TimingVerdict

TASK = PlusTask("HumanEval/900", "def double(x):\n    \"\"\"Twice x.\"\"\"\n", "double", "    return 2 * x\n", "",
                ((1,),), ((2,), (3,), (4,)), 0.0, None, 1)


def _expected() -> dict[str, SplitRun]:
    return {"base": SplitRun(TASK.task_id, "base", (InputOutcome("value", 2, 0.001, cpu_s=0.001),)),
            "plus": SplitRun(TASK.task_id, "plus", (InputOutcome("value", 4, 0.001, cpu_s=0.001),
                                                    InputOutcome("value", 6, 0.002, cpu_s=0.002),
                                                    InputOutcome("timeout", None, 30.0)))}


def test_canonical_rows_carry_its_outputs_and_its_failures() -> None:
    rows = canonical_rows(TASK, "plus", _expected()["plus"])
    assert [(r["input_id"], r["input"], r["got"], r["status"], r["kind"]) for r in rows] == [
        ("plus[0]", "(2,)", "4", "pass", "value"), ("plus[1]", "(3,)", "6", "pass", "value"),
        ("plus[2]", "(4,)", "timeout", "fail", "timeout")]
    assert rows[2]["cause"] == "no expected output" and rows[0]["wall_s"] == 0.001


def test_scored_rows_give_expected_vs_got_and_the_cause_of_each_failure() -> None:
    sample = SplitRun(TASK.task_id, "plus", (InputOutcome("value", 4, 0.001, cpu_s=0.001),
                                             InputOutcome("value", 7, 0.001, cpu_s=0.001),
                                             InputOutcome("timeout", None, 1.0, cpu_s=1.0)))
    expected = _expected()["plus"]
    expected = SplitRun(TASK.task_id, "plus", expected.outcomes[:2] + (InputOutcome("value", 8, 0.3, cpu_s=0.3),))
    unclassified = scored_rows(TASK, "humaneval", "plus", sample, expected, None)
    assert [(r["status"], r["kind"], r["cause"]) for r in unclassified] == [
        ("pass", "match", None), ("fail", "wrong_value", "deterministic"), ("fail", "timeout", "unclassified")]
    assert (unclassified[1]["expected"], unclassified[1]["got"], unclassified[1]["detail"]) == ("6", "7", "not equal")
    rerun = InputRerun(TASK.task_id, "plus", 2, "timeout", "value", True, 1.6, 1.7, 0.3)
    classification = Classification((), (TimingVerdict(TASK.task_id, 3, 1.6, 1.2, 0.75, "confirmed"),), (), (rerun,))
    rows = scored_rows(TASK, "humaneval", "plus", sample, expected, classification)
    assert rows[2]["cause"] == "timing (confirmed)" and rows[2]["rerun_cpu_s"] == 1.6 and rows[2]["detail"] is None
    assert rows[2]["rerun_canonical_cpu_s"] == 0.3 and rows[1]["cause"] == "deterministic"


def _inputs(openai_body: str) -> Inputs:
    plus = LoadedPlus("humaneval", (TASK,), provenance=None, path="fixture")  # type: ignore[arg-type]
    inputs = Inputs("humaneval", plus, {}, {})
    gt = GroundTruth("humaneval", "0" * 64, {(TASK.task_id, split): run for split, run in _expected().items()},
                     Path("unused"), 1, 0)
    vars(inputs).update(ground_truth=gt, originals={  # what the cached properties would hold
        TASK.task_id: HumanEvalTask(TASK.task_id, TASK.prompt, "double", openai_body, "")})
    return inputs


def test_an_unknown_id_names_the_near_matches() -> None:
    with pytest.raises(UnknownTaskError, match=r"no task 'HumanEval/90' among the tasks of .*near matches: "
                                               r"HumanEval/900"):
        task_view(_inputs("    return 2 * x\n"), None, "HumanEval/90")


def test_openai_canonical_runs_in_the_sandbox_never_in_this_process(tmp_path: Path) -> None:
    marker = tmp_path / "ran-here"  # in the sandbox `open` is None (EvalPlus's reliability_guard): TypeError
    body = (f"    import os\n    try:\n        open({str(marker)!r}, 'w').write('x')\n    except (OSError, TypeError):\n"
            "        pass\n    return os.getpid() if x == 3 else 2 * x\n")
    view = task_view(_inputs(body), None, TASK.task_id)
    assert not marker.exists()
    openai = view.verdicts[view.verdicts["solution"] == "openai_canonical"].set_index("input_id")
    assert openai.loc["plus[0]", "status"] == "pass"
    assert openai.loc["plus[1]", "kind"] == "wrong_value" and openai.loc["plus[1]", "expected"] == "6"
    assert openai.loc["plus[1]", "got"] != str(os.getpid())
    assert openai.loc["plus[2]", "kind"] == "no_expected_output"  # the canonical timed out: nothing to compare
    assert set(view.solutions) == {"evalplus_canonical", "openai_canonical"}
    assert "timeouts are not classified" not in " ".join(view.notes)
