"""Loading grader output: validation errors name file, line and field; the synthetic set covers every branch."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from audit_lib.benchmarks.unconventional import synthetic
from audit_lib.benchmarks.unconventional.grading import GRADE_FORMS, NO_GRADE_REASONS
from audit_lib.benchmarks.unconventional.user_grades import load_grade_file, load_grade_set, resolve_grades_path
from audit_lib.errors import CorruptFileError, ParameterError, SchemaError


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_rows_with_transcript_and_grade_fields(tmp_path: Path) -> None:
    path = _write(tmp_path / "g.jsonl", [
        json.dumps({"problem_id": "p1", "model": "m", "transcript": "Fine.\nGrade: 8"}),
        "",
        json.dumps({"problem_id": 2, "model": "m", "grade": 6}),
        json.dumps({"problem_id": "p3", "model": "m", "grade": None}),
    ])
    records = load_grade_file(path)
    assert [(r.line, r.problem_id, r.grade, r.outcome) for r in records] == [
        (1, "p1", 8.0, "labelled"), (3, "2", 6.0, "grade_field"), (4, "p3", None, "grade_null")]


@pytest.mark.parametrize(("row", "field"), [
    ({"model": "m", "grade": 1}, "problem_id"),
    ({"problem_id": "p", "grade": 1}, "model"),
    ({"problem_id": "p", "model": "", "grade": 1}, "model"),
    ({"problem_id": ["p"], "model": "m", "grade": 1}, "problem_id"),
    ({"problem_id": "p", "model": "m"}, "transcript"),
    ({"problem_id": "p", "model": "m", "grade": 1, "transcript": "Grade: 1"}, "transcript"),
    ({"problem_id": "p", "model": "m", "transcript": 7}, "transcript"),
    ({"problem_id": "p", "model": "m", "grade": "7"}, "grade"),
    ({"problem_id": "p", "model": "m", "grade": True}, "grade"),
    ({"problem_id": "p", "model": "m", "grade": 11}, "grade"),
])
def test_bad_row_names_file_line_and_field(tmp_path: Path, row: dict, field: str) -> None:
    path = _write(tmp_path / "g.jsonl", [json.dumps({"problem_id": "ok", "model": "m", "grade": 5}), "",
                                         json.dumps(row)])
    with pytest.raises(SchemaError) as caught:
        load_grade_file(path)
    assert caught.value.fields == {"file": str(path), "row": 3, "field": field}
    message = str(caught.value)
    assert str(path) in message and re.search(r"\b(line|row) 3\b", message) and field in message


def test_malformed_json_line_names_file_and_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "g.jsonl", [json.dumps({"problem_id": "p", "model": "m", "grade": 5}), "{not json"])
    with pytest.raises(CorruptFileError) as caught:
        load_grade_file(path)
    assert caught.value.fields["row"] == 2 and str(path) in str(caught.value)


def test_empty_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(SchemaError, match="no grade rows"):
        load_grade_file(_write(tmp_path / "g.jsonl", [""]))


def test_missing_grades_path_is_a_parameter_error(tmp_path: Path) -> None:
    with pytest.raises(ParameterError) as caught:
        resolve_grades_path(str(tmp_path / "absent.jsonl"))
    assert caught.value.fields["parameter"] == "grades_path"


def test_user_file_provenance_is_not_synthetic(tmp_path: Path) -> None:
    path = _write(tmp_path / "g.jsonl", [json.dumps({"problem_id": "p", "model": "m", "grade": 5})])
    grade_set = load_grade_set(str(path), seed=0)
    assert not grade_set.synthetic
    assert grade_set.provenance["source"] == "user" and len(grade_set.provenance["sha256"]) == 64


def test_synthetic_set_is_labelled_and_covers_every_branch(isolated_cache: Path) -> None:
    grade_set = load_grade_set("", seed=0)
    assert grade_set.synthetic and grade_set.provenance.synthetic and grade_set.provenance.source == "synthetic"
    assert all(model.startswith("synthetic-") for model in grade_set.models())
    assert all(r.problem_id.startswith("synthetic-") for r in grade_set.records)
    outcomes = {r.outcome for r in grade_set.records}
    assert outcomes >= set(GRADE_FORMS) | set(NO_GRADE_REASONS) | {"grade_field", "grade_null"}
    assert any(r.parsed is not None and r.parsed.is_fractional for r in grade_set.records)
    assert Path(grade_set.path).is_relative_to(isolated_cache)


def test_synthetic_rows_are_deterministic_per_seed() -> None:
    assert synthetic.generate_rows(3) == synthetic.generate_rows(3)
    assert synthetic.generate_rows(3) != synthetic.generate_rows(4)
    rows = synthetic.generate_rows(3)
    assert all(row["synthetic"] is True for row in rows)
    assert all(row["transcript"].startswith(synthetic.SYNTHETIC_MARK) for row in rows if "transcript" in row)


def test_synthetic_intended_grade_is_what_the_parser_reads_for_grade_forms() -> None:
    from audit_lib.benchmarks.unconventional.grading import parse_grade

    for row in synthetic.generate_rows(5):
        if row["synthetic_form"] in ("labelled", "labelled_ratio", "ratio_slash", "ratio_out_of", "bare_final",
                                     "inline_labelled"):
            assert parse_grade(row["transcript"]).grade == row["synthetic_intended_grade"]
