"""Report helpers: escaped HTML for the provenance banner, checks, tables and figures."""

from __future__ import annotations

import base64
import re

import pytest

from audit_lib import report
from audit_lib.findings import Check, FindingsBuilder

SHA = "0123456789abcdef" * 4


def provenance(**overrides: object) -> dict[str, object]:
    record = {"dataset": "humaneval", "file": "HumanEval.jsonl.gz", "source": "mirror", "location": "/m",
              "sha256": SHA, "pinned": True, "synthetic": False, "upstream": "https://example.org/a/b/file.gz",
              "licence": "MIT"}
    record.update(overrides)
    return record


def test_banner_lists_every_file_with_short_hash_and_pin() -> None:
    builder = FindingsBuilder("demo", {"limit": 3})
    builder.add_provenance(provenance(), provenance(file="other.csv", pinned=False, sha256="f" * 64))
    html = report.banner(builder).html
    assert html.count("<tr>") == 3  # header + two files
    assert "humaneval/HumanEval.jsonl.gz" in html and "humaneval/other.csv" in html
    assert f">{SHA[:12]}<" in html and f'title="{SHA}"' in html
    assert "no (unpinned)" in html
    assert 'href="https://example.org/a/b/file.gz"' in html
    assert "SYNTHETIC DATA" not in html


def test_banner_warns_loudly_when_any_input_is_synthetic() -> None:
    builder = FindingsBuilder("demo")
    builder.add_provenance(provenance(), provenance(file="gen.jsonl", source="synthetic", synthetic=True))
    html = report.banner(builder).html
    assert "SYNTHETIC DATA" in html and "humaneval/gen.jsonl" in html


def test_banner_warns_when_only_a_check_is_synthetic() -> None:
    builder = FindingsBuilder("demo")
    builder.add(Check("c1", "t", "pass", synthetic=True))
    assert "check c1" in report.banner(builder).html


def test_every_data_string_is_escaped() -> None:
    hostile = "<script>alert(1)</script>"
    builder = FindingsBuilder("demo")
    builder.add_provenance(provenance(file=hostile, upstream=hostile))
    check = builder.add(Check("c1", hostile, "defect", observed=hostile, expected=[hostile], summary=hostile,
                              details=[{hostile: hostile}]))
    outputs = [report.banner(builder).html, report.findings_table(builder).html,
               report.show_check(check).html, report.show_table([{hostile: hostile}], caption=hostile).html]
    for html in outputs:
        assert "<script>" not in html
        assert "&lt;script&gt;" in html


def test_show_check_caps_rows_and_leaves_a_slot_for_the_full_evidence() -> None:
    rows = [{"task": f"T/{i}", "n": i} for i in range(25)]
    check = Check("some.check", "Title", "quirk", observed=3, expected=0, summary="why", details=rows)
    html = report.show_check(check, max_rows=10, audit="demo").html
    body = html.split("<tbody>")[1]
    assert body.count("<tr>") == 10
    assert "T/9" in body and "T/10" not in body
    assert "Evidence: 10 of 25 rows" in html and 'placeholder="filter 25 rows' in html
    assert report.EVIDENCE_SLOT.format(id="some.check") in html and 'id="check-some.check"' in html
    assert "status-quirk" in html and ">3<" in html and ">0<" in html


def test_show_check_puts_the_finding_first_and_the_rest_of_the_summary_after() -> None:
    check = Check("c", "Neutral title", "defect", summary="SYNTHETIC data — 3 of 9 rows lose digits. Why it matters.")
    html = report.show_check(check).html
    assert '<p class="finding">3 of 9 rows lose digits.</p>' in html
    assert "<p>Why it matters.</p>" in html


def test_show_check_without_overflow_has_no_csv_note() -> None:
    check = Check("c", "t", "pass", details=[{"a": 1}])
    assert "full table" not in report.show_check(check).html


def test_show_check_accepts_findings_json() -> None:
    payload = Check("c", "t", "skipped", summary="input absent").to_json()
    html = report.show_check(payload).html
    assert "status-skipped" in html and "input absent" in html


def test_findings_table_has_one_row_per_check_and_a_tally() -> None:
    builder = FindingsBuilder("demo")
    builder.add(Check("a", "A", "pass", observed=1, expected=1))
    builder.add(Check("b", "B", "defect", observed=2, expected=0))
    builder.add(Check("c", "C", "defect"))
    html = report.findings_table(builder).html
    assert html.split("<tbody>")[1].count("<tr>") == 3
    assert re.search(r"status-defect[^>]*>defect</span>&nbsp;2", html)
    assert "3 checks" in html


def test_show_table_accepts_pandas_polars_rows_and_mappings() -> None:
    import pandas as pd
    import polars as pl

    frame = {"name": ["a", "b", "c"], "count": [1, None, 3]}
    for data in (pd.DataFrame(frame), pl.DataFrame(frame)):
        html = report.show_table(data, max_rows=2, caption="cap").html
        assert "<th>name</th><th>count</th>" in html and '<p class="caption"><b>cap</b></p>' in html
        assert "Showing 2 of 3 rows" in html
    assert "<td>key</td>" not in report.show_table({"k": 1}).html and "<td>k</td>" in report.show_table({"k": 1}).html
    assert "(no rows)" in report.show_table([]).html


def test_show_table_rejects_rows_that_are_not_mappings() -> None:
    with pytest.raises(TypeError, match="row 2 is a int"):
        report.show_table([{"a": 1}, 5])


def test_show_figure_embeds_a_png_and_closes_the_figure() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    html = report.show_figure(fig).html
    assert not plt.fignum_exists(fig.number)
    encoded = re.search(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)
    assert encoded is not None
    assert base64.b64decode(encoded.group(1)).startswith(b"\x89PNG\r\n\x1a\n")


def test_value_text_is_compact_and_bounded() -> None:
    assert report.value_text(None) == "—"
    assert report.value_text(0.1234567891) == "0.123457"
    assert report.value_text(122683) == "122,683"
    assert report.value_text({"a": [1, 2]}) == '{"a": [1, 2]}'
    assert report.value_text(float("nan")) == "nan"
    long_text = report.value_text("x" * 1000, limit=50)
    assert len(long_text) == 50 and long_text.endswith("…")


def test_observed_values_are_key_value_lines_with_thousands_separators() -> None:
    html = report.value_lines({"plus_inputs": 122683, "ratio": 78.13, "tasks": ["HumanEval/32", "HumanEval/116"],
                               "sha256": SHA})
    assert '<span class="k">plus_inputs</span>: <span class="v">122,683</span>' in html
    assert ">78.13<" in html and ">[HumanEval/32, HumanEval/116]<" in html
    assert f">{SHA[:12]}…<" in html and html.count('class="kv"') == 4
    assert "{" not in html


def test_display_happens_once(monkeypatch: pytest.MonkeyPatch) -> None:
    import IPython.display

    shown: list[object] = []
    monkeypatch.setattr(IPython.display, "display", lambda obj: shown.append(obj))
    fragment = report.ReportHTML("<b>x</b>")
    fragment._ipython_display_()
    fragment._ipython_display_()  # the cell's last expression must not show it again
    assert len(shown) == 1 and shown[0].data == "<b>x</b>"


def test_findings_table_shows_each_finding_and_readable_values() -> None:
    builder = FindingsBuilder("demo")
    builder.add(Check("b", "B", "defect", observed={"rows": 12345}, expected={"rows": 0}, summary="Found 5. More."))
    html = report.findings_table(builder).html
    assert "<td>Found 5.</td>" in html and ">12,345<" in html and 'href="#check-b"' in html


def test_evidence_rows_of_different_shapes_get_one_table_each() -> None:
    rows = [{"task": "a", "n": 1}, {"task": "b", "n": 2}, {"task": "a", "separation": "x" * 500}]
    html = report.show_table(rows).html
    assert html.count("<table") == 2 and html.count("<td></td>") == 0
    assert "x" * 500 not in html.split("title=")[0]  # long text is cut in the cell, whole in its tooltip


def test_a_passing_check_is_one_line_with_its_figures_collapsed() -> None:
    check = Check("c", "T", "pass", observed={"n": 1}, summary="All 5 fine. Detail.", details=[{"a": 1}])
    html = report.show_check(check).html
    collapsed = html.split('<details class="check-body">')[1]
    assert collapsed.startswith("<summary>All 5 fine.</summary>")
    assert "observed" in collapsed and report.EVIDENCE_SLOT.format(id="c") in collapsed
    assert 'class="finding"' not in html


def test_long_provenance_and_many_passing_checks_are_collapsed() -> None:
    builder = FindingsBuilder("demo")
    builder.add_provenance(*(provenance(file=f"f{i}.csv", pinned=i > 0) for i in range(9)))
    for i in range(13):
        builder.add(Check(f"c{i}", "T", "defect" if i == 0 else "pass"))
    banner = report.banner(builder).html
    assert "<details><summary>9 data files: 8 pinned, 1 unpinned, 0 synthetic</summary>" in banner
    table = report.findings_table(builder).html
    open_part, collapsed = table.split("<details><summary>12 passing checks</summary>")
    assert open_part.count("<tr>") == 2 and collapsed.count("<tr>") == 13
