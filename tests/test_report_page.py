"""Report pages: alerts, legend, run stamp, embedded evidence with its per-task view, cleaned notebook outputs."""

from __future__ import annotations

import base64
import gzip
import re
from pathlib import Path

import nbformat
import pytest

from audit_lib.findings import Check, FindingsBuilder
from audit_lib.report.evidence import Evidence, drilldown_markup, embed_all, load_evidence
from audit_lib.report.page import LEGEND, alerts_for, alerts_markup, legend_markup, stamp_markup
from audit_lib.runner.html import clean_outputs, report_title


def checks() -> list[dict]:
    return [Check("ok", "A", "pass", summary="Fine.").to_json(),
            Check("odd", "B", "quirk", summary="2 of 9 differ. More.").to_json(),
            Check("bad", "C", "defect", summary="x", finding="154 of 154 constraints pass an exit(0) probe.",
                  synthetic=True).to_json()]


def test_alerts_list_defects_then_quirks_as_findings_with_links() -> None:
    alerts = alerts_for(checks(), audit="demo", href="demo.html#check-{id}")
    assert [(a.status, a.href) for a in alerts] == [("defect", "demo.html#check-bad"), ("quirk", "demo.html#check-odd")]
    html = alerts_markup(alerts)
    assert "1 defect, 1 quirk" in html and "154 of 154 constraints pass an exit(0) probe." in html
    assert html.index("154 of 154") < html.index("2 of 9 differ.") and "(synthetic data)" in html
    assert "Fine." not in html
    assert "No defects or quirks found." in alerts_markup([])
    assert "Not judged: 1 error, 7 skipped" in alerts_markup(alerts, not_run={"error": 1, "skipped": 7})


def test_many_alerts_on_the_index_fold_to_one_line_per_audit_and_few_stay_open() -> None:
    from audit_lib.report.page import ALERTS_SHOWN_OPEN, Alert

    many = [Alert(f"audit{n % 3}", "quirk", f"finding {n}", f"#c{n}") for n in range(ALERTS_SHOWN_OPEN + 1)]
    folded = alerts_markup(many)
    assert folded.count('<details><summary><span class="audit-name">') == 3 and "<details open>" not in folded
    assert folded.count('<li class="alert">') == len(many)  # folded, not dropped
    assert 'audit0</span> <span class="badge status-quirk"' in folded
    few = alerts_markup(many[:ALERTS_SHOWN_OPEN])
    assert few.count("<details open><summary>") == 3


def test_a_long_alert_is_cut_between_words() -> None:
    from audit_lib.report.page import shortened

    text = "lcbhard_77/conflicting (syntax_error: unterminated string literal (detected at line 26)) " * 4
    cut = shortened(text, 70)
    assert cut == "lcbhard_77/conflicting (syntax_error: unterminated string literal …"
    assert len(cut) <= 70 and shortened("short enough", 70) == "short enough"


def test_legend_has_one_line_per_status() -> None:
    html = legend_markup()
    assert [status for status, _ in LEGEND] == ["pass", "quirk", "defect", "error", "skipped"]
    assert html.count("<li>") == 5 and "meta.missing names it" in html


def test_stamp_warns_when_the_machine_was_overloaded() -> None:
    stamp = {"version": "0.3", "commit": "abcdef1234567", "dirty": True, "python": "3.11.9", "cpu_model": "EPYC",
             "cpus": 2, "load_start": 0.5, "load_end": 3.25, "wall_s": 301.5, "workers": 2}
    html = stamp_markup(stamp)
    assert "commit abcdef1234 (dirty)" in html and "EPYC × 2 CPUs" in html and "load 0.5 → 3.25" in html
    assert "overloaded" in html
    assert "overloaded" not in stamp_markup({**stamp, "load_end": 1.0})
    assert stamp_markup(None) == "" and stamp_markup({}) == ""


def test_a_run_that_reused_every_report_blames_no_verdict_on_its_load() -> None:
    stamp = {"cpus": 2, "load_start": 3.5, "load_end": 3.5}
    html = stamp_markup(stamp, ran_checks=False)
    assert "overloaded" not in html and "No audit ran again" in html and "load 3.5 → 3.5" in html
    assert "No audit ran again" not in stamp_markup(stamp)


def test_evidence_is_embedded_whole_and_decodes_to_the_csv(tmp_path: Path) -> None:
    builder = FindingsBuilder("demo")
    rows = [{"task_id": f"T/{i // 3}", "input": [i], "got": i * 1000} for i in range(60)]
    builder.add(Check("big", "Big", "defect", details=rows))
    builder.write(tmp_path)
    findings = builder.findings().to_json()
    evidence = load_evidence(findings, tmp_path)
    assert evidence["big"].complete and len(evidence["big"].rows) == 60  # the CSV, not the 50 rows of the JSON
    embedded = embed_all(evidence, audit="demo")["big"]
    assert 'data-name="demo.big.csv"' in embedded.link and "full evidence (60 rows" in embedded.link
    blob = re.search(r">([A-Za-z0-9+/=]+)</script>", embedded.blob).group(1)
    text = gzip.decompress(base64.b64decode(blob)).decode()
    assert text.splitlines()[0] == "task_id,input,got" and len(text.splitlines()) == 61


def test_evidence_over_the_budget_is_capped_and_says_so() -> None:
    rows = tuple({"n": i, "text": f"{i:08x}" * 8} for i in range(5000))
    embedded = embed_all({"c": Evidence("c", rows, 5000, True)}, audit="demo", budget=20_000)["c"]
    assert "of 5,000 rows" in embedded.link and "size cap" in embedded.link
    assert len(embedded.blob) < 20_100


def test_drilldown_groups_failing_rows_by_task() -> None:
    rows = ({"task_id": "HumanEval/32", "first_input": "[[1, 2]]", "counterexample": "got 1, expected 2"},
            {"task_id": "HumanEval/32", "first_input": "[[3]]", "counterexample": "timeout"},
            {"task_id": "HumanEval/116", "first_input": "[[5]]", "counterexample": "got [], expected [5]"})
    html = drilldown_markup(Evidence("c", rows, 3, True), "quirk")
    assert "Per task (2 tasks" in html and html.count('<details class="task">') == 2
    assert "<code>HumanEval/32</code> — 2 rows" in html and "got [], expected [5]" in html
    assert html.count("<table") == 2  # short values: a small table per task
    long_rows = ({"task_id": "HumanEval/22", "first_input": "[" + "1, " * 40 + "]", "counterexample": "got 1"},)
    long_html = drilldown_markup(Evidence("c", long_rows, 1, True), "defect")
    assert '<span class="k">first_input</span>: <code>[1, 1,' in long_html and "<table" not in long_html
    assert drilldown_markup(Evidence("c", rows, 3, True), "pass") == ""
    assert drilldown_markup(Evidence("c", ({"n": 1},), 1, True), "defect") == ""


def test_clean_outputs_drops_stderr_and_the_written_path_and_tabulates_dicts() -> None:
    cell = nbformat.v4.new_code_cell("x")
    cell.outputs = [nbformat.v4.new_output("stream", name="stderr", text="UserWarning: careful"),
                    nbformat.v4.new_output("stream", name="stdout", text="kept\n"),
                    nbformat.v4.new_output("execute_result", data={"text/plain": "{'ok': 1117, 'unavailable': 6}"}),
                    nbformat.v4.new_output("execute_result",
                                           data={"text/plain": "PosixPath('/srv/r/.staging/a/a.findings.json')"})]
    notebook = nbformat.v4.new_notebook(cells=[cell])
    clean_outputs(notebook)
    outputs = notebook.cells[0].outputs
    assert [o.output_type for o in outputs] == ["stream", "execute_result"]
    assert outputs[0].name == "stdout" and ">1,117<" in outputs[1].data["text/html"]


def test_clean_outputs_drops_progress_bar_residue() -> None:
    """A tqdm.auto bar (a widget, or text on stderr) drawn when a notebook ran outside the runner."""
    widget = {"application/vnd.jupyter.widget-view+json": {"model_id": "abc", "version_major": 2, "version_minor": 0},
              "text/plain": "ground truth:  33%|███▎      | 41220/124253 [01:05<02:11, 630.1 inputs/s]"}
    cell = nbformat.v4.new_code_cell("x")
    cell.outputs = [nbformat.v4.new_output("display_data", data=widget),
                    nbformat.v4.new_output("stream", name="stderr", text="sandbox: 100%|██████████| 9/9 [00:01<00:00]\r"),
                    nbformat.v4.new_output("display_data", data={"text/html": "<b>kept</b>"})]
    notebook = nbformat.v4.new_notebook(cells=[cell], metadata={"widgets": {"application/vnd.jupyter.widget-state+json":
                                                                            {"state": {}}}})
    clean_outputs(notebook)
    assert [o.data for o in notebook.cells[0].outputs] == [{"text/html": "<b>kept</b>"}]
    assert "widgets" not in notebook.metadata


def test_a_shared_notebook_gets_a_title_naming_its_audit() -> None:
    assert report_title("nope_audit", "HumanEval+ / MBPP+ audit", {"notebook_audit": "humaneval_plus"}) == \
        "HumanEval+ / MBPP+ audit — nope_audit"
    assert report_title("nope_audit", "Heading", {"audit": "nope_audit"}) == "Heading"


def _notebook_with(outputs_html: str, path: Path) -> Path:
    cell = nbformat.v4.new_code_cell("report.show_check(...)")
    cell.outputs = [nbformat.v4.new_output("display_data", data={"text/html": outputs_html, "text/plain": "x"}),
                    nbformat.v4.new_output("stream", name="stderr", text="UserWarning: noisy")]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Demo audit\n\nWhat it does."), cell])
    nbformat.write(notebook, str(path))
    return path


def test_export_opens_with_alerts_and_puts_the_evidence_in_the_check(tmp_path: Path) -> None:
    from audit_lib import report
    from audit_lib.runner.html import export_html

    check = Check("odd", "Neutral", "quirk", summary="2 of 9 differ. More.", details=[{"task_id": "T/1", "n": 5}])
    builder = FindingsBuilder("demo")
    builder.add(check)
    builder.write(tmp_path)
    notebook = _notebook_with(report.show_check(check).html, tmp_path / "demo.ipynb")
    html = export_html(notebook, tmp_path / "demo.html", with_code=False, title="demo").read_text(encoding="utf-8")
    assert html.index('id="alerts"') < html.index('id="check-odd"')
    assert "<h1>Demo audit</h1>" in html and "# Demo audit" not in html
    assert 'href="#check-odd"' in html and 'class="evidence-download"' in html
    assert report.EVIDENCE_SLOT.format(id="odd") not in html and "Per task (1 task" in html
    assert "UserWarning" not in html and "cdn" not in html.lower()


def test_export_of_a_notebook_without_findings_still_has_the_legend(tmp_path: Path) -> None:
    from audit_lib.runner.html import export_html

    notebook = _notebook_with("<p>partial output</p>", tmp_path / "failed.ipynb")
    html = export_html(notebook, tmp_path / "failed.html", with_code=False, title="failed").read_text(encoding="utf-8")
    assert "wrote no findings" in html and 'class="legend"' in html and "partial output" in html


def test_export_keeps_the_notebooks_richer_drilldown_instead_of_the_generic_one(tmp_path: Path) -> None:
    from audit_lib import report
    from audit_lib.runner.html import export_html

    check = Check("odd", "Neutral", "quirk", summary="2 of 9 differ. More.", details=[{"task_id": "T/1", "n": 5}])
    builder = FindingsBuilder("demo")
    builder.add(check)
    builder.write(tmp_path)
    rich = '<details class="task-drilldown" data-check="odd"><summary>Per task: 1 task</summary>PROMPT</details>'
    notebook = _notebook_with(report.show_check(check).html + rich, tmp_path / "demo.ipynb")
    html = export_html(notebook, tmp_path / "demo.html", with_code=False, title="demo").read_text(encoding="utf-8")
    assert "Per task: 1 task" in html and "PROMPT" in html and "Per task (1 task" not in html
    assert 'class="evidence-download"' in html  # the full evidence still travels with the report


@pytest.mark.parametrize(("audit", "params", "title"), [
    ("humaneval_plus", {"dataset": "humaneval"}, "HumanEval+ v0.1.10 (EvalPlus)"),
    ("humaneval_plus", {"dataset": "mbpp"}, "MBPP+ v0.2.0 (EvalPlus)"),  # the parameter, not the audit's name
    ("mbpp_plus", {"dataset": "mbpp"}, "MBPP+ v0.2.0 (EvalPlus)"),
    ("humaneval_plus", {}, "HumanEval+ v0.1.10 (EvalPlus)"),  # the default dataset
])
def test_the_evalplus_report_title_names_the_dataset_and_release(audit: str, params: dict, title: str) -> None:
    assert report_title(audit, "HumanEval+ / MBPP+ (EvalPlus) audit", {"params": params}) == title


def test_the_release_names_in_titles_are_the_registry_files() -> None:
    from audit_lib.benchmarks.humaneval_plus.data import RELEASES, plus_source
    from audit_lib.data.sources import get_source

    for dataset, release in RELEASES.items():
        assert get_source(*plus_source(dataset)).description == f"{release} release asset"
