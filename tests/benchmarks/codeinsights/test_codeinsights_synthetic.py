"""The seeded SYNTHETIC CodeInsights fixture: real schema, card-like shape, every quirk present, deterministic."""

from __future__ import annotations

import json

import pandas as pd
import polars as pl
import pytest

from audit_lib.benchmarks.codeinsights import synthetic


@pytest.fixture(scope="module")
def fixture(tmp_path_factory):
    return synthetic.generate(3, tmp_path_factory.mktemp("codeinsights"))


def test_schema_shape_and_provenance(fixture):
    frame = pd.read_csv(fixture.paths[synthetic.SUBMISSIONS_FILE])
    assert tuple(frame.columns) == synthetic.SUBMISSION_COLUMNS
    assert (len(frame), frame["student_id"].nunique(), frame["question_unittest_id"].nunique()) == (541, 50, 93)
    assert frame["week"].nunique() > 5 and frame["topic"].nunique() > 5
    assert frame["pass"].dtype == "float64"  # one empty `pass` makes pandas infer float64
    assert all(p.synthetic and p.source == "synthetic" for p in fixture.provenance)
    topics = pd.read_csv(fixture.paths[synthetic.TOPICS_FILE])
    assert list(topics.columns) == ["student_id", "topic", "pass_rate", "perfect"]
    keys = json.loads(fixture.paths[synthetic.TEST_CASES_FILE].read_text(encoding="utf-8"))
    assert all(key.isdigit() for key in keys) and len(keys) == 92


def test_every_quirk_is_present(fixture):
    text = pl.read_csv(fixture.paths[synthetic.SUBMISSIONS_FILE], infer_schema=False)
    passes = text["pass"].to_list()
    assert {"0111", "0000", "1011", "1" * 18, "0110", "11011"} <= set(passes)
    assert None in passes
    assert any("Unittest helper" in u for u in text["question_unittests"].to_list())
    assert all(q.endswith(".0") for q in text["question_id"].to_list())
    assert any(" 9:05:00" in t for t in text["timestamp"].to_list())
    per_student_first = text.group_by("student_id").agg(pl.col("timestamp").min().alias("first"))
    tied = text.join(per_student_first, on="student_id").filter(pl.col("timestamp") == pl.col("first"))
    assert tied.group_by("student_id").len()["len"].max() >= 2


def test_same_seed_same_bytes_other_seed_differs(fixture, tmp_path):
    again = synthetic.generate(3, tmp_path / "again")
    other = synthetic.generate(4, tmp_path / "other")
    assert [p.sha256 for p in again.provenance] == [p.sha256 for p in fixture.provenance]
    assert [p.sha256 for p in other.provenance] != [p.sha256 for p in fixture.provenance]
