"""The statistics of a leaderboard: rank correlation, ranks, eval-arena's noise floor and a paired bootstrap.

The noise floor replays eval-arena (crux-eval/eval-arena, `report_agg.py::fig_diff_vs_sum` and the `p5_min` column
of its summary page): every pair of distinct models is compared on the tasks exactly one of them solves (a "win" is
pass1 > 0 against pass1 == 0), the p-value is the exact two-sided binomial test of the wins against 1/2 (1 when there
is no win either way), and the noise floor is the smallest |pass@1 difference| = |wins_a - wins_b| / tasks among the
pairs with p < 0.05. `p5_max`, the largest difference among pairs with p > 0.05, is kept beside it as eval-arena does.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats as scipy_stats

SIGNIFICANCE = 0.05


def kendall_tau_b(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> float:
    """Kendall's tau-b (ties in either ranking accounted for); NaN when either side is constant."""
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"kendall_tau_b needs two vectors of one length, got {a.shape} and {b.shape}")
    upper = np.triu_indices(len(a), k=1)
    sign_a = np.sign(a[:, None] - a[None, :])[upper]
    sign_b = np.sign(b[:, None] - b[None, :])[upper]
    concordant_minus_discordant = float(np.sum(sign_a * sign_b))
    untied_a, untied_b = float(np.count_nonzero(sign_a)), float(np.count_nonzero(sign_b))
    if untied_a == 0 or untied_b == 0:
        return math.nan
    return concordant_minus_discordant / math.sqrt(untied_a * untied_b)


def competition_ranks(scores: Sequence[float] | np.ndarray) -> tuple[int, ...]:
    """1 for the best score; tied scores share the best of their ranks ("1, 2, 2, 4")."""
    values = np.asarray(scores, dtype=float)
    return tuple(int(np.sum(values > value)) + 1 for value in values)


def sign_test_p(wins_a: int, wins_b: int) -> float:
    """Exact two-sided binomial test of `wins_a` out of `wins_a + wins_b` against 1/2; 1.0 with no wins at all."""
    total = wins_a + wins_b
    return 1.0 if total == 0 else float(scipy_stats.binomtest(wins_a, total, p=0.5).pvalue)


@dataclass(frozen=True)
class PairComparison:
    """Two models on the same tasks: the tasks only one of them solves, and the sign test of those."""

    model_a: str
    model_b: str
    wins_a: int
    wins_b: int
    tasks: int
    p_value: float

    @property
    def difference(self) -> float:
        """pass@1(a) - pass@1(b) on 0/1 outcomes."""
        return (self.wins_a - self.wins_b) / self.tasks


@dataclass(frozen=True)
class NoiseFloor:
    """eval-arena's noise measures of one benchmark: `p5_min` is the noise floor."""

    p5_min: float | None        # smallest |difference| among pairs with p < 0.05 (None: no such pair)
    p5_max: float | None        # largest |difference| among pairs with p > 0.05 (None: no such pair)
    pairs: int
    significant_pairs: int
    tasks: int


def compare_pair(model_a: str, model_b: str, a: np.ndarray, b: np.ndarray) -> PairComparison:
    wins_a = int(np.sum((a > 0) & (b == 0)))
    wins_b = int(np.sum((a == 0) & (b > 0)))
    return PairComparison(model_a, model_b, wins_a, wins_b, len(a), sign_test_p(wins_a, wins_b))


def pair_comparisons(models: Sequence[str], outcomes: np.ndarray) -> list[PairComparison]:
    """Every unordered pair of distinct models (eval-arena compares both orders; the test is symmetric)."""
    return [compare_pair(models[i], models[j], outcomes[i], outcomes[j])
            for i, j in itertools.combinations(range(len(models)), 2)]


def noise_floor(models: Sequence[str], outcomes: np.ndarray, *, alpha: float = SIGNIFICANCE) -> NoiseFloor:
    """eval-arena's `p5_min` / `p5_max` over every pair of models (see the module docstring)."""
    pairs = pair_comparisons(models, outcomes)
    significant = [abs(pair.difference) for pair in pairs if pair.p_value < alpha]
    not_significant = [abs(pair.difference) for pair in pairs if pair.p_value > alpha]
    return NoiseFloor(min(significant) if significant else None, max(not_significant) if not_significant else None,
                      len(pairs), len(significant), outcomes.shape[1])


@dataclass(frozen=True)
class BootstrapDifference:
    """A paired bootstrap over tasks of pass@1(a) - pass@1(b).

    Holds the observed difference, a 95 % percentile interval and the two-sided p-value (twice the smaller share of resamples
    on either side of 0, at most 1).
    """

    difference: float
    ci_low: float
    ci_high: float
    p_value: float
    resamples: int
    seed: int

    @property
    def significant(self) -> bool:
        return self.p_value < SIGNIFICANCE


def bootstrap_indices(tasks: int, resamples: int, seed: int) -> np.ndarray:
    """`resamples` x `tasks` task indices drawn with replacement; one draw serves every pair (paired, reproducible)."""
    if tasks < 1 or resamples < 1:
        raise ValueError(f"a bootstrap needs at least one task and one resample, got {tasks} and {resamples}")
    return np.random.default_rng(seed).integers(0, tasks, size=(resamples, tasks))


def paired_bootstrap(a: np.ndarray, b: np.ndarray, indices: np.ndarray, *, seed: int) -> BootstrapDifference:
    """Resample tasks (rows of `indices`) and recompute the difference of the two models' means on each resample."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape or indices.shape[1] != len(a):
        raise ValueError(f"paired_bootstrap: outcomes {a.shape} / {b.shape} vs indices {indices.shape}")
    per_task = a - b
    resampled = per_task[indices].mean(axis=1)
    low, high = np.quantile(resampled, [0.025, 0.975])
    at_or_below, at_or_above = int(np.sum(resampled <= 0)), int(np.sum(resampled >= 0))
    p_value = min(1.0, 2 * min(at_or_below, at_or_above) / len(resampled))
    return BootstrapDifference(float(per_task.mean()), float(low), float(high), p_value, len(resampled), seed)


def task_strength_tau(outcomes: np.ndarray, model_pass_at_1: np.ndarray) -> np.ndarray:
    """Per task, Kendall's tau-b between the models' outcomes on it and their overall pass@1 (eval-arena's `tau`).

    NaN for a task every model solves or none does. A negative tau: stronger models solve it less often.
    """
    return np.array([kendall_tau_b(outcomes[:, j], model_pass_at_1) for j in range(outcomes.shape[1])])


__all__ = ["BootstrapDifference", "NoiseFloor", "PairComparison", "SIGNIFICANCE", "bootstrap_indices",
           "compare_pair", "competition_ranks", "kendall_tau_b", "noise_floor", "pair_comparisons",
           "paired_bootstrap", "sign_test_p", "task_strength_tau"]
