"""HELM `codeinsights_edge_case`: load its three inputs (real or SYNTHETIC), replay it as shipped and as fixed.

The checks live in `codeinsights_checks.py`; the replay rules in `codeinsights_replay.py`.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from audit_lib.benchmarks.codeinsights import replay, synthetic
from audit_lib.data import fetch, readers
from audit_lib.errors import CorruptFileError, DataError, ParameterError, SchemaError

AUDIT = "codeinsights_edge_case"
DATASET = "codeinsights"
FILES = synthetic.FILES
SUBMISSIONS_FILE, TOPICS_FILE, TEST_CASES_FILE = FILES
SOURCES = ("auto", "synthetic")
REQUIRED_SUBMISSION_COLUMNS = ("student_id", "timestamp", "question_unittest_id", "question_unittests", "pass",
                               "week", "topic", "question_name", "question_text", "question_template", "response")
REQUIRED_TOPIC_COLUMNS = ("student_id", "topic", "pass_rate", "perfect")
COUNTED_NUM_TESTCASES = (1, -1)


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


@dataclass(frozen=True)
class RowFacts:
    """One `Scenario5_data.csv` row: `pass` as pandas sees it, as written, and both patterns."""

    record: int
    student_id: Any
    question_unittest_id: Any
    pass_value: Any
    pass_text: str | None
    pattern_true: tuple[int, ...] | None
    pattern_after_int: tuple[int, ...] | None
    after_int_error: str
    tests_parsed: int | None
    unittests_parse_ok: bool | None
    single_failure_column: str | None


@dataclass(frozen=True)
class EdgeCaseAudit:
    """The loaded data, the per-row facts and both replays at the chosen `num_testcases`."""

    data: CodeInsightsData
    num_testcases: int
    seed: int
    rows: tuple[RowFacts, ...]
    shipped: replay.ReplayResult
    fixed: replay.ReplayResult

    def row(self, record: int) -> RowFacts:
        return self.rows[record - 1]


# ---------------------------------------------------------------------------------------------- parameters


def validate_params(*, num_testcases: Any, source: Any, seed: Any) -> None:
    """Notebook parameters: a bad value raises `ParameterError` naming the parameter."""
    if isinstance(num_testcases, bool) or not isinstance(num_testcases, int) or num_testcases < -1:
        raise ParameterError(f"num_testcases must be an integer >= -1 (-1 keeps every test), got {num_testcases!r}",
                             parameter="num_testcases", value=repr(num_testcases))
    if source not in SOURCES:
        raise ParameterError(f"source must be one of {SOURCES}, got {source!r}", parameter="source",
                             value=repr(source))
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ParameterError(f"seed must be a non-negative integer, got {seed!r}", parameter="seed",
                             value=repr(seed))


# ---------------------------------------------------------------------------------------------- loading


def load(source: str = "auto", seed: int = 0) -> CodeInsightsData:
    """`auto`: the real files via `fetch` (cache, mirror, download); when any is unavailable, SYNTHETIC data."""
    if source not in SOURCES:
        raise ParameterError(f"source must be one of {SOURCES}, got {source!r}", parameter="source")
    if source == "auto":
        fetched: dict[str, Path] = {}
        provenance = []
        for file in FILES:
            outcome = fetch.try_fetch(DATASET, file)
            if isinstance(outcome, DataError):
                return _synthetic_fallback(seed, outcome)
            fetched[file] = outcome.path
            provenance.append(outcome.provenance)
        return load_files(fetched, provenance=tuple(provenance), synthetic=False,
                          source_note="real files: " + ", ".join(f"{p.file} from {p.source}" for p in provenance))
    fixture = synthetic.generate(seed)
    return load_files(fixture.paths, provenance=fixture.provenance, synthetic=True,
                      source_note=f"SYNTHETIC data (seed {seed}) requested with source='synthetic'")


def _synthetic_fallback(seed: int, reason: DataError) -> CodeInsightsData:
    message = (f"SYNTHETIC DATA: the real CodeInsights files are unavailable, so this audit runs on a seeded "
               f"synthetic fixture (seed {seed}). Its figures say nothing about the real benchmark.\n{reason}")
    warnings.warn(message, stacklevel=3)
    print("!" * 100 + "\n" + message + "\n" + "!" * 100, file=sys.stderr)
    fixture = synthetic.generate(seed)
    return load_files(fixture.paths, provenance=fixture.provenance, synthetic=True, source_note=message)


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


# ---------------------------------------------------------------------------------------------- replay


def row_facts(data: CodeInsightsData) -> tuple[RowFacts, ...]:
    """Per row: `pass` as pandas inferred it and as written, the true and the `int()` pattern, the test count."""
    text_rows = data.submissions_text.select(["pass", *(
        ["is_single_failure"] if "is_single_failure" in data.submissions_text.columns else [])]).to_dicts()
    frame = data.submissions
    columns = zip(frame["student_id"].tolist(), frame["question_unittest_id"].tolist(), frame["pass"].tolist(),
                  frame["question_unittests"].tolist())
    facts = []
    for position, (student_id, qid, pass_value, unittests) in enumerate(columns):
        text_row = text_rows[position]
        pass_text = text_row["pass"]
        try:
            after_int, error = replay.pattern_as_shipped(pass_value), ""
        except (ValueError, TypeError, OverflowError) as exc:
            after_int, error = None, f"{type(exc).__name__}: {exc}"
        parsed = replay.parse_unittests(unittests) if isinstance(unittests, str) else None
        facts.append(RowFacts(
            record=position + 1, student_id=student_id, question_unittest_id=qid,
            pass_value=pass_value, pass_text=pass_text, pattern_true=replay.true_pattern(pass_text),
            pattern_after_int=after_int, after_int_error=error,
            tests_parsed=len(parsed.tests) if parsed and parsed.parsed_ok else None,
            unittests_parse_ok=parsed.parsed_ok if parsed else None,
            single_failure_column=text_row.get("is_single_failure")))
    return tuple(facts)


def replay_audit(data: CodeInsightsData, *, num_testcases: int = 1, seed: int = 0) -> EdgeCaseAudit:
    """Both replays at `num_testcases`, plus the per-row facts the checks compare them with."""
    shipped = replay.build_as_shipped(data.submissions, data.topic_performance, data.test_case_keys, num_testcases)
    fixed = replay.build_as_fixed(data.submissions_pass_as_str, data.topic_performance, data.test_case_keys,
                                  num_testcases)
    return EdgeCaseAudit(data, num_testcases, seed, row_facts(data), shipped, fixed)


def instance_counts(data: CodeInsightsData, values: Sequence[int] = COUNTED_NUM_TESTCASES) -> list[dict[str, Any]]:
    """Instances and skips per reason for each `num_testcases`, as shipped and as fixed."""
    out = []
    for num_testcases in values:
        for result in (replay.build_as_shipped(data.submissions, data.topic_performance, data.test_case_keys,
                                               num_testcases),
                       replay.build_as_fixed(data.submissions_pass_as_str, data.topic_performance,
                                             data.test_case_keys, num_testcases)):
            out.append({"num_testcases": num_testcases, "variant": result.variant,
                        "students": int(data.submissions["student_id"].nunique()),
                        "instances": len(result.instances), "skipped": len(result.skipped),
                        "skipped_by_reason": result.skip_counts(),
                        "helm_run_aborts": result.helm_run_aborts})
    return out


def skipped_rows(audit: EdgeCaseAudit) -> list[dict[str, Any]]:
    """Every skipped student of both replays, one row each."""
    return [skip.as_row() for skip in (*audit.shipped.skipped, *audit.fixed.skipped)]


# ---------------------------------------------------------------------------------------------- figure


def pattern_figure(audit: EdgeCaseAudit):
    """Pattern lengths and failing-bit counts per row: as written vs after `int()`."""
    from matplotlib.figure import Figure

    true_rows = [r for r in audit.rows if r.pattern_true is not None]
    after_rows = [r for r in audit.rows if r.pattern_after_int is not None]
    fig = Figure(figsize=(11, 4))
    left, right = fig.subplots(1, 2)
    length_bins = range(0, max([len(r.pattern_true) for r in true_rows] + [1]) + 2)
    left.hist([[len(r.pattern_true) for r in true_rows], [len(r.pattern_after_int) for r in after_rows]],
              bins=length_bins, label=["as written (text)", "after int() (HELM)"], align="left")
    left.set_xlabel("pattern length (bits)")
    left.set_ylabel("rows")
    left.legend()
    zero_bins = range(0, max([r.pattern_true.count(0) for r in true_rows] + [1]) + 2)
    right.hist([[r.pattern_true.count(0) for r in true_rows], [r.pattern_after_int.count(0) for r in after_rows]],
               bins=zero_bins, label=["as written (text)", "after int() (HELM)"], align="left")
    right.set_xlabel("failing bits (zeros) per pattern")
    right.legend()
    title = f"{len(audit.rows)} rows of {SUBMISSIONS_FILE}"
    fig.suptitle(title + (" — SYNTHETIC DATA" if audit.data.synthetic else ""))
    fig.tight_layout()
    return fig
