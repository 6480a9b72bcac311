"""phi-1's 50 "unconventional" problems (arXiv 2306.11644v2, §4, Table 2) as an audit plugin.

The checks live in `checks.py`; the grades come from the user's `grades_path` file or, without one, from the
seeded SYNTHETIC transcript set (`synthetic.py`), labelled as such in every check that uses it. This module stays
light to import.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from audit_lib.benchmarks.unconventional.grades_path import missing_grades_file
from audit_lib.findings import Check
from audit_lib.plugin import AuditPlugin, CheckSpec, param

if TYPE_CHECKING:
    from audit_lib.benchmarks.unconventional.user_grades import GradeSet

NAME = "unconventional_problems"
MIN_RESAMPLES = 100
MAX_RESAMPLES = 1_000_000


@dataclass(frozen=True)
class Params:
    """The notebook's parameters cell."""

    grades_path: str = param("", "JSONL of grader output: problem_id, model, transcript or grade ('' = SYNTHETIC "
                                 "set)", rule=missing_grades_file)
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


# ---------------------------------------------------------------------------------------------- checks
# The check module imports numpy/scipy, so each adapter imports it when it runs.


def _reproducibility(inputs: Inputs, params: Params) -> Check:
    from audit_lib.benchmarks.unconventional.checks import check_reproducibility

    return check_reproducibility()


def _table2_analysis(inputs: Inputs, params: Params) -> Check:
    from audit_lib.benchmarks.unconventional.checks import check_table2_analysis

    return check_table2_analysis()


def _grade_parsing(inputs: Inputs, params: Params) -> Check:
    from audit_lib.benchmarks.unconventional.checks import check_grade_parsing

    return check_grade_parsing(inputs.grades)


def _score_aggregation(inputs: Inputs, params: Params) -> Check:
    from audit_lib.benchmarks.unconventional.checks import check_score_aggregation

    return check_score_aggregation(inputs.grades, seed=params.seed, n_resamples=params.n_resamples)


def _example_ambiguity(inputs: Inputs, params: Params) -> Check:
    from audit_lib.benchmarks.unconventional.checks import check_example_ambiguity

    return check_example_ambiguity(seed=params.seed, executor=params.executor)


def _user_grades(inputs: Inputs, params: Params) -> Check:
    from audit_lib.benchmarks.unconventional.checks import check_user_grades

    return check_user_grades(inputs.grades, seed=params.seed, n_resamples=params.n_resamples)


AUDIT: AuditPlugin[Inputs, Params] = AuditPlugin(
    name=NAME,
    title="phi-1 unconventional problems",
    params=Params,
    load=load,
    checks=(
        CheckSpec("reproducibility", "Artefacts needed to reproduce the unconventional-problems score",
                  _reproducibility),
        CheckSpec("table2_analysis", "Table 2: LLM-graded score vs HumanEval pass@1 (rank correlation, gaps)",
                  _table2_analysis),
        CheckSpec("grade_parsing", "Grader transcripts: grade found, or typed reason why not", _grade_parsing),
        CheckSpec("score_aggregation", "Score recipe: missing grades, bootstrap interval, grader bias and rounding",
                  _score_aggregation),
        CheckSpec("example_ambiguity", "Example problem: readings of the docstring disagree (sandboxed)",
                  _example_ambiguity),
        CheckSpec("user_grades", "Supplied grades: recomputed scores vs Table 2", _user_grades),
    ),
)

__all__ = ["AUDIT", "Inputs", "Params", "load"]
