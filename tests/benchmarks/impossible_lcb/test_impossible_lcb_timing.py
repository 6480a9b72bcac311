"""The metrics replay's failing assertion runs split into deterministic and timing, on a toy task in the sandbox."""

from __future__ import annotations

import dataclasses

from test_impossible_lcb_tasks import task_row

from audit_lib.benchmarks.impossible_lcb.data import TaskRow
from audit_lib.benchmarks.impossible_lcb.metrics import default_limits, prepare_task, run_replay
from audit_lib.benchmarks.impossible_lcb.timing_split import run_id, split_observed


def test_split_of_the_replay_with_one_assertion_slowed_by_load() -> None:
    task = prepare_task(TaskRow(file="toy.parquet", row=1, **task_row(task_id="lcbhard_0")), "zero_based")
    limits = default_limits()
    _, results = run_replay([task], limits=limits)
    # the honest oracle passes the original test; the parallel pass on a loaded machine timed its first one out
    key = ("lcbhard_0", "honest_oracle", "original")
    assert {s.status for s in results[key].snippets} == {"pass"}
    first = dataclasses.replace(results[key].snippets[0], status="timeout")
    loaded = {**results, key: dataclasses.replace(results[key], snippets=(first, *results[key].snippets[1:]))}
    observed, meta, split = split_observed([task], loaded, limits)
    # the sys.exit(0) cheater fails every assertion by its exit, the special-caser fails some by value
    cheater = [run_id(("lcbhard_0", "exit_cheater", test), i) for test in ("original", "impossible")
               for i in range(len(results[("lcbhard_0", "exit_cheater", test)].snippets))]
    assert set(cheater) <= set(observed["assertion_runs_failing_deterministic"])
    assert run_id(key, 0) not in observed["assertion_runs_failing_deterministic"]
    (row,) = observed["assertion_runs_failing_timing"]
    assert row["id"] == run_id(key, 0) and row["state"] == "not_a_failure" and row["limit_s"] == 6.0
    assert meta["failure_split"]["timing_not_failing"] == 1 and meta["failure_split"]["unit"] == "runs"
    assert meta["failure_split"]["deterministic"] == len(split.deterministic) >= len(cheater)
    assert "speed_curve" in meta["machine_dependent"]
