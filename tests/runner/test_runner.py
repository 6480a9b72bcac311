"""The batch runner: validation before kernels, parallel papermill runs, failures, aliases, HTML, index."""

from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path

import pytest
from notebook_factory import plugin_for, write_notebook

from audit_lib import runner
from audit_lib.errors import ParameterError, UnknownAuditError
from audit_lib.runner import AuditOutcome, NotebookFailure, RunSummary

IMPORTS = ("from audit_lib import report\n"
           "from audit_lib.findings import Check, FindingsBuilder\n")

GOOD_CELLS = [
    IMPORTS + "builder = FindingsBuilder('good', {'limit': limit})",
    "import matplotlib.pyplot as plt\n"
    "fig, ax = plt.subplots()\n"
    "ax.bar(['a', 'b'], [limit, 1])\n"
    "report.show_figure(fig)",
    "builder.add(Check('rows.count', 'row count', 'defect', observed=limit, expected=1,\n"
    "                  details=[{'row': i} for i in range(limit)]))\n"
    "builder.add(Check('other', 'other', 'pass'))\n"
    "SECRET_SOURCE_MARKER = 1\n"
    "report.findings_table(builder)",
    "builder.write()",
]


@pytest.fixture(scope="module")
def notebooks(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """Test audits as plugins: `good`, `broken`, and `mbpp_plus` reusing `humaneval_plus`'s notebook."""
    folder = tmp_path_factory.mktemp("notebooks")
    good = write_notebook(folder, "good", "limit = 3  # rows\n", GOOD_CELLS, title="Good audit")
    broken = write_notebook(folder, "broken", "limit = 3\n", [
        "x = 1",
        "raise KeyError('no such task: HumanEval/999')",
        "y = 2",
    ])
    shared = write_notebook(folder, "humaneval_plus", "dataset = 'humaneval'  # which release\nexecutor = 'local'\n", [
        IMPORTS + "builder = FindingsBuilder('humaneval_plus', {'dataset': dataset, 'executor': executor})\n"
        "builder.add(Check('release.rows', 'rows', 'pass', observed=dataset, details=[{'dataset': dataset}]))\n"
        "builder.write()",
    ])
    return {"good": plugin_for(good), "broken": plugin_for(broken), "humaneval_plus": plugin_for(shared),
            "mbpp_plus": plugin_for(shared, name="mbpp_plus", fixed_params={"dataset": "mbpp"})}


@pytest.fixture(scope="module")
def batch(notebooks: dict, tmp_path_factory: pytest.TempPathFactory) -> tuple[RunSummary, str]:
    reports = tmp_path_factory.mktemp("reports")
    (reports / "broken.findings.json").write_text("{}")  # an earlier run's result: a failed run must keep it
    stream = io.StringIO()
    summary = runner.run_audits(["good", "broken", "mbpp_plus"], [("limit", "4")],
                                executor="dask-local", jobs=2, reports_dir=reports, plugins=notebooks,
                                progress=stream)
    return summary, stream.getvalue()


def outcome(summary: RunSummary, audit: str) -> AuditOutcome:
    return next(o for o in summary.outcomes if o.audit == audit)


def test_successful_audit_writes_notebook_html_findings_and_csv(batch: tuple[RunSummary, str]) -> None:
    summary, _ = batch
    good = outcome(summary, "good")
    assert good.ok and good.failure is None
    assert dict(good.params) == {"limit": 4}
    for name in ("good.ipynb", "good.html", "good.findings.json", "good/rows.count.csv"):
        assert (summary.reports_dir / name).is_file(), name
    findings = json.loads((summary.reports_dir / "good.findings.json").read_text())
    assert findings["params"] == {"limit": 4}
    assert [c["status"] for c in findings["checks"]] == ["defect", "pass"]


def test_html_report_is_self_contained_and_hides_code(batch: tuple[RunSummary, str]) -> None:
    summary, _ = batch
    html = (summary.reports_dir / "good.html").read_text()
    assert re.search(r'<img[^>]+src="data:image/png;base64,', html)
    assert not re.search(r"<script[^>]+src=", html), "a report must not load scripts from elsewhere"
    assert not re.search(r"<link[^>]+href=\"https?:", html)
    assert "SECRET_SOURCE_MARKER" not in html
    assert 'href="index.html"' in html


def test_with_code_keeps_the_cells(batch: tuple[RunSummary, str], tmp_path: Path) -> None:
    summary, _ = batch
    target = runner.export_html(summary.reports_dir / "good.ipynb", tmp_path / "good.html", with_code=True,
                                title="good")
    assert "SECRET_SOURCE_MARKER" in target.read_text()


def test_failing_notebook_is_reported_with_cell_and_error(batch: tuple[RunSummary, str]) -> None:
    summary, progress = batch
    broken = outcome(summary, "broken")
    assert not broken.ok
    assert broken.failure == NotebookFailure(3, broken.failure.execution_count, "KeyError",
                                             "'no such task: HumanEval/999'",
                                             "raise KeyError('no such task: HumanEval/999')")
    assert (summary.reports_dir / "broken.failed.html").is_file()  # the partial run is still readable
    assert (summary.reports_dir / "broken.findings.json").read_text() == "{}"
    assert broken.files["last_good_findings"] == "broken.findings.json"
    # The run's history folder holds what this run produced: not the failed audit's older findings.
    [run] = runner.history.run_folders(summary.reports_dir)
    assert (run / "good.findings.json").is_file() and not (run / "broken.findings.json").exists()
    assert not (summary.reports_dir / "broken.html").exists()  # never published as if it were a good report
    assert "broken: FAILED" in progress and "cell 3" in progress


def test_notebook_that_writes_no_findings_fails(notebooks: dict, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import papermill

    def executes_without_writing_findings(source: str, output: str, **kwargs: object) -> None:
        Path(output).write_text(Path(source).read_text())

    monkeypatch.setattr(papermill, "execute_notebook", executes_without_writing_findings)
    monkeypatch.setattr(os, "environ", os.environ.copy())  # execute_job sets the job's variables (a worker's own)
    [job] = runner.plan_jobs(["good"], reports_dir=tmp_path, plugins=notebooks)
    result = runner.execute_job(job)
    assert not result.ok and result.failure is not None
    assert result.failure.error_type == "MissingFindings"
    assert "audit.write()" in result.failure.message
    assert dict(result.files) == {"failed_notebook": "good.failed.ipynb", "failed_html": "good.failed.html"}


def test_a_crashed_worker_is_reported(notebooks: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    [job] = runner.plan_jobs(["good"], reports_dir=tmp_path, plugins=notebooks)
    monkeypatch.setattr(runner.batch.sys, "executable", "/bin/false")
    result = runner.run_job_in_child(job)
    assert not result.ok and result.failure is not None
    assert result.failure.error_type == "WorkerCrashed" and "exited with code 1" in result.failure.message


def test_alias_runs_the_base_notebook_under_its_own_name(batch: tuple[RunSummary, str]) -> None:
    summary, _ = batch
    alias = outcome(summary, "mbpp_plus")
    assert alias.ok, alias.failure
    assert alias.notebook == "humaneval_plus"
    assert dict(alias.params) == {"dataset": "mbpp", "executor": "dask-local"}
    findings = json.loads((summary.reports_dir / "mbpp_plus.findings.json").read_text())
    assert findings["audit"] == "mbpp_plus" and findings["notebook_audit"] == "humaneval_plus"
    assert findings["params"] == {"dataset": "mbpp", "executor": "dask-local"}
    assert (summary.reports_dir / "mbpp_plus" / "release.rows.csv").is_file()
    assert not list(summary.reports_dir.glob("humaneval_plus.*"))


def test_failures_make_the_exit_code_non_zero(batch: tuple[RunSummary, str]) -> None:
    summary, _ = batch
    assert summary.exit_code() == runner.EXIT_NOTEBOOK_FAILED


def test_summary_and_index_cover_every_audit(batch: tuple[RunSummary, str]) -> None:
    summary, _ = batch
    payload = json.loads(summary.summary_path.read_text())
    assert sorted(payload["audits_run"]) == ["broken", "good", "mbpp_plus"]
    assert payload["failed"] == ["broken"]
    assert payload["totals"]["defect"] == 1 and payload["totals"]["failed_audits"] == 1
    assert payload["run"]["executor"] == "dask-local"
    html = summary.index_path.read_text()
    for audit in ("good", "broken", "mbpp_plus"):
        assert f'id="audit-{audit}"' in html
    assert "no such task: HumanEval/999" in html
    assert 'href="good/rows.count.csv"' in html
    for target in re.findall(r'href="([^"#][^"#]*)', html):  # links into a report carry #check-<id>
        assert (summary.reports_dir / target).is_file(), target
    assert not (summary.reports_dir / runner.STAGING_DIR_NAME).exists()


def test_validation_happens_before_any_kernel(notebooks: dict, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    def no_kernels(*args: object, **kwargs: object) -> None:
        raise AssertionError("a kernel was about to start")

    monkeypatch.setattr(runner.batch, "_execute_all", no_kernels)
    with pytest.raises(UnknownAuditError, match="unknown audit 'nope'"):
        runner.run_audits(["good", "nope"], reports_dir=tmp_path, plugins=notebooks)
    with pytest.raises(ParameterError, match="'limit' expects an int, got 'many'"):
        runner.run_audits(["good"], [("limit", "many")], reports_dir=tmp_path, plugins=notebooks)
    with pytest.raises(ParameterError, match="unknown parameter 'lmit'"):
        runner.run_audits(["good"], [("lmit", "1")], reports_dir=tmp_path, plugins=notebooks)
    with pytest.raises(ParameterError, match="--mirror .*no such folder"):
        runner.run_audits(["good"], mirror=tmp_path / "absent", reports_dir=tmp_path, plugins=notebooks)
    with pytest.raises(ParameterError, match="kernel 'no-such-kernel' is not registered"):
        runner.run_audits(["good"], kernel_name="no-such-kernel", reports_dir=tmp_path, plugins=notebooks)
    assert not list(tmp_path.iterdir())


def test_plan_passes_mirror_and_executor_to_kernels(notebooks: dict, tmp_path: Path) -> None:
    jobs = runner.plan_jobs(["good", "humaneval_plus"], mirror=tmp_path, executor="dask://127.0.0.1:8786",
                            reports_dir=tmp_path / "r", plugins=notebooks)
    for job in jobs:
        assert job.env["AUDIT_MIRROR"] == str(tmp_path.resolve())
        assert job.env["AUDIT_EXECUTOR"] == "dask://127.0.0.1:8786"
        # staging private to this run: reports/.staging/<run-id>/<audit>
        assert job.env["AUDIT_REPORTS_DIR"] == str(tmp_path / "r" / runner.STAGING_DIR_NAME / job.run_id / job.audit)
    assert jobs[0].run_id and jobs[0].run_id == jobs[1].run_id
    assert dict(jobs[0].params) == {}
    assert dict(jobs[1].params) == {"executor": "dask://127.0.0.1:8786"}


def test_relative_mirror_from_the_environment_is_made_absolute(notebooks: dict, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "mirror").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AUDIT_MIRROR", "mirror")
    [job] = runner.plan_jobs(["good"], reports_dir=tmp_path / "r", plugins=notebooks)
    assert job.env["AUDIT_MIRROR"] == str(tmp_path / "mirror")


def summary_with(statuses: dict[str, tuple[str, ...]], *, failed: bool = False) -> RunSummary:
    outcomes = tuple(AuditOutcome(a, a, {}, not failed, 1.0) for a in statuses)
    checks = {audit: tuple({"status": status} for status in audit_statuses) for audit, audit_statuses in statuses.items()}
    return RunSummary(outcomes, Path("."), Path("index.html"), Path("summary.json"), checks)


@pytest.mark.parametrize(("statuses", "fail_on", "code"), [
    (("pass", "skipped"), None, 0),
    (("pass", "defect"), None, 0),
    (("pass", "defect"), "defect", runner.EXIT_GATE),
    (("pass", "quirk"), "defect", 0),
    (("pass", "quirk"), "quirk", runner.EXIT_GATE),
    (("skipped",), "quirk", 0),
    (("skipped",), "skipped", runner.EXIT_GATE),
    (("pass", "pass"), "skipped", 0),
    (("quirk",), "error", 0),
    (("error",), "error", runner.EXIT_GATE),
    # a gate is a set of statuses, not a threshold: each word means exactly that status
    (("error",), "quirk", 0),
    (("defect",), "error", 0),
    (("quirk", "error", "defect"), "skipped", 0),
    (("skipped", "quirk", "defect"), "error", 0),
    (("defect",), "skipped,error", 0),
    (("pass", "error"), "skipped,error", runner.EXIT_GATE),
    (("pass", "skipped"), "skipped,error", runner.EXIT_GATE),
    (("quirk",), "quirk,defect", runner.EXIT_GATE),
])
def test_fail_on_gate(statuses: tuple[str, ...], fail_on: str | None, code: int) -> None:
    assert summary_with({"a": statuses}).exit_code(fail_on) == code


def test_a_failed_notebook_outranks_the_gate() -> None:
    assert summary_with({"a": ("defect",)}, failed=True).exit_code("defect") == runner.EXIT_NOTEBOOK_FAILED


def test_earlier_reports_stay_in_the_index(notebooks: dict, tmp_path: Path) -> None:
    from audit_lib.runner.index_page import write_index_and_summary

    (tmp_path / "old.html").write_text("<html></html>")
    (tmp_path / "old.findings.json").write_text(json.dumps({"audit": "old", "checks": [
        {"id": "c", "title": "t", "status": "quirk"}]}))
    earlier = AuditOutcome("old", "old", {}, True, 2.0, None, {"html": "old.html", "findings": "old.findings.json"})
    write_index_and_summary(tmp_path, [runner.execute.outcome_to_json(earlier)], {"kernel": "python3"})
    now = AuditOutcome("new", "new", {}, False, 1.0, NotebookFailure(None, None, "DeadKernelError", "died"))
    _, summary_path, statuses = write_index_and_summary(tmp_path, [runner.execute.outcome_to_json(now)],
                                                        {"kernel": "python3"})
    payload = json.loads(summary_path.read_text())
    assert [a["audit"] for a in payload["audits"]] == ["new", "old"]
    assert payload["audits"][1]["from_earlier_run"] is True
    assert payload["audits"][1]["status_counts"]["quirk"] == 1
    assert statuses == {"new": ()}
    html = (tmp_path / "index.html").read_text()
    assert "outside any cell" in html and "DeadKernelError" in html and "(earlier run)" in html


def test_progress_reports_start_cells_and_end(notebooks: dict, tmp_path: Path) -> None:
    [job] = runner.plan_jobs(["good"], reports_dir=tmp_path, plugins=notebooks)
    stream = io.StringIO()
    display = runner.progress.ProgressDisplay(stream, [job])
    display.quiet_limit_s = -1.0  # a line on every tick
    display.tick([job])  # nothing staged yet: not started
    assert "good: started" not in stream.getvalue()
    job.staging_dir.mkdir(parents=True)
    statuses = ["completed", "running", "pending"]
    cells = [{"cell_type": "markdown", "metadata": {"papermill": {"status": "completed"}}}]
    cells += [{"cell_type": "code", "metadata": {"papermill": {"status": s}}} for s in statuses]
    job.staging_notebook.write_text(json.dumps({"cells": cells}))
    display.tick([job])
    display.tick([job])
    job.progress_file.parent.mkdir(parents=True)
    job.progress_file.write_text(json.dumps({"desc": "ground truth", "done": 41220, "total": 124253,
                                             "unit": "inputs", "finished": False}))
    display.tick([job])
    job.progress_file.write_text('{"desc": "ground truth", "done": 412')  # caught mid-write: no crash, no count
    display.tick([job])
    job.progress_file.write_text(json.dumps({"desc": "ground truth", "done": 124253, "total": 124253,
                                             "unit": "inputs", "finished": True}))  # that loop is over
    display.tick([job])
    display.finished(AuditOutcome("good", "good", {}, False, 2.5, NotebookFailure(2, 5, "ValueError", "bad")))
    lines = stream.getvalue().splitlines()
    assert "running 1 audit(s)" in lines[0]
    assert lines[1].endswith("good: started (3 code cells)")
    running = [re.sub(r" \(\d+s\)$", "", line.split("running: ", 1)[1]) for line in lines if "running: " in line]
    assert running == ["good: cell 2/3", "good: cell 2/3", "good: cell 2/3, ground truth 41,220/124,253 inputs",
                       "good: cell 2/3", "good: cell 2/3"]
    assert lines[-1].endswith("(1/1) good: FAILED after 2.5s at cell 2 (In [5]): ValueError: bad")


def test_kernels_under_the_runner_report_progress_in_their_file_and_draw_no_bar(notebooks: dict,
                                                                                tmp_path: Path) -> None:
    """The kernel gets the progress file's name, `run_many` writes to it, and the report holds no bar residue."""
    cells = [IMPORTS + "import json, os\n"
             "from audit_lib import sandbox\n"
             "from audit_lib.work_progress import PROGRESS_FILE_ENV, tracked\n"
             "jobs = [sandbox.CallJob(key=i, program='def f(x):\\n    return x + 1\\n', entry_point='f',\n"
             "                        inputs=([i], [i + 1])) for i in range(3)]\n"
             "results = dict(sandbox.run_many(jobs, progress_unit='inputs', progress_weight=lambda j: len(j.inputs)))\n"
             "after_run_many = json.loads(open(os.environ[PROGRESS_FILE_ENV]).read())\n"
             "for _ in tracked(range(4), desc='loop', unit='steps'):\n"
             "    pass\n"
             "after_loop = json.loads(open(os.environ[PROGRESS_FILE_ENV]).read())\n"
             "builder = FindingsBuilder('progress', {})\n"
             "builder.add(Check('seen', 'seen', 'pass', observed={'file': os.environ[PROGRESS_FILE_ENV],\n"
             "    'run_many': after_run_many, 'loop': after_loop, 'values': sorted(map(str, results))}))\n"
             "builder.write()"]
    plugins = {"progress": plugin_for(write_notebook(tmp_path / "nb", "progress", "limit = 1\n", cells))}
    summary = runner.run_audits(["progress"], reports_dir=tmp_path / "r", plugins=plugins, progress=io.StringIO())
    assert not summary.failed, summary.failed
    [seen] = json.loads((tmp_path / "r" / "progress.findings.json").read_text())["checks"]
    observed = seen["observed"]
    staging = (tmp_path / "r").resolve() / runner.STAGING_DIR_NAME
    [run_staging] = {Path(observed["file"]).parent.parent}
    assert run_staging.parent == staging and run_staging.name != ".progress"
    assert observed["file"] == str(run_staging / ".progress" / "progress.json")
    assert observed["run_many"] == {"desc": "sandbox", "done": 6, "total": 6, "unit": "inputs", "finished": True}
    assert observed["loop"] == {"desc": "loop", "done": 4, "total": 4, "unit": "steps", "finished": True}
    html = (tmp_path / "r" / "progress.html").read_text()
    assert "it/s" not in html and "%|" not in html and "widget-view" not in html
    assert not (tmp_path / "r" / "progress.json").exists()  # the progress file is never published


def test_missing_inputs_lists_the_files_that_skipped_checks_name():
    from audit_lib.runner import missing_inputs

    checks = [{"id": "a", "status": "skipped", "meta": {"missing": ["intentspec/spec_pairs.jsonl"]}},
              {"id": "b", "status": "pass", "meta": {"missing": ["humaneval/x.jsonl"]}},
              {"id": "c", "status": "skipped", "summary": "humaneval/y.jsonl is not available",
               "meta": {"missing": ["param:heldout_ids", "check:dropped_tasks"]}}]
    assert missing_inputs({"one": checks, "two": checks[:1], "absent": []}) == {
        "intentspec/spec_pairs.jsonl": ["one", "two"]}
