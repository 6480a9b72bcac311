"""findings: the check model, the JSON layout of DESIGN.md, evidence capping with full CSV tables."""

from __future__ import annotations

import csv
import json

import pytest

from audit_lib.findings import DETAILS_CAP_IN_JSON, Check, FindingsBuilder, worst_status


def test_findings_json_has_the_documented_layout_and_caps_details(tmp_path):
    builder = FindingsBuilder("toy", {"seed": 0})
    builder.add_provenance({"file": "toy/a.jsonl", "source": "mirror", "sha256": "ab", "pinned": True,
                            "synthetic": False})
    rows = [{"task": i, "value": float("nan") if i == 0 else i} for i in range(DETAILS_CAP_IN_JSON + 7)]
    builder.add(Check("many_rows", "Many rows", "defect", observed=len(rows), expected=0, details=rows))
    builder.add(Check.skipped("needs_data", "Needs data", "file x is missing"))
    path = builder.write(tmp_path)
    payload = json.loads(path.read_text(encoding="utf-8"))
    assert payload["audit"] == "toy" and payload["params"] == {"seed": 0}
    assert payload["provenance"][0]["source"] == "mirror"
    first = payload["checks"][0]
    assert {"id", "title", "status", "observed", "expected", "details"} <= set(first)
    assert len(first["details"]) == DETAILS_CAP_IN_JSON and first["details_total"] == len(rows)
    assert first["details"][0]["value"] == "nan"
    with open(tmp_path / "toy.many_rows.csv", encoding="utf-8") as handle:
        assert len(list(csv.DictReader(handle))) == len(rows)
    assert payload["checks"][1]["status"] == "skipped" and "missing" in payload["checks"][1]["summary"]
    assert payload["status_counts"]["defect"] == 1


def test_bad_status_and_duplicate_ids_are_rejected():
    with pytest.raises(ValueError, match="status"):
        Check("x", "X", "fine")  # type: ignore[arg-type]
    builder = FindingsBuilder("toy")
    builder.add(Check("x", "X", "pass"))
    with pytest.raises(ValueError, match="added twice"):
        builder.add(Check("x", "X again", "pass"))


def test_worst_status_orders_by_severity():
    assert worst_status(["pass", "quirk", "skipped"]) == "quirk"
    assert worst_status(["pass", "defect", "error"]) == "defect"
    assert worst_status([]) == "pass"
