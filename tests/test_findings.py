"""findings: the check model, the JSON layout of DESIGN.md, evidence capping with full CSV tables."""

from __future__ import annotations

import csv
import dataclasses
import json

import pytest

from audit_lib.findings import (
    DETAILS_CAP_IN_JSON,
    Check,
    FindingsBuilder,
    Result,
    load_findings,
    to_jsonable,
    worst_status,
)


def test_findings_json_has_the_documented_layout_and_caps_details(tmp_path):
    builder = FindingsBuilder("toy", {"seed": 0})
    builder.add_provenance({"file": "toy/a.jsonl", "source": "mirror", "sha256": "ab", "pinned": True,
                            "synthetic": False})
    rows = [{"task": i, "value": float("nan") if i == 0 else i} for i in range(DETAILS_CAP_IN_JSON + 7)]
    builder.add(Check("many_rows", "Many rows", "defect", observed=len(rows), expected=0, details=rows))
    builder.add(Check("needs_data", "Needs data", "skipped", summary="file x is missing"))
    path = builder.write(tmp_path)
    payload = json.loads(path.read_text(encoding="utf-8"))
    assert payload["audit"] == "toy" and payload["params"] == {"seed": 0}
    assert payload["provenance"][0]["source"] == "mirror"
    first = payload["checks"][0]
    assert {"id", "title", "status", "observed", "expected", "details"} <= set(first)
    assert len(first["details"]) == DETAILS_CAP_IN_JSON and first["details_total"] == len(rows)
    assert first["details"][0]["value"] == "nan"
    with open(tmp_path / "toy" / "many_rows.csv", encoding="utf-8") as handle:
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


def test_a_result_named_by_the_session_keeps_the_exception_type_and_message():
    from_exception = Check.of("parse", "Parse", Result.errored(ValueError("row 3 is broken"), meta={"file": "a.csv"}))
    assert (from_exception.id, from_exception.title, from_exception.status) == ("parse", "Parse", "error")
    assert from_exception.summary == "ValueError: row 3 is broken" and from_exception.meta == {"file": "a.csv"}
    from_text = Result.errored("the sandbox is gone")
    assert from_text.summary == "the sandbox is gone" and from_text.status == "error"
    skipped = Result.skipped("x.csv is missing", missing=["x.csv"])
    assert skipped.meta == {"missing": ["x.csv"]} and skipped.summary == "x.csv is missing"


def test_findings_look_up_checks_and_count_statuses():
    builder = FindingsBuilder("toy")
    for check_id, status in (("a", "pass"), ("b", "defect"), ("c", "defect"), ("d", "skipped")):
        builder.add(Check(check_id, check_id.upper(), status))
    findings = builder.findings()
    assert findings.check("c").status == "defect" and findings.check("a").title == "A"
    with pytest.raises(KeyError, match="audit 'toy' has no check 'zz'"):
        findings.check("zz")
    assert findings.status_counts() == {"pass": 1, "quirk": 0, "defect": 2, "error": 0, "skipped": 1}


def test_findings_json_keeps_the_documented_key_order_and_indentation(tmp_path):
    builder = FindingsBuilder("toy", {"b": 1, "a": 2})
    builder.add(Check("x", "X", "quirk", observed={"ratio": 1.5}, expected={"ratio": 1.0}, meta={"depth": "rows"}))
    builder.add(Check("y", "Y", "pass"))
    text = builder.write(tmp_path / "nested" / "reports").read_text(encoding="utf-8")  # parents are created
    assert text.startswith('{\n  "audit": "toy",\n  "params": {\n    "b": 1,\n    "a": 2\n  },') and text.endswith("}\n")
    payload = load_findings(tmp_path / "nested" / "reports" / "toy.findings.json")
    assert list(payload) == ["audit", "params", "provenance", "synthetic", "status_counts", "stamp", "checks"]
    first, second = payload["checks"]
    assert (first["observed"], first["expected"], first["meta"]) == ({"ratio": 1.5}, {"ratio": 1.0}, {"depth": "rows"})
    assert first["synthetic"] is False and "meta" not in second


def test_findings_are_written_to_the_reports_dir_by_default(tmp_path, monkeypatch):
    monkeypatch.setenv("AUDIT_REPORTS_DIR", str(tmp_path / "reports"))
    builder = FindingsBuilder("toy")
    builder.add(Check("x", "X", "pass"))
    assert builder.write() == tmp_path / "reports" / "toy.findings.json"


def test_provenance_records_from_dataclasses_and_mappings_are_kept_once():
    from audit_lib.data.fetch import Provenance

    record = Provenance(dataset="toy", file="a.jsonl", source="mirror", location="/m/toy/a.jsonl", sha256="ab",
                        pinned=True, synthetic=False, upstream="https://example.org/a.jsonl", licence="MIT")
    builder = FindingsBuilder("toy")
    builder.add_provenance(record, record, {"file": "b.jsonl", "synthetic": False})
    assert len(builder.provenance) == 2
    assert builder.provenance[0]["file"] == "a.jsonl" and builder.provenance[0]["sha256"] == "ab"
    assert builder.provenance[1] == {"file": "b.jsonl", "synthetic": False}


def test_worst_status_ranks_an_unknown_status_as_pass():
    assert worst_status(["mystery", "pass"]) == "pass"
    assert worst_status(["pass", "mystery"]) == "mystery"  # equal rank: the sort is stable
    assert worst_status(["skipped", "mystery"]) == "skipped"


def test_to_jsonable_turns_every_supported_type_into_plain_json(tmp_path):
    import numpy as np

    @dataclasses.dataclass
    class Row:
        name: str
        score: float

    assert to_jsonable(1.5) == 1.5 and to_jsonable(-0.0) == -0.0
    assert to_jsonable([float("nan"), (1, float("-inf"))]) == ["nan", [1, "-inf"]]
    assert to_jsonable({3, 1, 2}) == [1, 2, 3]
    assert to_jsonable({1, "a"}) == ["a", 1]  # mixed types: ordered by repr, so no TypeError
    assert to_jsonable({"k": {2: frozenset({"b", "a"})}}) == {"k": {"2": ["a", "b"]}}
    assert to_jsonable(Row("r", float("inf"))) == {"name": "r", "score": "inf"}
    assert to_jsonable(Row) == repr(Row)  # a dataclass type is not an instance
    assert to_jsonable(np.int64(7)) == 7 and type(to_jsonable(np.int64(7))) is int
    assert to_jsonable(np.float64("nan")) == "nan"
    assert to_jsonable(np.array([[1, 2], [3, 4]])) == [[1, 2], [3, 4]]
    assert to_jsonable(tmp_path / "a.csv") == str(tmp_path / "a.csv")
    assert to_jsonable(complex(1, 2)) == "(1+2j)"


def test_csv_cells_hold_json_for_lists_and_dicts(tmp_path):
    builder = FindingsBuilder("toy")
    rows = [{"task": "T/0", "tags": ["a", "b"], "meta": {"k": 1}, "ratio": float("inf")},
            {"task": "T/1", "extra": 2.5}]
    builder.add(Check("rows", "Rows", "quirk", details=rows))
    builder.write(tmp_path)
    with open(tmp_path / "toy" / "rows.csv", encoding="utf-8", newline="") as handle:
        read = list(csv.DictReader(handle))
    assert read[0] == {"task": "T/0", "tags": '["a", "b"]', "meta": '{"k": 1}', "ratio": "inf", "extra": ""}
    assert read[1] == {"task": "T/1", "tags": "", "meta": "", "ratio": "", "extra": "2.5"}


@pytest.mark.parametrize(("summary", "finding"), [
    ("One. Two.", "One."), ("Ends.", "Ends."), ("Is it? Yes.", "Is it?"), ("Stop! Go.", "Stop!"),
    ("v0.1 ok.", "v0.1 ok."), ("x .5 y. z", "x .5 y."),
    ("Spread\n   over  lines. Next", "Spread over lines."),
    ("See (a. b) then. Rest", "See (a. b) then."),
    ("Nested [x (y. z) w. v] end. Rest", "Nested [x (y. z) w. v] end."),
    ("a) b. c", "a) b."),  # an unmatched closing bracket does not hide later full stops
    ("Fix X. Then", "Fix X."), ("X marks it. Rest", "X marks it."), ("(a X. b) c. d", "(a X. b) c."),
    ("Use e.g. this. Rest", "Use e.g. this."), ("Compare Vs. baseline. Rest", "Compare Vs. baseline."),
    ("", ""), (None, ""),
])
def test_a_finding_is_the_summary_s_first_sentence(summary, finding):
    assert Result("quirk", summary=summary).finding == finding
    assert Check("c", "C", "quirk", summary=summary).finding == finding


def test_a_finding_given_is_kept_and_written():
    result = Result("quirk", summary="Long story. More.", finding="The point.")
    assert result.finding == "The point."
    assert Check.of("c", "C", result).to_json()["finding"] == "The point."


def test_check_ids_may_hold_dots_dashes_and_underscores_but_nothing_else():
    for good in ("a_b", "a.b", "a-b", "Mini.tasks_lost-2"):
        assert Check(good, "T", "pass").id == good
    for bad in ("", "a b", "a/b"):
        with pytest.raises(ValueError, match="must be a non-empty identifier"):
            Check(bad, "T", "pass")
    with pytest.raises(ValueError, match="status 'bogus' is not one of"):
        Result("bogus")


def test_evidence_rows_are_frozen_as_plain_dicts():
    import types

    row = types.MappingProxyType({"task": 1})
    for item in (Result("quirk", details=[row]), Check("c", "C", "quirk", details=[row])):
        assert item.details == ({"task": 1},) and type(item.details[0]) is dict


def test_a_skip_keeps_its_meta_and_other_fields_beside_what_is_missing():
    skipped = Result.skipped("Set AUDIT_MIRROR", missing=["a.jsonl"], meta={"hint": "fetch"}, synthetic=True)
    assert skipped.meta == {"hint": "fetch", "missing": ["a.jsonl"]} and skipped.synthetic
    assert skipped.status == "skipped" and skipped.summary == "Set AUDIT_MIRROR"


def test_the_stamp_and_load_cost_reach_the_json_only_when_set(tmp_path):
    builder = FindingsBuilder("toy")
    assert builder.findings().stamp is None and builder.findings().load_cost is None
    plain = builder.findings().to_json()
    assert plain["stamp"] is None and "load_cost" not in plain
    builder.stamp = {"code": ("abc", 1)}
    builder.load_cost = {"cpu_s": (1.5,)}
    payload = json.loads(builder.write(tmp_path).read_text(encoding="utf-8"))
    assert payload["stamp"] == {"code": ["abc", 1]} and payload["load_cost"] == {"cpu_s": [1.5]}


def test_rewriting_findings_removes_evidence_of_checks_that_lost_it(tmp_path):
    builder = FindingsBuilder("toy")
    builder.add(Check("rows", "Rows", "quirk", details=[{"task": 1}]))
    builder.add(Check("more", "More", "quirk", details=[{"task": 2}]))
    builder.write(tmp_path)
    (tmp_path / "toy" / "notes.txt").write_text("kept")
    again = FindingsBuilder("toy")
    again.add(Check("rows", "Rows", "quirk", details=[{"task": 3}]))
    again.add(Check("more", "More", "pass"))
    again.write(tmp_path)  # the evidence folder exists already
    assert sorted(p.name for p in (tmp_path / "toy").iterdir()) == ["notes.txt", "rows.csv"]
    assert "3" in (tmp_path / "toy" / "rows.csv").read_text(encoding="utf-8")
