"""Loading IntentSpec rows: clear errors naming file, line/row and field."""

from __future__ import annotations

import json

import pytest
from test_intentspec_helpers import spec_record, write_jsonl

from audit_lib.benchmarks.intentspec.data import (
    SPEC_PAIR_FIELDS,
    published_run_from_json,
    read_records,
    spec_pairs_from_records,
    task_id_of_generation_file,
)
from audit_lib.errors import CorruptFileError, SchemaError


def test_malformed_json_line_names_the_line(tmp_path):
    path = write_jsonl(tmp_path / "spec_pairs.jsonl", [spec_record("HumanEval/1"), spec_record("HumanEval/2")],
                       raw_lines={2: '{"task_id": "HumanEval/9", "constraints": [ '})
    with pytest.raises(CorruptFileError) as caught:
        read_records(path, SPEC_PAIR_FIELDS)
    assert "line 2" in str(caught.value)
    assert caught.value.fields["row"] == 2
    assert "spec_pairs.jsonl" in str(caught.value)


def test_missing_field_names_row_and_field(tmp_path):
    broken = spec_record("HumanEval/2")
    del broken["hidden_test_ids"]
    path = write_jsonl(tmp_path / "spec_pairs.jsonl", [spec_record("HumanEval/1"), broken])
    with pytest.raises(SchemaError) as caught:
        read_records(path, SPEC_PAIR_FIELDS)
    assert caught.value.fields["row"] == 2
    assert caught.value.fields["field"] == "hidden_test_ids"


def test_wrong_constraint_type_names_row_and_field():
    bad = spec_record("HumanEval/3", constraints=[{"id": "C1", "description": "d", "test_code": 7}])
    with pytest.raises(SchemaError) as caught:
        spec_pairs_from_records([spec_record("HumanEval/1"), bad], file="spec_pairs.jsonl")
    assert caught.value.fields == {"file": "spec_pairs.jsonl", "row": 2, "field": "constraints[0].test_code"}
    assert "row 2" in str(caught.value)


def test_published_results_parse_and_reject_bad_outcome():
    payload = {"model": "gpt-4.1", "n_solutions_per_spec": 1, "overall_ivr": 0.5, "ivr_by_type": {"algorithm": 0.5},
               "per_task": {"HumanEval/1": [{"passes_stated": True, "passed_hidden": ["C2"],
                                             "failed_hidden": ["C3"]}]}}
    run = published_run_from_json(json.loads(json.dumps(payload)), file="results/x.json")
    assert run.model_slug == "gpt-4_1"
    assert run.per_task["HumanEval/1"][0].failed_hidden == ("C3",)
    payload["per_task"]["HumanEval/1"][0]["passes_stated"] = "yes"
    with pytest.raises(SchemaError) as caught:
        published_run_from_json(payload, file="results/x.json")
    assert "passes_stated" in caught.value.fields["field"]


def test_generation_file_names():
    assert task_id_of_generation_file("generations/gpt-4_1__HumanEval_42.jsonl") == ("gpt-4_1", "HumanEval/42")
    with pytest.raises(SchemaError):
        task_id_of_generation_file("generations/HumanEval_42.jsonl")
