"""`-p generations_dir`: the folder layout and its refusals, and a user's IVR with upstream's rules."""

from __future__ import annotations

import json

import pytest

from audit_lib.benchmarks.intentspec.audit import AUDIT
from audit_lib.benchmarks.intentspec.checks_yours import unknown_task_files, your_generations_from
from audit_lib.benchmarks.intentspec.data import PublishedRun
from audit_lib.benchmarks.intentspec.runs import run_candidates
from audit_lib.benchmarks.intentspec.user_generations import (
    USER_GENERATION,
    generations_dir_rule,
    read_generations_dir,
    user_candidates,
)
from audit_lib.errors import ParameterError
from tests.benchmarks.intentspec.test_intentspec_helpers import fake_run, outcome, spec_record, specs

SPECS = specs(spec_record("HumanEval/1"), spec_record("HumanEval/2"), spec_record("HumanEval/3"))
RIGHT = "def solution(x):\n    return x * 2\n"
FLOAT = "def solution(x):\n    return x * 2.0\n"   # passes C1 (stated) and C2, fails the hidden C3 (an int)
WRONG = "def solution(x):\n    return x + 1\n"    # fails the stated C1: not counted in the IVR


def write_folder(root, files: dict[str, list]):
    root.mkdir(parents=True, exist_ok=True)
    for name, lines in files.items():
        (root / name).write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n"
                                         for line in lines))
    return root


# ---- the layout ------------------------------------------------------------------------------------------------

def test_the_supplement_layout_is_read_in_file_and_line_order(tmp_path):
    folder = write_folder(tmp_path / "data" / "generations", {
        "mine__HumanEval_2.jsonl": [{"solution": RIGHT}], "mine__HumanEval_1.jsonl": [{"solution": FLOAT},
                                                                                       {"solution": WRONG}]})
    user = read_generations_dir(tmp_path / "data")  # the folder above generations/ works too
    assert [(g.model_slug, g.task_id, g.sample) for g in user.generations] == [
        ("mine", "HumanEval/1", 0), ("mine", "HumanEval/1", 1), ("mine", "HumanEval/2", 0)]
    assert user.folder == str(folder)


@pytest.mark.parametrize(("files", "message"), [
    ({"mine_HumanEval_1.jsonl": [{"solution": RIGHT}]}, "mine_HumanEval_1.jsonl: the name is not"),
    ({"mine__HumanEval_1.jsonl": [{"solution": RIGHT}, "{oops"]}, "mine__HumanEval_1.jsonl, line 2: malformed JSON"),
    ({"mine__HumanEval_1.jsonl": [{"code": RIGHT}]}, "line 1: missing field 'solution'"),
    ({"mine__HumanEval_1.jsonl": [{"solution": 3}]}, "line 1: field 'solution' must be a non-empty string"),
    ({"mine__HumanEval_1.jsonl": []}, "mine__HumanEval_1.jsonl: no samples"),
])
def test_bad_folders_are_refused_before_any_kernel_with_file_and_line(tmp_path, files, message):
    folder = write_folder(tmp_path / "gens", files)
    assert message in generations_dir_rule(str(folder))
    with pytest.raises(ParameterError) as caught:
        AUDIT.validate({"generations_dir": str(folder)})
    assert message in caught.value.message and caught.value.fields["field"] == "generations_dir"


def test_a_missing_or_empty_folder_is_refused(tmp_path):
    assert "is not a folder" in generations_dir_rule(str(tmp_path / "nowhere"))
    (tmp_path / "empty").mkdir()
    assert "holds no files" in generations_dir_rule(str(tmp_path / "empty"))
    assert generations_dir_rule("") is None


def test_a_task_that_is_not_intentspecs_is_named_by_file(tmp_path):
    user = read_generations_dir(write_folder(tmp_path / "g", {"mine__HumanEval_99.jsonl": [{"solution": RIGHT}]}))
    assert unknown_task_files(user, SPECS) == ["mine__HumanEval_99.jsonl"]


# ---- the IVR, upstream's rules ---------------------------------------------------------------------------------

PUBLISHED = PublishedRun("results/experiment1.json", "claude-x", 2, overall_ivr=0.25, ivr_by_type={}, per_task={
    "HumanEval/1": (outcome(True, ("C2", "C3")), outcome(True, ("C2",), ("C3",))),        # 1/2
    "HumanEval/2": (outcome(True, ("C2", "C3")), outcome(False, ("C2", "C3"))),          # 0/1
    "HumanEval/3": (outcome(True, (), ("C2", "C3")), outcome(True, (), ("C2", "C3")))})  # 2/2, not covered below


def test_ivr_of_a_users_model_beside_the_published_on_the_same_tasks(tmp_path):
    user = read_generations_dir(write_folder(tmp_path / "g", {
        "mine__HumanEval_1.jsonl": [{"solution": FLOAT}, {"solution": RIGHT}, {"solution": WRONG}],
        "mine__HumanEval_2.jsonl": [{"solution": WRONG}]}))
    runs = [fake_run(USER_GENERATION, "mine", "HumanEval/1", 0, {"C1": "pass", "C2": "pass", "C3": "fail"}),
            fake_run(USER_GENERATION, "mine", "HumanEval/1", 1, {"C1": "pass", "C2": "pass", "C3": "pass"}),
            fake_run(USER_GENERATION, "mine", "HumanEval/1", 2, {"C1": "fail", "C2": "fail", "C3": "pass"}),
            fake_run(USER_GENERATION, "mine", "HumanEval/2", 0, {"C1": "fail", "C2": "pass", "C3": "pass"})]
    check = your_generations_from(SPECS, user, runs, [PUBLISHED])
    mine = check.observed["models"]["mine"]
    # HumanEval/1: 1 of the 2 stated-passing solutions violates; HumanEval/2: none passes stated -> excluded
    assert mine["overall_ivr"] == 0.5 and mine["tasks_included"] == 1
    assert mine["excluded_no_stated_pass"] == ["HumanEval/2"]
    assert check.observed["tasks_not_covered"] == ["HumanEval/3"]
    # the published model on the same two tasks: (1/2 + 0/1) / 2; its stored figure covers every task
    assert check.observed["published"]["claude-x"]["ivr_on_your_tasks"] == 0.25
    assert [row["violation"] for row in check.details] == [True, False, False, False]
    assert "never counted as violations" in check.summary


def test_a_wrong_sample_fails_and_a_right_one_passes_in_the_sandbox(tmp_path):
    user = read_generations_dir(write_folder(tmp_path / "g", {
        "mine__HumanEval_1.jsonl": [{"solution": RIGHT}, {"solution": FLOAT}, {"solution": WRONG}]}))
    by_task = {spec.task_id: spec for spec in SPECS}
    runs = run_candidates(user_candidates(user), by_task, timeout_s=5.0, progress=False)
    verdicts = {key[3]: {v.constraint_id: v.status for v in run.verdicts} for key, run in runs.items()}
    assert verdicts[0] == {"C1": "pass", "C2": "pass", "C3": "pass"}
    assert verdicts[1]["C3"] == "fail" and verdicts[1]["C1"] == "pass"
    assert verdicts[2]["C1"] == "fail"
    check = your_generations_from(SPECS, user, list(runs.values()), [])
    assert check.observed["models"]["mine"]["overall_ivr"] == 0.5  # 1 violation among 2 stated-passing
