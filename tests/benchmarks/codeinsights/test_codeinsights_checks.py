"""codeinsights_edge_case checks: on the SYNTHETIC fixture (quirks found) and on clean hand-made files (pass)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pandas as pd
import pytest

from audit_lib.benchmarks.codeinsights import synthetic
from audit_lib.benchmarks.codeinsights.audit import AUDIT, Inputs, Params, load
from audit_lib.benchmarks.codeinsights.data import CodeInsightsData, load_files
from audit_lib.data import fetch
from audit_lib.errors import DataUnavailableError, ParameterError
from audit_lib.findings import Check

CHECK_IDS = ["pass_read_dtype", "leading_zero_loss", "float_precision", "single_failure_after_int",
             "single_failure_true", "is_single_failure_column", "alignment_ceiling",
             "gold_index_hidden_by_truncation", "pattern_length_mismatch", "qid_lookup", "timestamp_ties",
             "prompt_as_built", "baseline_scores"]


@pytest.fixture(scope="module")
def synthetic_data(tmp_path_factory) -> CodeInsightsData:
    generated = synthetic.generate(0, tmp_path_factory.mktemp("synthetic"))
    return load_files(generated.paths, provenance=generated.provenance, synthetic=True)


def run_checks(data: CodeInsightsData, num_testcases: int = 1) -> dict[str, Check]:
    """Every check through the audit's session, on already-read data."""
    inputs = Inputs(data, num_testcases, 0, {})
    session = dataclasses.replace(AUDIT, load=lambda params: inputs).session({"num_testcases": num_testcases})
    return {check.id: check for check in session.run_all()}


def write_clean_files(folder: Path, *, with_flag_column: bool = True) -> dict[str, Path]:
    tests = "\n".join(f"Unittest {i}:\nInput:\ncout << {i};\nSTD input:\n\nOutput:\n{i}\n" for i in range(4))
    rows = [(1, "2023-09-04 08:00:00", "1011"), (1, "2023-09-05 08:00:00", "1111"),
            (2, "2023-09-04 09:00:00", "1101")]
    frame = pd.DataFrame([{"student_id": s, "timestamp": t, "question_unittest_id": 175, "question_unittests": tests,
                           "pass": p, "week": 1, "topic": "Array", "question_name": "Sum", "question_text": "Tính tổng",
                           "question_template": "{{ STUDENT_ANSWER }}", "response": "int f();",
                           "is_single_failure": p.count("0") == 1} for s, t, p in rows])
    if not with_flag_column:
        frame = frame.drop(columns="is_single_failure")
    paths = {name: folder / name for name in synthetic.FILES}
    frame.to_csv(paths[synthetic.SUBMISSIONS_FILE], index=False)
    pd.DataFrame({"student_id": [1, 2], "topic": ["Array", "Array"], "pass_rate": [0.9, 0.75],
                  "perfect": [0.5, 0.0]}).to_csv(paths[synthetic.TOPICS_FILE], index=False)
    paths[synthetic.TEST_CASES_FILE].write_text(json.dumps({"175": []}), encoding="utf-8")
    return paths


def details(check, **match):
    return [row for row in check.details if all(row.get(k) == v for k, v in match.items())]


def test_synthetic_run_has_every_check_in_order_and_no_errors(synthetic_data):
    checks = run_checks(synthetic_data, num_testcases=1)
    assert list(checks) == CHECK_IDS
    assert all(c.status not in ("error", "skipped") and c.synthetic for c in checks.values())
    assert all(c.summary.startswith("SYNTHETIC") for c in checks.values())


def test_synthetic_quirks_are_found(synthetic_data):
    checks = run_checks(synthetic_data, num_testcases=1)
    assert checks["pass_read_dtype"].observed["pandas_dtype"] == "float64"
    assert details(checks["leading_zero_loss"], scope="instance", pass_text="0111", gold_before=0, gold_after=None)
    assert details(checks["single_failure_after_int"], pass_text="0000", gold_after_int=0, gold_true=None)
    assert details(checks["single_failure_true"], pass_text="0111", kept_by_helm=False)
    assert details(checks["float_precision"], scope="instance", pass_text="1" * 18)
    assert details(checks["pattern_length_mismatch"], scope="instance", pass_text="11011", tests_parsed=4)
    assert details(checks["is_single_failure_column"], pass_text="0110", column=True, true_rule=False)
    assert details(checks["timestamp_ties"], kind="tie")
    assert details(checks["timestamp_ties"], kind="text_order_differs")
    ceiling = checks["alignment_ceiling"].observed
    assert ceiling["as_shipped"] != ceiling["true_patterns"]
    assert checks["gold_index_hidden_by_truncation"].observed["helm_gold_hidden"] > 0
    skips = checks["qid_lookup"].observed["skipped_as_shipped"]
    assert skips == {"qid_not_in_test_case_keys": 1, "unittest_marker_missing": 1, "fewer_tests_than_num_testcases": 1}
    assert checks["qid_lookup"].observed["first_rows_found_if_looked_up_by_question_id"] == 0
    counts = {(r["num_testcases"], r["variant"]): r["instances"] for r in checks["qid_lookup"].meta["instance_counts"]}
    assert counts[(1, "as_shipped")] == 47 and counts[(-1, "as_shipped")] == 48
    prompt = checks["prompt_as_built"]
    assert prompt.observed["differs_from_intended"] == prompt.observed["instances"]
    baselines = checks["baseline_scores"].observed
    assert baselines["as_fixed"]["always_0"] == baselines["as_fixed"]["ceiling_metric_gold"]


def test_all_tests_shown_hides_no_gold_but_keeps_a_question_less_prompt(synthetic_data):
    checks = run_checks(synthetic_data, num_testcases=-1)
    assert checks["gold_index_hidden_by_truncation"].status == "pass"
    assert checks["prompt_as_built"].observed["missing_question"] == 1
    assert checks["prompt_as_built"].meta["example_without_tests"].startswith("Think silently")


def test_clean_files_pass(tmp_path):
    data = load_files(write_clean_files(tmp_path), synthetic=False)
    checks = run_checks(data, num_testcases=-1)
    assert checks["pass_read_dtype"].observed["pandas_dtype"] == "int64"
    for check_id in ("leading_zero_loss", "single_failure_after_int", "single_failure_true", "float_precision",
                     "is_single_failure_column", "gold_index_hidden_by_truncation", "pattern_length_mismatch",
                     "timestamp_ties", "qid_lookup"):
        assert checks[check_id].status == "pass", (check_id, checks[check_id].summary)
    assert checks["alignment_ceiling"].observed["as_shipped"] == 1.0
    assert checks["prompt_as_built"].status == "defect"  # the conditional-expression bug is in every prompt
    assert not checks["qid_lookup"].synthetic


def test_missing_flag_column_is_skipped(tmp_path):
    data = load_files(write_clean_files(tmp_path, with_flag_column=False), synthetic=False)
    check = run_checks(data)["is_single_failure_column"]
    assert check.status == "skipped" and "no is_single_failure column" in check.summary
    assert check.meta["missing"] == ["codeinsights/Scenario5_data.csv"]


def test_auto_falls_back_to_synthetic_loudly(monkeypatch, isolated_cache):
    monkeypatch.setattr(fetch, "try_fetch", lambda dataset, file, **kw: DataUnavailableError(f"no {file} here"))
    with pytest.warns(UserWarning, match="SYNTHETIC DATA"):
        inputs = load(Params(source="auto", seed=1))
    assert inputs.data.synthetic and all(p.synthetic for p in inputs.provenance)
    assert sorted(inputs.missing) == sorted(f"codeinsights/{file}" for file in synthetic.FILES)
    assert "no Scenario5_data.csv here" in inputs.source_note
    assert (isolated_cache / "synthetic" / "codeinsights" / "seed_1" / synthetic.SUBMISSIONS_FILE).is_file()


def test_synthetic_source_never_fetches(monkeypatch, isolated_cache):
    monkeypatch.setattr(fetch, "try_fetch", lambda *a, **kw: pytest.fail("source='synthetic' must not fetch"))
    inputs = load(Params(source="synthetic"))
    assert inputs.data.synthetic and inputs.missing == {} and "requested with source='synthetic'" in inputs.source_note


def test_check_titles_match_the_declared_ones(synthetic_data):
    checks = run_checks(synthetic_data)
    assert {spec.id: spec.title for spec in AUDIT.check_specs(Params())} == {i: c.title for i, c in checks.items()}


def test_defaults_are_valid():
    assert AUDIT.validate({}) == Params() == Params(num_testcases=1, source="auto", seed=0)
    assert AUDIT.validate({"num_testcases": -1}).num_testcases == -1


@pytest.mark.parametrize(("name", "value", "allowed"), [
    ("num_testcases", -2, "-1 (every test) or at least 1"),
    ("num_testcases", 0, "-1 (every test) or at least 1"),
    ("num_testcases", "1", "must be an integer"),
    ("source", "real", "one of 'auto', 'synthetic'"),
    ("seed", -1, "at least 0"),
])
def test_bad_parameters_name_the_parameter_and_the_allowed_values(name, value, allowed):
    with pytest.raises(ParameterError) as caught:
        AUDIT.validate({name: value})
    assert caught.value.fields["field"] == name and repr(name) in str(caught.value) and allowed in str(caught.value)


def test_header_only_submissions_skip_every_check(tmp_path):
    paths = write_clean_files(tmp_path)
    header = paths[synthetic.SUBMISSIONS_FILE].read_text(encoding="utf-8").splitlines()[0]
    paths[synthetic.SUBMISSIONS_FILE].write_text(header + "\n", encoding="utf-8")
    data = load_files(paths, synthetic=False)
    checks = run_checks(data)
    assert list(checks) == CHECK_IDS
    assert {check_id: check.status for check_id, check in checks.items()} == dict.fromkeys(CHECK_IDS, "skipped")
    assert all(check.meta["missing"] == ["codeinsights/Scenario5_data.csv"] for check in checks.values())


def test_checks_do_not_depend_on_the_order_they_run_in(synthetic_data):
    forward = run_checks(synthetic_data)
    inputs = Inputs(synthetic_data, 1, 0, {})
    session = dataclasses.replace(AUDIT, load=lambda params: inputs).session({})
    backward = {check_id: session.run(check_id) for check_id in reversed(CHECK_IDS)}
    assert {i: (c.status, c.observed) for i, c in backward.items()} == {i: (c.status, c.observed)
                                                                        for i, c in forward.items()}
    assert inputs.replay is inputs.replay  # built once, shared by every check


def test_one_tied_student_is_told_in_the_singular(tmp_path):
    paths = write_clean_files(tmp_path)
    submissions = paths[synthetic.SUBMISSIONS_FILE]
    frame = pd.read_csv(submissions)
    frame.loc[1, "timestamp"] = frame.loc[0, "timestamp"]  # student 1's two rows now tie on the earliest time
    frame.to_csv(submissions, index=False)
    check = run_checks(load_files(paths, synthetic=False))["timestamp_ties"]
    assert check.observed["tied_students"] == 1
    assert check.summary.startswith("1 student shares their earliest timestamp between rows (1 with different "
                                    "question or pass); 0 students' first row")
    assert run_checks(load_files(paths, synthetic=False))["qid_lookup"].summary.startswith("2 students;")
