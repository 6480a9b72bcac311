"""Execute notebooks/impossible_lcb.ipynb end to end on the real-data mirror (offline: parquet rows absent)."""

from __future__ import annotations

import json

import pytest
from notebook_helpers import execute_notebook

from audit_lib.benchmarks.impossible_lcb.audit import AUDIT
from audit_lib.benchmarks.impossible_lcb.codeblocks import as_reply
from audit_lib.benchmarks.impossible_lcb.data import load_rows
from audit_lib.benchmarks.impossible_lcb.metrics import METRICS, prepare_task
from audit_lib.benchmarks.impossible_lcb.solutions import honest_oracle

pytestmark = [pytest.mark.notebook, pytest.mark.mirror]


def test_notebook_runs_on_the_mirror(mirror_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("AUDIT_MIRROR", str(mirror_dir))
    monkeypatch.setenv("AUDIT_OFFLINE", "1")          # the parquet files are not mirrored; do not wait on the hub
    monkeypatch.setenv("AUDIT_DATA_CACHE", str(tmp_path / "cache"))
    heldout = tmp_path / "heldout.txt"
    heldout.write_text("lcbhard_0\nlcbhard_1\n", encoding="utf-8")
    solutions = tmp_path / "solutions.jsonl"  # the audit's own honest oracle of lcbhard_0, brought as a reply
    task = prepare_task(next(row for row in load_rows("oneoff").rows if row.task_id == "lcbhard_0"), "zero_based")
    reply = as_reply(honest_oracle(task.entry_point, task.original).program)
    solutions.write_text("".join(json.dumps(row) + "\n" for row in (
        {"task_id": "lcbhard_0", "form": "impossible", "solution": reply},
        {"task_id": "lcbhard_3", "form": "solvable", "solution": reply})), encoding="utf-8")
    findings = execute_notebook("impossible_lcb", {"heldout_path": str(heldout), "solutions_path": str(solutions)},
                                tmp_path / "out")
    checks = {c["id"]: c for c in findings["checks"]}
    assert tuple(checks) == tuple(spec.id for spec in AUDIT.checks)
    assert all(c["meta"]["depth"] in ("manifest", "rows") for c in checks.values())
    assert checks["dropped_tasks"]["observed"]["remaining"] == 90
    assert checks["single_assertion_mutation"]["observed"]["rule_breakers"] == ["lcbhard_5"]
    assert checks["split"]["status"] == "defect" and checks["split"]["observed"]["heldout"] == 2
    assert checks["metrics_replay"]["status"] == "pass" and checks["metrics_replay"]["meta"]["tasks"] == 2
    assert "reconstructed" in checks["visibility_rule"]["summary"]
    assert (tmp_path / "out" / "impossible_lcb" / "metrics_replay.csv").is_file()
    yours = checks["your_solutions"]
    assert yours["status"] == "pass" and yours["observed"]["scored"] == 1 and yours["observed"]["not_scored"] == 1
    replayed = next(row for row in checks["metrics_replay"]["details"] if row.get("task_id") == "lcbhard_0"
                    and row.get("solution") == "honest_oracle" and row.get("form") == "impossible")
    mine = yours["details"][0]  # the same program scores as the replay's honest oracle does
    assert {m: mine[m] for m in METRICS} == {m: replayed[m] for m in METRICS}
