"""The `schema` check of IntentSpec: structural integrity of spec pairs and canonicals (no execution)."""

from __future__ import annotations

import ast
import textwrap
from collections import Counter
from collections.abc import Sequence
from typing import Any

from audit_lib.benchmarks.intentspec.audit import Inputs, Params
from audit_lib.benchmarks.intentspec.data import Canonical, SpecPair
from audit_lib.benchmarks.intentspec.load import CANONICALS_KEY, SPEC_PAIRS_KEY
from audit_lib.findings import Result

SPEC_FILE = "spec_pairs.jsonl"
CANONICAL_FILE = "canonicals.jsonl"


def _violation(file: str, row: int | None, task_id: str, field: str, problem: str) -> dict[str, Any]:
    return {"file": file, "row": row, "task_id": task_id, "field": field, "problem": problem}


def calls_solution(test_code: str) -> bool | None:
    """True when the (dedented) snippet calls `solution(...)`; None when it does not parse."""
    try:
        tree = ast.parse(textwrap.dedent(test_code))
    except SyntaxError:
        return None
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "solution"
               for node in ast.walk(tree))


def defines_function(source: str, name: str) -> bool | None:
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return None
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name
               for node in tree.body)


def spec_violations(specs: Sequence[SpecPair]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    counts = Counter(spec.task_id for spec in specs)
    for spec in specs:
        add = lambda field, problem: rows.append(  # noqa: E731
            _violation(SPEC_FILE, spec.row, spec.task_id, field, problem))
        if counts[spec.task_id] > 1:
            add("task_id", f"task id appears {counts[spec.task_id]} times")
        ids = [constraint.id for constraint in spec.constraints]
        for duplicate in sorted(cid for cid, n in Counter(ids).items() if n > 1):
            add("constraints", f"constraint id {duplicate!r} is defined more than once")
        stated, hidden = set(spec.stated_test_ids), set(spec.hidden_test_ids)
        if not stated:
            add("stated_test_ids", "no stated constraint")
        if not hidden:
            add("hidden_test_ids", "no hidden constraint")
        if stated & hidden:
            add("stated_test_ids", f"ids both stated and hidden: {sorted(stated & hidden)}")
        if set(ids) != stated | hidden:
            missing = sorted((stated | hidden) - set(ids))
            unassigned = sorted(set(ids) - (stated | hidden))
            add("constraints", f"constraint ids {sorted(set(ids))} != stated ∪ hidden {sorted(stated | hidden)}"
                               f" (referenced but undefined: {missing}; defined but unassigned: {unassigned})")
        for position, constraint in enumerate(spec.constraints):
            verdict = calls_solution(constraint.test_code)
            field = f"constraints[{position}].test_code ({constraint.id})"
            if verdict is None:
                add(field, "test_code does not parse as Python")
            elif not verdict:
                add(field, "test_code never calls solution(...)")
    return rows


def canonical_violations(canonicals: Sequence[Canonical]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    counts = Counter(canonical.task_id for canonical in canonicals)
    for canonical in canonicals:
        add = lambda field, problem: rows.append(  # noqa: E731
            _violation(CANONICAL_FILE, canonical.row, canonical.task_id, field, problem))
        if counts[canonical.task_id] > 1:
            add("task_id", f"task id appears {counts[canonical.task_id]} times")
        if canonical.full_source != canonical.prompt + canonical.canonical_solution:
            add("full_source", "full_source != prompt + canonical_solution")
        if not canonical.entry_point.isidentifier():
            add("entry_point", f"entry_point {canonical.entry_point!r} is not an identifier")
        defined = defines_function(canonical.full_source, canonical.entry_point)
        if defined is None:
            add("full_source", "full_source does not parse as Python")
        elif not defined:
            add("entry_point", f"full_source defines no top-level function {canonical.entry_point!r}")
    return rows


def task_set_violations(specs: Sequence[SpecPair], canonicals: Sequence[Canonical]) -> list[dict[str, Any]]:
    spec_ids = {spec.task_id for spec in specs}
    canonical_ids = {canonical.task_id for canonical in canonicals}
    rows = [_violation(SPEC_FILE, spec.row, spec.task_id, "task_id", "no canonical for this task")
            for spec in specs if spec.task_id not in canonical_ids]
    rows += [_violation(CANONICAL_FILE, canonical.row, canonical.task_id, "task_id", "no spec pair for this task")
             for canonical in canonicals if canonical.task_id not in spec_ids]
    return rows


def schema(inputs: Inputs, params: Params) -> Result:
    """The two files' rows against the documented schema (every row, not only the selected tasks)."""
    return schema_from(inputs.data.specs, inputs.data.canonicals)


def schema_from(specs: Sequence[SpecPair], canonicals: Sequence[Canonical]) -> Result:
    """Every violation of the documented schema, with its file and 1-based row."""
    if not specs and not canonicals:
        return Result.skipped(f"{SPEC_FILE} and {CANONICAL_FILE} hold no rows",
                              meta={"missing": [SPEC_PAIRS_KEY, CANONICALS_KEY]})
    rows = spec_violations(specs) + canonical_violations(canonicals) + task_set_violations(specs, canonicals)
    constraints = sum(len(spec.constraints) for spec in specs)
    summary = (f"{len(specs)} spec rows ({constraints} constraints) and {len(canonicals)} canonical rows parsed; "
               f"{len(rows)} violation(s).")
    return Result("defect" if rows else "pass", observed=len(rows),
                  expected=0, summary=summary, details=rows,
                  meta={"spec_rows": len(specs), "canonical_rows": len(canonicals), "constraints": constraints})
