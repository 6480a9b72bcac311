"""The `schema` check on hand-made specs and canonicals."""

from __future__ import annotations

from test_intentspec_helpers import canonical_record, canonicals, spec_record, specs

from audit_lib.benchmarks.intentspec.checks_schema import schema_from


def test_clean_rows_pass():
    check = schema_from(specs(spec_record()), canonicals(canonical_record()))
    assert check.status == "pass" and check.observed == 0


def test_broken_constraint_id_set_is_reported_with_its_row():
    broken = spec_record("HumanEval/2", stated_test_ids=["C1", "C2"], hidden_test_ids=["C2"])
    check = schema_from(specs(spec_record("HumanEval/1"), broken),
                         canonicals(canonical_record("HumanEval/1"), canonical_record("HumanEval/2")))
    assert check.status == "defect"
    rows = [row for row in check.details if row["row"] == 2]
    assert any("both stated and hidden" in row["problem"] for row in rows)
    assert any("!= stated ∪ hidden" in row["problem"] and "'C3'" in row["problem"] for row in rows)
    assert all(row["task_id"] == "HumanEval/2" and row["file"] == "spec_pairs.jsonl" for row in rows)


def test_empty_hidden_set_and_bad_test_code():
    record = spec_record(hidden_test_ids=[], stated_test_ids=["C1", "C2", "C3"])
    record["constraints"][1]["test_code"] = "assert double(0) == 0"
    record["constraints"][2]["test_code"] = "assert solution(3 =="
    check = schema_from(specs(record), canonicals(canonical_record()))
    texts = [row["problem"] for row in check.details]
    assert "no hidden constraint" in texts
    assert "test_code never calls solution(...)" in texts
    assert "test_code does not parse as Python" in texts


def test_canonical_and_task_set_violations():
    bad = canonical_record("HumanEval/1", full_source="def double(x):\n    return x\n", entry_point="twice")
    check = schema_from(specs(spec_record("HumanEval/1"), spec_record("HumanEval/2")),
                         canonicals(bad, canonical_record("HumanEval/7")))
    texts = {(row["task_id"], row["problem"]) for row in check.details}
    assert ("HumanEval/1", "full_source != prompt + canonical_solution") in texts
    assert ("HumanEval/1", "full_source defines no top-level function 'twice'") in texts
    assert ("HumanEval/2", "no canonical for this task") in texts
    assert ("HumanEval/7", "no spec pair for this task") in texts
    assert check.observed == len(check.details) == 4


def test_duplicate_task_ids():
    check = schema_from(specs(spec_record(), spec_record()), canonicals(canonical_record()))
    assert [row["row"] for row in check.details if row["field"] == "task_id"] == [1, 2]


def test_no_rows_at_all_is_skipped_not_passed():
    assert schema_from((), ()).status == "skipped"
