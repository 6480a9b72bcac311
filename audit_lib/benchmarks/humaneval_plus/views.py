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


__all__ = ["amplification_figure", "canonical_time_figure", "schema_notes", "speed_figure", "time_limit_figure"]
