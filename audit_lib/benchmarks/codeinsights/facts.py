"""Both HELM replays at one `num_testcases`, and the per-row facts (`pass` as read, as written, after `int()`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from audit_lib.benchmarks.codeinsights import replay
from audit_lib.benchmarks.codeinsights.data import CodeInsightsData

COUNTED_NUM_TESTCASES = (1, -1)


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
