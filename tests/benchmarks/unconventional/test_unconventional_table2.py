"""Table 2 rank analysis: statistics cross-checked by hand and against independent computations."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from audit_lib.benchmarks.unconventional import table2


def test_table2_has_the_seven_published_rows() -> None:
    assert [r.model for r in table2.TABLE2] == ["CodeGen-Mono-350M", "CodeGen-Mono-16.1B", "Replit", "StarCoder",
                                                 "phi-1-base", "phi-1-small", "phi-1"]
    assert "2306.11644v2" in table2.TABLE2_CITATION and "Table 2" in table2.TABLE2_CITATION


def test_kendall_tau_b_matches_the_pair_count_formula() -> None:
    # tau_b = (C - D) / sqrt((n0 - ties_x) * (n0 - ties_y)), counted from the pair relations directly.
    pairs = table2.pair_orders()
    concordant = sum(p.relation == "concordant" for p in pairs)
    discordant = sum(p.relation == "discordant" for p in pairs)
    ties_score = sum(p.score_diff == 0 for p in pairs)
    ties_humaneval = sum(p.humaneval_diff == 0 for p in pairs)
    expected = (concordant - discordant) / np.sqrt((len(pairs) - ties_score) * (len(pairs) - ties_humaneval))
    correlation = table2.rank_correlation()
    assert correlation.kendall_tau == pytest.approx(expected)
    assert (concordant, discordant, ties_score, ties_humaneval) == (18, 1, 1, 1)
    assert correlation.kendall_tau == pytest.approx(17 / 20)


def test_spearman_is_pearson_on_average_ranks() -> None:
    score = [r.score_pct for r in table2.TABLE2]
    humaneval = [r.humaneval_pct for r in table2.TABLE2]
    expected = np.corrcoef(stats.rankdata(score), stats.rankdata(humaneval))[0, 1]
    assert table2.rank_correlation().spearman_rho == pytest.approx(expected)


def test_exact_permutation_p_on_a_hand_computed_case() -> None:
    # n = 3, perfectly ordered: only the identity and the reversal reach |tau| = 1, so p = 2 / 3! = 1/3.
    rows = tuple(table2.Table2Row(f"m{i}", "", "", float(i), float(i)) for i in range(3))
    correlation = table2.rank_correlation(rows)
    assert correlation.kendall_p_exact_permutation == pytest.approx(1 / 3)
    assert correlation.spearman_p_exact_permutation == pytest.approx(1 / 3)


def test_vectorised_statistics_match_scipy_on_random_orderings() -> None:
    rng = np.random.default_rng(0)
    x = np.array([r.score_pct for r in table2.TABLE2])
    y_rows = np.array([rng.permutation([r.humaneval_pct for r in table2.TABLE2]) for _ in range(20)])
    for y, tau, rho in zip(y_rows, table2._kendall_tau_b_rows(x, y_rows), table2._spearman_rows(x, y_rows)):
        assert tau == pytest.approx(stats.kendalltau(x, y).statistic)
        assert rho == pytest.approx(stats.spearmanr(x, y).statistic)


def test_statement_reports_n_and_makes_no_general_claim() -> None:
    text = table2.sample_size_statement(table2.rank_correlation())
    assert "n = 7" in text
    assert "5040" in text
    assert "do not show" in text
    assert "significant" not in text.lower()


def test_pairs_closer_than_half_width() -> None:
    rows = (table2.Table2Row("a", "", "", 50, 0), table2.Table2Row("b", "", "", 52, 0),
            table2.Table2Row("c", "", "", 80, 0))
    close = table2.pairs_closer_than({"a": 5.0, "b": 3.0, "c": 1.0}, rows)
    assert [(p["model_a"], p["model_b"]) for p in close] == [("a", "b")]


def test_scatter_figure_has_one_point_per_model() -> None:
    figure = table2.scatter_figure(correlation=table2.rank_correlation())
    axes = figure.axes[0]
    assert len(axes.collections[0].get_offsets()) == len(table2.TABLE2)
    assert "Kendall" in axes.get_title()
