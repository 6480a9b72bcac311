"""Checks that need no execution: amplification, duplicate inputs, the v0.1.9 -> v0.1.10 diff, pass@k."""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Sequence
from typing import Any

from audit_lib.benchmarks.humaneval_plus import passk
from audit_lib.benchmarks.humaneval_plus.audit import Inputs, Params
from audit_lib.benchmarks.humaneval_plus.data import PlusTask, task_sort_key
from audit_lib.findings import Result

# What each benchmark advertises: HumanEval+ "80x more tests than the original HumanEval" and MBPP+ "35x more
# tests than the original MBPP" (evalplus README and release notes).
CLAIMED_AMPLIFICATION: dict[str, float] = {"humaneval": 80.0, "mbpp": 35.0}
CLAIM_TOLERANCE = 0.25  # the claims are rounded ("~80x"); a ratio within 25% counts as matching
FEWEST_PLUS_SHOWN = 10
FULL_GRID_MAX_N = 50
PASS_AT_K_NS = (1, 5, 10, 20, 50, 100, 200)  # samples per task on the pass@k grid
PASS_AT_K_REPORTED = (1, 10, 100)  # the k values reported (and, past FULL_GRID_MAX_N, the only ones computed)
PASS_AT_K_LARGE_N = 100_000


def input_key(value: Any) -> Any:
    """A hashable key equal exactly when two inputs are the same value of the same types (1, 1.0, True differ)."""
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(input_key(item) for item in value))
    if isinstance(value, (set, frozenset)):
        return (type(value).__name__, tuple(sorted((input_key(item) for item in value), key=repr)))
    if isinstance(value, dict):
        return ("dict", tuple(sorted(((input_key(k), input_key(v)) for k, v in value.items()), key=repr)))
    if isinstance(value, float) and math.isnan(value):
        return ("float", "nan")
    return (type(value).__name__, value)


def amplification_rows(tasks: Sequence[PlusTask]) -> list[dict[str, Any]]:
    return [{"task_id": task.task_id, "base_inputs": len(task.base_input), "plus_inputs": len(task.plus_input),
             "ratio": (len(task.plus_input) / len(task.base_input)) if task.base_input else None}
            for task in tasks]


def amplification(inputs: Inputs, params: Params) -> Result:
    """Overall and per-task plus/base ratio against the advertised factor; tasks with the fewest plus inputs."""
    tasks, dataset = inputs.tasks, inputs.dataset
    if not tasks:
        return Result.skipped("no tasks loaded")
    rows = amplification_rows(tasks)
    base_total = sum(row["base_inputs"] for row in rows)
    plus_total = sum(row["plus_inputs"] for row in rows)
    ratios = [row["ratio"] for row in rows if row["ratio"] is not None]
    overall = plus_total / base_total if base_total else math.inf
    claimed = CLAIMED_AMPLIFICATION[dataset]
    no_plus = [row["task_id"] for row in rows if row["plus_inputs"] == 0]
    fewest = sorted(rows, key=lambda row: (row["plus_inputs"], row["task_id"]))[:FEWEST_PLUS_SHOWN]
    within_claim = abs(overall - claimed) <= CLAIM_TOLERANCE * claimed
    status = "pass" if within_claim and not no_plus else "quirk"
    observed = {"base_total": base_total, "plus_total": plus_total, "overall_ratio": round(overall, 2),
                "median_task_ratio": round(statistics.median(ratios), 2) if ratios else None,
                "min_plus": min(row["plus_inputs"] for row in rows),
                "median_plus": statistics.median(row["plus_inputs"] for row in rows),
                "tasks_without_plus_inputs": no_plus}
    summary = (f"{plus_total:,} plus vs {base_total:,} base inputs over {len(rows)} tasks: {overall:.1f}x overall "
               f"(claimed ~{claimed:g}x), median per-task ratio {observed['median_task_ratio']}x. "
               f"Fewest plus inputs: " + ", ".join(f"{r['task_id']} ({r['plus_inputs']})" for r in fewest[:5]))
    if no_plus:
        summary += f". {len(no_plus)} task(s) have no plus input at all: {', '.join(no_plus)}"
    return Result(status, observed=observed, expected=f"~{claimed:g}x",
                  summary=summary, details=fewest + [r for r in rows if r not in fewest],
                  meta={"tasks": len(rows), "fewest_plus": [r["task_id"] for r in fewest]})


def amplification_figure(tasks: Sequence[PlusTask]) -> Any:
    """Histogram of plus inputs per task and scatter of base vs plus counts."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    rows = amplification_rows(tasks)
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6))
    left.hist([row["plus_inputs"] for row in rows], bins=40, color="#4477aa")
    left.set_xlabel("plus inputs per task")
    left.set_ylabel("tasks")
    base = [row["base_inputs"] for row in rows]
    right.scatter(base, [row["plus_inputs"] for row in rows], s=10, color="#cc6677")
    if base and min(base) > 0 and max(base) >= 20 * min(base):  # a wide range reads best on a log axis
        from matplotlib.ticker import FormatStrFormatter

        right.set_xscale("log")
        right.xaxis.set_major_formatter(FormatStrFormatter("%g"))
    else:  # symlog's decade ticks would leave a narrow range (MBPP+: 3 to 6 base inputs) without a label
        right.xaxis.get_major_locator().set_params(integer=True)
    right.set_xlabel("base inputs per task")
    right.set_ylabel("plus inputs per task")
    left.set_title(f"Plus inputs per task ({len(rows)} tasks)", fontsize=10)
    right.set_title("Plus against base inputs, one dot per task", fontsize=10)
    fig.tight_layout()
    return fig


def duplicate_inputs(inputs: Inputs, params: Params) -> Result:
    """Plus inputs equal (same types and values) to a base input, and repeated plus inputs within a task."""
    tasks = inputs.tasks
    if not tasks:
        return Result.skipped("no tasks loaded")
    rows: list[dict[str, Any]] = []
    plus_total = 0
    for task in tasks:
        base_keys = {input_key(inp) for inp in task.base_input}
        plus_counts = Counter(input_key(inp) for inp in task.plus_input)
        plus_total += len(task.plus_input)
        in_base = sum(count for key, count in plus_counts.items() if key in base_keys)
        repeated = sum(count - 1 for count in plus_counts.values() if count > 1)
        if in_base or repeated:
            first = next((inp for inp in task.plus_input if input_key(inp) in base_keys
                          or plus_counts[input_key(inp)] > 1), None)
            rows.append({"task_id": task.task_id, "plus_inputs": len(task.plus_input),
                         "plus_equal_to_base": in_base, "repeated_within_plus": repeated,
                         "example": repr(first)[:200]})
    equal_to_base = sum(row["plus_equal_to_base"] for row in rows)
    repeated_total = sum(row["repeated_within_plus"] for row in rows)
    status = "pass" if not rows else "quirk"
    summary = (f"{equal_to_base:,} plus inputs repeat a base input and {repeated_total:,} repeat an earlier plus "
               f"input, in {len(rows)} of {len(tasks)} tasks ({plus_total:,} plus inputs in all). "
               "Duplicates add run time but no new evidence, so the effective amplification is lower.")
    return Result(status,
                  observed={"plus_equal_to_base": equal_to_base, "repeated_within_plus": repeated_total,
                            "tasks_affected": len(rows)},
                  expected={"plus_equal_to_base": 0, "repeated_within_plus": 0}, summary=summary,
                  details=sorted(rows, key=lambda r: -(r["plus_equal_to_base"] + r["repeated_within_plus"])))


VERSIONED_TEXT_FIELDS = ("prompt", "entry_point", "canonical_solution", "contract", "atol")


def version_diff_rows(old: Sequence[PlusTask], new: Sequence[PlusTask]) -> list[dict[str, Any]]:
    """One row per changed (task, field); inputs are compared as multisets, so reordering is not a change."""
    old_by_id = {task.task_id: task for task in old}
    new_by_id = {task.task_id: task for task in new}
    rows: list[dict[str, Any]] = []
    for task_id in sorted(set(old_by_id) | set(new_by_id), key=task_sort_key):
        before, after = old_by_id.get(task_id), new_by_id.get(task_id)
        if before is None or after is None:
            rows.append({"task_id": task_id, "field": "task", "change": "added" if before is None else "removed"})
            continue
        for name in VERSIONED_TEXT_FIELDS:
            if getattr(before, name) != getattr(after, name):
                rows.append({"task_id": task_id, "field": name, "change": "changed",
                             "before": str(getattr(before, name))[:300], "after": str(getattr(after, name))[:300]})
        if before.original_test != after.original_test:
            rows.append({"task_id": task_id, "field": "test", "change": "changed"})
        for name in ("base_input", "plus_input"):
            old_counts = Counter(input_key(inp) for inp in getattr(before, name))
            new_counts = Counter(input_key(inp) for inp in getattr(after, name))
            removed, added = sum((old_counts - new_counts).values()), sum((new_counts - old_counts).values())
            if removed or added:
                rows.append({"task_id": task_id, "field": name, "change": "inputs",
                             "before": len(getattr(before, name)), "after": len(getattr(after, name)),
                             "removed": removed, "added": added})
    return rows


def version_diff(inputs: Inputs, params: Params) -> Result:
    """What changed between two releases; changed tasks make scores across versions incomparable."""
    old, new = inputs.old_release_tasks, inputs.tasks
    rows = version_diff_rows(old, new)
    tasks_changed = sorted({row["task_id"] for row in rows}, key=task_sort_key)
    by_field = Counter(row["field"] for row in rows)
    removed = sum(row.get("removed", 0) for row in rows)
    added = sum(row.get("added", 0) for row in rows)
    summary = (f"{len(tasks_changed)} task(s) differ: {', '.join(tasks_changed) or 'none'}. Fields: "
               + (", ".join(f"{field} x{count}" for field, count in sorted(by_field.items())) or "none")
               + f". Inputs removed {removed:,}, added {added:,}; plus inputs "
               f"{sum(len(t.plus_input) for t in old):,} -> {sum(len(t.plus_input) for t in new):,}.")
    return Result("quirk" if rows else "pass",
                  observed={"tasks_changed": tasks_changed, "fields": dict(by_field), "inputs_removed": removed,
                            "inputs_added": added},
                  expected="identical tasks, or changes listed in the release notes", summary=summary, details=rows)


def pass_at_k(inputs: Inputs, params: Params) -> Result:
    """The stable estimator against exact binomials on a grid, plus the naive `1-(1-c/n)^k` shortcut's error."""
    ns, ks, large_n = PASS_AT_K_NS, PASS_AT_K_REPORTED, PASS_AT_K_LARGE_N
    worst_gap = 0.0
    grid_points = 0
    for n in ns:
        # Every k for small n; the reported k values for large n (exact binomials get slow).
        k_values = range(1, n + 1) if n <= FULL_GRID_MAX_N else [k for k in ks if k <= n]
        for c in range(n + 1):
            for k in k_values:
                worst_gap = max(worst_gap, abs(passk.pass_at_k(n, c, k) - passk.pass_at_k_exact(n, c, k)))
                grid_points += 1
    # Far outside the grid the stable form must stay finite and agree with exact integer arithmetic.
    large_stable = passk.pass_at_k(large_n, large_n // 1000, 100)
    large_exact = passk.pass_at_k_exact(large_n, large_n // 1000, 100)
    worst_gap = max(worst_gap, abs(large_stable - large_exact))
    table = passk.shortcut_error_table([n for n in ns if n >= 10], ks)
    details = [{"n": row.n, "c": row.c, "k": row.k, "unbiased": round(row.unbiased, 6),
                "naive_1_minus_(1-c/n)^k": round(row.naive, 6), "naive_minus_unbiased": round(row.error, 6)}
               for row in table]
    worst_shortcut = max(table, key=lambda row: abs(row.error))
    status = "pass" if worst_gap < 1e-9 else "defect"
    summary = (f"stable formula vs exact binomials over {grid_points:,} (n, c, k) points and n={large_n:,}: "
               f"largest gap {worst_gap:.2e}. The naive shortcut is off by up to {abs(worst_shortcut.error):.3f} "
               f"(n={worst_shortcut.n}, c={worst_shortcut.c}, k={worst_shortcut.k}: naive "
               f"{worst_shortcut.naive:.3f} vs unbiased {worst_shortcut.unbiased:.3f}).")
    return Result(status,
                  observed={"max_abs_gap_vs_exact": worst_gap, "grid_points": grid_points,
                            "max_naive_error": abs(worst_shortcut.error)},
                  expected={"max_abs_gap_vs_exact": "< 1e-9"}, summary=summary, details=details)


__all__ = ["CLAIMED_AMPLIFICATION", "amplification", "amplification_figure", "amplification_rows",
           "duplicate_inputs", "input_key", "pass_at_k", "version_diff", "version_diff_rows"]
