"""`audit.task(...)` for ImpossibleBench LCB on hand-made rows: each solution's verdict on each assertion of both
forms, run in the sandbox (or read from `metrics_replay`), and the manifest-only view of a task without a row."""

from __future__ import annotations

import pytest
from test_impossible_lcb_checks import _inputs, _params, _session
from test_impossible_lcb_tasks import ENTRY_POINT, ORIGINAL_TEST, VALUE_MUTATION, task_row

from audit_lib.benchmarks.impossible_lcb import audit
from audit_lib.benchmarks.impossible_lcb.tasks import task_view
from audit_lib.errors import NoTaskViewError, UnknownTaskError


def _row_inputs() -> audit.Inputs:
    return _inputs(oneoff_rows=[task_row(task_id="lcbhard_0", test=VALUE_MUTATION)])


def test_task_view_runs_the_three_solutions_on_both_forms_in_the_sandbox() -> None:
    view = task_view(_row_inputs(), _params(), "lcbhard_0")
    assert set(view.solutions) == {"honest_oracle", "special_caser", "exit_cheater"}
    assert ENTRY_POINT in view.solutions["honest_oracle"]
    verdicts = view.verdicts
    assert len(verdicts) == 3 * 2 * 4  # three solutions, two forms, four assertions each
    oracle = verdicts[verdicts["solution"] == "honest_oracle"].set_index("input_id")
    assert list(oracle.loc[["original[0]", "original[1]", "original[3]"], "status"]) == ["pass"] * 3
    changed = oracle.loc["impossible[1]"]  # the mutated assertion: the honest oracle fails it
    assert changed["status"] == "fail" and changed["kind"] == "fail" and changed["cause"] == "deterministic"
    assert bool(changed["changed"]) and changed["input"] == "assert candidate(2, 2) == 5"
    assert changed["expected"] == "assertion holds" and changed["got"].startswith("fail: AssertionError")
    cheater = verdicts[verdicts["solution"] == "exit_cheater"]
    assert set(cheater["status"]) == {"fail"}  # exiting 0 passes nothing here
    assert view.context["original test"] == ORIGINAL_TEST and view.context["in the environment"] == "eligible"
    assert "lcbhard_0" in view.summary() and not view.notes


def test_task_view_reads_metrics_replays_runs_when_that_check_ran() -> None:
    session = _session(_row_inputs())
    session.run("metrics_replay")
    kept = session.inputs.replay_results("zero_based")
    assert kept is not None and {key[0] for key in kept} == {"lcbhard_0"}
    view = session.task("lcbhard_0")
    assert len(view.verdicts) == 24 and set(view.evidence["check"]) == {"metrics_replay"}


def test_a_task_without_a_row_shows_the_manifest_and_the_defect_list() -> None:
    view = task_view(_row_inputs(), _params(), "lcbhard_77")
    assert view.verdicts.empty and view.solutions == {} and view.prompt == ""
    assert "no full oneoff row of lcbhard_77" in view.notes[0]
    assert view.context["oneoff mutation (manifest row 79)"].startswith("assert candidate(77) == 0\n-> ")
    assert view.context["in the environment"].startswith("dropped by the defect list")


def test_unknown_task_and_no_data() -> None:
    with pytest.raises(UnknownTaskError, match="no task 'lcbhard_999' .* near matches: lcbhard_99"):
        task_view(_row_inputs(), _params(), "lcbhard_999")
    with pytest.raises(NoTaskViewError, match="no tasks loaded"):
        task_view(_inputs(manifest=(), missing={"impossible_lcb/manifest.csv": "not fetched"}), _params(),
                  "lcbhard_0")
