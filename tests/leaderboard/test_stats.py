"""The leaderboard statistics on cases small enough to compute by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as scipy_stats

from audit_lib.leaderboard.stats import (
    bootstrap_indices,
    competition_ranks,
    kendall_tau_b,
    noise_floor,
    paired_bootstrap,
    sign_test_p,
    task_strength_tau,
)


def test_kendall_tau_one_swap_of_four():
    # 6 pairs, one discordant (2 vs 3): (5 - 1) / 6
    assert kendall_tau_b([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(2 / 3)


def test_kendall_tau_b_with_ties_on_both_sides():
    # pairs: (0,1) tied in x, (1,2) tied in y, the other 4 concordant: 4 / sqrt(5 * 5)
    assert kendall_tau_b([1, 1, 2, 3], [1, 2, 2, 3]) == pytest.approx(0.8)
    assert kendall_tau_b([1, 1, 2, 3], [1, 2, 2, 3]) == pytest.approx(scipy_stats.kendalltau([1, 1, 2, 3],
                                                                                           [1, 2, 2, 3]).statistic)


def test_kendall_tau_reversed_and_constant():
    assert kendall_tau_b([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert math.isnan(kendall_tau_b([1, 1, 1], [1, 2, 3]))


def test_kendall_tau_agrees_with_scipy_on_random_ties():
    rng = np.random.default_rng(7)
    for _ in range(20):
        x, y = rng.integers(0, 4, 15), rng.integers(0, 3, 15)
        assert kendall_tau_b(x, y) == pytest.approx(scipy_stats.kendalltau(x, y).statistic)


def test_competition_ranks_share_the_best_rank():
    assert competition_ranks([0.5, 0.7, 0.7, 0.1]) == (3, 1, 1, 4)


@pytest.mark.parametrize(("wins_a", "wins_b", "expected"), [
    (6, 0, 2 / 2**6),            # 0.03125: significant
    (5, 0, 2 / 2**5),            # 0.0625: not
    (7, 1, 2 * (1 + 8) / 2**8),  # two-sided: 2 * P(X <= 1), X ~ Bin(8, 1/2)
    (3, 3, 1.0),
    (0, 0, 1.0),                 # no task tells them apart
])
def test_sign_test_p(wins_a, wins_b, expected):
    assert sign_test_p(wins_a, wins_b) == pytest.approx(expected)


def test_noise_floor_on_a_tiny_fixture():
    # A beats B on 6 tasks (p = 0.031), A beats C on 5 (p = 0.0625), C beats B on 1 (p = 1)
    outcomes = np.array([[1, 1, 1, 1, 1, 1, 0, 0, 0, 0],
                         [0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
                         [0, 0, 0, 0, 0, 1, 0, 0, 0, 0]], dtype=float)
    floor = noise_floor(["A", "B", "C"], outcomes)
    assert floor.p5_min == pytest.approx(0.6)   # the smallest significant difference
    assert floor.p5_max == pytest.approx(0.5)   # a larger gap than some significant ones can still be noise
    assert (floor.pairs, floor.significant_pairs, floor.tasks) == (3, 1, 10)


def test_noise_floor_without_a_significant_pair():
    floor = noise_floor(["A", "B"], np.array([[1, 0], [0, 1]], dtype=float))
    assert floor.p5_min is None and floor.p5_max == 0.0


def test_bootstrap_identical_models_never_differ():
    a = np.array([1, 0, 1, 1, 0], dtype=float)
    result = paired_bootstrap(a, a.copy(), bootstrap_indices(5, 500, seed=1), seed=1)
    assert (result.difference, result.ci_low, result.ci_high, result.p_value) == (0.0, 0.0, 0.0, 1.0)


def test_bootstrap_a_model_better_on_every_task():
    result = paired_bootstrap(np.ones(3), np.zeros(3), bootstrap_indices(3, 500, seed=1), seed=1)
    assert (result.difference, result.ci_low, result.ci_high, result.p_value) == (1.0, 1.0, 1.0, 0.0)
    assert result.significant


def test_bootstrap_matches_the_exact_resampling_distribution():
    # a = [1, 0], b = [0, 0]: the resampled difference is 0 with probability 1/4 (task 2 drawn twice), so the
    # two-sided p-value is 2 * 1/4 = 0.5 and the 95 % interval is [0, 1]
    result = paired_bootstrap(np.array([1.0, 0.0]), np.zeros(2), bootstrap_indices(2, 20_000, seed=3), seed=3)
    assert result.difference == 0.5
    assert result.p_value == pytest.approx(0.5, abs=0.03)  # 5 standard errors of 20,000 resamples
    assert (result.ci_low, result.ci_high) == (0.0, 1.0)


def test_bootstrap_is_reproducible_with_its_seed():
    a, b = np.array([1, 0, 1, 0, 1, 1, 0], dtype=float), np.array([0, 0, 1, 1, 0, 1, 0], dtype=float)
    first = paired_bootstrap(a, b, bootstrap_indices(7, 1000, seed=11), seed=11)
    again = paired_bootstrap(a, b, bootstrap_indices(7, 1000, seed=11), seed=11)
    other = paired_bootstrap(a, b, bootstrap_indices(7, 1000, seed=12), seed=12)
    assert first == again
    assert not np.array_equal(bootstrap_indices(7, 1000, seed=11), bootstrap_indices(7, 1000, seed=12))
    assert other.difference == first.difference


def test_bootstrap_refuses_an_empty_draw():
    with pytest.raises(ValueError):
        bootstrap_indices(0, 10, seed=1)


def test_task_strength_tau_flags_a_task_stronger_models_fail():
    strength = np.array([0.9, 0.6, 0.3])
    outcomes = np.array([[1, 0, 1], [1, 0, 0], [1, 1, 0]], dtype=float)  # task 1: only the weakest solves it
    taus = task_strength_tau(outcomes, strength)
    assert math.isnan(taus[0])  # every model solves it
    assert taus[1] < 0 < taus[2]
