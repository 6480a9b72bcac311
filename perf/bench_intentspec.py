"""Speed and agreement: the IntentSpec replay on our sandbox engine vs the upstream naive exit-code harness.

Runs the full replay (canonicals, OpenAI and HumanEval+ references, every cached generation of both models)
twice: once through `audit_lib.sandbox.run_many` (sandboxed; each constraint in a process of its own: a fresh fork
of the candidate's program, loaded once per candidate in its own sandbox job), once the way
upstream `src/intentspec/execute.py::run_solution` does it, sequentially:
`subprocess.run([python, "-c", source + "\\n\\n" + test_code], timeout=5)`, exit code 0 = pass.
This script is the one place that runs the naive harness, because that harness is what is being measured.

    AUDIT_MIRROR=../shared/data .venv/bin/python perf/bench_intentspec.py [--max-tasks N]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

from audit_lib.benchmarks.intentspec.ivr import ivr_of_outcomes, outcome_from_verdicts
from audit_lib.benchmarks.intentspec.load import load_intentspec
from audit_lib.benchmarks.intentspec.replay import build_candidates
from audit_lib.benchmarks.intentspec.runs import (
    EXIT_ZERO_EXPLOIT,
    PROBE,
    constraint_snippet,
    ordered_constraints,
    probe_candidates,
    run_candidates,
)


def naive_verdicts(candidates, specs_by_task, timeout_s: float) -> dict[tuple, dict[str, bool]]:
    verdicts: dict[tuple, dict[str, bool]] = {}
    for candidate in candidates:
        per_constraint = {}
        for constraint in ordered_constraints(specs_by_task[candidate.task_id]):
            combined = candidate.program + "\n\n" + constraint_snippet(constraint)
            try:
                completed = subprocess.run([sys.executable, "-c", combined], timeout=timeout_s,
                                           capture_output=True, text=True)
                per_constraint[constraint.id] = completed.returncode == 0
            except subprocess.TimeoutExpired:
                per_constraint[constraint.id] = False
        verdicts[candidate.key] = per_constraint
    return verdicts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-tasks", type=int, default=0, help="first N tasks only (0 = all 49)")
    parser.add_argument("--executor", default="local", help="executor for our engine (default: local pool)")
    parser.add_argument("--timeout", type=float, default=5.0, help="per-constraint wall-clock limit (s)")
    args = parser.parse_args(argv)

    data = load_intentspec(args.max_tasks)
    candidates = [c for c in build_candidates(data) if c.kind != PROBE]
    specs_by_task = data.specs_by_task
    snippets = sum(len(ordered_constraints(specs_by_task[c.task_id])) for c in candidates)
    print(f"{len(data.selected)} tasks, {len(candidates)} programs, {snippets} constraint runs per harness; "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")

    started = time.perf_counter()
    ours = run_candidates(candidates, specs_by_task, timeout_s=args.timeout, executor=args.executor)
    ours_s = time.perf_counter() - started
    print(f"sandbox engine ({args.executor}): {ours_s:.2f} s")

    started = time.perf_counter()
    naive = naive_verdicts(candidates, specs_by_task, args.timeout)
    naive_s = time.perf_counter() - started
    print(f"naive subprocess harness (sequential, as upstream): {naive_s:.2f} s")

    disagreements = [(key, cid, ours[key].verdict(cid).status, passed)
                     for key, per_constraint in naive.items() for cid, passed in per_constraint.items()
                     if ours[key].verdict(cid).passed != passed]
    print(f"ratio naive/sandbox: {naive_s / ours_s:.2f}x (load average now {os.getloadavg()[0]:.2f})")
    print(f"verdicts agree: {snippets - len(disagreements)}/{snippets}"
          + ("" if not disagreements else f"; {len(disagreements)} disagreement(s):"))
    for key, cid, status, passed in disagreements[:50]:
        print(f"  {'/'.join(map(str, key))} {cid}: sandbox={status} naive={'pass' if passed else 'fail'}")
    report_exit_zero_probe(data, args.timeout, args.executor)
    return 0 if not disagreements else 1


def report_exit_zero_probe(data, timeout_s: float, executor: str) -> None:
    """What each harness makes of a model that emits the `os._exit(0)` solution for every task."""
    probes = probe_candidates(data.selected_specs, EXIT_ZERO_EXPLOIT)
    specs_by_task = data.specs_by_task
    naive = naive_verdicts(probes, specs_by_task, timeout_s)
    ours = run_candidates(probes, specs_by_task, timeout_s=timeout_s, executor=executor)
    for name, verdicts in (("naive", {key: naive[key] for key in naive}),
                           ("sandbox", {key: ours[key].passed_by_id() for key in ours})):
        outcomes = {key[2]: [outcome_from_verdicts(specs_by_task[key[2]], passed)] for key, passed in verdicts.items()}
        _, overall = ivr_of_outcomes(outcomes)
        passes = sum(sum(passed.values()) for passed in verdicts.values())
        total = sum(len(passed) for passed in verdicts.values())
        print(f"os._exit(0) probe, {name} harness: {passes}/{total} constraint runs pass; overall IVR "
              f"{overall.value:.3f} over {len(overall.included)} included tasks ({len(overall.excluded)} excluded)")


if __name__ == "__main__":
    os.environ.setdefault("AUDIT_CACHE", "off")  # times execution: no verdict served from the cache
    sys.exit(main())
