"""Load grader output for the unconventional problems: a user's JSONL file, or the seeded SYNTHETIC set.

Each line: `problem_id` (string or integer), `model` (string), and either `transcript` (the grader's text, parsed
here) or `grade` (a number in 0..10, or null for a grade the grader never gave). Bad lines raise an error that
names the file, the 1-based line and the field.
"""

from __future__ import annotations

import math
import os
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from audit_lib.benchmarks.unconventional import synthetic as synthetic_grades
from audit_lib.benchmarks.unconventional.grades_path import resolve_grades_path
from audit_lib.benchmarks.unconventional.grading import GRADE_MAX, GRADE_MIN, ParsedGrade, parse_grade
from audit_lib.data import readers
from audit_lib.data.fetch import sha256_of, synthetic_provenance
from audit_lib.errors import SchemaError

DATASET = "unconventional"
GradeOrigin = Literal["transcript", "grade_field"]

__all__ = ["GradeRecord", "GradeSet", "load_grade_file", "load_grade_set", "resolve_grades_path"]


@dataclass(frozen=True)
class GradeRecord:
    """One graded sample: where it came from (file line) and its grade, or None with the parser's reason."""

    line: int
    problem_id: str
    model: str
    grade: float | None
    origin: GradeOrigin
    parsed: ParsedGrade | None

    @property
    def outcome(self) -> str:
        if self.parsed is not None:
            return self.parsed.outcome
        return "grade_field" if self.grade is not None else "grade_null"


@dataclass(frozen=True)
class GradeSet:
    """All graded samples of one file, with its provenance and whether it is synthetic."""

    path: str
    records: tuple[GradeRecord, ...]
    synthetic: bool
    provenance: Any

    def models(self) -> tuple[str, ...]:
        return tuple(sorted({r.model for r in self.records}))

    def grades_by_problem(self, model: str) -> dict[str, list[float | None]]:
        grouped: dict[str, list[float | None]] = defaultdict(list)
        for record in self.records:
            if record.model == model:
                grouped[record.problem_id].append(record.grade)
        return dict(grouped)

    def transcripts(self) -> tuple[GradeRecord, ...]:
        return tuple(r for r in self.records if r.origin == "transcript")


def load_grade_file(path: str | os.PathLike[str]) -> tuple[GradeRecord, ...]:
    """Read and validate every line; the first bad line raises `SchemaError`/`CorruptFileError` with file/line/field."""
    name = os.fspath(path)
    with readers.open_text(path) as handle:
        line_numbers = [number for number, text in enumerate(handle, start=1) if text.strip()]
    records = []
    for line_number, row in zip(line_numbers, readers.iter_jsonl(path, required=("problem_id", "model"))):
        records.append(_record(row, file=name, line=line_number))
    if not records:
        raise SchemaError(f"{name}: the file has no grade rows", file=name, row=None, field=None)
    return tuple(records)


def load_grade_set(grades_path: str, *, seed: int) -> GradeSet:
    """The user's file when `grades_path` is given, else the seeded synthetic set (written to the data cache)."""
    if grades_path:
        path = resolve_grades_path(grades_path)
        records = load_grade_file(path)
        synthetic = _rows_say_synthetic(path)
        provenance = {"dataset": DATASET, "file": path.name, "source": "user", "location": str(path),
                      "sha256": sha256_of(path), "pinned": False, "synthetic": synthetic,
                      "upstream": "supplied by the user (grades_path); the real grades were never published",
                      "licence": "as supplied", "note": "user-supplied grader output"}
        return GradeSet(str(path), records, synthetic, provenance)
    path = synthetic_grades.ensure_synthetic_grades(seed)
    provenance = synthetic_provenance(DATASET, synthetic_grades.synthetic_file_name(seed),
                                      generator=synthetic_grades.GENERATOR_NAME, seed=seed, path=path)
    return GradeSet(str(path), load_grade_file(path), True, provenance)


def _record(row: Mapping[str, Any], *, file: str, line: int) -> GradeRecord:
    problem_id = row["problem_id"]
    if isinstance(problem_id, bool) or not isinstance(problem_id, (str, int)) or str(problem_id).strip() == "":
        _bad(file, line, "problem_id", f"must be a non-empty string or an integer, got {problem_id!r}")
    model = row["model"]
    if not isinstance(model, str) or not model.strip():
        _bad(file, line, "model", f"must be a non-empty string, got {model!r}")
    has_transcript, has_grade = "transcript" in row, "grade" in row
    if has_transcript == has_grade:
        which = "both 'transcript' and 'grade'" if has_transcript else "neither 'transcript' nor 'grade'"
        _bad(file, line, "transcript", f"has {which}; give exactly one of them")
    if has_transcript:
        transcript = row["transcript"]
        if not isinstance(transcript, str):
            _bad(file, line, "transcript", f"must be a string, got {type(transcript).__name__}")
        parsed = parse_grade(transcript)
        return GradeRecord(line, str(problem_id), model, parsed.grade, "transcript", parsed)
    grade = row["grade"]
    if grade is not None:
        if isinstance(grade, bool) or not isinstance(grade, (int, float)) or not math.isfinite(grade):
            _bad(file, line, "grade", f"must be a number in {GRADE_MIN:g}..{GRADE_MAX:g} or null, got {grade!r}")
        if not GRADE_MIN <= grade <= GRADE_MAX:
            _bad(file, line, "grade", f"{grade!r} is outside {GRADE_MIN:g}..{GRADE_MAX:g}")
        grade = float(grade)
    return GradeRecord(line, str(problem_id), model, grade, "grade_field", None)


def _bad(file: str, line: int, field: str, problem: str) -> None:
    raise SchemaError(f"{file}, line {line}: field {field!r} {problem}", file=file, row=line, field=field)


def _rows_say_synthetic(path: Path) -> bool:
    return any(row.get("synthetic") is True for row in readers.iter_jsonl(path))
