"""Checks that execute code in the sandbox and compare the values in the parent with EvalPlus's rules."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from audit_lib import executors, sandbox
from audit_lib.benchmarks.humaneval_plus_data import Dataset, HumanEvalTask, PlusTask
from audit_lib.benchmarks.humaneval_plus_exec import (
    EVALPLUS_SAMPLE_BUDGET,
    SPLITS,
    InputOutcome,
    Split,
    SplitRun,
    inputs_of,
    run_programs,
)
from audit_lib.benchmarks.humaneval_plus_groundtruth import DIGEST_ABOVE_BYTES, GroundTruth
from audit_lib.benchmarks.humaneval_plus_programs import (
    CallableProgram,
    assert_program,
    candidate_program,
    check_snippet,
    contract_lines,
    contract_program,
)
from audit_lib.benchmarks.humaneval_plus_static import task_sort_key
from audit_lib.compare import SampleComparer, ValueDigest, canonical_encoding, decided_by_inequality, digest_of
from audit_lib.findings import Check

DEFAULT_MIN_TIME_LIMIT_S = 1.0  # evalplus/config.py DEFAULT_MIN_TIME_LIMIT (evalplus HEAD 26d6d00, PyPI 0.3.1)
GT_TIME_LIMIT_FACTOR = 4.0  # evalplus/config.py DEFAULT_GT_TIME_LIMIT_FACTOR
ASSERT_TEST_TIMEOUT_S = 30.0
# Contracts are input-validity asserts, not scored code: they get a generous limit of their own.
CONTRACT_INPUT_TIMEOUT_S = 10.0

GROUND_TRUTH_TITLE = "Expected outputs from the canonical solutions, and a second run for nondeterminism"
TIME_LIMIT_TITLE = "Inputs whose time limit is set by 4x the canonical time rather than the floor"
CONTRACT_TITLE = "Inputs that violate the task's own input contract"
ORIGINAL_CANONICAL_TITLE = "OpenAI's original canonical solutions scored on HumanEval+ with EvalPlus's rules"
ORIGINAL_TESTS_TITLE = "Canonical solutions against the original check tests"
ERRATA_TITLE = "Tasks the community errata changes, and whether HumanEval+ inputs tell old from new"


def time_limits(ground_truth_times: Sequence[float], *, min_time_limit: float,
                factor: float = GT_TIME_LIMIT_FACTOR) -> list[float]:
    """EvalPlus's per-input limit: `max(min_time_limit, factor x canonical time)`."""
    return [max(min_time_limit, factor * t) for t in ground_truth_times]


@dataclass(frozen=True)
class InputVerdict:
    """One input of a sample under EvalPlus's rules."""

    index: int
    passed: bool
    kind: str  # match | wrong_value | exception | timeout | unserializable | not_run | no_expected_output
    detail: str


def score_split(task: PlusTask, dataset: Dataset, run: SplitRun, expected: SplitRun) -> list[InputVerdict]:
    """Every input's verdict (EvalPlus with `--test-details`: no early stop), atol promotion carried along."""
    comparer = SampleComparer(dataset=dataset, entry_point=task.entry_point, atol=task.atol)
    inputs = inputs_of(task, run.split)
    verdicts = []
    for index, (got, want) in enumerate(zip(run.outcomes, expected.outcomes)):
        if want.kind != "value":
            verdicts.append(InputVerdict(index, False, "no_expected_output", want.describe()))
        elif got.kind != "value":
            verdicts.append(InputVerdict(index, False, got.kind, got.describe()))
        else:
            result = comparer.compare(inputs[index], got.value, want.value)
            verdicts.append(InputVerdict(index, result.passed, "match" if result.passed else "wrong_value",
                                         "" if result.passed else f"got {got.describe()}, expected "
                                         f"{want.describe()} ({result.reason})"))
    return verdicts


def ground_truth_problems(gt: GroundTruth) -> list[dict[str, Any]]:
    """Every input without an expected output: `canonical_failure`, or `exceeds_sandbox_limits` when it only hit
    a limit of ours. EvalPlus runs the canonical in-process with no time or memory limit and keeps any output, so
    our 30 s, the memory cap and the size of a value the sandbox can send are not the canonical's fault."""
    rows = []
    for (task_id, split), run in sorted(gt.runs.items(), key=lambda item: (task_sort_key(item[0][0]), item[0][1])):
        if run.load_error:
            rows.append({"problem": "canonical_failure", "task_id": task_id, "split": split, "input_index": None,
                         "kind": "load_error", "detail": run.load_error[:300]})
        for index, outcome in enumerate(run.outcomes):
            if outcome.kind != "value":
                limited = outcome.kind in ("timeout", "unserializable") or outcome.exc_type == "MemoryError"
                rows.append({"problem": "exceeds_sandbox_limits" if limited else "canonical_failure",
                             "task_id": task_id, "split": split, "input_index": index, "kind": outcome.kind,
                             "detail": outcome.describe()})
    return rows


def _limit_rows_text(rows: Sequence[Mapping[str, Any]]) -> str:
    return ", ".join(f"{row['task_id']} {row['split']}[{row['input_index']}]: {row['detail']}" for row in rows[:5]) \
        or "none"


def _same_outcome(first: InputOutcome, second: InputOutcome) -> bool:
    if first.kind != second.kind:
        return False
    if first.kind == "exception":
        return first.exc_type == second.exc_type
    if first.kind != "value":
        return True
    if isinstance(first.value, ValueDigest) or isinstance(second.value, ValueDigest):
        return _digest(first.value) == _digest(second.value)
    return canonical_encoding(first.value) == canonical_encoding(second.value)


def _digest(value: Any) -> str:
    return value.sha256 if isinstance(value, ValueDigest) else digest_of(value).sha256


def check_ground_truth(tasks: Sequence[PlusTask], dataset: Dataset, first: GroundTruth,
                       second: Mapping[tuple[str, Split], SplitRun]) -> Check:
    """Inputs on which the canonical raises or times out, and inputs whose output differs between two runs."""
    if not tasks:
        return Check.skipped("ground_truth", GROUND_TRUTH_TITLE, "no tasks loaded")
    problems = ground_truth_problems(first)
    differing: list[dict[str, Any]] = []
    for task in tasks:
        for split in SPLITS:
            run_a, run_b = first.run(task.task_id, split), second[(task.task_id, split)]
            comparer = SampleComparer(dataset=dataset, entry_point=task.entry_point, atol=task.atol)
            for index, (a, b) in enumerate(zip(run_a.outcomes, run_b.outcomes)):
                if _same_outcome(a, b):
                    continue
                accepted = a.kind == b.kind == "value" and \
                    comparer.compare(inputs_of(task, split)[index], b.value, a.value).passed
                differing.append({"task_id": task.task_id, "split": split, "input_index": index,
                                  "first_run": a.describe(), "second_run": b.describe(),
                                  "accepted_by_evalplus_rules": accepted})
    total_inputs = sum(len(task.base_input) + len(task.plus_input) for task in tasks)
    harmful = [row for row in differing if not row["accepted_by_evalplus_rules"]]
    # An input beyond the sandbox's limits is not the canonical's fault, but it has no expected output here, so
    # every sample fails it: a quirk of this replay, not a defect of the benchmark.
    failures = [row for row in problems if row["problem"] == "canonical_failure"]
    not_recorded = [row for row in problems if row["problem"] == "exceeds_sandbox_limits"]
    status = "defect" if failures or harmful else ("quirk" if differing or not_recorded else "pass")
    kinds = Counter(row["kind"] for row in failures)
    summary = (f"{total_inputs:,} inputs over {len(tasks)} tasks ({first.tasks_from_cache} tasks from the cache "
               f"{first.cache_path.name}, {first.tasks_computed} computed now). Canonical fails on "
               f"{len(failures)} input(s) ({dict(kinds) or 'none'}); {len(not_recorded)} more have no expected "
               f"output because they exceed the sandbox's limits ({_limit_rows_text(not_recorded)}). Second fresh "
               f"run: {len(differing)} input(s) differ, {len(harmful)} of them in a way EvalPlus's comparison would "
               "not accept.")
    details = failures + not_recorded + [{"problem": "nondeterministic", **row} for row in differing]
    return Check("ground_truth", GROUND_TRUTH_TITLE, status,
                 observed={"inputs": total_inputs, "canonical_failures": len(failures),
                           "failure_kinds": dict(kinds), "exceeds_sandbox_limits": len(not_recorded),
                           "nondeterministic_inputs": len(differing),
                           "nondeterministic_rejected_by_rules": len(harmful)},
                 expected={"canonical_failures": 0, "nondeterministic_inputs": 0}, summary=summary,
                 details=details, meta={"cache": str(first.cache_path), "dataset_sha256": first.dataset_sha256})


def check_time_limit_sensitivity(tasks: Sequence[PlusTask], gt: GroundTruth, *,
                                 min_time_limit: float = DEFAULT_MIN_TIME_LIMIT_S,
                                 factor: float = GT_TIME_LIMIT_FACTOR) -> Check:
    """Inputs where `factor x canonical time` exceeds the floor, so the limit scales with the machine's speed."""
    times: list[float] = []
    rows: list[dict[str, Any]] = []
    threshold = min_time_limit / factor
    for task in tasks:
        for split in SPLITS:
            for index, outcome in enumerate(gt.run(task.task_id, split).outcomes):
                if outcome.kind != "value":
                    continue
                times.append(outcome.duration_s)
                if outcome.duration_s > threshold:
                    rows.append({"task_id": task.task_id, "split": split, "input_index": index,
                                 "canonical_time_s": round(outcome.duration_s, 4),
                                 "time_limit_s": round(factor * outcome.duration_s, 4)})
    if not times:
        return Check.skipped("time_limit_sensitivity", TIME_LIMIT_TITLE, "no canonical times were measured")
    ordered = sorted(times)
    slowest = ordered[-1]
    headroom = threshold / slowest if slowest > 0 else float("inf")
    quantiles = {f"p{int(q * 100)}": round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 6)
                 for q in (0.5, 0.9, 0.99)}
    margin = (f"a machine {headroom:.1f}x slower than this one would start to move limits" if headroom >= 1
              else "so on this machine the limits of those inputs already scale with its speed")
    summary = (f"{len(rows)} of {len(times):,} inputs have a limit set by {factor:g}x the canonical time "
               f"(canonical > {threshold:g} s); the floor {min_time_limit:g} s governs the rest. Slowest canonical "
               f"input {slowest:.3f} s, {margin}. Median canonical time {statistics.median(times) * 1e3:.3f} ms.")
    return Check("time_limit_sensitivity", TIME_LIMIT_TITLE, "quirk" if rows else "pass",
                 observed={"inputs_over_floor": len(rows), "inputs_timed": len(times), "slowest_s": slowest,
                           "slowdown_headroom": headroom, **quantiles},
                 expected={"inputs_over_floor": 0}, summary=summary,
                 details=sorted(rows, key=lambda r: -r["canonical_time_s"]),
                 meta={"min_time_limit": min_time_limit, "factor": factor})


def canonical_time_figure(tasks: Sequence[PlusTask], gt: GroundTruth, *,
                          min_time_limit: float = DEFAULT_MIN_TIME_LIMIT_S) -> Any:
    """Log-scale histogram of canonical times with the floor / factor threshold marked."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    import numpy as np

    times = [o.duration_s for t in tasks for s in SPLITS for o in gt.run(t.task_id, s).outcomes if o.kind == "value"]
    fig, axis = plt.subplots(figsize=(7, 3.4))
    positive = [max(t, 1e-7) for t in times] or [1e-7]
    axis.hist(positive, bins=np.logspace(np.log10(min(positive)), np.log10(max(positive)) + 0.1, 50),
              color="#4477aa")
    axis.set_xscale("log")
    axis.set_yscale("log")
    axis.axvline(min_time_limit / GT_TIME_LIMIT_FACTOR, color="#cc3311", linestyle="--",
                 label=f"{min_time_limit:g} s / {GT_TIME_LIMIT_FACTOR:g}")
    axis.set_xlabel("canonical time per input (s)")
    axis.set_ylabel("inputs")
    axis.legend()
    fig.tight_layout()
    return fig


def run_contracts(tasks: Sequence[PlusTask], *, executor: Any = None,
                  timeout_s: float = CONTRACT_INPUT_TIMEOUT_S) -> dict[tuple[str, Split], SplitRun]:
    """Call each task's contract-only program on every base and plus input."""
    return run_programs(tasks, contract_program, lambda task, split: [timeout_s] * len(inputs_of(task, split)),
                        executor=executor)


def check_contract_violations(tasks: Sequence[PlusTask], runs: Mapping[tuple[str, Split], SplitRun]) -> Check:
    """An exception from the contract asserts (or EvalPlus's `invalid inputs`) marks a violating input."""
    if not tasks:
        return Check.skipped("contract_violations", CONTRACT_TITLE, "no tasks loaded")
    # A task without contract lines replays as a bare `return None`: it cannot violate anything, so say which.
    without_contract = [task.task_id for task in tasks if not contract_lines(task.contract)]
    rows: list[dict[str, Any]] = []
    for task in tasks:
        for split in SPLITS:
            run = runs[(task.task_id, split)]
            if run.load_error:
                rows.append({"task_id": task.task_id, "split": split, "input_index": None, "kind": "load_error",
                             "input": "", "detail": run.load_error[:300]})
                continue
            for index, outcome in enumerate(run.outcomes):
                if outcome.kind == "value":
                    continue
                message = outcome.exc_message or ""
                kind = ("invalid_inputs" if "invalid input" in message else
                        "assertion" if outcome.exc_type == "AssertionError" else outcome.kind)
                rows.append({"task_id": task.task_id, "split": split, "input_index": index, "kind": kind,
                             "input": repr(inputs_of(task, split)[index])[:200], "detail": outcome.describe()})
    violations = [row for row in rows if row["kind"] in ("invalid_inputs", "assertion", "exception")]
    by_split = Counter(row["split"] for row in violations)
    tasks_hit = sorted({row["task_id"] for row in violations}, key=task_sort_key)
    other = len(rows) - len(violations)
    summary = (f"{len(violations)} input(s) violate their task's contract ({by_split.get('base', 0)} base, "
               f"{by_split.get('plus', 0)} plus) in {len(tasks_hit)} task(s): {', '.join(tasks_hit[:15]) or 'none'}"
               + (f"; {other} contract run(s) timed out or did not load" if other else "")
               + (f"; {len(without_contract)} of {len(tasks)} task(s) have no contract to replay: "
                  f"{', '.join(without_contract[:15])}" if without_contract else "") + ".")
    status = "defect" if violations else ("error" if other else "pass")
    if status == "pass" and len(without_contract) == len(tasks):
        return Check.skipped("contract_violations", CONTRACT_TITLE, f"none of the {len(tasks)} task(s) has a contract")
    return Check("contract_violations", CONTRACT_TITLE, status,
                 observed={"violations": len(violations), "base": by_split.get("base", 0),
                           "plus": by_split.get("plus", 0), "tasks": tasks_hit, "not_decided": other,
                           "tasks_without_contract": without_contract},
                 expected={"violations": 0}, summary=summary, details=rows)


def evalplus_time_limits_for(gt: GroundTruth, *, min_time_limit: float):
    def limits(task: PlusTask, split: Split) -> list[float]:
        return time_limits(gt.times(task.task_id, split), min_time_limit=min_time_limit)
    return limits


def run_candidate(tasks: Sequence[PlusTask], solution_for: Mapping[str, str], dataset: Dataset, gt: GroundTruth, *,
                  min_time_limit: float = DEFAULT_MIN_TIME_LIMIT_S, executor: Any = None,
                  fast_check: bool = False) -> dict[tuple[str, Split], SplitRun]:
    """Run full candidate programs (one per task id) under EvalPlus's per-input limits and whole-sample budget.

    The audit runs every input (`fast_check=False`) to count and classify failures; `fast_check=True` stops a
    split at its first failure, which is how `evalplus.evaluate` scores by default: an exception, a timeout, or a
    value that differs where EvalPlus compares by `==` alone (see `compare.decided_by_inequality`). A wrong value
    on the tolerance or oracle path does not stop the run; it fails the sample all the same.
    """
    present = [task for task in tasks if task.task_id in solution_for]

    def program_for(task: PlusTask) -> CallableProgram:
        return candidate_program(solution_for[task.task_id], task, dataset)

    def stop_expected_for(task: PlusTask, split: Split) -> dict[int, Any]:
        expected = [(o.kind == "value", o.value) for o in gt.run(task.task_id, split).outcomes]
        return decided_by_inequality(dataset, task.entry_point, task.atol, expected)

    def canonical_seconds(task: PlusTask, split: Split) -> float:
        return sum(gt.times(task.task_id, split))

    def digested_expectations(task: PlusTask, split: Split) -> list[int]:
        return [i for i, o in enumerate(gt.run(task.task_id, split).outcomes) if isinstance(o.value, ValueDigest)]

    return run_programs(present, program_for, evalplus_time_limits_for(gt, min_time_limit=min_time_limit),
                        executor=executor, budget=EVALPLUS_SAMPLE_BUDGET, fast_check=fast_check,
                        stop_expected_for=stop_expected_for if fast_check else None, cost_for=canonical_seconds,
                        digest_above_bytes=DIGEST_ABOVE_BYTES, digest_inputs_for=digested_expectations)


def original_solutions(tasks: Sequence[PlusTask], originals: Mapping[str, HumanEvalTask]) -> dict[str, str]:
    """How EvalPlus scores a completion: HumanEval+'s prompt followed by OpenAI's canonical body."""
    return {task.task_id: task.prompt + originals[task.task_id].canonical_solution
            for task in tasks if task.task_id in originals}


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


def check_original_canonical_vs_plus(tasks: Sequence[PlusTask], dataset: Dataset,
                                     runs: Mapping[tuple[str, Split], SplitRun] | None, gt: GroundTruth | None, *,
                                     skip_reason: str = "") -> Check:
    """Tasks where OpenAI's canonical fails HumanEval+ (EvalPlus's rules, every input scored)."""
    if runs is None or gt is None:
        return Check.skipped("original_canonical_vs_plus", ORIGINAL_CANONICAL_TITLE, skip_reason)
    scored = sorted({task_id for task_id, _ in runs}, key=task_sort_key)
    not_scored = [task.task_id for task in tasks if task.task_id not in set(scored)]
    if not scored:
        return Check.skipped("original_canonical_vs_plus", ORIGINAL_CANONICAL_TITLE,
                             f"no original canonical solution was run for the {len(tasks)} selected task(s)")
    rows = disagreement_rows(tasks, dataset, runs, gt)
    kinds: Counter[str] = Counter()
    for row in rows:
        kinds.update(row["failure_kinds"])
    base_fail = sum(1 for row in rows if row["base_failing"])
    summary = (f"OpenAI's canonical fails HumanEval+ on {len(rows)} of {len(scored)} tasks ({base_fail} already "
               f"fail the base inputs); failing inputs by kind: {dict(kinds) or 'none'}. Tasks: "
               + (", ".join(f"{r['task_id']} ({r['failing_inputs']})" for r in rows[:12]) or "none") + "."
               + (f" Not scored (no original solution): {', '.join(not_scored)}." if not_scored else ""))
    return Check("original_canonical_vs_plus", ORIGINAL_CANONICAL_TITLE, "quirk" if rows else "pass",
                 observed={"tasks_disagreeing": len(rows), "tasks_scored": len(scored), "tasks_not_scored": not_scored,
                           "tasks_failing_base": base_fail, "failing_input_kinds": dict(kinds)},
                 expected={"tasks_disagreeing": 0}, summary=summary, details=rows)


def run_original_tests(jobs_spec: Sequence[tuple[str, str, str]], *, executor: Any = None,
                       timeout_s: float = ASSERT_TEST_TIMEOUT_S) -> dict[str, Any]:
    """Run `(key, program, snippet)` in assert mode; returns key -> AssertJobResult."""
    limits = sandbox.Limits(timeout_s=timeout_s, total_timeout_s=timeout_s + 10.0)
    jobs = [sandbox.AssertJob(key=key, program=program, snippets=(snippet,), limits=limits)
            for key, program, snippet in jobs_spec]
    return dict(executors.run_many(jobs, executor, progress=False))


def original_test_jobs(tasks: Sequence[PlusTask], dataset: Dataset,
                       originals: Mapping[str, HumanEvalTask] | None) -> list[tuple[str, str, str]]:
    """EvalPlus's canonical (and, for HumanEval, OpenAI's) against the original tests."""
    jobs = []
    for task in tasks:
        if not task.original_test:
            continue
        snippet = check_snippet(task.original_test, task.entry_point) if dataset == "humaneval" \
            else task.original_test
        jobs.append((f"evalplus::{task.task_id}", task.program, snippet))
        if originals is not None and task.task_id in originals:
            original = originals[task.task_id]
            jobs.append((f"openai::{task.task_id}", assert_program(original.prompt, original.canonical_solution),
                         check_snippet(original.test, original.entry_point)))
    return jobs


def check_original_tests_vs_canonical(tasks: Sequence[PlusTask], results: Mapping[str, Any], *,
                                      test_name: str) -> Check:
    """Which canonical solutions fail the benchmark's original tests."""
    if not results:
        return Check.skipped("original_tests_vs_canonical", ORIGINAL_TESTS_TITLE,
                             f"no task carries its original tests ({test_name})")
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
                         "trust": getattr(snippet, "trust", "in_process")})
    failing = len(rows)
    summary = (f"Against {test_name}: EvalPlus's canonical fails {counts['evalplus_failing']} of "
               f"{counts['evalplus_run']} tasks" + (f", OpenAI's canonical fails {counts['openai_failing']} of "
                                                   f"{counts['openai_run']}" if counts["openai_run"] else "")
               + ". " + (", ".join(f"{r['canonical']}:{r['task_id']} ({r['status']})" for r in rows[:12]) or ""))
    return Check("original_tests_vs_canonical", ORIGINAL_TESTS_TITLE, "defect" if failing else "pass",
                 observed=dict(counts), expected={"evalplus_failing": 0, "openai_failing": 0},
                 summary=summary.strip(), details=rows, meta={"tests": test_name})


ERRATA_FIELDS = ("prompt", "canonical_solution", "test", "entry_point")


def errata_changes(originals: Mapping[str, HumanEvalTask], errata: Mapping[str, HumanEvalTask]) -> list[dict[str, Any]]:
    """Per task, which fields the errata changes (a prompt change that only strips whitespace is marked so)."""
    rows = []
    for task_id in sorted(set(originals) & set(errata), key=task_sort_key):
        before, after = originals[task_id], errata[task_id]
        changed = [name for name in ERRATA_FIELDS if getattr(before, name) != getattr(after, name)]
        if not changed:
            continue
        whitespace_only = "prompt" in changed and _squash(before.prompt) == _squash(after.prompt)
        rows.append({"task_id": task_id, "fields": changed, "prompt_whitespace_only": whitespace_only})
    return rows


def _squash(text: str) -> str:
    return " ".join(text.split())


def check_errata_diff(tasks: Sequence[PlusTask], dataset: Dataset, changes: Sequence[Mapping[str, Any]],
                      old_runs: Mapping[tuple[str, Split], SplitRun], new_runs: Mapping[tuple[str, Split], SplitRun],
                      test_results: Mapping[str, Any] | None = None) -> Check:
    """For each task whose canonical or test the errata changes: do HumanEval+ inputs separate old from new?"""
    by_id = {task.task_id: task for task in tasks}
    rows = []
    for change in changes:
        task_id = change["task_id"]
        task = by_id.get(task_id)
        row: dict[str, Any] = {"task_id": task_id, "fields": ",".join(change["fields"]),
                               "prompt_whitespace_only": change["prompt_whitespace_only"]}
        if task is not None and "canonical_solution" in change["fields"]:
            separating = []
            for split in SPLITS:
                old, new = old_runs.get((task_id, split)), new_runs.get((task_id, split))
                if old is None or new is None:
                    continue
                separating += [(split, v) for v in score_split(task, dataset, new, old) if not v.passed]
            row["inputs_separating_canonicals"] = len(separating)
            row["canonicals_distinguishable"] = bool(separating)
            if separating:
                split, first = separating[0]
                row["first_separating_input"] = repr(inputs_of(task, split)[first.index])[:200]
                row["first_difference"] = f"errata {first.detail}"[:300]
        for which in ("old", "new"):
            result = (test_results or {}).get(f"{which}_test::{task_id}")
            if result is not None:
                snippet = result.snippets[0] if result.snippets else None
                row[f"{which}_test_vs_evalplus_canonical"] = snippet.status if snippet else result.status
        rows.append(row)
    substantive = [row for row in rows if not (row["fields"] == "prompt" and row["prompt_whitespace_only"])]
    canonical_rows = [row for row in rows if "canonical_solution" in row["fields"]]
    indistinct = [row["task_id"] for row in canonical_rows if not row.get("canonicals_distinguishable")]
    test_changed = [row for row in rows if "test" in row["fields"]]
    summary = (f"The errata changes {len(rows)} task(s), {len(substantive)} beyond prompt whitespace; "
               f"{len(canonical_rows)} canonical solution(s) changed, and HumanEval+ inputs separate old from new "
               f"in {len(canonical_rows) - len(indistinct)} of them (not in: {', '.join(indistinct) or 'none'}); "
               f"{len(test_changed)} test(s) changed.")
    return Check("errata_diff", ERRATA_TITLE, "quirk" if substantive else "pass",
                 observed={"tasks_changed": len(rows), "substantive": len(substantive),
                           "canonical_changed": len(canonical_rows), "canonical_indistinguishable": indistinct,
                           "tests_changed": len(test_changed)},
                 expected="errata changes listed; each canonical change visible on HumanEval+ inputs",
                 summary=summary, details=sorted(rows, key=_errata_row_order))


def _errata_row_order(row: Mapping[str, Any]) -> tuple[int, tuple[int, str]]:
    fields = row["fields"]
    rank = 0 if "canonical_solution" in fields else 1 if "test" in fields else \
        3 if fields == "prompt" and row["prompt_whitespace_only"] else 2
    return rank, task_sort_key(row["task_id"])


__all__ = ["DEFAULT_MIN_TIME_LIMIT_S", "GT_TIME_LIMIT_FACTOR", "InputVerdict", "canonical_time_figure",
           "check_contract_violations", "check_errata_diff", "check_ground_truth",
           "check_original_canonical_vs_plus", "check_original_tests_vs_canonical", "check_time_limit_sensitivity",
           "disagreement_rows", "errata_changes", "original_solutions", "original_test_jobs", "run_candidate",
           "run_contracts", "run_original_tests", "score_split", "time_limits"]
