"""`leaderboard_impact`: the published models' pass@1 and ranking with and without the tasks this audit finds flawed.

The leaderboard is eval-arena's per-task outcomes (dataset `model_results`). Which release each model was scored on
is not recorded there (HumanEval+ v0.1.9 or v0.1.10, MBPP+ v0.1.0 or v0.2.0), so the report says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from audit_lib.benchmarks.humaneval_plus.audit import Inputs, Params
from audit_lib.benchmarks.humaneval_plus.flawed_tasks import FlawedTasks, flaw_checks_for, flawed_tasks
from audit_lib.findings import Check, Result
from audit_lib.leaderboard.impact import LeaderboardImpact, TaskFacts, compare_leaderboards
from audit_lib.leaderboard.results import ModelResults
from audit_lib.leaderboard.stats import SIGNIFICANCE

RELEASE_NOT_RECORDED = ("Which release each model was scored on is not recorded in the published results "
                        "({releases}); a task that differs between releases may have been scored either way.")
RELEASES = {"humaneval": "HumanEval+ v0.1.9 or v0.1.10", "mbpp": "MBPP+ v0.1.0 or v0.2.0"}
LISTED_TASKS = 40  # tasks named in `observed` per list; the full lists travel in the figures' data


def leaderboard_impact(inputs: Inputs, params: Params, *, needed: Mapping[str, Check]) -> Result:
    """The check as the audit runs it: the flawed tasks from `needed` (the checks `params.flawed_from` names)."""
    checks = flaw_checks_for(inputs.dataset, params.flawed_from)
    if not checks:
        return Result.skipped(f"flawed_from={params.flawed_from!r} names no check of the {inputs.dataset} audit: no "
                              "task can be called flawed; pass -p flawed_from all", missing=["param:flawed_from"])
    return leaderboard_impact_from(inputs.model_results, flawed_tasks(needed, checks),
                                    [task.task_id for task in inputs.tasks], dataset=inputs.dataset,
                                    resamples=params.bootstrap_resamples, seed=params.bootstrap_seed)


def leaderboard_impact_from(results: ModelResults, flawed: FlawedTasks, audited: Sequence[str], *, dataset: str,
                            resamples: int, seed: int) -> Result:
    """Compare the published leaderboard with itself without the flawed tasks among the audited ones."""
    audited_set = set(audited)
    flaws = {task: reasons for task, reasons in flawed.by_task().items() if task in audited_set}
    impact = compare_leaderboards(results, flaws, resamples=resamples, seed=seed)
    status = _status(impact)
    details = [{"model": row.model, "pass1_published": round(row.pass1_published, 6),
                "pass1_without_flawed": round(row.pass1_without_flawed, 6), "rank_published": row.rank_published,
                "rank_without_flawed": row.rank_without_flawed, "places_gained": row.places_gained}
               for row in sorted(impact.models, key=lambda row: (row.rank_published, row.model))]
    return Result(status, observed=_observed(impact, results, audited_set),
                 expected={"rank_changes": [], "flips_significant": 0},
                 summary=_summary(impact, len(audited_set & set(results.tasks)), dataset), details=details,
                 meta={"release_recorded": False, "release_note": RELEASE_NOT_RECORDED.format(
                           releases=RELEASES.get(dataset, "the release")),
                       "flawed_from": list(flawed.consulted), "noise_floor_rule": (
                           "eval-arena's p5_min: over every pair of models, the exact two-sided sign test on the "
                           "tasks exactly one of them solves; the smallest |pass@1 difference| with p < 0.05"),
                       "bootstrap": {"resamples": resamples, "seed": seed, "over": "the tasks left without the "
                                     "flawed ones, paired by task"},
                       "results_file": results.file, "tasks_not_audited": len(set(results.tasks) - audited_set),
                       "audited_tasks_not_in_results": sorted(audited_set - set(results.tasks))[:LISTED_TASKS]})


def _status(impact: LeaderboardImpact) -> str:
    if any(pair.bootstrap.significant for pair in impact.flips):
        return "defect"  # a published order that the flawed tasks reverse, and the reversal is significant
    return "quirk" if impact.rank_changes or impact.flips else "pass"


def _task_list(tasks: Sequence[TaskFacts]) -> dict[str, Any]:
    flawed = [task.task_id for task in tasks if task.flawed]
    return {"count": len(tasks), "flawed": len(flawed), "tasks": [task.task_id for task in tasks][:LISTED_TASKS],
            "flawed_tasks": flawed[:LISTED_TASKS]}


def _observed(impact: LeaderboardImpact, results: ModelResults, audited: set[str]) -> dict[str, Any]:
    published, without = impact.noise_floor_published, impact.noise_floor_without_flawed
    return {
        "models": len(impact.models), "tasks": impact.tasks, "tasks_audited": len(audited & set(results.tasks)),
        "flawed_tasks": list(impact.flawed_tasks), "flawed_count": len(impact.flawed_tasks),
        "kendall_tau": round(impact.kendall_tau, 6),
        "rank_changes": [{"model": row.model, "rank_published": row.rank_published,
                          "rank_without_flawed": row.rank_without_flawed, "places_gained": row.places_gained}
                         for row in impact.rank_changes],
        "models_moving": len(impact.rank_changes),
        "largest_move": max((abs(row.places_gained) for row in impact.rank_changes), default=0),
        "flipped_pairs": [{"above": pair.above, "below": pair.below,
                           "difference_published": round(pair.difference_published, 6),
                           "difference_without_flawed": round(pair.difference_without_flawed, 6),
                           "ci_low": round(pair.bootstrap.ci_low, 6), "ci_high": round(pair.bootstrap.ci_high, 6),
                           "p_value": round(pair.bootstrap.p_value, 6), "significant": pair.bootstrap.significant}
                          for pair in impact.flips],
        "flips": len(impact.flips), "flips_significant": sum(pair.bootstrap.significant for pair in impact.flips),
        "noise_floor": published.p5_min, "noise_floor_without_flawed": without.p5_min,
        "largest_insignificant_difference": published.p5_max,
        "significant_pairs": published.significant_pairs, "pairs": published.pairs,
        "unsolved_tasks": _task_list(impact.unsolved), "all_solved_tasks": _task_list(impact.all_solved),
        "suspect_tasks": [{"task_id": task.task_id, "tau": round(task.tau, 4), "solve_rate": round(task.solve_rate, 4),
                           "flaws": list(task.flaws)} for task in impact.suspects],
        "flawed_not_in_results": list(impact.flawed_not_in_results),
    }


def _is_or_are(count: int) -> str:
    return "is" if count == 1 else "are"


def _percent(value: float | None) -> str:
    return "none" if value is None else f"{100 * value:.1f} pp"


def _summary(impact: LeaderboardImpact, audited: int, dataset: str) -> str:
    """The finding's sentences; `audited` counts the audited tasks the published results have."""
    name = "HumanEval+" if dataset == "humaneval" else "MBPP+"
    moves = impact.rank_changes
    significant = sum(pair.bootstrap.significant for pair in impact.flips)
    unsolved, solved, suspects = impact.unsolved, impact.all_solved, impact.suspects
    scope = "" if audited >= impact.tasks else f" (only {audited} of the {impact.tasks} tasks audited in this run)"
    sentences = [
        f"Without the {len(impact.flawed_tasks)} flawed tasks{scope}, {len(moves)} of {len(impact.models)} published "
        f"{name} models change rank (Kendall tau {impact.kendall_tau:.3f}) and {len(impact.flips)} pair(s) swap order, "
        f"{significant} of them significantly; {sum(t.flawed for t in unsolved)} of the {len(unsolved)} tasks no model "
        f"solves {'carries' if sum(t.flawed for t in unsolved) == 1 else 'carry'} a defect found here.",
    ]
    if moves:
        sentences.append(f"Largest move: {abs(moves[0].places_gained)} place(s), {moves[0].model} "
                         f"{moves[0].rank_published} -> {moves[0].rank_without_flawed}.")
    sentences += [
        f"Noise floor, measured as eval-arena does (the smallest pass@1 difference significant at p < {SIGNIFICANCE} "
        f"in a sign test over every pair of models): {_percent(impact.noise_floor_published.p5_min)} as published, "
        f"{_percent(impact.noise_floor_without_flawed.p5_min)} without the flawed tasks.",
        f"{sum(t.flawed for t in solved)} of the {len(solved)} tasks every model solves "
        f"{_is_or_are(sum(t.flawed for t in solved))} flawed; {len(suspects)} "
        f"task(s) are solved less often by stronger models (eval-arena's tau < 0), {sum(t.flawed for t in suspects)} "
        "of them flawed.",
        f"Swaps are tested with a paired bootstrap over the remaining tasks ({impact.resamples:,} resamples, seed "
        f"{impact.seed}).",
        RELEASE_NOT_RECORDED.format(releases=RELEASES.get(dataset, "the release")),
    ]
    return " ".join(sentences)


__all__ = ["RELEASE_NOT_RECORDED", "leaderboard_impact", "leaderboard_impact_from"]
