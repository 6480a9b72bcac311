"""The `leaderboard_impact` check on a small synthetic leaderboard (the figures themselves: tests/leaderboard)."""

from __future__ import annotations

import numpy as np
import pytest

from audit_lib.benchmarks.humaneval_plus.flawed_tasks import FlawedTask, FlawedTasks
from audit_lib.benchmarks.humaneval_plus.checks_leaderboard import leaderboard_impact_from
from audit_lib.leaderboard.figures import outcome_heatmap, pass_at_1_figure
from audit_lib.leaderboard.impact import compare_leaderboards
from audit_lib.leaderboard.results import ModelResults

TASKS = tuple(f"HumanEval/{n}" for n in range(7))
OUTCOMES = {"m1": [1, 1, 1, 0, 1, 1, 0], "m2": [1, 1, 1, 1, 0, 0, 0], "m3": [1, 1, 0, 0, 0, 1, 0],
            "m4": [1, 0, 0, 1, 0, 0, 0]}
RESULTS = ModelResults("humaneval+", tuple(OUTCOMES), TASKS, np.array(list(OUTCOMES.values()), dtype=float),
                       "model_results/humaneval+.jsonl")
FLAWED = FlawedTasks((FlawedTask("HumanEval/4", "contract_violations", "2 input(s) violate its contract"),
                      FlawedTask("HumanEval/5", "ground_truth", "1 input(s)"),
                      FlawedTask("HumanEval/6", "errata_diff", "the errata changes its test"),
                      FlawedTask("HumanEval/6", "version_diff", "v0.1.9 -> v0.1.10 changes its plus_input")),
                     ("ground_truth", "contract_violations", "errata_diff", "version_diff"))


def test_one_row_per_model_and_the_observed_figures():
    check = leaderboard_impact_from(RESULTS, FLAWED, TASKS, dataset="humaneval", resamples=2000, seed=1)
    assert check.status == "quirk"  # ranks move, no significant flip
    assert [row["model"] for row in check.details] == ["m1", "m2", "m3", "m4"]
    assert check.details[0] == {"model": "m1", "pass1_published": round(5 / 7, 6), "pass1_without_flawed": 0.75,
                                "rank_published": 1, "rank_without_flawed": 2, "places_gained": -1}
    observed = check.observed
    assert observed["flawed_tasks"] == ["HumanEval/4", "HumanEval/5", "HumanEval/6"]
    assert observed["kendall_tau"] == pytest.approx(3 / np.sqrt(30), abs=1e-6)
    assert [row["model"] for row in observed["rank_changes"]] == ["m1", "m2", "m4"]
    assert [(p["above"], p["below"], p["significant"]) for p in observed["flipped_pairs"]] == [("m1", "m2", False)]
    assert observed["unsolved_tasks"] == {"count": 1, "flawed": 1, "tasks": ["HumanEval/6"],
                                          "flawed_tasks": ["HumanEval/6"]}
    assert observed["all_solved_tasks"]["count"] == 1 and observed["all_solved_tasks"]["flawed"] == 0
    assert [row["task_id"] for row in observed["suspect_tasks"]] == ["HumanEval/3"]
    assert observed["suspect_tasks"][0]["flaws"] == []
    assert "1 of the 1 tasks no model solves carries a defect found here." in check.finding
    assert "Which release each model was scored on is not recorded" in check.summary
    assert check.meta["release_recorded"] is False


def test_only_audited_tasks_count_as_flawed():
    check = leaderboard_impact_from(RESULTS, FLAWED, TASKS[:5], dataset="humaneval", resamples=200, seed=1)
    assert check.observed["flawed_tasks"] == ["HumanEval/4"]
    assert "only 5 of the 7 tasks audited" in check.summary


def test_no_flawed_task_is_a_pass():
    check = leaderboard_impact_from(RESULTS, FlawedTasks((), ("ground_truth",)), TASKS, dataset="mbpp",
                                     resamples=200, seed=1)
    assert check.status == "pass" and check.observed["kendall_tau"] == 1.0 and check.observed["flips"] == 0
    assert "MBPP+ v0.1.0 or v0.2.0" in check.summary


def test_a_significant_reversal_is_a_defect():
    # a leads as published (12/22 vs 10/22) only through the 10 flawed tasks it alone solves; on the other 12,
    # b solves 8 tasks a does not and a none that b does not
    tasks = tuple(f"T/{n}" for n in range(22))
    outcomes = np.array([[1] * 2 + [0] * 10 + [1] * 10, [1] * 10 + [0] * 2 + [0] * 10], dtype=float)
    results = ModelResults("toy", ("a", "b"), tasks, outcomes)
    flawed = FlawedTasks(tuple(FlawedTask(t, "ground_truth", "x") for t in tasks[12:]), ("ground_truth",))
    check = leaderboard_impact_from(results, flawed, tasks, dataset="humaneval", resamples=2000, seed=1)
    assert check.status == "defect" and check.observed["flips_significant"] == 1


def test_figures_have_titles_and_labelled_axes():
    impact = compare_leaderboards(RESULTS, {"HumanEval/6": ("x",)}, resamples=200, seed=1)
    for figure in (pass_at_1_figure(impact.models, flawed=1, kendall_tau=impact.kendall_tau,
                                    benchmark_name="HumanEval+"),
                   outcome_heatmap(RESULTS, impact.flawed_tasks, benchmark_name="HumanEval+")):
        axes = [axis for axis in figure.axes if axis.get_xlabel() or axis.get_ylabel()]
        assert axes and all(axis.get_xlabel() and axis.get_ylabel() for axis in axes)
        assert any(axis.get_title() for axis in figure.axes)
