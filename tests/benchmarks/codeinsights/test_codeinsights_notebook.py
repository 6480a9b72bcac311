"""The codeinsights_edge_case notebook: its shape against the plugin, and end to end on the SYNTHETIC fixture."""

from __future__ import annotations

import dataclasses
import re

import nbformat
import pytest

from audit_lib.benchmarks.codeinsights.audit import AUDIT, Params
from audit_lib.runner.catalogue import read_parameters
from tests.notebook_helpers import execute_notebook

CHECK_IDS = ["pass_read_dtype", "leading_zero_loss", "float_precision", "single_failure_after_int",
             "single_failure_true", "is_single_failure_column", "alignment_ceiling",
             "gold_index_hidden_by_truncation", "pattern_length_mismatch", "qid_lookup", "timestamp_ties",
             "prompt_as_built", "baseline_scores"]


def code_source() -> str:
    notebook = nbformat.read(AUDIT.notebook_path(), as_version=4)
    return "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code")


def test_every_check_is_run_exactly_once_by_the_notebook():
    source = code_source()
    assert [spec.id for spec in AUDIT.check_specs(Params())] == CHECK_IDS
    assert sorted(re.findall(r'report\.check\(audit, "([^"]+)"', source)) == sorted(CHECK_IDS)


def test_parameters_cell_is_the_params_dataclass():
    declared = [(p.name, p.default) for p in read_parameters(AUDIT.notebook_path())]
    assert declared == [(f.name, f.default) for f in dataclasses.fields(Params)]


@pytest.mark.notebook
def test_notebook_on_synthetic_data(tmp_path, isolated_cache):
    findings = execute_notebook("codeinsights_edge_case", {"source": "synthetic"}, tmp_path)
    assert findings["audit"] == "codeinsights_edge_case" and findings["synthetic"] is True
    assert findings["params"] == {"num_testcases": 1, "source": "synthetic", "seed": 0}
    assert [c["id"] for c in findings["checks"]] == CHECK_IDS
    assert all(c["status"] not in ("error", "skipped") and c["synthetic"] for c in findings["checks"])
    assert all(p["synthetic"] for p in findings["provenance"]) and len(findings["provenance"]) == 3
    assert (tmp_path / "codeinsights_edge_case" / "leading_zero_loss.csv").is_file()
    assert (isolated_cache / "synthetic" / "codeinsights" / "seed_0").is_dir()
