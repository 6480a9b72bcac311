"""Lifted verdicts equal assert-mode verdicts on the real constraint snippets (skipped without the mirror).

IntentSpec: the canonicals and both HumanEval references against every constraint (462 runs) and the cached
generations (1,540 runs); ImpossibleBench: the generated solutions against every assertion of the available rows.
Each snippet runs twice, lifted (`sandbox_testrun`) and in assert mode (`run_asserts`), and must get the same status.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from audit_lib.benchmarks.impossible_lcb import data as impossible_lcb_data
from audit_lib.benchmarks.impossible_lcb import metrics as impossible_lcb_metrics
from audit_lib.benchmarks.intentspec import runs as intentspec_exec
from audit_lib.benchmarks.intentspec.load import load_intentspec
from audit_lib.benchmarks.intentspec.replay import build_candidates
from audit_lib.sandbox import AssertJob, run_many

pytestmark = pytest.mark.timeout(600)


def _statuses(jobs: list) -> dict:
    return {key: [(s.status, s.trust) for s in result.snippets] for key, result in run_many(jobs, "local",
                                                                                              progress=False)}


def _compare(lifted_jobs: list) -> tuple[int, int, list]:
    in_process = _statuses([AssertJob(job.key, job.program, job.snippets, job.limits) for job in lifted_jobs])
    lifted = _statuses(lifted_jobs)
    mismatches, count, decided_by_parent = [], 0, 0
    for key, verdicts in lifted.items():
        for index, ((status, trust), (expected, _)) in enumerate(zip(verdicts, in_process[key])):
            count += 1
            decided_by_parent += trust == "parent"
            if status != expected:
                mismatches.append((key, index, status, expected))
    return count, decided_by_parent, mismatches


def test_intentspec_lifted_verdicts_equal_assert_mode(mirror_dir: Path) -> None:
    data = load_intentspec(0, mirror=str(mirror_dir))
    assert data.unavailable == {}, data.unavailable  # the mirror holds every IntentSpec file
    candidates = [c for c in build_candidates(data) if c.kind != intentspec_exec.PROBE]
    jobs = intentspec_exec.build_jobs(candidates, data.specs_by_task, intentspec_exec.make_limits(5.0))
    count, decided_by_parent, mismatches = _compare(jobs)
    assert mismatches == []
    assert count == sum(len(job.snippets) for job in jobs)
    assert decided_by_parent == count  # all 2,002 runs with every input present


def test_impossible_lcb_lifted_verdicts_equal_assert_mode(mirror_dir: Path, monkeypatch) -> None:
    monkeypatch.setenv("AUDIT_MIRROR", str(mirror_dir))
    rows = impossible_lcb_data.load_rows("oneoff")
    if not rows.rows:
        pytest.skip(rows.unavailable_reason)
    tasks = [impossible_lcb_metrics.prepare_task(row, "zero_based") for row in rows.rows]
    jobs, _has_code = impossible_lcb_metrics.replay_jobs(tasks, impossible_lcb_metrics.default_limits())
    count, decided_by_parent, mismatches = _compare(jobs)
    assert mismatches == []
    assert decided_by_parent == count  # every assertion of these rows has a liftable shape
