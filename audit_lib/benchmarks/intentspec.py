"""IntentSpec audit: data integrity, canonical IVR == 0, reference checks, and a replay of the published IVR.

The pieces live in `intentspec_data` (typed rows), `intentspec_load` (fetching), `intentspec_schema`,
`intentspec_ivr` (the upstream IVR formula), `intentspec_exec` (sandboxed runs; see its docstring for how each
candidate is bound to `solution`) and `intentspec_checks`. This module is what the notebook calls.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from audit_lib.benchmarks.intentspec_checks import (
    CANONICAL_TITLE, EXPLOIT_TITLE, POWER_TITLE, PROVENANCE_TITLE, REFERENCES_TITLE, REPLAY_TITLE,
    canonical_ivr_zero_check, canonical_provenance_check, constraint_power_check, constraints_vs_references_check,
    exit_code_exploit_check, ivr_replay_check, model_replays,
)
from audit_lib.benchmarks.intentspec_exec import (
    CANONICAL, EXIT_ZERO_EXPLOIT, GENERATION, HUMANEVAL_PLUS_REFERENCE, OPENAI_REFERENCE, PROBE, Candidate,
    CandidateRun, canonical_candidate, generation_candidate, lifting_summary, probe_candidates, reference_candidate,
    run_candidates,
)
from audit_lib.benchmarks.intentspec_load import IntentSpecData, load_intentspec
from audit_lib.benchmarks.intentspec_schema import SCHEMA_TITLE, schema_check
from audit_lib.errors import ParameterError
from audit_lib.findings import Check

AUDIT = "intentspec"
CHECK_TITLES: dict[str, str] = {
    "schema": SCHEMA_TITLE, "canonical_ivr_zero": CANONICAL_TITLE, "canonical_provenance": PROVENANCE_TITLE,
    "constraints_vs_references": REFERENCES_TITLE, "ivr_replay": REPLAY_TITLE, "exit_code_exploit": EXPLOIT_TITLE,
    "constraint_power": POWER_TITLE,
}
CHECK_IDS = tuple(CHECK_TITLES)
# The checks whose verdicts come from sandboxed runs.
EXECUTED_CHECK_IDS = ("canonical_ivr_zero", "constraints_vs_references", "ivr_replay", "exit_code_exploit",
                      "constraint_power")

__all__ = ["AUDIT", "CHECK_IDS", "IntentSpecData", "ReplayRuns", "load_intentspec", "validate_params",
           "execute_all", "run_checks", "ivr_per_task_table", "plot_ivr_per_task"]


@dataclass(frozen=True)
class ReplayRuns:
    """Every sandboxed run of the audit, grouped by what was run."""

    canonical: Mapping[str, CandidateRun]
    references: Mapping[str, Mapping[str, CandidateRun]]
    generations: tuple[CandidateRun, ...]
    probes: tuple[CandidateRun, ...]
    duration_s: float


def validate_params(*, executor: Any, max_tasks: Any, timeout_s: Any) -> None:
    """Reject bad notebook parameters with a `ParameterError` naming the parameter."""
    if not isinstance(executor, str) or not executor:
        raise ParameterError(f"executor must be a non-empty string ('local', 'dask-local', 'dask://HOST:PORT'), "
                             f"got {executor!r}", parameter="executor")
    if not isinstance(max_tasks, int) or isinstance(max_tasks, bool) or max_tasks < 0:
        raise ParameterError(f"max_tasks must be an int >= 0 (0 = all tasks), got {max_tasks!r}",
                             parameter="max_tasks")
    if not isinstance(timeout_s, (int, float)) or isinstance(timeout_s, bool) or not 0 < timeout_s <= 300:
        raise ParameterError(f"timeout_s must be a number in (0, 300], got {timeout_s!r}", parameter="timeout_s")


def build_candidates(data: IntentSpecData) -> list[Candidate]:
    """Canonicals, both references, every cached generation and the exit-0 probe, for the selected tasks."""
    selected = set(data.selected)
    candidates = [canonical_candidate(c) for c in data.canonicals if c.task_id in selected]
    for label in (OPENAI_REFERENCE, HUMANEVAL_PLUS_REFERENCE):
        rows = data.references.get(label, {})
        candidates += [reference_candidate(label, rows[task]) for task in data.selected if task in rows]
    candidates += [generation_candidate(g) for g in data.generations if g.task_id in selected]
    candidates += probe_candidates(data.selected_specs, EXIT_ZERO_EXPLOIT)
    return candidates


def execute_all(data: IntentSpecData, *, executor: Any = "local", timeout_s: float = 5.0,
                progress: bool = False) -> ReplayRuns:
    """Run every candidate in the sandbox (one fresh child per constraint) and group the runs."""
    started = time.perf_counter()
    runs = run_candidates(build_candidates(data), data.specs_by_task, timeout_s=timeout_s, executor=executor,
                          progress=progress)
    grouped: dict[str, list[CandidateRun]] = {}
    for run in runs.values():
        grouped.setdefault(run.candidate.kind, []).append(run)
    references = {label: {r.candidate.task_id: r for r in grouped.get(label, [])}
                  for label in (OPENAI_REFERENCE, HUMANEVAL_PLUS_REFERENCE) if label in data.references}
    return ReplayRuns(
        canonical={r.candidate.task_id: r for r in grouped.get(CANONICAL, [])},
        references=references,
        generations=tuple(sorted(grouped.get(GENERATION, []), key=lambda r: r.candidate.key)),
        probes=tuple(sorted(grouped.get(PROBE, []), key=lambda r: r.candidate.key)),
        duration_s=time.perf_counter() - started,
    )


def rejected_by_canonical_and_references(runs: ReplayRuns) -> list[tuple[str, str]]:
    """(task, constraint) pairs that the canonical and every available reference all fail."""
    pairs = []
    for task_id, run in runs.canonical.items():
        for verdict in run.verdicts:
            if verdict.passed:
                continue
            others = [by_task.get(task_id) for by_task in runs.references.values()]
            if others and all(o is not None and not o.passed_by_id().get(verdict.constraint_id, True)
                              for o in others):
                pairs.append((task_id, verdict.constraint_id))
    return pairs


def run_checks(data: IntentSpecData, runs: ReplayRuns) -> dict[str, Check]:
    """All seven checks by id, in `CHECK_IDS` order; a check that raises becomes an `error` check."""
    if data.missing_required is not None:
        return {check_id: Check.skipped(check_id, CHECK_TITLES[check_id], data.missing_required)
                for check_id in CHECK_IDS}
    specs = data.selected_specs
    factories = {
        "schema": lambda: schema_check(data.specs, data.canonicals),
        "canonical_ivr_zero": lambda: canonical_ivr_zero_check(specs, runs.canonical, data.canonicals),
        "canonical_provenance": lambda: canonical_provenance_check(
            [c for c in data.canonicals if c.task_id in set(data.selected)], data.references,
            data.unavailable_under("humaneval")),
        "constraints_vs_references": lambda: constraints_vs_references_check(
            specs, runs.references, data.unavailable_under("humaneval")),
        "ivr_replay": lambda: ivr_replay_check(specs, runs.generations, data.published,
                                               all_tasks=data.all_tasks_selected, unavailable=data.unavailable),
        "exit_code_exploit": lambda: exit_code_exploit_check(specs, runs.probes, EXIT_ZERO_EXPLOIT),
        "constraint_power": lambda: constraint_power_check(specs, runs.generations,
                                                           rejected_by_canonical_and_references(runs)),
    }
    checks: dict[str, Check] = {}
    for check_id in CHECK_IDS:
        try:
            checks[check_id] = factories[check_id]()
        except Exception as exc:  # a broken check must not hide the others; its error is the finding
            checks[check_id] = Check.errored(check_id, CHECK_TITLES[check_id], exc)
    # Who decided the constraint verdicts behind the executed checks: the parent (lifted) or the child.
    judged = [*runs.canonical.values(), *(r for by_task in runs.references.values() for r in by_task.values()),
              *runs.generations]
    trust = {"constraint_runs": lifting_summary(judged), "probe_runs": lifting_summary(runs.probes)}
    for check_id in EXECUTED_CHECK_IDS:
        checks[check_id] = replace(checks[check_id], meta={**checks[check_id].meta, "sandbox_trust": trust})
    return checks


def ivr_per_task_table(data: IntentSpecData, runs: ReplayRuns) -> list[dict[str, Any]]:
    """One row per task: replayed and published IVR per model (None = excluded, no stated-passing solution)."""
    replays = model_replays(data.selected_specs, list(runs.generations), data.published)
    rows = []
    for spec in data.selected_specs:
        row: dict[str, Any] = {"task_id": spec.task_id}
        for replay in replays:
            ours = replay.replayed_task_ivr.get(spec.task_id)
            theirs = replay.published_task_ivr.get(spec.task_id)
            row[f"{replay.model} replayed"] = None if ours is None else ours.ivr
            row[f"{replay.model} published"] = None if theirs is None else theirs.ivr
        rows.append(row)
    return rows


def plot_ivr_per_task(rows: list[dict[str, Any]]):
    """Heatmap of IVR per task (columns) per model and source (rows); grey = excluded (no stated-passing solution)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    import numpy as np

    if not rows:
        return None
    series = [key for key in rows[0] if key != "task_id"]
    matrix = np.array([[np.nan if row[key] is None else row[key] for row in rows] for key in series], dtype=float)
    fig, ax = plt.subplots(figsize=(max(6.0, 0.26 * len(rows) + 2.5), 0.55 * len(series) + 1.6))
    cmap = matplotlib.colormaps["viridis"].copy()
    cmap.set_bad("#d0d7de")
    image = ax.imshow(np.ma.masked_invalid(matrix), aspect="auto", cmap=cmap, vmin=0.0, vmax=1.0)
    ax.set_yticks(range(len(series)), labels=series)
    ax.set_xticks(range(len(rows)), labels=[row["task_id"].split("/")[-1] for row in rows], rotation=90, fontsize=7)
    ax.set_xlabel("HumanEval task")
    ax.set_title("IntentSpec IVR per task (grey: no stated-passing solution, excluded from the mean)")
    fig.colorbar(image, ax=ax, label="IVR", fraction=0.03)
    fig.tight_layout()
    return fig
