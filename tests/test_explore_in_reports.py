"""The notebooks' Explore cells and per-task drill-downs, run by the batch runner on real data, and offline."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.notebook_helpers import REPO_ROOT, execute_notebook

REPORT_LIMIT_BYTES = 2_000_000


def _run(tmp_path: Path, mirror: Path, *args: str) -> Path:
    reports = tmp_path / "reports"
    env = {**os.environ, "AUDIT_MIRROR": str(mirror), "AUDIT_DATA_CACHE": str(tmp_path / "cache"),
           "PYTHONPATH": str(REPO_ROOT)}
    env.pop("AUDIT_REPORTS_DIR", None)
    done = subprocess.run([sys.executable, "-m", "audit_lib", "run", *args, "--reports-dir", str(reports)],
                          cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return reports


def _drilldown(html: str, check_id: str) -> str:
    start = html.index(f'<details class="task-drilldown" data-check="{check_id}">')
    return html[start:html.index('<div class="evidence-slot"', start) if '<div class="evidence-slot"' in
                html[start:] else len(html)]


@pytest.mark.notebook
@pytest.mark.mirror
def test_intentspec_report_has_the_drilldown_and_the_explore_cells(mirror_dir: Path, tmp_path: Path) -> None:
    reports = _run(tmp_path, mirror_dir, "intentspec", "-p", "max_tasks", "3")
    html = (reports / "intentspec.html").read_text(encoding="utf-8")
    assert len(html.encode()) < REPORT_LIMIT_BYTES
    exploit = _drilldown(html, "exit_code_exploit")
    # The four exit-0 probes are deterministic errors; a run slowed by a busy machine may add timing rows beside them.
    label = re.search(r"<code>HumanEval/26</code> — \d+ failing inputs \(([^)]*)\)", exploit)
    assert label is not None and "4 error" in label.group(1).split(", "), exploit[:2000]
    assert "Write a function named `solution`" in exploit and "solution: canonical" in exploit
    assert "<td>assertions hold</td><td>error: EarlyExit: exited with code 0 before the test completed</td>" \
        in exploit
    assert "Per task (" not in html.split('data-check="exit_code_exploit"', 1)[1].split("</section>")[0][:200]
    assert 'audit.evidence("exit_code_exploit")</code> → a DataFrame of 11 rows' in html
    assert 'audit.task("HumanEval/26")</code> →' in html and "intentspec HumanEval/26: 56 verdicts" in html
    assert "Traceback" not in html


@pytest.mark.notebook
@pytest.mark.mirror
def test_humaneval_plus_report_drills_into_humaneval_32(mirror_dir: Path, tmp_path: Path) -> None:
    reports = _run(tmp_path, mirror_dir, "humaneval_plus", "-p", "task_ids", "HumanEval/32")
    html = (reports / "humaneval_plus.html").read_text(encoding="utf-8")
    assert len(html.encode()) < REPORT_LIMIT_BYTES
    openai = _drilldown(html, "original_canonical_vs_plus")
    assert "<code>HumanEval/32</code> — " in openai and " wrong_value" in openai
    assert "solution: openai_canonical" in openai and "def find_zero(xs: list):" in openai
    assert "|poly(xs, out)| = " in openai and "<td>openai_canonical</td><td>plus[" in openai
    assert "<td>evalplus_canonical</td>" not in openai  # the drill-down keeps the solution this check scores
    assert 'audit.task("HumanEval/32")</code> →' in html
    assert 'audit.evidence("original_canonical_vs_plus")</code> → a DataFrame of 1 row' in html
    findings = json.loads((reports / "humaneval_plus.findings.json").read_text(encoding="utf-8"))
    assert {c["id"]: c["status"] for c in findings["checks"]}["original_canonical_vs_plus"] == "quirk"


@pytest.mark.notebook
@pytest.mark.mirror
def test_impossible_lcb_report_explores_lcbhard_5(mirror_dir: Path, tmp_path: Path) -> None:
    reports = _run(tmp_path, mirror_dir, "impossible_lcb")
    html = (reports / "impossible_lcb.html").read_text(encoding="utf-8")
    assert 'audit.task("lcbhard_5")</code> →' in html
    assert "impossible_lcb lcbhard_5: 162 verdicts over 3 solutions, 64 not passing" in html
    assert "solution: special_caser" in html and "oneoff mutation (manifest row 7)" in html
    assert "Traceback" not in html


@pytest.mark.notebook
def test_explore_cells_say_why_there_is_nothing_offline(isolated_cache: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AUDIT_MIRROR", raising=False)
    monkeypatch.setenv("AUDIT_OFFLINE", "1")
    execute_notebook("intentspec", {}, tmp_path / "reports")
    notebook = json.loads((tmp_path / "reports" / "intentspec.ipynb").read_text(encoding="utf-8"))
    explore = notebook["cells"][[c["cell_type"] == "markdown" and "".join(c["source"]).startswith("## Explore")
                                 for c in notebook["cells"]].index(True):]
    shown = " ".join("".join(o.get("data", {}).get("text/html", "")) for c in explore for o in c.get("outputs", []))
    assert 'audit.evidence("exit_code_exploit")</code>: nothing to explore, the check is <b>skipped</b>' in shown
    assert 'audit.task("HumanEval/26")</code>: nothing to show — intentspec: no tasks loaded: ' in shown
    assert not [o for c in notebook["cells"] for o in c.get("outputs", []) if o.get("output_type") == "error"]
