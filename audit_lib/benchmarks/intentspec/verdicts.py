"""Evidence rows shared by the IntentSpec checks: a constraint's role, a verdict's error text, failing rows."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from audit_lib.benchmarks.intentspec.data import SpecPair
from audit_lib.benchmarks.intentspec.runs import CandidateRun, ConstraintVerdict

ERROR_TEXT_CHARS = 300


def role_of(spec: SpecPair, constraint_id: str) -> str:
    if constraint_id in spec.stated_test_ids:
        return "stated"
    if constraint_id in spec.hidden_test_ids:
        return "hidden"
    return "unassigned"


def error_text(verdict: ConstraintVerdict) -> str:
    parts = [p for p in (verdict.error_type, verdict.error_message) if p]
    text = ": ".join(parts) if parts else verdict.stderr_tail.strip()
    return text[:ERROR_TEXT_CHARS]


def harness_errors(runs: Sequence[CandidateRun]) -> list[dict[str, Any]]:
    return [{"candidate": "/".join(map(str, run.candidate.key)), "constraint_id": v.constraint_id,
             "error": error_text(v)}
            for run in runs for v in run.verdicts if v.status == "harness_error"]


def failing_rows(spec: SpecPair, run: CandidateRun) -> list[dict[str, Any]]:
    descriptions = {c.id: c.description for c in spec.constraints}
    return [{"task_id": spec.task_id, "source": run.candidate.label, "constraint_id": v.constraint_id,
             "role": role_of(spec, v.constraint_id), "description": descriptions.get(v.constraint_id, ""),
             "status": v.status, "error": error_text(v), "trust": v.trust}
            for v in run.verdicts if not v.passed]


def task_number(task_id: str) -> tuple[int, str]:
    """Sort key: the number at the end of `HumanEval/17`, then the id."""
    match = re.search(r"(\d+)$", task_id)
    return (int(match.group(1)) if match else -1, task_id)
