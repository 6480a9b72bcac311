"""The LLM-graded score recipe made explicit: mean grade x 10, missing grades, bootstrap interval, sensitivity.

The paper (arXiv 2306.11644v2, §4, Table 2) reports percentages without defining the aggregation; the reading
used here is the one the issue states: the mean over problems of the 0..10 grade, times 10. Each choice the
paper leaves open (a problem with no usable grade, several samples per problem, rounding) is a parameter.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy import stats

from audit_lib.benchmarks.unconventional.grading import GRADE_MAX, GRADE_MIN

MissingPolicy = Literal["drop", "zero"]
MISSING_POLICIES: tuple[str, ...] = ("drop", "zero")
Rounding = Literal["as_given", "half_up", "half_even", "floor", "ceil"]
ROUNDINGS: tuple[str, ...] = ("as_given", "half_up", "half_even", "floor", "ceil")
PERCENT_PER_GRADE_POINT = 10.0  # a grade of g/10 contributes 10*g percent


@dataclass(frozen=True)
class ProblemGrades:
    """One model's per-problem grades after a missing-grade policy (several samples are averaged)."""

    policy: MissingPolicy
    problem_ids: tuple[str, ...]
    grades: tuple[float, ...]
    dropped_problems: tuple[str, ...]
    missing_samples: int

    @property
    def n(self) -> int:
        return len(self.grades)


@dataclass(frozen=True)
class BootstrapInterval:
    """A percentile bootstrap interval for the score (percent), resampling problems with replacement."""

    point: float
    low: float
    high: float
    confidence: float
    n: int
    n_resamples: int
    seed: int

    @property
    def width(self) -> float:
        return self.high - self.low


@dataclass(frozen=True)
class ModelScoreSummary:
    """Every reading of one model's score: both missing-grade policies, the interval, bias and rounding."""

    model: str
    n_problems: int
    missing_samples: int
    dropped_problems: tuple[str, ...]
    score_drop: float | None
    score_zero: float | None
    interval: BootstrapInterval | None
    bias_minus_one: float | None
    bias_plus_one: float | None
    rounded: Mapping[str, float]

    @property
    def choice_spread(self) -> float:
        """Largest minus smallest score over the policy and rounding choices (bias excluded: it is an error)."""
        values = [v for v in (self.score_drop, self.score_zero, *self.rounded.values()) if v is not None]
        return max(values) - min(values) if values else 0.0


def per_problem_grades(grades_by_problem: Mapping[str, Sequence[float | None]],
                       policy: MissingPolicy) -> ProblemGrades:
    """Apply the missing-grade policy to each sample, then average each problem's samples."""
    if policy not in MISSING_POLICIES:
        raise ValueError(f"missing-grade policy {policy!r} is not one of {MISSING_POLICIES}")
    problem_ids: list[str] = []
    grades: list[float] = []
    dropped: list[str] = []
    missing = 0
    for problem_id in sorted(grades_by_problem):
        samples = list(grades_by_problem[problem_id])
        missing += sum(1 for g in samples if g is None)
        usable = [float(g) if g is not None else 0.0 for g in samples] if policy == "zero" \
            else [float(g) for g in samples if g is not None]
        if not usable:
            dropped.append(problem_id)
            continue
        problem_ids.append(problem_id)
        grades.append(sum(usable) / len(usable))
    return ProblemGrades(policy, tuple(problem_ids), tuple(grades), tuple(dropped), missing)


def score_percent(grades: Sequence[float]) -> float:
    """Mean grade x 10: the Table 2 percentage under the issue's reading of the recipe."""
    if len(grades) == 0:
        raise ValueError("no grades to score")
    return PERCENT_PER_GRADE_POINT * float(np.mean(np.asarray(grades, dtype=float)))


def bootstrap_interval(grades: Sequence[float], *, seed: int, n_resamples: int,
                       confidence: float = 0.95) -> BootstrapInterval:
    """Percentile bootstrap over problems with a seeded numpy Generator: same seed, same interval."""
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    values = np.asarray(grades, dtype=float)
    if values.size == 0:
        raise ValueError("no grades to resample")
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, values.size, size=(n_resamples, values.size))
    resampled_scores = PERCENT_PER_GRADE_POINT * values[picks].mean(axis=1)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(resampled_scores, [tail, 1.0 - tail])
    return BootstrapInterval(point=score_percent(values), low=float(low), high=float(high), confidence=confidence,
                             n=int(values.size), n_resamples=n_resamples, seed=seed)


def shifted_score(grades: Sequence[float], delta: float) -> float:
    """The score if the grader were off by a constant `delta`, clipped to the 0..10 scale as a grader would be."""
    values = np.clip(np.asarray(grades, dtype=float) + delta, GRADE_MIN, GRADE_MAX)
    return score_percent(values)


def rounded_grades(grades: Sequence[float], rounding: Rounding) -> np.ndarray:
    values = np.asarray(grades, dtype=float)
    if rounding == "as_given":
        return values
    if rounding == "half_up":
        return np.floor(values + 0.5)
    if rounding == "half_even":
        return np.round(values)
    if rounding == "floor":
        return np.floor(values)
    if rounding == "ceil":
        return np.ceil(values)
    raise ValueError(f"rounding {rounding!r} is not one of {ROUNDINGS}")


def worst_case_half_width(score_pct: float, n: int, confidence: float = 0.95) -> float:
    """Normal-approximation half-width (percent) using the largest variance a 0..10 grade with this mean can have.

    Bhatia-Davis: a variable on [a, b] with mean mu has variance at most (b - mu)(mu - a). Real grades that
    cluster give narrower intervals; this is the bound when nothing about the grades is known.
    """
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    mean_grade = score_pct / PERCENT_PER_GRADE_POINT
    variance_bound = max(0.0, (GRADE_MAX - mean_grade) * (mean_grade - GRADE_MIN))
    z = float(stats.norm.ppf(0.5 + confidence / 2.0))
    return z * PERCENT_PER_GRADE_POINT * math.sqrt(variance_bound / n)


def summarise_model(model: str, grades_by_problem: Mapping[str, Sequence[float | None]], *, seed: int,
                    n_resamples: int, confidence: float = 0.95) -> ModelScoreSummary:
    """Both policies; the interval, bias and rounding are computed on the `drop` per-problem grades."""
    dropped = per_problem_grades(grades_by_problem, "drop")
    zeroed = per_problem_grades(grades_by_problem, "zero")
    if dropped.n == 0:
        return ModelScoreSummary(model, len(grades_by_problem), dropped.missing_samples, dropped.dropped_problems,
                                 None, score_percent(zeroed.grades) if zeroed.n else None, None, None, None, {})
    return ModelScoreSummary(
        model=model,
        n_problems=len(grades_by_problem),
        missing_samples=dropped.missing_samples,
        dropped_problems=dropped.dropped_problems,
        score_drop=score_percent(dropped.grades),
        score_zero=score_percent(zeroed.grades),
        interval=bootstrap_interval(dropped.grades, seed=seed, n_resamples=n_resamples, confidence=confidence),
        bias_minus_one=shifted_score(dropped.grades, -1.0),
        bias_plus_one=shifted_score(dropped.grades, +1.0),
        rounded={name: score_percent(rounded_grades(dropped.grades, name)) for name in ROUNDINGS},
    )
