"""The score recipe on hand-computed cases, and the bootstrap's reproducibility."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from audit_lib.benchmarks.unconventional import scoring


def test_missing_grade_dropped_vs_zero() -> None:
    grades = {"p1": [8.0], "p2": [None], "p3": [6.0]}
    dropped = scoring.per_problem_grades(grades, "drop")
    zeroed = scoring.per_problem_grades(grades, "zero")
    assert dropped.grades == (8.0, 6.0) and dropped.dropped_problems == ("p2",)
    assert scoring.score_percent(dropped.grades) == pytest.approx(70.0)  # (8 + 6) / 2 * 10
    assert zeroed.grades == (8.0, 0.0, 6.0) and zeroed.dropped_problems == ()
    assert scoring.score_percent(zeroed.grades) == pytest.approx(140.0 / 3)  # (8 + 0 + 6) / 3 * 10
    assert dropped.missing_samples == zeroed.missing_samples == 1


def test_several_samples_per_problem_are_averaged_after_the_policy() -> None:
    grades = {"p1": [10.0, None], "p2": [4.0]}
    assert scoring.score_percent(scoring.per_problem_grades(grades, "drop").grades) == pytest.approx(70.0)
    assert scoring.score_percent(scoring.per_problem_grades(grades, "zero").grades) == pytest.approx(45.0)


def test_unknown_policy_is_rejected() -> None:
    with pytest.raises(ValueError, match="policy"):
        scoring.per_problem_grades({"p1": [1.0]}, "mean")  # type: ignore[arg-type]


def test_constant_bias_is_clipped_to_the_scale() -> None:
    grades = [9.5, 0.5, 5.0]
    assert scoring.shifted_score(grades, +1.0) == pytest.approx((10 + 1.5 + 6) / 3 * 10)
    assert scoring.shifted_score(grades, -1.0) == pytest.approx((8.5 + 0 + 4) / 3 * 10)


@pytest.mark.parametrize(("rounding", "expected"), [
    ("as_given", (7.5 + 6.5 + 2.4) / 3 * 10),
    ("half_up", (8 + 7 + 2) / 3 * 10),
    ("half_even", (8 + 6 + 2) / 3 * 10),
    ("floor", (7 + 6 + 2) / 3 * 10),
    ("ceil", (8 + 7 + 3) / 3 * 10),
])
def test_rounding_variants(rounding: str, expected: float) -> None:
    assert scoring.score_percent(scoring.rounded_grades([7.5, 6.5, 2.4], rounding)) == pytest.approx(expected)


def test_bootstrap_is_reproducible_with_a_seed_and_changes_with_it() -> None:
    grades = list(np.random.default_rng(7).integers(0, 11, size=50).astype(float))
    first = scoring.bootstrap_interval(grades, seed=3, n_resamples=500)
    again = scoring.bootstrap_interval(grades, seed=3, n_resamples=500)
    other = scoring.bootstrap_interval(grades, seed=4, n_resamples=500)
    assert first == again
    assert (first.low, first.high) != (other.low, other.high)
    assert first.low <= first.point <= first.high
    assert first.point == pytest.approx(np.mean(grades) * 10)


def test_bootstrap_of_two_extreme_grades_spans_the_whole_scale() -> None:
    # Resampled means of [0, 10] are 0, 50, 100 with probabilities 1/4, 1/2, 1/4: the 2.5% and 97.5% quantiles
    # are 0 and 100.
    interval = scoring.bootstrap_interval([0.0, 10.0], seed=0, n_resamples=4000)
    assert (interval.low, interval.high) == (0.0, 100.0)


def test_bootstrap_of_identical_grades_has_zero_width() -> None:
    interval = scoring.bootstrap_interval([7.0] * 50, seed=0, n_resamples=200)
    assert (interval.low, interval.high, interval.width) == (70.0, 70.0, 0.0)


def test_bootstrap_agrees_with_scipy_percentile_bootstrap() -> None:
    grades = np.random.default_rng(11).integers(0, 11, size=50).astype(float)
    ours = scoring.bootstrap_interval(list(grades), seed=1, n_resamples=20000)
    theirs = stats.bootstrap((grades * 10,), np.mean, n_resamples=20000, method="percentile",
                             random_state=np.random.default_rng(2)).confidence_interval
    assert ours.low == pytest.approx(theirs.low, abs=1.0)
    assert ours.high == pytest.approx(theirs.high, abs=1.0)


def test_bootstrap_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError):
        scoring.bootstrap_interval([], seed=0, n_resamples=10)
    with pytest.raises(ValueError):
        scoring.bootstrap_interval([1.0], seed=0, n_resamples=0)


def test_worst_case_half_width_hand_computed() -> None:
    # mean grade 5 -> variance bound 5 * 5 = 25; SE of the score = 10 * sqrt(25 / 50); z(0.975) = 1.959964
    assert scoring.worst_case_half_width(50.0, 50) == pytest.approx(1.959964 * 10 * (25 / 50) ** 0.5, rel=1e-6)
    assert scoring.worst_case_half_width(0.0, 50) == 0.0
    assert scoring.worst_case_half_width(100.0, 50) == 0.0


def test_summary_reports_every_choice() -> None:
    summary = scoring.summarise_model("m", {"p1": [7.5], "p2": [None], "p3": [2.5]}, seed=0, n_resamples=200)
    assert summary.score_drop == pytest.approx(50.0)
    assert summary.score_zero == pytest.approx(100.0 / 3)
    assert summary.rounded["half_up"] == pytest.approx(55.0)  # 8 and 3
    assert summary.rounded["half_even"] == pytest.approx(50.0)  # 8 and 2
    assert summary.choice_spread == pytest.approx(55.0 - 100.0 / 3)
    assert summary.dropped_problems == ("p2",)


def test_summary_when_no_grade_is_usable() -> None:
    summary = scoring.summarise_model("m", {"p1": [None]}, seed=0, n_resamples=200)
    assert summary.score_drop is None and summary.interval is None
    assert summary.score_zero == 0.0


def test_every_field_of_a_model_summary() -> None:
    grades = {"p3": [6.0, 7.0], "p1": [8.0, None], "p2": [None]}
    assert scoring.per_problem_grades(grades, "drop") == scoring.ProblemGrades("drop", ("p1", "p3"), (8.0, 6.5),
                                                                               ("p2",), 2)
    summary = scoring.summarise_model("m", grades, seed=3, n_resamples=50, confidence=0.9)
    assert summary == scoring.ModelScoreSummary(
        model="m", n_problems=3, missing_samples=2, dropped_problems=("p2",), score_drop=72.5,
        score_zero=pytest.approx(35.0), interval=scoring.bootstrap_interval((8.0, 6.5), seed=3, n_resamples=50,
                                                                            confidence=0.9),
        bias_minus_one=62.5, bias_plus_one=82.5,
        rounded={"as_given": 72.5, "half_up": 75.0, "half_even": 70.0, "floor": 70.0, "ceil": 75.0})
    assert (summary.interval.n, summary.interval.seed, summary.interval.confidence) == (2, 3, 0.9)


def test_a_model_without_any_grade_has_no_interval_and_an_empty_one_no_score() -> None:
    assert scoring.summarise_model("m", {"p": [None]}, seed=0, n_resamples=10) == scoring.ModelScoreSummary(
        "m", 1, 1, ("p",), None, 0.0, None, None, None, {})
    assert scoring.summarise_model("m", {}, seed=0, n_resamples=10).score_zero is None


def test_the_interval_is_the_percentile_bootstrap_of_its_seed() -> None:
    grades = np.array([2.0, 9.0, 5.0, 7.0, 3.0])
    interval = scoring.bootstrap_interval(grades, seed=11, n_resamples=400, confidence=0.8)
    picks = np.random.default_rng(11).integers(0, 5, size=(400, 5))
    low, high = np.quantile(10.0 * grades[picks].mean(axis=1), [0.1, 0.9])
    assert (interval.low, interval.high, interval.n_resamples) == (pytest.approx(low), pytest.approx(high), 400)
    one = scoring.bootstrap_interval([5.0], seed=0, n_resamples=1)  # the smallest that is allowed
    assert (one.low, one.point, one.high, one.n) == (50.0, 50.0, 50.0, 1)
    with pytest.raises(ValueError, match="n_resamples must be >= 1, got 0"):
        scoring.bootstrap_interval([5.0], seed=0, n_resamples=0)
    with pytest.raises(ValueError, match="no grades to resample"):
        scoring.bootstrap_interval([], seed=0, n_resamples=5)
    with pytest.raises(ValueError, match="no grades to score"):
        scoring.score_percent([])
    with pytest.raises(ValueError, match="rounding 'up' is not one of"):
        scoring.rounded_grades([1.0], "up")  # type: ignore[arg-type]


def test_one_problem_has_a_half_width_and_none_is_refused() -> None:
    assert scoring.worst_case_half_width(50.0, 1) > 0
    with pytest.raises(ValueError, match="n must be >= 1, got 0"):
        scoring.worst_case_half_width(50.0, 0)
