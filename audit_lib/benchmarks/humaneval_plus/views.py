"""What the notebook shows besides the checks: the rows read with a note, and two figures.

Each takes the notebook's session and shows nothing (None) when the check it illustrates could not run.
"""

from __future__ import annotations

from typing import Any

from audit_lib.benchmarks.humaneval_plus.audit import Inputs, Params
from audit_lib.plugin import UNUSABLE_STATUSES, AuditSession


def schema_notes(audit: AuditSession[Inputs, Params]) -> list[dict[str, Any]]:
    """The release file's rows read with a note (an empty input field, a missing original-test field)."""
    try:
        inputs = audit.inputs
    except RuntimeError:  # loading failed; every check reports why
        return []
    return list(inputs.schema_notes())


def amplification_figure(audit: AuditSession[Inputs, Params]) -> Any:
    """Plus inputs per task, and base against plus counts."""
    from audit_lib.benchmarks.humaneval_plus.checks_static import amplification_figure as figure

    if audit.run("amplification").status in UNUSABLE_STATUSES:
        return None
    return figure(audit.inputs.tasks)


def canonical_time_figure(audit: AuditSession[Inputs, Params]) -> Any:
    """Canonical time per input, with the time at which 4x it overtakes the floor."""
    from audit_lib.benchmarks.humaneval_plus.checks_canonical import canonical_time_figure as figure

    if audit.run("time_limit_sensitivity").status in UNUSABLE_STATUSES:
        return None
    return figure(audit.inputs.tasks, audit.inputs.ground_truth, min_time_limit=audit.params.min_time_limit)


def speed_figure(audit: AuditSession[Inputs, Params]) -> Any:
    """OpenAI's canonical's failing tasks against machine speed, on the full dataset and each variant.

    From the quiet reruns' CPU times (and the parallel pass's for inputs that passed)."""
    from audit_lib.timing.figure import speed_figure as figure

    check = audit.run("original_canonical_vs_plus")
    if check.status in UNUSABLE_STATUSES or "speed_curve" not in check.observed:
        return None
    curves = {"full dataset": check.observed["speed_curve"]}
    variants = audit.run("variants")
    if variants.status not in UNUSABLE_STATUSES:
        curves.update({name: totals["speed_curve"] for name, totals in variants.observed.items()
                       if isinstance(totals, dict) and totals.get("speed_curve")})
    return figure(curves, title="OpenAI's canonical: failing tasks vs machine speed (EvalPlus limits, CPU time)")


def time_limit_figure(audit: AuditSession[Inputs, Params]) -> Any:
    """Inputs whose EvalPlus limit is set by the canonical's time (not the floor) against machine speed."""
    from audit_lib.timing.figure import speed_figure as figure

    check = audit.run("time_limit_sensitivity")
    if check.status in UNUSABLE_STATUSES or not check.observed.get("speed_curve"):
        return None
    return figure({"canonical": check.observed["speed_curve"]}, unit="inputs", counted="inputs over the threshold",
                  limit_note=f"the threshold {audit.params.min_time_limit:g} s / 4 does not",
                  title="Inputs whose limit scales with the machine, vs machine speed (canonical CPU time)")


def _leaderboard(audit: AuditSession[Inputs, Params]) -> Any:
    """`leaderboard_impact`'s result, or None when it could not run (its finding says why)."""
    check = audit.run("leaderboard_impact")
    return None if check.status in UNUSABLE_STATUSES else check


def _benchmark_name(audit: AuditSession[Inputs, Params]) -> str:
    return "HumanEval+" if audit.inputs.dataset == "humaneval" else "MBPP+"


def _flawed(audit: AuditSession[Inputs, Params]) -> Any:
    """The flawed tasks `leaderboard_impact` leaves out (among the tasks audited), or None when it could not run."""
    from audit_lib.benchmarks.humaneval_plus.flawed_tasks import flaw_checks_for, flawed_tasks

    if _leaderboard(audit) is None:
        return None
    checks = flaw_checks_for(audit.inputs.dataset, audit.params.flawed_from)
    flawed = flawed_tasks({check: audit.run(check) for check in checks}, checks)
    return flawed.restricted_to(task.task_id for task in audit.inputs.tasks)


def flawed_task_table(audit: AuditSession[Inputs, Params]) -> list[dict[str, Any]]:
    """Check -> tasks -> why: the flawed tasks `leaderboard_impact` leaves out."""
    flawed = _flawed(audit)
    return [] if flawed is None else flawed.table()


def leaderboard_pass_at_1_figure(audit: AuditSession[Inputs, Params]) -> Any:
    """Each published model's pass@1 as published and without the flawed tasks."""
    from audit_lib.leaderboard.figures import pass_at_1_figure
    from audit_lib.leaderboard.impact import ModelImpact

    check = _leaderboard(audit)
    if check is None:
        return None
    models = [ModelImpact(row["model"], row["pass1_published"], row["pass1_without_flawed"], row["rank_published"],
                          row["rank_without_flawed"]) for row in check.details]
    return pass_at_1_figure(models, flawed=check.observed["flawed_count"], kendall_tau=check.observed["kendall_tau"],
                            benchmark_name=_benchmark_name(audit))


def leaderboard_heatmap(audit: AuditSession[Inputs, Params]) -> Any:
    """The published models' per-task outcomes, tasks sorted by difficulty, the flawed ones marked."""
    from audit_lib.leaderboard.figures import outcome_heatmap

    check = _leaderboard(audit)
    if check is None:
        return None
    return outcome_heatmap(audit.inputs.model_results, check.observed["flawed_tasks"],
                           benchmark_name=_benchmark_name(audit))


def leaderboard_flips(audit: AuditSession[Inputs, Params]) -> list[dict[str, Any]]:
    """The pairs of models whose order the flawed tasks decide, with the bootstrap of the remaining difference."""
    check = _leaderboard(audit)
    if check is None:
        return []
    return [{"above as published": pair["above"], "below as published": pair["below"],
             "difference published (pp)": round(100 * pair["difference_published"], 1),
             "difference without flawed (pp)": round(100 * pair["difference_without_flawed"], 1),
             "95 % interval (pp)": f"[{100 * pair['ci_low']:+.1f}, {100 * pair['ci_high']:+.1f}]",
             "p (bootstrap)": round(pair["p_value"], 4), "significant": pair["significant"]}
            for pair in check.observed["flipped_pairs"]]


def leaderboard_tasks(audit: AuditSession[Inputs, Params]) -> list[dict[str, Any]]:
    """The tasks no model solves, every model solves, or stronger models solve less often, each with its flaws."""
    check = _leaderboard(audit)
    if check is None:
        return []
    observed = check.observed
    flawed = _flawed(audit)
    flagged = flawed.by_task() if flawed is not None else {}
    rows = [{"task_id": task_id, "group": group, "solve_rate": rate, "tau": None,
             "flawed_by": ", ".join(flagged.get(task_id, ()))}
            for key, group, rate in (("unsolved_tasks", "no model solves it", 0.0),
                                     ("all_solved_tasks", "every model solves it", 1.0))
            for task_id in observed[key]["tasks"]]
    rows += [{"task_id": row["task_id"], "group": "stronger models solve it less often (tau < 0)",
              "solve_rate": row["solve_rate"], "tau": row["tau"],
              "flawed_by": ", ".join(flagged.get(row["task_id"], ()))} for row in observed["suspect_tasks"]]
    return rows


__all__ = ["amplification_figure", "canonical_time_figure", "flawed_task_table", "leaderboard_flips",
           "leaderboard_heatmap", "leaderboard_pass_at_1_figure", "leaderboard_tasks", "schema_notes",
           "speed_figure", "time_limit_figure"]
