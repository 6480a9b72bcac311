"""Readable values and no machine paths: numbers, `key: value` lines, path redaction, first sentences."""

from __future__ import annotations

import pytest

from audit_lib.findings import Check, first_sentence
from audit_lib.report.values import cell_markup, number_text, redact_paths


@pytest.mark.parametrize(("value", "text"), [(0, "0"), (122683, "122,683"), (-0.5, "-0.5"), (12345.678, "12,345.7"),
                                             (1234567.891, "1,234,567.9"), (5.0, "5"), (6.66e-16, "6.66e-16")])
def test_numbers_read_with_thousands_separators(value: float, text: str) -> None:
    assert number_text(value) == text


def test_machine_paths_become_labels(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    mirror, cache = tmp_path / "mirror", tmp_path / "cache"
    monkeypatch.setenv("AUDIT_MIRROR", str(mirror))
    monkeypatch.setenv("AUDIT_DATA_CACHE", str(cache))
    text = (f"from {mirror}/humaneval/HumanEval.jsonl.gz and {cache}/groundtruth/ab.json.gz; "
            "PosixPath('/srv/x/reports/.staging/a/a.findings.json'), /opt/elsewhere/data_cache/k/f.csv, "
            "/var/lib/thing/file.txt; kept: https://huggingface.co/datasets/x/y, HumanEval/32, 154/154")
    shown = redact_paths(text)
    assert "<mirror>/humaneval/HumanEval.jsonl.gz" in shown and "<cache>/groundtruth/ab.json.gz" in shown
    assert "<reports>/a.findings.json" in shown and "<cache>/k/f.csv" in shown and "…/thing/file.txt" in shown
    assert "https://huggingface.co/datasets/x/y" in shown and "HumanEval/32" in shown and "154/154" in shown
    assert str(tmp_path) not in shown and "/var/" not in shown


def test_embedded_images_are_not_touched() -> None:
    uri = "data:image/png;base64,AAAA+/tmp/abc/defAAAA=="
    assert redact_paths(f'<img src="{uri}"> /tmp/abc/def') == f'<img src="{uri}"> …/abc/def'


def test_numeric_cells_sort_by_value() -> None:
    assert cell_markup(1234) == '<td data-v="1234" class="num">1,234</td>'


def test_first_sentence_skips_qualifiers_numbers_and_abbreviations() -> None:
    assert first_sentence("SYNTHETIC data — 3 of 4 rows (e.g. 0.5 vs. 1.0) change. Then more.") == \
        "3 of 4 rows (e.g. 0.5 vs. 1.0) change."
    assert first_sentence("[depth: rows, 2 tasks; reconstructed rows] v0.1.9 differs. Rest.") == "v0.1.9 differs."
    assert first_sentence("No full stop") == "No full stop"


def test_check_finding_defaults_to_the_summary_and_is_written() -> None:
    check = Check("c", "Neutral", "quirk", summary="7 tasks differ. Details follow.")
    assert check.finding == "7 tasks differ."
    assert check.to_json()["finding"] == "7 tasks differ."
    assert Check("c", "t", "defect", summary="x. y.", finding="Own sentence.").finding == "Own sentence."
