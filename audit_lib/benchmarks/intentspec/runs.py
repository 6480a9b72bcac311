"""Run IntentSpec candidates (canonicals, references, generations, probes) against constraints.

One `TestsJob` per candidate: the candidate answers calls in its job and each constraint runs in the sandbox's judge
(`sandbox.run_tests`), so a verdict never rests on an exit code, where upstream runs solution + test as one script and
passes it on exit 0 (recorded for the exit-0 probe, `exit_code=True`). A canonical is bound to `solution` by the alias
`scripts/validate_benchmark.py` appends, a HumanEval reference by its own `prompt + canonical_solution` and the alias; a
cached generation defines `solution` itself.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from audit_lib.benchmarks.intentspec.data import Canonical, Constraint, Generation, SpecPair
from audit_lib.sandbox import Limits, TestsJob, TestsResult, run_many, trust_counts

CANONICAL = "canonical"
OPENAI_REFERENCE = "openai_humaneval"
HUMANEVAL_PLUS_REFERENCE = "humaneval_plus"
GENERATION = "generation"
PROBE = "probe"
SOLUTION_NAME = "solution"  # the name every constraint calls the candidate by
STDERR_TAIL_CHARS = 600

# Ends the child with status 0 the moment a constraint calls it, before any assertion runs.
EXIT_ZERO_EXPLOIT = "def solution(*args, **kwargs):\n    import os\n    os._exit(0)\n"


@dataclass(frozen=True)
class Candidate:
    """A program to judge against one task's constraints; `label` is the model slug or the reference source."""

    kind: str
    label: str
    task_id: str
    sample: int
    program: str

    @property
    def key(self) -> tuple[str, str, str, int]:
        return (self.kind, self.label, self.task_id, self.sample)


@dataclass(frozen=True)
class ConstraintVerdict:
    """The sandbox's verdict on one constraint; `exit_code` is the child's raw status when the sandbox reports it."""

    constraint_id: str
    status: str
    error_type: str | None
    error_message: str | None
    stderr_tail: str
    exit_code: int | None
    duration_s: float
    trust: str = "judge"   # who decided the verdict (the sandbox's judge)
    reason: str | None = None   # e.g. "comparison_overload"
    cpu_s: float = 0.0          # the run's CPU time, measured by the sandbox's supervisor

    @property
    def passed(self) -> bool:
        return self.status == "pass"


@dataclass(frozen=True)
class CandidateRun:
    """All constraint verdicts of one candidate, in the task's constraint order."""

    candidate: Candidate
    verdicts: tuple[ConstraintVerdict, ...]

    def passed_by_id(self) -> dict[str, bool]:
        return {verdict.constraint_id: verdict.passed for verdict in self.verdicts}

    def verdict(self, constraint_id: str) -> ConstraintVerdict:
        for verdict in self.verdicts:
            if verdict.constraint_id == constraint_id:
                return verdict
        raise KeyError(f"{self.candidate.key}: no verdict for constraint {constraint_id!r}")


def solution_program(text: str) -> str:
    return textwrap.dedent(text)


def constraint_snippet(constraint: Constraint) -> str:
    return textwrap.dedent(constraint.test_code) + "\n"


def alias_program(source: str, entry_point: str) -> str:
    """`source` with `solution` bound to its entry point (what validate_benchmark.py does for canonicals)."""
    return textwrap.dedent(source + f"\nsolution = {entry_point}\n")


def canonical_candidate(canonical: Canonical) -> Candidate:
    return Candidate(CANONICAL, "canonicals.jsonl", canonical.task_id, 0,
                     alias_program(canonical.full_source, canonical.entry_point))


def reference_candidate(kind: str, row: Mapping[str, Any]) -> Candidate:
    """A HumanEval-format row (`task_id`, `prompt`, `canonical_solution`, `entry_point`) bound to `solution`."""
    return Candidate(kind, kind, str(row["task_id"]), 0,
                     alias_program(str(row["prompt"]) + str(row["canonical_solution"]), str(row["entry_point"])))


def generation_candidate(generation: Generation) -> Candidate:
    return Candidate(GENERATION, generation.model_slug, generation.task_id, generation.sample,
                     solution_program(generation.solution))


def probe_candidates(specs: Iterable[SpecPair], source: str = EXIT_ZERO_EXPLOIT, *, label: str = "exit_zero",
                     samples: int = 1) -> list[Candidate]:
    return [Candidate(PROBE, label, spec.task_id, sample, solution_program(source))
            for spec in specs for sample in range(samples)]


def ordered_constraints(spec: SpecPair) -> list[Constraint]:
    """Unique constraints in file order; a duplicated id keeps its last definition, as upstream's dict does."""
    return list(spec.constraint_map().values())


def build_jobs(candidates: Sequence[Candidate], specs_by_task: Mapping[str, SpecPair],
               limits: Limits) -> list[TestsJob]:
    jobs = []
    for candidate in candidates:
        spec = specs_by_task[candidate.task_id]
        snippets = tuple(constraint_snippet(c) for c in ordered_constraints(spec))
        jobs.append(TestsJob(key=candidate.key, program=candidate.program, snippets=snippets,
                             entry_points=(SOLUTION_NAME,), limits=limits, exit_code=candidate.kind == PROBE))
    return jobs


def judged_summary(runs: Iterable[CandidateRun]) -> dict[str, int]:
    """How many constraint runs there were and how many the sandbox's judge decided."""
    return trust_counts((v for run in runs if run is not None for v in run.verdicts), "constraint_runs")


def make_limits(timeout_s: float) -> Limits:
    """Sandbox limits with the upstream per-constraint wall-clock timeout (5 s by default)."""
    return Limits(timeout_s=timeout_s)


def run_candidates(candidates: Sequence[Candidate], specs_by_task: Mapping[str, SpecPair], *,
                   timeout_s: float = 5.0, executor: Any = None, progress: bool = True) -> dict[tuple, CandidateRun]:
    """Judge every candidate against all constraints of its task in the sandbox; results keyed by `Candidate.key`."""
    by_key = {candidate.key: candidate for candidate in candidates}
    if len(by_key) != len(candidates):
        raise ValueError("two candidates share a key (kind, label, task_id, sample)")
    jobs = build_jobs(candidates, specs_by_task, make_limits(timeout_s))
    runs: dict[tuple, CandidateRun] = {}
    for key, result in run_many(jobs, executor, progress=progress, progress_unit="candidates"):
        candidate = by_key[tuple(key)]
        constraints = ordered_constraints(specs_by_task[candidate.task_id])
        runs[candidate.key] = CandidateRun(candidate, _verdicts(constraints, result))
    missing = [key for key in by_key if key not in runs]
    if missing:
        raise RuntimeError(f"the executor returned no result for {len(missing)} candidates, e.g. {missing[:3]}")
    return runs


def _verdicts(constraints: Sequence[Constraint], result: TestsResult) -> tuple[ConstraintVerdict, ...]:
    snippets = sorted(result.snippets, key=lambda snippet: snippet.index)
    if len(snippets) != len(constraints):
        return tuple(ConstraintVerdict(c.id, "harness_error", "SandboxHarnessError",
                                       f"job status {result.status}: {len(snippets)} snippet results for "
                                       f"{len(constraints)} constraints", "", None, 0.0) for c in constraints)
    return tuple(
        ConstraintVerdict(
            constraint_id=constraint.id,
            status=snippet.status,
            error_type=snippet.error_type,
            error_message=snippet.error_message,
            stderr_tail=(snippet.stderr or "")[-STDERR_TAIL_CHARS:],
            exit_code=getattr(snippet, "exit_code", None),
            duration_s=snippet.duration_s,
            trust=snippet.trust,
            reason=snippet.reason,
            cpu_s=snippet.cpu_s,
        )
        for constraint, snippet in zip(constraints, snippets)
    )
