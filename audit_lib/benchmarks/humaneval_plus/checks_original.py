"""OpenAI's original solutions and tests against HumanEval+ / MBPP+.

OpenAI's canonical on the plus inputs, and both canonicals against the original tests (MBPP+: EvalPlus's canonical
against MBPP's assert lines).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from audit_lib import timing
from audit_lib.benchmarks.humaneval_plus.audit import Inputs, Params
from audit_lib.benchmarks.humaneval_plus.checks_canonical import kinds_text
from audit_lib.benchmarks.humaneval_plus.data import Dataset, HumanEvalTask, PlusTask, task_sort_key
from audit_lib.benchmarks.humaneval_plus.groundtruth import GroundTruth
from audit_lib.benchmarks.humaneval_plus.inputs import naming_the_selection
from audit_lib.benchmarks.humaneval_plus.programs import assert_program, check_snippet
from audit_lib.benchmarks.humaneval_plus.replay import (
    ASSERT_TEST_TIMEOUT_S,
    InputVerdict,
    run_original_tests,
    score_split,
)
from audit_lib.benchmarks.humaneval_plus.runs import SPLITS, Split, SplitRun, inputs_of
from audit_lib.findings import Result
from audit_lib.sandbox import trust_counts
from audit_lib.timing.reruns import SnippetTarget, rerun_snippets_alone

if TYPE_CHECKING:
    from audit_lib.benchmarks.humaneval_plus.timing_rerun import Classification

# Keys that come from quiet reruns timed on this machine; the rest are properties of the benchmark.
MACHINE_DEPENDENT_KEYS = ["tasks_failing_timing", "timing_confirmed", "timing_borderline", "timing_not_a_failure",
                          "timing_unmeasured", "speed_curve"]


def disagreement_rows(tasks: Sequence[PlusTask], dataset: Dataset, runs: Mapping[tuple[str, Split], SplitRun],
                      gt: GroundTruth) -> list[dict[str, Any]]:
    rows = []
    for task in tasks:
        failing: list[tuple[Split, InputVerdict]] = []
        for split in SPLITS:
            run = runs.get((task.task_id, split))
            if run is None:
                continue
            failing += [(split, v) for v in score_split(task, dataset, run, gt.run(task.task_id, split))
                        if not v.passed]
        if failing:
            kinds = Counter(verdict.kind for _, verdict in failing)
            split, first = failing[0]
            rows.append({"task_id": task.task_id, "failing_inputs": len(failing),
                         "base_failing": sum(1 for s, _ in failing if s == "base"),
                         "plus_failing": sum(1 for s, _ in failing if s == "plus"),
                         "failure_kinds": dict(kinds), "first_split": split, "first_input_index": first.index,
                         "first_input": repr(inputs_of(task, split)[first.index])[:200],
                         "first_counterexample": first.detail[:300]})
    return rows


def timing_observed(classification: Classification, min_time_limit: float) -> dict[str, Any]:
    from audit_lib import timing

    return {"tasks_failing_deterministic": list(classification.deterministic),
            "deterministic_count": len(classification.deterministic),
            "tasks_failing_timing": classification.rows(),
            **{f"timing_{state}": classification.count(state)
               for state in ("confirmed", "borderline", "not_a_failure", "unmeasured")},
            "speed_curve": [list(point) for point in
                            classification.speed_curve(timing.evalplus_limit_rule(min_time_limit))]}



def original_canonical_vs_plus(inputs: Inputs, params: Params) -> Result:
    """OpenAI's original canonical solutions scored on HumanEval+ with EvalPlus's rules and time limits."""
    result = original_canonical_vs_plus_from(inputs.tasks, inputs.dataset, inputs.original_canonical_runs,
                                             inputs.ground_truth, inputs.original_canonical_timing,
                                             min_time_limit=params.min_time_limit)
    return naming_the_selection(result, inputs)


def original_canonical_vs_plus_from(tasks: Sequence[PlusTask], dataset: Dataset,
                                    runs: Mapping[tuple[str, Split], SplitRun], gt: GroundTruth,
                                    classification: Classification | None = None, *,
                                    min_time_limit: float = 1.0) -> Result:
    """Tasks where OpenAI's canonical fails HumanEval+ under EvalPlus's rules.

    Every input is scored; with a `classification` (see `timing_rerun.confirm_timing`), the failures split into
    deterministic and timing."""
    scored = sorted({task_id for task_id, _ in runs}, key=task_sort_key)
    not_scored = [task.task_id for task in tasks if task.task_id not in set(scored)]
    if not scored:
        return Result.skipped(f"no original canonical solution was run for the {len(tasks)} selected task(s)")
    rows = disagreement_rows(tasks, dataset, runs, gt)
    kinds: Counter[str] = Counter()
    for row in rows:
        kinds.update(row["failure_kinds"])
    base_fail = sum(1 for row in rows if row["base_failing"])
    if classification is not None:  # only confirmed failures are counted as failing
        lead = (f"OpenAI's canonical fails HumanEval+ on {classification.failure_split().failing()} of "
                f"{len(scored)} tasks ({classification.failure_split().failing_headline('tasks')})")
    else:
        lead = f"OpenAI's canonical fails HumanEval+ on {len(rows)} of {len(scored)} tasks"
    summary = (f"{lead}; {base_fail} "
               f"already fail the base inputs; failing inputs: {kinds_text(kinds)}. Tasks: "
               + (", ".join(f"{r['task_id']} ({r['failing_inputs']})" for r in rows[:12]) or "none") + "."
               + (f" Not scored (no original solution): {', '.join(not_scored)}." if not_scored else ""))
    observed: dict[str, Any] = {"tasks_disagreeing": len(rows), "tasks_scored": len(scored),
                                "tasks_not_scored": not_scored, "tasks_failing_base": base_fail,
                                "failing_input_kinds": dict(kinds)}
    meta: dict[str, Any] = {}
    if classification is not None:
        observed.update(timing_observed(classification, min_time_limit))
        meta = {"failure_split": classification.failure_split().summary(
                    deterministic_key="tasks_failing_deterministic", timing_key="tasks_failing_timing"),
                "machine_dependent": list(MACHINE_DEPENDENT_KEYS),
                "timing_rule": f"EvalPlus limit max({min_time_limit} s, 4 x canonical CPU s), both re-run alone; an "
                               "input that times out again counts the CPU time it used (a lower bound); the speed "
                               "curve adds the passing inputs whose parallel-pass CPU time fails on a 0.25x machine",
                "reruns": len(classification.reruns)}
    return Result("quirk" if rows else "pass",
                  observed=observed, expected={"tasks_disagreeing": 0}, summary=summary, details=rows, meta=meta)



def original_test_jobs(tasks: Sequence[PlusTask], dataset: Dataset,
                       originals: Mapping[str, HumanEvalTask] | None) -> list[tuple[str, str, str, str]]:
    """The jobs that run the canonicals against the original tests.

    EvalPlus's canonical (and, for HumanEval, OpenAI's): `(key, program, snippet, entry point)`, the entry point being
    the name the snippet calls (bound in the judge to the program's function)."""
    jobs = []
    for task in tasks:
        if not task.original_test:
            continue
        snippet = check_snippet(task.original_test, task.entry_point) if dataset == "humaneval" \
            else task.original_test
        jobs.append((f"evalplus::{task.task_id}", task.program, snippet, task.entry_point))
        if originals is not None and task.task_id in originals:
            original = originals[task.task_id]
            jobs.append((f"openai::{task.task_id}", assert_program(original.prompt, original.canonical_solution),
                         check_snippet(original.test, original.entry_point), original.entry_point))
    return jobs


def original_tests_split(results: Mapping[str, Any], jobs: Sequence[tuple[str, str, str, str]], limit_s: float
                         ) -> tuple[dict[str, Any], dict[str, Any], timing.FailureSplit]:
    """The failing (canonical, task) runs by cause.

    A timeout is re-run alone, lifted where the test's shape allows, as the check ran it."""
    program_of = {key: (program, snippet, entry_point) for key, program, snippet, entry_point in jobs}
    failures, targets = [], []
    for key, result in results.items():
        snippet = result.snippets[0] if result.snippets else None
        status = snippet.status if snippet is not None else str(result.status)
        if status in ("pass", "harness_error"):
            continue
        failures.append(timing.FailedRun(key, status, limit_s))
        if timing.cause_of(status) == "timing" and key in program_of:
            program, snippet, entry_point = program_of[key]
            targets.append(SnippetTarget(key, program, snippet, entry_points=(entry_point,), limit_s=limit_s))
    measured = [(key, result.snippets[0].cpu_s if result.snippets else 0.0) for key, result in results.items()]
    return timing.fixed_limit_findings(
        "runs", failures, rerun_snippets_alone(targets), measured, limit_s,
        deterministic_key="runs_failing_deterministic", timing_key="runs_failing_timing",
        timing_rule=f"{limit_s:g} s per test run (ours: the original harnesses set their own); a timed-out run is "
                    "re-run alone on CPU time")


def original_tests_vs_canonical(inputs: Inputs, params: Params) -> Result:
    """The canonical solutions against the benchmark's original tests (HumanEval's `check`, MBPP's asserts)."""
    originals = inputs.originals if inputs.dataset == "humaneval" else None
    jobs = original_test_jobs(inputs.tasks, inputs.dataset, originals)
    results = run_original_tests(jobs, executor=params.executor)
    name = ("HumanEval's `check` tests" if inputs.dataset == "humaneval"
            else "MBPP+'s `assertion` field (MBPP's assert lines as EvalPlus ships them)")
    return naming_the_selection(original_tests_vs_canonical_from(inputs.tasks, results, test_name=name, jobs=jobs),
                                inputs)


def original_tests_vs_canonical_from(tasks: Sequence[PlusTask], results: Mapping[str, Any], *,
                                     test_name: str, jobs: Sequence[tuple[str, str, str, str]] = (),
                                     limit_s: float = ASSERT_TEST_TIMEOUT_S) -> Result:
    """Which canonical solutions fail the benchmark's original tests.

    `jobs` (key, program, snippet, entry point) lets a timeout be re-run alone, so a run the machine's load cut short is
    not reported as the canonical's failure."""
    if not results:
        return Result.skipped(f"no task carries its original tests ({test_name})")
    rows = []
    counts: Counter[str] = Counter()
    for key, result in sorted(results.items(), key=lambda item: (item[0].split("::")[0],
                                                                 task_sort_key(item[0].split("::")[1]))):
        which, task_id = key.split("::")
        counts[f"{which}_run"] += 1
        snippet = result.snippets[0] if result.snippets else None
        status = snippet.status if snippet is not None else result.status
        if status != "pass":
            counts[f"{which}_failing"] += 1
            rows.append({"canonical": which, "task_id": task_id, "status": status,
                         "error": (f"{snippet.error_type}: {snippet.error_message}" if snippet is not None
                                   else str(result.status))[:300],
                         "trust": getattr(snippet, "trust", "judge")})
    split_observed, split_meta, split = original_tests_split(results, jobs, limit_s)
    failing = len(split.deterministic) + sum(1 for v in split.timing if v.state != "not_a_failure")
    summary = (f"Against {test_name}: EvalPlus's canonical fails {counts['evalplus_failing']} of "
               f"{counts['evalplus_run']} tasks" + (f", OpenAI's canonical fails {counts['openai_failing']} of "
                                                   f"{counts['openai_run']}" if counts["openai_run"] else "")
               + f" ({split.headline()}). "
               + (", ".join(f"{r['canonical']}:{r['task_id']} ({r['status']})" for r in rows[:12]) or ""))
    return Result("defect" if failing else "pass",
                  observed={**dict(counts), **split_observed}, expected={"evalplus_failing": 0, "openai_failing": 0},
                  summary=summary.strip(), details=rows,
                  meta={"tests": test_name, "sandbox_trust": trust_counts((s for r in results.values() for s in r.snippets), "test_runs"),
                        **split_meta})


__all__ = ["check_original_canonical_vs_plus", "check_original_tests_vs_canonical", "disagreement_rows",
           "original_test_jobs"]
