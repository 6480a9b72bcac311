"""Small hand-made IntentSpec rows shared by the IntentSpec unit tests (no mirror data, no tests here)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from audit_lib.benchmarks.intentspec.data import (
    Canonical,
    Constraint,
    PublishedOutcome,
    SpecPair,
    canonicals_from_records,
    spec_pairs_from_records,
)
from audit_lib.benchmarks.intentspec.runs import Candidate, CandidateRun, ConstraintVerdict


def spec_record(task_id: str = "HumanEval/1", **overrides: Any) -> dict[str, Any]:
    record = {
        "task_id": task_id,
        "spec_type": "algorithm",
        "ambiguous_prompt": "Write a function named `solution` that doubles a number.",
        "gold_prompt": "Write a function named `solution` that doubles a number and returns an int for 0.",
        "constraints": [
            {"id": "C1", "description": "Doubles 2 to 4", "test_code": "assert solution(2) == 4"},
            {"id": "C2", "description": "Zero maps to 0", "test_code": "assert solution(0) == 0"},
            {"id": "C3", "description": "Result is an int", "test_code": "assert isinstance(solution(3), int)"},
        ],
        "stated_test_ids": ["C1"],
        "hidden_test_ids": ["C2", "C3"],
    }
    record.update(overrides)
    return record


def canonical_record(task_id: str = "HumanEval/1", body: str = "    return x * 2\n", **overrides: Any
                     ) -> dict[str, Any]:
    prompt = 'def double(x):\n    """Double x."""\n'
    record = {"task_id": task_id, "entry_point": "double", "prompt": prompt, "canonical_solution": body,
              "full_source": prompt + body}
    record.update(overrides)
    return record


def specs(*records: dict[str, Any]) -> tuple[SpecPair, ...]:
    return spec_pairs_from_records(list(records), file="spec_pairs.jsonl")


def canonicals(*records: dict[str, Any]) -> tuple[Canonical, ...]:
    return canonicals_from_records(list(records), file="canonicals.jsonl")


def write_jsonl(path: Path, records: list[Any], *, raw_lines: dict[int, str] | None = None) -> Path:
    lines = [json.dumps(record) for record in records]
    for line_number, text in (raw_lines or {}).items():
        lines.insert(line_number - 1, text)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def outcome(passes_stated: bool, passed: tuple[str, ...] = (), failed: tuple[str, ...] = ()) -> PublishedOutcome:
    return PublishedOutcome(passes_stated, passed, failed)


def fake_run(kind: str, label: str, task_id: str, sample: int, statuses: dict[str, str],
             exit_codes: dict[str, int] | None = None) -> CandidateRun:
    """A run with given per-constraint statuses, for checks that only read verdicts (no execution)."""
    verdicts = tuple(ConstraintVerdict(cid, status, None if status == "pass" else "AssertionError",
                                       None if status == "pass" else "boom", "", (exit_codes or {}).get(cid), 0.01)
                     for cid, status in statuses.items())
    return CandidateRun(Candidate(kind, label, task_id, sample, "def solution(x):\n    return x\n"), verdicts)


__all__ = ["Constraint", "spec_record", "canonical_record", "specs", "canonicals", "write_jsonl", "outcome",
           "fake_run"]


def test_the_ivr_heatmap_orders_tasks_by_number() -> None:
    from audit_lib.benchmarks.intentspec.figures import plot_ivr_per_task

    rows = [{"task_id": f"HumanEval/{n}", "m replayed": 0.5} for n in (10, 2, 1, 33)]
    figure = plot_ivr_per_task(rows)
    assert [label.get_text() for label in figure.axes[0].get_xticklabels()] == ["1", "2", "10", "33"]
