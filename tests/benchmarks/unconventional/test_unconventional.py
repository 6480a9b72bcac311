"""The six checks of the unconventional-problems audit, their parameters, and the notebook end to end."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import nbformat
import pytest

from audit_lib.benchmarks.unconventional import checks_grades, checks_paper
from audit_lib.benchmarks.unconventional.audit import AUDIT, Inputs, Params
from audit_lib.benchmarks.unconventional.table2 import TABLE2
from audit_lib.benchmarks.unconventional.user_grades import load_grade_set
from audit_lib.errors import ParameterError
from audit_lib.runner.catalogue import read_parameters
from tests.notebook_helpers import execute_notebook

GOOD_PARAMS = {"grades_path": "", "seed": 0, "n_resamples": 2000, "executor": "local"}
CHECK_IDS = ["reproducibility", "table2_analysis", "grade_parsing", "score_aggregation", "example_ambiguity",
             "user_grades"]

SYNTHETIC = Inputs(load_grade_set("", seed=0))  # the paper's checks read no grades


@pytest.mark.parametrize(("name", "value", "allowed"), [
    ("grades_path", None, "must be a string"),
    ("grades_path", "/nonexistent/grades.jsonl", "names no file (tried /nonexistent/grades.jsonl)"),
    ("seed", -1, "at least 0"), ("seed", 1.5, "must be an integer"), ("seed", True, "must be an integer"),
    ("n_resamples", 10, "at least 100"), ("n_resamples", 2_000_000, "at most 1000000"),
    ("n_resamples", "2000", "must be an integer"),
    ("executor", "threads", "'local', 'dask-local' or 'dask://HOST:PORT'"), ("executor", 3, "must be a string"),
])
def test_bad_parameter_names_the_parameter_and_the_allowed_values(name: str, value: object, allowed: str) -> None:
    with pytest.raises(ParameterError) as caught:
        AUDIT.validate({**GOOD_PARAMS, name: value})
    assert caught.value.fields["field"] == name and repr(name) in str(caught.value)
    assert allowed in str(caught.value)


def test_good_parameters_pass_through(tmp_path: Path) -> None:
    assert AUDIT.validate(GOOD_PARAMS) == Params() == Params(**GOOD_PARAMS)
    grades = tmp_path / "grades.jsonl"
    grades.write_text('{"problem_id": 1, "model": "m", "grade": 7}\n', encoding="utf-8")
    assert AUDIT.validate({"grades_path": str(grades)}).grades_path == str(grades)


def test_reproducibility_counts_the_six_artefacts_the_paper_does_not_publish() -> None:
    check = checks_paper.reproducibility(SYNTHETIC, Params())
    assert check.status == "defect"
    assert check.observed == {"needed": 8, "public": 2, "missing": 6}
    assert check.summary.startswith("6 of 8 artefacts")
    by_status = {row["artefact"].split(" (")[0]: row["status"] for row in check.details}
    assert by_status["Table 2 scores"] == "available"
    assert by_status["example problem sort_concat_square_deduplicate"] == "available"
    for name in ("the other 49 problem statements", "reference solutions", "GPT-4 grading prompt"):
        assert by_status[name] == "defect"
    assert all("2306.11644" in row["citation"] for row in check.details)


def test_reproducibility_passes_once_every_artefact_is_public(monkeypatch: pytest.MonkeyPatch) -> None:
    published = tuple(dataclasses.replace(artefact, public=True) for artefact in checks_paper.ARTEFACTS)
    monkeypatch.setattr(checks_paper, "ARTEFACTS", published)
    check = checks_paper.reproducibility(SYNTHETIC, Params())
    assert check.status == "pass"
    assert check.observed == {"needed": 8, "public": 8, "missing": 0}
    assert {row["status"] for row in check.details} == {"available"}


def test_table2_analysis_reports_the_discordant_pair_and_n() -> None:
    check = checks_paper.table2_analysis(SYNTHETIC, Params())
    assert check.status == "quirk"  # StarCoder > phi-1-small on the score, < on HumanEval
    assert check.observed["discordant_pairs"] == 1 and check.observed["n_models"] == 7
    discordant = [row for row in check.details if row["row_kind"] == "pair_discordant"]
    assert [row["model"] for row in discordant] == ["StarCoder vs phi-1-small"]
    gaps = {row["model"]: row["gap_pct"] for row in check.details if row["row_kind"] == "model"}
    assert gaps == {"CodeGen-Mono-350M": 6, "CodeGen-Mono-16.1B": 9, "Replit": 15, "StarCoder": 17,
                    "phi-1-base": 8, "phi-1-small": 0, "phi-1": 1}
    assert "n = 7" in check.summary and "2306.11644v2" in check.summary
    # The finding says what is wrong before any statistic: which pair the two metrics order oppositely.
    assert check.finding == ("The LLM-graded score and HumanEval pass@1 rank 1 of Table 2's 21 model pairs "
                             "oppositely: StarCoder vs phi-1-small (score +6 points, HumanEval -11).")
    assert check.summary.startswith(check.finding + " 2 more pairs are tied on one of the two. Kendall tau-b = 0.85")


def _grade_file(tmp_path: Path, rows: list[dict]) -> str:
    path = tmp_path / "grades.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return str(path)


def test_grade_parsing_counts_and_lists_transcripts_without_grade(tmp_path: Path) -> None:
    grades = load_grade_set(_grade_file(tmp_path, [
        {"problem_id": "p1", "model": "m", "transcript": "Good.\nGrade: 8"},
        {"problem_id": "p2", "model": "m", "transcript": "Good.\nGrade: 6 or 7"},
        {"problem_id": "p3", "model": "m", "transcript": "Fine.\nGrade: 7.5"},
        {"problem_id": "p4", "model": "m", "grade": 5},
    ]), seed=0)
    check = checks_grades.grade_parsing(Inputs(grades), Params())
    assert check.status == "quirk" and not check.synthetic
    assert (check.observed["transcripts"], check.observed["graded"], check.observed["no_grade"],
            check.observed["fractional"]) == (3, 2, 1, 1)
    assert [(row["line"], row["outcome"]) for row in check.details] == [(2, "several_candidates"), (3, "labelled")]


def test_grade_parsing_skips_when_there_are_no_transcripts(tmp_path: Path) -> None:
    grades = load_grade_set(_grade_file(tmp_path, [{"problem_id": "p", "model": "m", "grade": 5}]), seed=0)
    check = checks_grades.grade_parsing(Inputs(grades), Params())
    assert check.status == "skipped" and check.meta["missing"] == ["param:grades_path"]


def test_score_aggregation_on_hand_computed_grades(tmp_path: Path) -> None:
    grades = load_grade_set(_grade_file(tmp_path, [
        {"problem_id": "p1", "model": "m", "grade": 8},
        {"problem_id": "p2", "model": "m", "grade": None},
        {"problem_id": "p3", "model": "m", "grade": 6},
    ]), seed=0)
    check = checks_grades.score_aggregation(Inputs(grades), Params(n_resamples=200))
    (row,) = [r for r in check.details if r["row_kind"] == "model_score"]
    assert (row["score_drop"], row["score_zero"]) == (70.0, 46.67)
    assert (row["bias_minus_one"], row["bias_plus_one"]) == (60.0, 80.0)
    assert check.status == "quirk"
    assert check.observed["choice_spread_pct_max"] == pytest.approx(70.0 - 140.0 / 3)
    worst = {r["model"]: r["worst_case_half_width_pct"] for r in check.details if r["row_kind"] == "table2_worst_case"}
    assert set(worst) == {r.model for r in TABLE2}
    close = [(r["model_a"], r["model_b"]) for r in check.details if r["row_kind"] == "table2_close_pair"]
    assert ("StarCoder", "phi-1") in close
    assert check.observed["table2_pairs_within_half_width"] == len(close)


def test_user_grades_compares_matching_models_with_table2(tmp_path: Path) -> None:
    rows = [{"problem_id": f"p{i}", "model": "phi-1", "grade": 5.2} for i in range(50)]
    rows += [{"problem_id": f"p{i}", "model": "StarCoder", "grade": 9} for i in range(50)]
    grades = load_grade_set(_grade_file(tmp_path, rows), seed=0)
    check = checks_grades.user_grades(Inputs(grades), Params(n_resamples=200))
    assert check.status == "quirk" and not check.synthetic
    assert check.observed["matched_table2"] == 2 and check.observed["outside_interval"] == ["StarCoder"]
    by_model = {r["model"]: r for r in check.details}
    assert by_model["phi-1"]["table2_inside_interval"] is True
    assert by_model["StarCoder"]["diff_drop_pct"] == pytest.approx(90.0 - 51.0)


def test_user_grades_with_no_usable_grade_is_a_quirk_not_a_pass(tmp_path: Path) -> None:
    grades = load_grade_set(_grade_file(tmp_path, [
        {"problem_id": "p1", "model": "phi-1", "grade": None},
        {"problem_id": "p2", "model": "phi-1", "transcript": "No grade given."},
    ]), seed=0)
    check = checks_grades.user_grades(Inputs(grades), Params(n_resamples=200))
    assert check.status == "quirk"
    assert check.observed["without_usable_grade"] == ["phi-1"] and check.observed["samples_without_grade"] == 2
    aggregation = checks_grades.score_aggregation(Inputs(grades), Params(n_resamples=200))
    assert aggregation.observed["bootstrap_width_pct"] == {}


def test_user_grades_on_the_synthetic_set_is_skipped_and_labelled(isolated_cache: Path) -> None:
    grades = load_grade_set("", seed=0)
    check = checks_grades.user_grades(Inputs(grades), Params(n_resamples=200))
    assert check.status == "skipped" and check.synthetic
    assert check.summary.startswith("SYNTHETIC")
    assert check.meta["missing"] == ["param:grades_path"]
    assert check.observed == {"models": 3, "matched_table2": 0}
    assert any(row["row_kind"] == "excluded_sample" for row in check.details)


def test_session_keeps_the_labelled_skip_and_the_synthetic_provenance(isolated_cache: Path) -> None:
    session = AUDIT.session({"n_resamples": 200})
    check = session.run("user_grades")
    assert check.status == "skipped" and check.meta["missing"] == ["param:grades_path"]
    assert [p["synthetic"] for p in session.builder.provenance] == [True]
    assert session.run("grade_parsing").synthetic and session.run("grade_parsing").status == "quirk"


def test_check_titles_match_the_declared_ones(isolated_cache: Path) -> None:
    session = AUDIT.session({"n_resamples": 200})
    for spec in AUDIT.check_specs(Params()):
        if spec.id != "example_ambiguity":  # sandboxed; its title is checked in the notebook run
            assert session.run(spec.id).title == spec.title


def test_notebook_runs_every_check_exactly_once() -> None:
    notebook = nbformat.read(AUDIT.notebook_path(), as_version=4)
    source = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code")
    assert [spec.id for spec in AUDIT.check_specs(Params())] == CHECK_IDS
    assert sorted(re.findall(r'report\.check\(audit, "([^"]+)"', source)) == sorted(CHECK_IDS)


def test_parameters_cell_is_the_params_dataclass() -> None:
    declared = [(p.name, p.default) for p in read_parameters(AUDIT.notebook_path())]
    assert declared == [(f.name, f.default) for f in dataclasses.fields(Params)]


def test_example_ambiguity_finds_disagreements_in_the_sandbox() -> None:
    check = checks_paper.example_ambiguity_from(seed=0, executor="local", n_generated=40)
    assert check.status == "quirk"
    assert check.observed["inputs"] == 40 + 7
    assert {row["reading"] for row in check.details} == set(check.observed["disagreement_with_literal"])


@pytest.mark.notebook
def test_notebook_end_to_end(tmp_path: Path, isolated_cache: Path) -> None:
    findings = execute_notebook("unconventional_problems", {"seed": 1, "n_resamples": 300}, tmp_path)
    assert [c["id"] for c in findings["checks"]] == CHECK_IDS
    titles = {spec.id: spec.title for spec in AUDIT.check_specs(Params())}
    assert {c["id"]: c["title"] for c in findings["checks"]} == titles
    assert findings["synthetic"] is True
    assert findings["params"] == {"grades_path": "", "seed": 1, "n_resamples": 300, "executor": "local"}
    statuses = {c["id"]: c["status"] for c in findings["checks"]}
    assert statuses["reproducibility"] == "defect" and statuses["user_grades"] == "skipped"
    (user_grades,) = [c for c in findings["checks"] if c["id"] == "user_grades"]
    assert user_grades["meta"]["missing"] == ["param:grades_path"] and user_grades["synthetic"]
    assert "error" not in statuses.values()
    assert all(c["synthetic"] for c in findings["checks"] if c["id"] in ("grade_parsing", "score_aggregation"))
    assert any(p["synthetic"] for p in findings["provenance"])
