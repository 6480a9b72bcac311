"""The order a batch starts its notebooks in: longest first, by each audit's duration in the previous run."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from audit_lib.runner.history import SUMMARY_NAME
from audit_lib.runner.plan import AuditJob


def previous_durations(reports_dir: Path) -> dict[str, float]:
    """Audit -> seconds its notebook took, from the reports folder's last summary; empty when there is none to read.

    Only an estimate for ordering: a summary that is missing or unreadable orders nothing."""
    try:
        summary = json.loads((reports_dir / SUMMARY_NAME).read_text(encoding="utf-8"))
        audits = summary["audits"]
        return {str(row["audit"]): float(row["duration_s"]) for row in audits
                if isinstance(row, Mapping) and isinstance(row.get("duration_s"), (int, float))}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def longest_first(planned: Sequence[AuditJob], durations: Mapping[str, float]) -> list[AuditJob]:
    """`planned` with the audits never timed first (they may be long), then the rest by duration, longest first.

    Ties keep the plan's order, so with no durations at all the plan is unchanged."""
    position = {job.audit: index for index, job in enumerate(planned)}
    return sorted(planned, key=lambda job: (job.audit in durations, -durations.get(job.audit, 0.0),
                                            position[job.audit]))


__all__ = ["longest_first", "previous_durations"]
