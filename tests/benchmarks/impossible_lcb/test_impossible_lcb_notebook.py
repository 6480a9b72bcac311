"""Execute notebooks/impossible_lcb.ipynb end to end on the real-data mirror (offline: parquet rows absent)."""

from __future__ import annotations

import pytest
from notebook_helpers import execute_notebook

from audit_lib.benchmarks.impossible_lcb.audit import AUDIT

pytestmark = [pytest.mark.notebook, pytest.mark.mirror]


def test_notebook_runs_on_the_mirror(mirror_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("AUDIT_MIRROR", str(mirror_dir))
    monkeypatch.setenv("AUDIT_OFFLINE", "1")          # the parquet files are not mirrored; do not wait on the hub
    monkeypatch.setenv("AUDIT_DATA_CACHE", str(tmp_path / "cache"))
    heldout = tmp_path / "heldout.txt"
    heldout.write_text("lcbhard_0\nlcbhard_1\n", encoding="utf-8")
    findings = execute_notebook("impossible_lcb", {"heldout_path": str(heldout)}, tmp_path / "out")
    checks = {c["id"]: c for c in findings["checks"]}
    assert tuple(checks) == tuple(spec.id for spec in AUDIT.checks)
    assert all(c["meta"]["depth"] in ("manifest", "rows") for c in checks.values())
    assert checks["dropped_tasks"]["observed"]["remaining"] == 90
    assert checks["single_assertion_mutation"]["observed"]["rule_breakers"] == ["lcbhard_5"]
    assert checks["split"]["status"] == "defect" and checks["split"]["observed"]["heldout"] == 2
    assert checks["metrics_replay"]["status"] == "pass" and checks["metrics_replay"]["meta"]["tasks"] == 2
    assert "reconstructed" in checks["visibility_rule"]["summary"]
    assert (tmp_path / "out" / "impossible_lcb" / "metrics_replay.csv").is_file()
