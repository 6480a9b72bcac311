"""phi-1's 50 "unconventional" problems (arXiv 2306.11644v2, §4, Table 2) as an audit plugin.

The checks live in `checks_paper.py` (what was published) and `checks_grades.py` (graded samples); the grades
come from the user's `grades_path` file or, without one, from the seeded SYNTHETIC transcript set (`synthetic.py`),
labelled as such in every check that uses it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from audit_lib.benchmarks.unconventional.grades_path import missing_grades_file, resolve_grades_path
from audit_lib.errors import DataError
from audit_lib.plugin import AuditPlugin, CheckSpec, param

if TYPE_CHECKING:
    from audit_lib.benchmarks.unconventional.user_grades import GradeSet

NAME = "unconventional_problems"
MIN_RESAMPLES = 100
MAX_RESAMPLES = 1_000_000


def grades_file_problem(grades_path: str) -> str | None:
    """The `grades_path` rule: None for '' or a file whose every line reads as a grade, else what is wrong.

    What is wrong: the places tried, or the file, line and field of the first bad line."""
    missing = missing_grades_file(grades_path)
    if missing or not grades_path:
        return missing
    from audit_lib.benchmarks.unconventional.user_grades import load_grade_file  # parsing: imported when used

    try:
        load_grade_file(resolve_grades_path(grades_path))
    except (DataError, UnicodeDecodeError) as exc:
        return f"names a file that does not read as grades: {exc}"
    return None


@dataclass(frozen=True)
class Params:
    """The notebook's parameters cell."""

    grades_path: str = param("", "JSONL of grader output: problem_id, model, transcript or grade ('' = SYNTHETIC "
                                 "set)", rule=grades_file_problem, path=True)
    seed: int = param(0, "seed of the synthetic set, the bootstrap and the generated example inputs", minimum=0)
    n_resamples: int = param(2000, "bootstrap resamples over problems", minimum=MIN_RESAMPLES,
                             maximum=MAX_RESAMPLES)
    executor: str = param("local", "sandbox fan-out: 'local', 'dask-local' or 'dask://HOST:PORT'")


@dataclass(frozen=True)
class Inputs:
    """The graded samples: the user's file, or the seeded SYNTHETIC set. No registered file is read."""

    grades: GradeSet
    missing: Mapping[str, str] = field(default_factory=dict)

    @property
    def provenance(self) -> tuple[Any, ...]:
        return (self.grades.provenance,)


def load(params: Params) -> Inputs:
    from audit_lib.benchmarks.unconventional.user_grades import load_grade_set

    return Inputs(load_grade_set(params.grades_path, seed=params.seed))


AUDIT: AuditPlugin[Inputs, Params] = AuditPlugin(
    name=NAME,
    title="phi-1 unconventional problems",
    params=Params,
    load=load,
    checks=(
        CheckSpec("reproducibility", "Artefacts needed to reproduce the unconventional-problems score",
                  ".checks_paper:reproducibility"),
        CheckSpec("table2_analysis", "Table 2: LLM-graded score vs HumanEval pass@1 (rank correlation, gaps)",
                  ".checks_paper:table2_analysis"),
        CheckSpec("grade_parsing", "Grader transcripts: grade found, or typed reason why not",
                  ".checks_grades:grade_parsing"),
        CheckSpec("score_aggregation", "Score recipe: missing grades, bootstrap interval, grader bias and rounding",
                  ".checks_grades:score_aggregation"),
        CheckSpec("example_ambiguity", "Example problem: readings of the docstring disagree (sandboxed)",
                  ".checks_paper:example_ambiguity"),
        CheckSpec("user_grades", "Supplied grades: recomputed scores vs Table 2", ".checks_grades:user_grades"),
    ),
)

__all__ = ["AUDIT", "Inputs", "Params", "load"]
