"""Table 2 of phi-1's paper as published, and its rank comparison with HumanEval pass@1.

The seven rows are published figures (inputs to the audit, not expected results). Source: Gunasekar et al.,
"Textbooks Are All You Need", arXiv 2306.11644v2, Section 4, Table 2 ("LLM graded Understanding scores on 50 new
unconventional coding problems"). Score and HumanEval are percentages as printed.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy import stats

if TYPE_CHECKING:
    from matplotlib.figure import Figure

RowsStatistic = Callable[[np.ndarray, np.ndarray], np.ndarray]
PairStatistic = Callable[[np.ndarray, np.ndarray], float]

TABLE2_CITATION = ("Gunasekar et al., 'Textbooks Are All You Need', arXiv 2306.11644v2, Section 4, Table 2 "
                   "(LLM graded Understanding scores on 50 new unconventional coding problems)")
TABLE2_PROBLEM_COUNT = 50


@dataclass(frozen=True)
class Table2Row:
    """One model's row of Table 2, as printed."""

    model: str
    size: str
    train_tokens: str
    score_pct: float
    humaneval_pct: float

    @property
    def gap_pct(self) -> float:
        """LLM-graded score minus HumanEval pass@1, in percentage points."""
        return self.score_pct - self.humaneval_pct


TABLE2: tuple[Table2Row, ...] = (
    Table2Row("CodeGen-Mono-350M", "350M", "577B", 19, 13),
    Table2Row("CodeGen-Mono-16.1B", "16.1B", "577B", 38, 29),
    Table2Row("Replit", "2.7B", "525B", 37, 22),
    Table2Row("StarCoder", "15.5B", "1T", 51, 34),
    Table2Row("phi-1-base", "1.3B", "7B", 37, 29),
    Table2Row("phi-1-small", "350M", "7B", 45, 45),
    Table2Row("phi-1", "1.3B", "7B", 52, 51),
)


@dataclass(frozen=True)
class PairOrder:
    """How the two metrics order one pair of models."""

    model_a: str
    model_b: str
    score_diff: float
    humaneval_diff: float

    @property
    def relation(self) -> str:
        product = self.score_diff * self.humaneval_diff
        if product > 0:
            return "concordant"
        if product < 0:
            return "discordant"
        return "tied"


@dataclass(frozen=True)
class RankCorrelation:
    """Kendall tau-b and Spearman rho with scipy's p-values, an exact permutation p, and leave-one-out ranges."""

    n: int
    kendall_tau: float
    kendall_p_scipy: float
    kendall_p_exact_permutation: float
    spearman_rho: float
    spearman_p_scipy: float
    spearman_p_exact_permutation: float
    kendall_tau_leave_one_out: tuple[float, float]
    spearman_rho_leave_one_out: tuple[float, float]
    tied_scores: tuple[tuple[float, int], ...]
    tied_humaneval: tuple[tuple[float, int], ...]


def pair_orders(rows: tuple[Table2Row, ...] = TABLE2) -> tuple[PairOrder, ...]:
    return tuple(PairOrder(a.model, b.model, a.score_pct - b.score_pct, a.humaneval_pct - b.humaneval_pct)
                 for a, b in itertools.combinations(rows, 2))


def rank_correlation(rows: tuple[Table2Row, ...] = TABLE2) -> RankCorrelation:
    """Rank agreement between the LLM-graded score and HumanEval pass@1 over the given rows."""
    score = np.array([r.score_pct for r in rows], dtype=float)
    humaneval = np.array([r.humaneval_pct for r in rows], dtype=float)
    kendall = stats.kendalltau(score, humaneval)
    spearman = stats.spearmanr(score, humaneval)
    return RankCorrelation(
        n=len(rows),
        kendall_tau=float(kendall.statistic),
        kendall_p_scipy=float(kendall.pvalue),
        kendall_p_exact_permutation=_exact_permutation_p(score, humaneval, _kendall_tau_b_rows),
        spearman_rho=float(spearman.statistic),
        spearman_p_scipy=float(spearman.pvalue),
        spearman_p_exact_permutation=_exact_permutation_p(score, humaneval, _spearman_rows),
        kendall_tau_leave_one_out=_leave_one_out_range(score, humaneval, _kendall_statistic),
        spearman_rho_leave_one_out=_leave_one_out_range(score, humaneval, _spearman_statistic),
        tied_scores=_ties(score),
        tied_humaneval=_ties(humaneval),
    )


def sample_size_statement(correlation: RankCorrelation) -> str:
    """What these n points can and cannot say, written from the computed figures."""
    ties = []
    if correlation.tied_scores:
        ties.append("score " + ", ".join(f"{v:g}% x{c}" for v, c in correlation.tied_scores))
    if correlation.tied_humaneval:
        ties.append("HumanEval " + ", ".join(f"{v:g}% x{c}" for v, c in correlation.tied_humaneval))
    tie_text = f" Ties ({'; '.join(ties)}) make scipy's p-values approximations;" if ties else ""
    low_tau, high_tau = correlation.kendall_tau_leave_one_out
    return (
        f"n = {correlation.n} models, all from one paper, hand-picked, not a random sample of models.{tie_text} "
        f"the exact permutation p over all {math.factorial(correlation.n)} orderings is "
        f"{correlation.kendall_p_exact_permutation:.3f} for tau and {correlation.spearman_p_exact_permutation:.3f} "
        f"for rho. Dropping any one model moves tau between {low_tau:.2f} and {high_tau:.2f}. "
        "Read tau and rho as a description of these seven rows; they do not show that the two benchmarks agree "
        "in general, and each row's own score carries the n = 50 sampling error shown under score_aggregation."
    )


def pairs_closer_than(half_widths: dict[str, float], rows: tuple[Table2Row, ...] = TABLE2) -> list[dict[str, object]]:
    """Model pairs whose score gap is smaller than the larger of their two half-widths (percent)."""
    close = []
    for a, b in itertools.combinations(rows, 2):
        gap = abs(a.score_pct - b.score_pct)
        bound = max(half_widths[a.model], half_widths[b.model])
        if gap < bound:
            close.append({"model_a": a.model, "model_b": b.model, "score_gap_pct": gap,
                          "larger_half_width_pct": round(bound, 2)})
    return close


def scatter_figure(rows: tuple[Table2Row, ...] = TABLE2, correlation: RankCorrelation | None = None,
                   half_widths: dict[str, float] | None = None) -> Figure:
    """Score vs HumanEval with model labels, the y = x line and optional vertical half-widths (no pyplot state)."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(6.4, 5.2))
    axes = figure.subplots()
    humaneval = [r.humaneval_pct for r in rows]
    score = [r.score_pct for r in rows]
    if half_widths is not None:
        axes.errorbar(humaneval, score, yerr=[half_widths[r.model] for r in rows], fmt="none", ecolor="tab:blue",
                      alpha=0.35, capsize=3, label="worst-case 95% half-width at n = 50")
    axes.scatter(humaneval, score, color="tab:blue", zorder=3)
    for row in rows:
        # A model just below another at the same HumanEval value gets its label underneath, so labels do not overlap.
        crowded = any(o.humaneval_pct == row.humaneval_pct and 0 < o.score_pct - row.score_pct < 4 for o in rows)
        axes.annotate(row.model, (row.humaneval_pct, row.score_pct), textcoords="offset points",
                      xytext=(5, -11 if crowded else 4), fontsize=8)
    limit_low = min(humaneval + score) - 5
    limit_high = max(humaneval + score) + 8
    if half_widths is not None:
        limit_low = min(limit_low, min(r.score_pct - half_widths[r.model] for r in rows) - 2)
        limit_high = max(limit_high, max(r.score_pct + half_widths[r.model] for r in rows) + 2)
    axes.plot([limit_low, limit_high], [limit_low, limit_high], linestyle="--", color="grey", linewidth=1,
              label="score = HumanEval")
    axes.set_xlim(limit_low, limit_high)
    axes.set_ylim(limit_low, limit_high)
    axes.set_xlabel("HumanEval pass@1 (%)")
    axes.set_ylabel("LLM-graded score on 50 unconventional problems (%)")
    title = "phi-1 paper, Table 2 (arXiv 2306.11644v2)"
    if correlation is not None:
        title += f"\nKendall tau-b = {correlation.kendall_tau:.2f}, Spearman rho = {correlation.spearman_rho:.2f}, " \
                 f"n = {correlation.n}"
    axes.set_title(title, fontsize=9)
    axes.legend(loc="lower right", fontsize=8)
    axes.grid(True, alpha=0.3)
    figure.tight_layout()
    return figure


def _kendall_statistic(x: np.ndarray, y: np.ndarray) -> float:
    return float(stats.kendalltau(x, y).statistic)


def _spearman_statistic(x: np.ndarray, y: np.ndarray) -> float:
    return float(stats.spearmanr(x, y).statistic)


def _kendall_tau_b_rows(x: np.ndarray, y_rows: np.ndarray) -> np.ndarray:
    """Kendall tau-b of x against each row of y_rows (same definition as scipy's default)."""
    upper_i, upper_j = np.triu_indices(len(x), k=1)
    sign_x = np.sign(x[upper_j] - x[upper_i])
    sign_y = np.sign(y_rows[:, upper_j] - y_rows[:, upper_i])
    denominator = np.sqrt(np.sum(sign_x != 0) * np.sum(sign_y != 0, axis=1))
    return (sign_y @ sign_x) / denominator


def _spearman_rows(x: np.ndarray, y_rows: np.ndarray) -> np.ndarray:
    """Spearman rho (Pearson on average ranks) of x against each row of y_rows."""
    rank_x = stats.rankdata(x)
    rank_y = stats.rankdata(y_rows, axis=1)
    centred_x = rank_x - rank_x.mean()
    centred_y = rank_y - rank_y.mean(axis=1, keepdims=True)
    return (centred_y @ centred_x) / np.sqrt((centred_x @ centred_x) * np.sum(centred_y ** 2, axis=1))


def _exact_permutation_p(x: np.ndarray, y: np.ndarray, statistic_rows: RowsStatistic) -> float:
    """Two-sided p over every permutation of y (n <= 8): the share with |statistic| >= the observed one."""
    if len(y) > 8:
        raise ValueError(f"exact enumeration over {len(y)}! orderings is not supported; n must be <= 8")
    orderings = np.array(list(itertools.permutations(range(len(y)))))
    values = statistic_rows(x, y[orderings])
    observed = abs(statistic_rows(x, y[np.newaxis, :])[0])
    return float(np.mean(np.abs(values) >= observed - 1e-12))


def _leave_one_out_range(x: np.ndarray, y: np.ndarray, statistic: PairStatistic) -> tuple[float, float]:
    values = [statistic(np.delete(x, i), np.delete(y, i)) for i in range(len(x))]
    return (float(min(values)), float(max(values)))


def _ties(values: np.ndarray) -> tuple[tuple[float, int], ...]:
    counts = Counter(float(v) for v in values)
    return tuple(sorted((v, c) for v, c in counts.items() if c > 1))
