"""Every audit's real-data figures against its golden file (tests/golden/), through the batch runner.

`make test` runs the fast audits in full and HumanEval+/MBPP+ on a fixed subset of tasks chosen so every check
meets its interesting cases (`tests/golden_findings.py`); `make regression` adds the full HumanEval+ and MBPP+.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.golden_findings import GOLDEN_DIR, RUNS, GoldenRun, compare, load_golden, report_differences, run_audit


@pytest.fixture(scope="session")
def golden_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("golden")


@pytest.mark.mirror
@pytest.mark.notebook
@pytest.mark.parametrize("run", [pytest.param(r, id=r.golden, marks=[pytest.mark.regression] if r.full_only else [])
                                 for r in RUNS])
def test_run_matches_golden_findings(run: GoldenRun, mirror_dir: Path, golden_out: Path) -> None:
    findings: dict[str, Any] = run_audit(run, mirror_dir, golden_out / run.golden)
    differences = compare(load_golden(run.golden), findings)
    assert not differences, report_differences(run.golden, differences)


def test_golden_files_cover_every_run() -> None:
    assert {path.stem for path in GOLDEN_DIR.glob("*.json")} == {run.golden for run in RUNS}
