"""What `leaderboard_impact` tells a user: its status, every sentence of its summary, its observed figures and meta."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from audit_lib.benchmarks.humaneval_plus.checks_leaderboard import leaderboard_impact, leaderboard_impact_from
from audit_lib.benchmarks.humaneval_plus.flawed_tasks import FlawedTask, FlawedTasks
from audit_lib.findings import Check
from audit_lib.leaderboard.results import ModelResults
from tests.benchmarks.humaneval_plus.test_checks_leaderboard import RESULTS, TASKS  # the same small leaderboard

FLAWED = FlawedTasks((FlawedTask("HumanEval/4", "contract_violations", "2 input(s) violate its contract"),
                      FlawedTask("HumanEval/5", "ground_truth", "1 input(s)"),
                      FlawedTask("HumanEval/6", "errata_diff", "the errata changes its test")),
                     ("ground_truth", "contract_violations", "errata_diff"))
NOISE_RULE = ("eval-arena's p5_min: over every pair of models, the exact two-sided sign test on the tasks exactly one "
              "of them solves; the smallest |pass@1 difference| with p < 0.05")
HUMANEVAL_RELEASES = ("Which release each model was scored on is not recorded in the published results (HumanEval+ "
                      "v0.1.9 or v0.1.10); a task that differs between releases may have been scored either way.")


def test_a_rank_change_without_a_significant_swap_is_told_sentence_by_sentence() -> None:
    check = leaderboard_impact_from(RESULTS, FLAWED, TASKS, dataset="humaneval", resamples=2000, seed=1)
    assert check.status == "quirk"
    assert check.summary == (
        "Without the 3 flawed tasks, 3 of 4 published HumanEval+ models change rank (Kendall tau 0.548) and 1 pair(s) "
        "swap order, 0 of them significantly; 1 of the 1 tasks no model solves carries a defect found here. Largest "
        "move: 1 place(s), m1 1 -> 2. Noise floor, measured as eval-arena does (the smallest pass@1 difference "
        "significant at p < 0.05 in a sign test over every pair of models): none as published, none without the "
        "flawed tasks. 0 of the 1 tasks every model solves are flawed; 1 task(s) are solved less often by stronger "
        "models (eval-arena's tau < 0), 0 of them flawed. Swaps are tested with a paired bootstrap over the remaining "
        f"tasks (2,000 resamples, seed 1). {HUMANEVAL_RELEASES}")
    assert check.expected == {"rank_changes": [], "flips_significant": 0}
    assert check.observed == {
        "models": 4, "tasks": 7, "tasks_audited": 7,
        "flawed_tasks": ["HumanEval/4", "HumanEval/5", "HumanEval/6"], "flawed_count": 3, "kendall_tau": 0.547723,
        "rank_changes": [{"model": "m1", "rank_published": 1, "rank_without_flawed": 2, "places_gained": -1},
                         {"model": "m2", "rank_published": 2, "rank_without_flawed": 1, "places_gained": 1},
                         {"model": "m4", "rank_published": 4, "rank_without_flawed": 3, "places_gained": 1}],
        "models_moving": 3, "largest_move": 1,
        "flipped_pairs": [{"above": "m1", "below": "m2", "difference_published": 0.142857,
                           "difference_without_flawed": -0.25, "ci_low": -0.75, "ci_high": 0.0, "p_value": 0.612,
                           "significant": False}],
        "flips": 1, "flips_significant": 0, "noise_floor": None, "noise_floor_without_flawed": None,
        "largest_insignificant_difference": 3 / 7, "significant_pairs": 0, "pairs": 6,
        "unsolved_tasks": {"count": 1, "flawed": 1, "tasks": ["HumanEval/6"], "flawed_tasks": ["HumanEval/6"]},
        "all_solved_tasks": {"count": 1, "flawed": 0, "tasks": ["HumanEval/0"], "flawed_tasks": []},
        "suspect_tasks": [{"task_id": "HumanEval/3", "tau": -0.4082, "solve_rate": 0.5, "flaws": []}],
        "flawed_not_in_results": []}
    assert check.meta == {
        "release_recorded": False, "release_note": HUMANEVAL_RELEASES,
        "flawed_from": ["ground_truth", "contract_violations", "errata_diff"], "noise_floor_rule": NOISE_RULE,
        "bootstrap": {"resamples": 2000, "seed": 1, "over": "the tasks left without the flawed ones, paired by task"},
        "results_file": "model_results/humaneval+.jsonl", "tasks_not_audited": 0, "audited_tasks_not_in_results": []}
    assert [row["model"] for row in check.details] == ["m1", "m2", "m3", "m4"]
    assert check.details[3] == {"model": "m4", "pass1_published": round(2 / 7, 6), "pass1_without_flawed": 0.5,
                                "rank_published": 4, "rank_without_flawed": 3, "places_gained": 1}


def test_part_of_the_tasks_audited_is_said_and_a_rank_change_alone_is_a_quirk() -> None:
    check = leaderboard_impact_from(RESULTS, FLAWED, TASKS[:5], dataset="humaneval", resamples=200, seed=1)
    assert check.status == "quirk" and check.observed["flips"] == 0
    assert check.summary.startswith(
        "Without the 1 flawed tasks (only 5 of the 7 tasks audited in this run), 1 of 4 published HumanEval+ models "
        "change rank (Kendall tau 0.913) and 0 pair(s) swap order, 0 of them significantly; 0 of the 1 tasks no model "
        "solves carry a defect found here. Largest move: 1 place(s), m2 2 -> 1.")
    assert (check.meta["tasks_not_audited"], check.observed["tasks_audited"]) == (2, 5)


def test_audited_tasks_missing_from_the_results_do_not_hide_the_partial_scope() -> None:
    audited = TASKS[:5] + ("HumanEval/98", "HumanEval/99")
    check = leaderboard_impact_from(RESULTS, FLAWED, audited, dataset="humaneval", resamples=100, seed=1)
    assert check.summary.startswith("Without the 1 flawed tasks (only 5 of the 7 tasks audited in this run), ")
    assert check.meta["audited_tasks_not_in_results"] == ["HumanEval/98", "HumanEval/99"]


def test_a_significant_swap_is_a_defect_with_its_noise_floor_in_points() -> None:
    # a leads as published (12/22 vs 10/22) only through the 10 flawed tasks it alone solves
    tasks = tuple(f"T/{n}" for n in range(22))
    outcomes = np.array([[1] * 2 + [0] * 10 + [1] * 10, [1] * 10 + [0] * 2 + [0] * 10], dtype=float)
    results = ModelResults("toy", ("a", "b"), tasks, outcomes)
    flawed = FlawedTasks(tuple(FlawedTask(t, "ground_truth", "x") for t in tasks[12:])
                         + (FlawedTask("T/0", "ground_truth", "y"),), ("ground_truth",))
    check = leaderboard_impact_from(results, flawed, tasks, dataset="mbpp", resamples=500, seed=3)
    assert check.status == "defect"
    assert check.summary == (
        "Without the 11 flawed tasks, 2 of 2 published MBPP+ models change rank (Kendall tau -1.000) and 1 pair(s) "
        "swap order, 1 of them significantly; 0 of the 2 tasks no model solves carry a defect found here. Largest "
        "move: 1 place(s), a 1 -> 2. Noise floor, measured as eval-arena does (the smallest pass@1 difference "
        "significant at p < 0.05 in a sign test over every pair of models): none as published, 72.7 pp without the "
        "flawed tasks. 1 of the 2 tasks every model solves is flawed; 8 task(s) are solved less often by stronger "
        "models (eval-arena's tau < 0), 0 of them flawed. Swaps are tested with a paired bootstrap over the remaining "
        "tasks (500 resamples, seed 3). Which release each model was scored on is not recorded in the published "
        "results (MBPP+ v0.1.0 or v0.2.0); a task that differs between releases may have been scored either way.")
    assert (check.observed["flips_significant"], check.observed["largest_move"]) == (1, 1)
    assert check.observed["flipped_pairs"] == [{
        "above": "a", "below": "b", "difference_published": 0.090909, "difference_without_flawed": -0.727273,
        "ci_low": -0.909091, "ci_high": -0.454545, "p_value": 0.0, "significant": True}]
    assert check.details == ({"model": "a", "pass1_published": 0.545455, "pass1_without_flawed": 0.090909,
                              "rank_published": 1, "rank_without_flawed": 2, "places_gained": -1},
                             {"model": "b", "pass1_published": 0.454545, "pass1_without_flawed": 0.818182,
                              "rank_published": 2, "rank_without_flawed": 1, "places_gained": 1})
    assert check.observed["all_solved_tasks"] == {"count": 2, "flawed": 1, "tasks": ["T/0", "T/1"],
                                                  "flawed_tasks": ["T/0"]}
    assert check.meta["results_file"] == "" and check.meta["flawed_from"] == ["ground_truth"]


def test_long_task_lists_are_cut_at_forty_and_unknown_tasks_are_named() -> None:
    tasks = tuple(f"T/{n:02d}" for n in range(50))
    outcomes = np.array([[1] * 5 + [0] * 45, [1] * 3 + [0] * 47], dtype=float)
    results = ModelResults("toy", ("a", "b"), tasks, outcomes)
    flawed = FlawedTasks(tuple(FlawedTask(t, "ground_truth", "x") for t in tasks[5:]), ("ground_truth",))
    extra = tuple(f"X/{n:02d}" for n in range(45))
    check = leaderboard_impact_from(results, flawed, tasks + extra, dataset="humaneval", resamples=100, seed=1)
    unsolved = check.observed["unsolved_tasks"]
    assert (unsolved["count"], unsolved["flawed"]) == (45, 45)
    assert unsolved["tasks"] == list(tasks[5:45]) and unsolved["flawed_tasks"] == list(tasks[5:45])
    assert len(check.observed["flawed_tasks"]) == 45 and check.observed["flawed_count"] == 45
    assert check.meta["audited_tasks_not_in_results"] == list(extra[:40])
    assert check.summary.startswith("Without the 45 flawed tasks, 0 of 2 published HumanEval+ models change rank")
    assert "45 of the 45 tasks no model solves carry a defect found here. Noise floor" in check.summary


def test_an_unknown_dataset_names_no_release_and_no_move_is_a_pass() -> None:
    check = leaderboard_impact_from(RESULTS, FlawedTasks((), ("ground_truth",)), TASKS, dataset="other",
                                    resamples=100, seed=1)
    assert check.status == "pass"
    assert "published MBPP+ models" in check.summary and "Largest move" not in check.summary
    assert check.observed["largest_move"] == 0 and check.observed["rank_changes"] == []
    assert check.summary.endswith(check.meta["release_note"])
    assert check.meta["release_note"] == ("Which release each model was scored on is not recorded in the published "
                                          "results (the release); a task that differs between releases may have "
                                          "been scored either way.")


def test_flawed_from_naming_no_check_skips_with_the_fix() -> None:
    inputs = SimpleNamespace(dataset="mbpp", model_results=RESULTS, tasks=())
    params = SimpleNamespace(flawed_from="errata_diff", bootstrap_resamples=100, bootstrap_seed=1)
    check = leaderboard_impact(inputs, params, needed={})
    assert check.status == "skipped"
    assert check.summary == ("flawed_from='errata_diff' names no check of the mbpp audit: no task can be called "
                             "flawed; pass -p flawed_from all")
    assert check.meta["missing"] == ["param:flawed_from"]


def test_a_noise_floor_as_published_is_given_in_points() -> None:
    # a solves 7 tasks b does not, b none that a does not: significant as published (p = 2 / 2**7)
    tasks = tuple(f"T/{n}" for n in range(10))
    outcomes = np.array([[1] * 10, [1] * 3 + [0] * 7], dtype=float)
    results = ModelResults("toy", ("a", "b"), tasks, outcomes)
    check = leaderboard_impact_from(results, FlawedTasks((FlawedTask("T/0", "ground_truth", "x"),), ("ground_truth",)),
                                    tasks, dataset="humaneval", resamples=100, seed=1)
    assert check.observed["noise_floor"] == 0.7
    assert "significant at p < 0.05 in a sign test over every pair of models): 70.0 pp as published, " in check.summary


def test_the_audit_reads_the_flawed_tasks_from_the_checks_it_names() -> None:
    ground_truth = Check("ground_truth", "Ground truth", "defect",
                         observed={"inputs_failing_deterministic": ["HumanEval/5 plus[0]"]},
                         details=({"task_id": "HumanEval/5", "split": "plus", "input_index": 0,
                                   "problem": "canonical_failure"},))
    inputs = SimpleNamespace(dataset="humaneval", model_results=RESULTS,
                             tasks=[SimpleNamespace(task_id=t) for t in TASKS[:6]])
    params = SimpleNamespace(flawed_from="ground_truth", bootstrap_resamples=300, bootstrap_seed=4)
    check = leaderboard_impact(inputs, params, needed={"ground_truth": ground_truth})
    assert check.observed["flawed_tasks"] == ["HumanEval/5"] and check.meta["flawed_from"] == ["ground_truth"]
    assert check.meta["bootstrap"]["resamples"] == 300 and check.meta["bootstrap"]["seed"] == 4
    assert check.meta["tasks_not_audited"] == 1
    assert check.summary.startswith("Without the 1 flawed tasks (only 6 of the 7 tasks audited in this run), ")
    assert "published HumanEval+ models" in check.summary
    assert "(300 resamples, seed 4)" in check.summary
    direct = leaderboard_impact_from(RESULTS, FlawedTasks((FlawedTask("HumanEval/5", "ground_truth", "x"),),
                                                          ("ground_truth",)), TASKS[:6], dataset="humaneval",
                                     resamples=300, seed=4)
    assert (check.status, check.observed, check.details) == (direct.status, direct.observed, direct.details)
