"""Constraint power: constraints no generation fails or every generation passes, and description/test spot-checks."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from audit_lib.benchmarks.intentspec.audit import Inputs, Params
from audit_lib.benchmarks.intentspec.data import SpecPair
from audit_lib.benchmarks.intentspec.load import GENERATIONS_KEY_PREFIX, missing_under
from audit_lib.benchmarks.intentspec.replay import rejected_by_canonical_and_references
from audit_lib.benchmarks.intentspec.runs import CandidateRun, ordered_constraints
from audit_lib.benchmarks.intentspec.sandbox_record import with_sandbox_record
from audit_lib.benchmarks.intentspec.verdicts import ERROR_TEXT_CHARS, role_of
from audit_lib.findings import Result

NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")
QUOTED = re.compile(r"'([^']+)'|\"([^\"]+)\"")


def description_test_disagreements(spec: SpecPair) -> list[dict[str, Any]]:
    """Heuristic spot-check: literals (numbers, quoted strings) the description names but the test never uses."""
    rows = []
    for constraint in spec.constraints:
        literals = {m for m in NUMBER.findall(constraint.description)}
        literals |= {a or b for a, b in QUOTED.findall(constraint.description)}
        absent = sorted(lit for lit in literals if lit not in constraint.test_code)
        if absent:
            rows.append({"finding": "description literal absent from test", "task_id": spec.task_id,
                         "constraint_id": constraint.id, "role": role_of(spec, constraint.id),
                         "description": constraint.description, "absent_literals": absent,
                         "test_code": constraint.test_code[:ERROR_TEXT_CHARS]})
    return rows


def constraint_power(inputs: Inputs, params: Params) -> Result:
    """How often each constraint fails the generations, and which reject the canonical and every reference."""
    runs = inputs.runs
    result = constraint_power_from(inputs.data.selected_specs, runs.generations,
                                   rejected_by_canonical_and_references(runs), unavailable=inputs.data.unavailable)
    return with_sandbox_record(inputs, result)


def constraint_power_from(specs: Sequence[SpecPair], generation_runs: Sequence[CandidateRun],
                          rejected_by_all_references: Sequence[tuple[str, str]] = (), *,
                          unavailable: Mapping[str, str] | None = None) -> Result:
    """`rejected_by_all_references`: (task, constraint) pairs the canonical and every reference fail."""
    if not generation_runs:
        return Result.skipped("no cached generations were run",
                              meta={"missing": missing_under(unavailable or {}, GENERATIONS_KEY_PREFIX)})
    tallies: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])  # passes, runs
    for run in generation_runs:
        for v in run.verdicts:
            tally = tallies[(run.candidate.task_id, v.constraint_id)]
            tally[0] += int(v.passed)
            tally[1] += 1
    details = []
    never_failed_hidden = always_passed_stated = 0
    for spec in specs:
        for constraint in ordered_constraints(spec):
            passes, total = tallies.get((spec.task_id, constraint.id), [0, 0])
            role = role_of(spec, constraint.id)
            base = {"task_id": spec.task_id, "constraint_id": constraint.id, "role": role,
                    "description": constraint.description, "generations_passing": passes, "generations_run": total}
            if total and passes == total and role == "hidden":
                never_failed_hidden += 1
                details.append({"finding": "hidden constraint no generation fails", **base})
            elif total and passes == total and role == "stated":
                always_passed_stated += 1
                details.append({"finding": "stated constraint every generation passes", **base})
        spot = description_test_disagreements(spec)
        for task_id, constraint_id in rejected_by_all_references:
            if task_id == spec.task_id:
                constraint = spec.constraint_map()[constraint_id]
                spot.append({"finding": "test rejects the canonical and every reference", "task_id": task_id,
                             "constraint_id": constraint_id, "role": role_of(spec, constraint_id),
                             "description": constraint.description,
                             "test_code": constraint.test_code[:ERROR_TEXT_CHARS]})
        details += spot
    hidden_total = sum(len(s.hidden_test_ids) for s in specs)
    stated_total = sum(len(s.stated_test_ids) for s in specs)
    spot_total = sum(1 for row in details if row["finding"] not in (
        "hidden constraint no generation fails", "stated constraint every generation passes"))
    summary = (f"{never_failed_hidden} of {hidden_total} hidden constraints are failed by no generation (they never "
               f"count towards IVR); {always_passed_stated} of {stated_total} stated constraints are passed by every "
               f"generation; {spot_total} description/test spot-check candidate(s) (heuristic, for human review).")
    status = "quirk" if never_failed_hidden or spot_total else "pass"
    return Result(status,
                  observed={"hidden_never_failed": never_failed_hidden, "hidden_total": hidden_total,
                            "stated_always_passed": always_passed_stated, "stated_total": stated_total,
                            "spot_check_candidates": spot_total},
                  expected={"hidden_never_failed": 0}, summary=summary, details=details)
