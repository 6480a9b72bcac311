"""SYNTHETIC grader transcripts for phi-1's unconventional problems (the real ones were never released).

Everything here is invented: models are named `synthetic-*`, problems `synthetic-P..`, every transcript starts
with `[SYNTHETIC]` and every row carries `"synthetic": true`. The set has the schema `user_grades` reads
(`problem_id`, `model`, `transcript` or `grade`) and, by construction, exercises every branch of the grade parser
and of the loader (transcript rows, numeric `grade` rows, `grade: null` rows).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from audit_lib import paths
from audit_lib.atomic_files import atomic_output

GENERATOR_NAME = "audit_lib.benchmarks.unconventional.synthetic"
SYNTHETIC_MARK = "[SYNTHETIC]"
DEFAULT_MODELS: tuple[tuple[str, float], ...] = (("synthetic-A", 6.0), ("synthetic-B", 4.5), ("synthetic-C", 3.0))
DEFAULT_PROBLEMS = 50

_VERBAL = (
    "The candidate sorts both lists and concatenates them, matching the reference.",
    "The candidate squares the entries at indices {a} and {b} but forgets to remove duplicates.",
    "It handles {a} of the {b} steps the reference performs; the threshold comparison differs.",
    "The solution is close to the reference but returns the list in a different order.",
    "The approach is correct in spirit, though the edge case of an empty list is not handled.",
)

# Each form renders a transcript ending from the intended grade `g`; the name is the parser branch it exercises.
_GRADE_ENDINGS: dict[str, str] = {
    "labelled": "Grade: {g:d}",
    "labelled_fractional": "Grade: {g:d}.5",
    "labelled_ratio": "**Final grade:** {g:d}/10",
    "inline_labelled": "Overall I would give it a grade of {g:d}.",
    "ratio_slash": "{g:d}/10",
    "ratio_out_of": "I would rate this {g:d} out of 10.",
    "bare_final": "{g:d}",
    "several_candidates": "Grade: {g:d} or {g_next:d}",
    "out_of_range": "Grade: {g_over:d}",
    "wrong_scale": "Rating: {g_half:d}/5",
    "label_without_number": "Grade: N/A (the reference solution was not shown)",
    "verbal_numbers_only": "",
    "no_number": "",
}
_NO_NUMBER_TEXT = "The candidate reads the task differently from the reference; no grade is given."
# Forms besides `labelled` are rarer in the random part, as in real transcripts where most follow the prompt.
_RANDOM_FORM_WEIGHTS: dict[str, float] = {
    "labelled": 0.60, "labelled_fractional": 0.05, "labelled_ratio": 0.08, "inline_labelled": 0.05,
    "ratio_slash": 0.05, "ratio_out_of": 0.05, "bare_final": 0.04, "several_candidates": 0.02,
    "out_of_range": 0.01, "wrong_scale": 0.01, "label_without_number": 0.01, "verbal_numbers_only": 0.01,
    "no_number": 0.01,
}
LOADER_FORMS: tuple[str, ...] = ("grade_field", "grade_null")
ALL_FORMS: tuple[str, ...] = tuple(_GRADE_ENDINGS) + LOADER_FORMS
_GRADE_FIELD_SHARE = 0.05


def generate_rows(seed: int, *, models: Sequence[tuple[str, float]] = DEFAULT_MODELS,
                  n_problems: int = DEFAULT_PROBLEMS) -> list[dict[str, Any]]:
    """Rows for every (model, problem): evenly spaced rows cover every form once, the others are drawn at random."""
    rng = np.random.default_rng(seed)
    total = len(models) * n_problems
    if total < len(ALL_FORMS):
        raise ValueError(f"{total} rows cannot cover the {len(ALL_FORMS)} forms; use more problems or models")
    forced = {int(position): form for position, form in
              zip(np.linspace(0, total - 1, len(ALL_FORMS)).round().astype(int), ALL_FORMS)}
    difficulty = rng.normal(0.0, 1.5, size=n_problems)
    forms = list(_RANDOM_FORM_WEIGHTS)
    weights = np.array([_RANDOM_FORM_WEIGHTS[f] for f in forms])
    weights = weights / weights.sum()
    rows: list[dict[str, Any]] = []
    for model, skill in models:
        for problem in range(n_problems):
            intended = int(np.clip(round(skill + difficulty[problem] + rng.normal(0.0, 1.5)), 0, 9))
            index = len(rows)
            if index in forced:
                form = forced[index]
            elif rng.random() < _GRADE_FIELD_SHARE:
                form = "grade_field"
            else:
                form = str(rng.choice(forms, p=weights))
            row: dict[str, Any] = {"problem_id": f"synthetic-P{problem + 1:02d}", "model": model,
                                   "synthetic": True, "synthetic_form": form, "synthetic_intended_grade": intended}
            if form == "grade_field":
                row["grade"] = intended
            elif form == "grade_null":
                row["grade"] = None
            else:
                row["transcript"] = _transcript(form, intended, rng)
            rows.append(row)
    return rows


def write_rows(path: str | os.PathLike[str], rows: Sequence[dict[str, Any]]) -> Path:
    """Write rows as JSON lines atomically."""
    target = Path(path)
    with atomic_output(target, "w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row, sort_keys=True) + "\n")
    return target


def synthetic_file_name(seed: int) -> str:
    return f"synthetic/grades-seed{seed}.jsonl"


def ensure_synthetic_grades(seed: int, directory: str | os.PathLike[str] | None = None) -> Path:
    """Write the seeded set under `data_cache/unconventional/` (or `directory`) and return its path."""
    base = Path(directory) if directory is not None else paths.data_cache_dir() / "unconventional"
    return write_rows(base / synthetic_file_name(seed), generate_rows(seed))


def _transcript(form: str, intended: int, rng: np.random.Generator) -> str:
    verbal_template = _VERBAL[int(rng.integers(0, len(_VERBAL)))]
    if form == "verbal_numbers_only":
        verbal_template = _VERBAL[1]
    if form == "no_number":
        return f"{SYNTHETIC_MARK} {_NO_NUMBER_TEXT}"
    verbal = verbal_template.format(a=int(rng.integers(0, 4)) * 2, b=int(rng.integers(4, 9)))
    if form == "verbal_numbers_only":
        return f"{SYNTHETIC_MARK} {verbal}"
    ending = _GRADE_ENDINGS[form].format(g=intended, g_next=intended + 1, g_over=intended + 11,
                                         g_half=max(0, min(5, intended // 2)))
    return f"{SYNTHETIC_MARK} {verbal}\n{ending}"
