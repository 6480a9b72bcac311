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


def _real(file: str) -> dict[str, object]:
    return {"file": file, "source": "mirror", "sha256": "ab", "pinned": True, "synthetic": False}


def test_real_data_with_a_synthetic_check_is_marked_synthetic(tmp_path):
    builder = FindingsBuilder("toy")
    builder.add_provenance(_real("toy/a.jsonl"), _real("toy/b.jsonl"))
    builder.add(Check("real_check", "Real", "pass"))
    builder.add(Check("generated_check", "Generated", "quirk", synthetic=True))
    assert builder.findings().uses_synthetic_data is True
    payload = json.loads(builder.write(tmp_path).read_text(encoding="utf-8"))
    assert payload["synthetic"] is True
    assert [c["synthetic"] for c in payload["checks"]] == [False, True]


def test_synthetic_flag_from_provenance_alone_and_all_real():
    synthetic_input = FindingsBuilder("toy")
    synthetic_input.add_provenance(_real("toy/a.jsonl"), {**_real("toy/b.jsonl"), "synthetic": True})
    synthetic_input.add(Check("plain", "Plain", "pass"))
    assert synthetic_input.findings().uses_synthetic_data is True
    all_real = FindingsBuilder("toy")
    all_real.add_provenance(_real("toy/a.jsonl"))
    all_real.add(Check("plain", "Plain", "pass"))
    assert all_real.findings().uses_synthetic_data is False


def _reject_constant(name: str) -> object:
    raise ValueError(f"findings JSON holds the non-standard constant {name}")


def test_infinities_and_nan_are_written_as_strings_so_the_json_is_standard(tmp_path):
    builder = FindingsBuilder("toy", {"limit": float("inf")})
    builder.add(Check("ratios", "Ratios", "quirk", observed=float("inf"), expected=float("-inf"),
                      details=[{"ratio": float("-inf")}, {"ratio": float("nan")}], meta={"worst": float("inf")}))
    text = builder.write(tmp_path).read_text(encoding="utf-8")
    payload = json.loads(text, parse_constant=_reject_constant)  # Infinity / -Infinity / NaN are not JSON
    check = payload["checks"][0]
    assert (check["observed"], check["expected"]) == ("inf", "-inf")
    assert [row["ratio"] for row in check["details"]] == ["-inf", "nan"]
    assert check["meta"] == {"worst": "inf"} and payload["params"] == {"limit": "inf"}
