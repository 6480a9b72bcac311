"""End to end: the codeinsights_edge_case notebook on the SYNTHETIC fixture, as papermill runs it."""

from __future__ import annotations

import pytest

from tests.notebook_helpers import execute_notebook

CHECK_IDS = ["pass_read_dtype", "leading_zero_loss", "float_precision", "single_failure_after_int",
             "single_failure_true", "is_single_failure_column", "alignment_ceiling",
             "gold_index_hidden_by_truncation", "pattern_length_mismatch", "qid_lookup", "timestamp_ties",
             "prompt_as_built", "baseline_scores"]


@pytest.mark.notebook
def test_notebook_on_synthetic_data(tmp_path, isolated_cache):
    findings = execute_notebook("codeinsights_edge_case", {"source": "synthetic"}, tmp_path)
    assert findings["audit"] == "codeinsights_edge_case" and findings["synthetic"] is True
    assert findings["params"] == {"num_testcases": 1, "source": "synthetic", "seed": 0}
    assert [c["id"] for c in findings["checks"]] == CHECK_IDS
    assert all(c["status"] not in ("error", "skipped") and c["synthetic"] for c in findings["checks"])
    assert all(p["synthetic"] for p in findings["provenance"]) and len(findings["provenance"]) == 3
    assert (tmp_path / "codeinsights_edge_case.leading_zero_loss.csv").is_file()
    assert (isolated_cache / "synthetic" / "codeinsights" / "seed_0").is_dir()
