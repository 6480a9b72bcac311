"""Every sandboxed run of the audit: which candidates are judged, one batch through the executor, grouped by kind."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from audit_lib.benchmarks.intentspec.load import IntentSpecData
from audit_lib.benchmarks.intentspec.runs import (
    CANONICAL,
    EXIT_ZERO_EXPLOIT,
    GENERATION,
    HUMANEVAL_PLUS_REFERENCE,
    OPENAI_REFERENCE,
    PROBE,
    Candidate,
    CandidateRun,
    canonical_candidate,
    generation_candidate,
    probe_candidates,
    reference_candidate,
    run_candidates,
)


@dataclass(frozen=True)
class ReplayRuns:
    """Every sandboxed run of the audit, grouped by what was run."""

    canonical: Mapping[str, CandidateRun]
    references: Mapping[str, Mapping[str, CandidateRun]]
    generations: tuple[CandidateRun, ...]
    probes: tuple[CandidateRun, ...]
    duration_s: float


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


def execute_replay(data: IntentSpecData, *, executor: Any = "local", timeout_s: float = 5.0,
                   progress: bool = True) -> ReplayRuns:
    """Run every candidate in the sandbox (one fresh child per constraint) in one batch, and group the runs."""
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
