"""Checks on the canonical solutions' own runs: the expected outputs (and a second run), and the time limits."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from audit_lib import paths, timing
from audit_lib.benchmarks.humaneval_plus.audit import Inputs, Params
from audit_lib.benchmarks.humaneval_plus.canonical_timing import (
    canonical_cpu_s,
    ground_truth_split,
    limit_sensitivity_split,
)
from audit_lib.benchmarks.humaneval_plus.compare import (
    SampleComparer,
    ValueDigest,
    canonical_encoding,
    digest_of,
)
from audit_lib.benchmarks.humaneval_plus.data import Dataset, PlusTask, task_sort_key
from audit_lib.benchmarks.humaneval_plus.groundtruth import (
    GROUND_TRUTH_INPUT_TIMEOUT_S,
    GroundTruth,
    compute_ground_truth,
)
from audit_lib.benchmarks.humaneval_plus.replay import DEFAULT_MIN_TIME_LIMIT_S, GT_TIME_LIMIT_FACTOR
from audit_lib.benchmarks.humaneval_plus.runs import SPLITS, InputOutcome, Split, SplitRun, inputs_of, settled
from audit_lib.benchmarks.humaneval_plus.timing_rerun import RERUN_KINDS
from audit_lib.findings import Result
from audit_lib.verdict_cache import fresh_runs


def ground_truth_problems(gt: GroundTruth) -> list[dict[str, Any]]:
    """Every input without an expected output, and whose fault that is.

    `canonical_failure`, or `exceeds_sandbox_limits` when it only hit a limit of ours: EvalPlus runs the canonical
    in-process with no time or memory limit and keeps any output, so our 30 s, the memory cap and the size of a value
    the sandbox can send are not the canonical's fault."""
    rows = []
    for (task_id, split), run in sorted(gt.runs.items(), key=lambda item: (task_sort_key(item[0][0]), item[0][1])):
        if run.load_error:
            rows.append({"problem": "canonical_failure", "task_id": task_id, "split": split, "input_index": None,
                         "kind": "load_error", "detail": run.load_error[:300]})
        for index, outcome in enumerate(map(settled, run.outcomes)):
            if outcome.kind != "value":
                kind = outcome.verdict_kind
                limited = kind in ("timeout", "unserializable", *RERUN_KINDS) or outcome.exc_type == "MemoryError"
                rows.append({"problem": "exceeds_sandbox_limits" if limited else "canonical_failure",
                             "task_id": task_id, "split": split, "input_index": index, "kind": kind,
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


def cache_label(path: Path) -> str:
    """The ground-truth cache file as `<cache>/…`: findings are shared, the machine's paths are not."""
    try:
        return "<cache>/" + path.resolve().relative_to(paths.data_cache_dir()).as_posix()
    except ValueError:
        return path.name


def kinds_text(kinds: Counter[str]) -> str:
    """`1,245 wrong_value, 74 timeout, 8 exception`, most frequent first."""
    return ", ".join(f"{count:,} {kind}" for kind, count in kinds.most_common()) or "none"


def ground_truth(inputs: Inputs, params: Params) -> Result:
    """The expected outputs EvalPlus would use (cached unless `recompute_ground_truth`), and a fresh second run."""
    first = inputs.ground_truth
    with fresh_runs():  # another execution, never the first one's verdicts served back
        second = compute_ground_truth(inputs.tasks, inputs.dataset, executor=params.executor, earlier=first)
    return ground_truth_from(inputs.tasks, inputs.dataset, first, second)


def ground_truth_from(tasks: Sequence[PlusTask], dataset: Dataset, first: GroundTruth,
                      second: Mapping[tuple[str, Split], SplitRun], *,
                      input_timeout_s: float = GROUND_TRUTH_INPUT_TIMEOUT_S) -> Result:
    """The ground-truth check on two runs of the canonical solutions.

    Inputs on which the canonical raises or times out, and inputs whose output differs between the two runs; the failing
    ones split into deterministic and timing (timeouts re-run alone against `input_timeout_s`)."""
    if not tasks:
        return Result.skipped("no tasks loaded")
    problems = ground_truth_problems(first)
    differing: list[dict[str, Any]] = []
    for task in tasks:
        for split in SPLITS:
            run_a, run_b = first.run(task.task_id, split), second[(task.task_id, split)]
            comparer = SampleComparer(dataset=dataset, entry_point=task.entry_point, atol=task.atol)
            for index, (a, b) in enumerate(zip(run_a.outcomes, run_b.outcomes)):
                a, b = settled(a), settled(b)  # a value kept encoded, decoded (or unserializable) to be compared
                if _same_outcome(a, b):
                    continue
                accepted = a.kind == b.kind == "value" and \
                    comparer.compare(inputs_of(task, split)[index], b.value, a.value).passed
                # a run cut by a clock or killed by the supervisor gave no output: re-run alone, not "another output"
                cut = bool({a.verdict_kind, b.verdict_kind} & RERUN_KINDS)
                differing.append({"task_id": task.task_id, "split": split, "input_index": index,
                                  "first_run": a.describe(), "second_run": b.describe(),
                                  "accepted_by_evalplus_rules": accepted, "cut_by_clock": cut})
    total_inputs = sum(len(task.base_input) + len(task.plus_input) for task in tasks)
    cut_rows = [row for row in differing if row["cut_by_clock"]]
    changed = [row for row in differing if not row["cut_by_clock"]]
    harmful = [row for row in changed if not row["accepted_by_evalplus_rules"]]
    # An input beyond the sandbox's limits is not the canonical's fault, but it has no expected output here, so
    # every sample fails it: a quirk of this replay, not a defect of the benchmark.
    failures = [row for row in problems if row["problem"] == "canonical_failure"]
    not_recorded = [row for row in problems if row["problem"] == "exceeds_sandbox_limits"]
    status = "defect" if failures or harmful else ("quirk" if changed or not_recorded else "pass")
    kinds = Counter(row["kind"] for row in failures)
    found = []  # the finding first: what is wrong, then the totals
    if failures:
        found.append(f"the canonical solutions fail on {len(failures)} of {total_inputs:,} inputs "
                     f"({kinds_text(kinds)})")
    if not_recorded:
        found.append(f"{len(not_recorded)} inputs have no expected output because they exceed the sandbox's limits "
                     f"({_limit_rows_text(not_recorded)})")
    if changed:
        found.append(f"{len(changed)} inputs give another output on a second fresh run, {len(harmful)} of them "
                     "in a way EvalPlus's comparison would not accept")
    if cut_rows:
        found.append(f"{len(cut_rows)} inputs were cut by a clock or killed by the supervisor on one run (re-run "
                     "alone below, not another output)")
    lead = "; ".join(found) if found else (f"the canonical solutions pass all {total_inputs:,} inputs and a second "
                                           "fresh run gives the same outputs")
    split, curve = ground_truth_split(tasks, dataset, problems, differing, second, first, limit_s=input_timeout_s)
    split_observed, split_meta = timing.split_findings(
        split, curve, deterministic_key="inputs_failing_deterministic", timing_key="inputs_failing_timing",
        timing_rule=f"the sandbox's {input_timeout_s:g} s per input; a timed-out input is re-run alone and judged on "
                    "its CPU time")
    if split.deterministic or split.timing:
        lead += f" (failing inputs: {split.headline()})"
    summary = (f"{lead[0].upper()}{lead[1:]}. {total_inputs:,} inputs over {len(tasks)} tasks "
               f"({first.tasks_from_cache} from the cache {first.cache_path.name}, {first.tasks_computed} computed "
               f"now); canonical failures {len(failures)}, beyond the sandbox's limits {len(not_recorded)}, "
               f"nondeterministic {len(changed)}.")
    details = failures + not_recorded + [{"problem": "nondeterministic", **row} for row in differing]
    return Result(status,
                  observed={"inputs": total_inputs, "canonical_failures": len(failures),
                            "failure_kinds": dict(kinds), "exceeds_sandbox_limits": len(not_recorded),
                            "nondeterministic_inputs": len(changed), "cut_by_clock_inputs": len(cut_rows),
                            "nondeterministic_rejected_by_rules": len(harmful), **split_observed},
                  expected={"canonical_failures": 0, "nondeterministic_inputs": 0}, summary=summary,
                  details=details, meta={"cache": cache_label(first.cache_path), "dataset_sha256": first.dataset_sha256,
                                         **split_meta, "machine_dependent": [
                                             "exceeds_sandbox_limits", "nondeterministic_inputs", "cut_by_clock_inputs",
                                             "nondeterministic_rejected_by_rules", *split_meta["machine_dependent"]]})


def time_limit_sensitivity(inputs: Inputs, params: Params) -> Result:
    """Inputs whose EvalPlus time limit is set by the canonical's time rather than by `min_time_limit`."""
    return time_limit_sensitivity_from(inputs.tasks, inputs.ground_truth, dataset=inputs.dataset,
                                       min_time_limit=params.min_time_limit)


def time_limit_sensitivity_from(tasks: Sequence[PlusTask], gt: GroundTruth, *, dataset: Dataset = "humaneval",
                                min_time_limit: float = DEFAULT_MIN_TIME_LIMIT_S,
                                factor: float = GT_TIME_LIMIT_FACTOR) -> Result:
    """Inputs whose limit scales with the machine: `factor x canonical time` over the floor.

    Judged on the canonical's CPU time, each input near or over the threshold re-run alone (see `canonical_timing`)."""
    threshold = min_time_limit / factor
    times = [canonical_cpu_s(o) for task in tasks for split in SPLITS
             for o in gt.run(task.task_id, split).outcomes if o.kind == "value"]
    if not times:
        return Result.skipped("no canonical times were measured")
    split, slow, rerun = limit_sensitivity_split(tasks, dataset, gt, threshold)
    over = split.count("confirmed")
    slowest = max(times)
    headroom = threshold / slowest if slowest > 0 else float("inf")
    quantiles = {f"p{int(q * 100)}": round(sorted(times)[min(len(times) - 1, int(q * len(times)))], 6)
                 for q in (0.5, 0.9, 0.99)}
    margin = (f"a machine {headroom:.1f}x slower than this one would start to move limits" if headroom >= 1
              else "so on this machine the limits of those inputs already scale with its speed")
    summary = (f"{over} of {len(times):,} inputs have a limit set by {factor:g}x the canonical's CPU time (over "
               f"{threshold:g} s) on a quiet rerun alone: {split.headline()}; the floor {min_time_limit:g} s governs "
               f"the rest. {rerun} inputs near or over the threshold in the ground-truth run (CPU or wall time) were "
               f"re-run alone. Slowest canonical input {slowest:.3f} s of CPU, {margin}. Median canonical CPU time "
               f"{statistics.median(times) * 1e3:.3f} ms.")
    curve = timing.speed_curve((), slow, timing.fixed_limit_rule(threshold))
    split_observed, split_meta = timing.split_findings(
        split, curve, deterministic_key="inputs_failing_deterministic", timing_key="inputs_failing_timing",
        timing_rule=f"limit set by the canonical when {factor:g} x its CPU time exceeds {min_time_limit:g} s; flip "
                    f"factor = CPU s / {threshold:g} s, re-run alone")
    return Result(
        "quirk" if over or split.count("borderline") else "pass",
        observed={"inputs_over_floor": over, "inputs_timed": len(times), "inputs_rerun": rerun,
                  "slowest_s": slowest, "slowdown_headroom": headroom, **quantiles, **split_observed},
        expected={"inputs_over_floor": 0}, summary=summary,
        details=sorted(split.rows("input"), key=lambda r: -r["cpu_s"]),
        meta={"min_time_limit": min_time_limit, "factor": factor, **split_meta, "machine_dependent": [
            "inputs_over_floor", "inputs_rerun", "slowest_s", "slowdown_headroom", "p50", "p90", "p99",
            *split_meta["machine_dependent"]]})


def canonical_time_figure(tasks: Sequence[PlusTask], gt: GroundTruth, *,
                          min_time_limit: float = DEFAULT_MIN_TIME_LIMIT_S) -> Any:
    """Log-scale histogram of canonical times with the floor / factor threshold marked."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    import numpy as np

    times = [canonical_cpu_s(o) for t in tasks for s in SPLITS for o in gt.run(t.task_id, s).outcomes
             if o.kind == "value"]
    fig, axis = plt.subplots(figsize=(7, 3.4))
    positive = [max(t, 1e-7) for t in times] or [1e-7]
    axis.hist(positive, bins=np.logspace(np.log10(min(positive)), np.log10(max(positive)) + 0.1, 50),
              color="#4477aa")
    axis.set_xscale("log")
    axis.set_yscale("log")
    axis.axvline(min_time_limit / GT_TIME_LIMIT_FACTOR, color="#cc3311", linestyle="--",
                 label=f"{min_time_limit:g} s / {GT_TIME_LIMIT_FACTOR:g}")
    axis.set_xlabel("canonical CPU time per input (s)")
    axis.set_ylabel("inputs")
    axis.set_title(f"Canonical CPU time per input: right of the line, {GT_TIME_LIMIT_FACTOR:g}x it exceeds the "
                   f"{min_time_limit:g} s floor and sets the limit", fontsize=10)
    axis.legend()
    fig.tight_layout()
    return fig


__all__ = ["canonical_time_figure", "check_ground_truth", "check_time_limit_sensitivity", "ground_truth_problems"]
