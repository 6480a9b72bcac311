"""pass@k over a user's tasks, the adjusted figure without flawed tasks, and the paired bootstrap, on hand-computed
cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from audit_lib.benchmarks.humaneval_plus.samples.estimates import (
    Estimate,
    Interval,
    TaskCounts,
    estimate,
    estimates_json,
    ks_for,
    mean_pass_at_k,
    percentile_interval,
    task_counts,
)
from audit_lib.benchmarks.humaneval_plus.samples.verdicts import PASSED, SampleVerdict, SplitVerdict

FAILED = SplitVerdict("fail", "deterministic", "wrong_value")


def test_pass_at_k_by_hand() -> None:
    counts = [TaskCounts("A", 2, 1), TaskCounts("B", 2, 2), TaskCounts("C", 4, 0)]
    # pass@1 = c/n per task: 1/2, 1, 0 -> 1/2
    assert mean_pass_at_k(counts, 1) == pytest.approx(0.5)
    # pass@2: A = 1 - C(1,2)/C(2,2) = 1; B = 1; C = 1 - C(4,2)/C(4,2) = 0 -> 2/3
    assert mean_pass_at_k(counts, 2) == pytest.approx(2 / 3)
    assert mean_pass_at_k(counts, 1, without={"B"}) == pytest.approx(0.25)
    assert mean_pass_at_k(counts, 1, without={"A", "B", "C"}) is None
    assert ks_for(counts) == (1,)  # k = 10 needs 10 samples of every task
    assert ks_for([TaskCounts("A", 10, 3)]) == (1, 10)


def test_task_counts_base_and_base_plus() -> None:
    verdicts = [SampleVerdict("A", 0, PASSED, PASSED), SampleVerdict("A", 1, PASSED, FAILED),
                SampleVerdict("B", 0, FAILED, PASSED)]
    assert task_counts(verdicts, plus=False) == [TaskCounts("A", 2, 2), TaskCounts("B", 1, 0)]
    assert task_counts(verdicts, plus=True) == [TaskCounts("A", 2, 1), TaskCounts("B", 1, 0)]


def test_bootstrap_of_identical_tasks_has_no_width() -> None:
    counts = [TaskCounts(f"T{i}", 1, 1) for i in range(5)]
    result = estimate(counts, 1, flawed={"T0"}, resamples=200, seed=3)
    assert (result.value, result.adjusted) == (1.0, 1.0)
    assert (result.interval.low, result.interval.high) == (1.0, 1.0)
    assert (result.difference_interval.low, result.difference_interval.high) == (0.0, 0.0)


def test_bootstrap_interval_matches_the_exact_resampling_distribution() -> None:
    """Two tasks, one solved: the resampled mean is 0, 1/2, 1/2, 1 with equal chance, so the 95 % percentile
    interval is [0, 1] and the resamples' mean tends to 1/2."""
    counts = [TaskCounts("A", 1, 1), TaskCounts("B", 1, 0)]
    result = estimate(counts, 1, flawed=(), resamples=20_000, seed=7)
    assert (result.interval.low, result.interval.high) == (0.0, 1.0)
    draws = np.random.default_rng(7).integers(0, 2, size=(20_000, 2))
    assert abs(draws.mean() - 0.5) < 0.01  # the generator the estimate uses, seeded the same way
    assert percentile_interval(np.array([0.0, 0.5, 0.5, 1.0]), 0.5).to_json() == [0.375, 0.625]


def test_adjusted_is_paired_with_the_full_figure() -> None:
    """Dropping a failed flawed task raises the figure; the paired difference's interval stays on one side of 0."""
    counts = [TaskCounts("A", 1, 1), TaskCounts("B", 1, 1), TaskCounts("C", 1, 0), TaskCounts("D", 1, 1)]
    result = estimate(counts, 1, flawed={"C"}, resamples=5000, seed=11)
    assert result.value == pytest.approx(0.75) and result.adjusted == pytest.approx(1.0)
    assert result.difference_interval.low >= 0.0 and result.difference_interval.high > 0.0
    # the same seed gives the same interval; another seed a different one on these draws
    again = estimate(counts, 1, flawed={"C"}, resamples=5000, seed=11)
    assert again.interval == result.interval


def test_every_task_flawed_leaves_no_adjusted_figure() -> None:
    result = estimate([TaskCounts("A", 1, 1)], 1, flawed={"A"}, resamples=100, seed=0)
    assert result.adjusted is None and result.adjusted_interval is None and not math.isnan(result.value)


def test_no_tasks_is_refused() -> None:
    with pytest.raises(ValueError, match="^pass@k of zero tasks is undefined$"):
        estimate([], 1, flawed=(), resamples=10, seed=0)


def test_no_tasks_have_no_k() -> None:
    assert ks_for([]) == ()


def spread_counts() -> list[TaskCounts]:
    return [TaskCounts(f"T{i}", 1, int(i % 3 != 0)) for i in range(12)]


def test_the_adjusted_interval_resamples_the_kept_tasks_of_each_draw_skipping_draws_of_flawed_tasks_only() -> None:
    """Counted draw by draw: a resample with one kept task still has an adjusted figure (that task's)."""
    counts = [TaskCounts("A", 1, 1), TaskCounts("B", 1, 0), TaskCounts("C", 1, 0)]
    flawed = {"B", "C"}
    result = estimate(counts, 1, flawed, resamples=400, seed=5)
    draws = np.random.default_rng(5).integers(0, 3, size=(400, 3))
    adjusted, differences = [], []
    for draw in draws:
        kept = [counts[i].passed for i in draw if counts[i].task_id not in flawed]
        if kept:
            adjusted.append(sum(kept) / len(kept))
            differences.append(adjusted[-1] - sum(counts[i].passed for i in draw) / 3)
    assert result.adjusted_interval == percentile_interval(np.array(adjusted))
    assert result.difference_interval == percentile_interval(np.array(differences))
    assert result.k == 1 and result.adjusted == 1.0


def test_the_seed_decides_the_draws() -> None:
    first = estimate(spread_counts(), 1, {"T1"}, resamples=50, seed=1)
    assert estimate(spread_counts(), 1, {"T1"}, resamples=50, seed=1) == first
    others = {estimate(spread_counts(), 1, {"T1"}, resamples=50, seed=seed).interval for seed in range(2, 12)}
    assert others - {first.interval}


def test_every_task_flawed_still_has_the_full_figures_interval() -> None:
    result = estimate([TaskCounts("A", 2, 1), TaskCounts("B", 2, 2)], 2, flawed={"A", "B"}, resamples=50, seed=0)
    assert result.k == 2 and result.interval == Interval(1.0, 1.0) and result.difference_interval is None


def test_estimates_json_names_each_figure_and_interval_by_k_rounded_to_six_places() -> None:
    full = Estimate(1, 0.1234567, 0.2345678, Interval(0.01234567, 0.9876543), Interval(0.1, 0.2),
                    Interval(-0.0000004, 0.5))
    none_left = Estimate(10, 0.5, None, Interval(0.25, 0.75), None, None)
    assert estimates_json({1: full, 10: none_left}) == {
        "pass@1": 0.123457, "pass@1_ci": [0.012346, 0.987654], "pass@1_adjusted": 0.234568,
        "pass@1_adjusted_ci": [0.1, 0.2], "pass@1_adjusted_minus_ci": [-0.0, 0.5],
        "pass@10": 0.5, "pass@10_ci": [0.25, 0.75], "pass@10_adjusted": None, "pass@10_adjusted_ci": None,
        "pass@10_adjusted_minus_ci": None}
