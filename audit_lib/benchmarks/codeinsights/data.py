"""The three CodeInsights inputs read the ways HELM reads them (pandas as shipped, `pass` as text for the truth)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from audit_lib.benchmarks.codeinsights.synthetic import FILES, SUBMISSIONS_FILE, TEST_CASES_FILE, TOPICS_FILE
from audit_lib.data import fetch, readers
from audit_lib.errors import CorruptFileError, SchemaError

REQUIRED_SUBMISSION_COLUMNS = ("student_id", "timestamp", "question_unittest_id", "question_unittests", "pass",
                               "week", "topic", "question_name", "question_text", "question_template", "response")
REQUIRED_TOPIC_COLUMNS = ("student_id", "topic", "pass_rate", "perfect")

__all__ = ["FILES", "CodeInsightsData", "load_files"]


@dataclass(frozen=True)
class CodeInsightsData:
    """The three inputs read the ways HELM reads them, plus `pass` (and everything else) as text for the truth."""

    submissions: pd.DataFrame               # pandas default inference (HELM as shipped)
    submissions_pass_as_str: pd.DataFrame   # dtype={"pass": "str"} (the fork's fix)
    submissions_text: Any                   # polars, every column a string
    topic_performance: pd.DataFrame
    test_cases_by_qid: Mapping[str, Any]
    provenance: tuple[fetch.Provenance, ...]
    synthetic: bool
    source_note: str

    @property
    def test_case_keys(self) -> tuple[str, ...]:
        return tuple(self.test_cases_by_qid.keys())


def load_files(paths: Mapping[str, Path], *, provenance: Sequence[fetch.Provenance] = (), synthetic: bool,
               source_note: str = "") -> CodeInsightsData:
    """Read the three files from local paths (keys are the registry file names)."""
    submissions_path = paths[SUBMISSIONS_FILE]
    submissions = readers.read_csv_pandas(submissions_path, required=REQUIRED_SUBMISSION_COLUMNS)
    pass_as_str = readers.read_csv_pandas(submissions_path, dtype={"pass": "str"})
    as_text = readers.read_csv_text(submissions_path, required=REQUIRED_SUBMISSION_COLUMNS)
    if len(as_text) != len(submissions):
        raise CorruptFileError(f"{submissions_path}: pandas reads {len(submissions)} rows but the text reader "
                               f"reads {len(as_text)}; rows cannot be matched", file=str(submissions_path),
                               row=None, field=None)
    topics = readers.read_csv_pandas(paths[TOPICS_FILE], required=REQUIRED_TOPIC_COLUMNS)
    test_cases = readers.read_json(paths[TEST_CASES_FILE])
    if not isinstance(test_cases, dict):
        raise SchemaError(f"{paths[TEST_CASES_FILE]}: expected a JSON object keyed by question id, got "
                          f"{type(test_cases).__name__}", file=str(paths[TEST_CASES_FILE]), row=None, field=None)
    return CodeInsightsData(submissions, pass_as_str, as_text, topics, test_cases, tuple(provenance), synthetic,
                            source_note)
