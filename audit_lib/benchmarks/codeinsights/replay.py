"""Replay of HELM's `codeinsights_edge_case` scenario and metric, as shipped and as fixed, as pure functions.

As shipped: `stanford-crfm/helm` @ 8b46ae0349529bc9ebf19fce7256f3ecfb6d103d
(`scenarios/codeinsights_edge_case_scenario.py`, with `num_testcases`; metric
`metrics/codeinsights_edge_case_metrics.py::UnittestAlignmentMetric`).
As fixed: fork `Kazf28/helm` @ 18af1d24d86e408d5129829f3f8b4f14f43c2fdb (the unmerged fix: `pass` read as
string, no `int()`, pattern truncated to `num_testcases`, rows whose test count differs from the pattern dropped).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import pandas as pd

HELM_AS_SHIPPED = "stanford-crfm/helm@8b46ae0349529bc9ebf19fce7256f3ecfb6d103d"
HELM_AS_FIXED = "Kazf28/helm@18af1d24d86e408d5129829f3f8b4f14f43c2fdb"
UNITTEST_SPLITTER = "Unittest"

Variant = Literal["as_shipped", "as_fixed"]

# Skip reasons. `counted_by_helm` says whether HELM's own `skipped_no_tests` counter sees it;
# `aborts_helm_run` marks an exception that stops HELM's `get_instances` for every student.
SKIP_REASONS: dict[str, tuple[bool, bool]] = {
    "no_test_cases_loaded": (False, False),
    "qid_falsy": (True, False),
    "qid_not_in_test_case_keys": (True, False),
    "unittests_not_text": (False, True),
    "unittest_marker_missing": (True, False),
    "fewer_tests_than_num_testcases": (False, False),
    "pass_not_convertible_by_int": (False, True),
    "pass_missing": (False, True),
    "pass_contains_dot": (False, True),
    "pass_has_non_digit": (False, True),
    "pattern_shorter_than_num_testcases": (True, False),
    "test_count_differs_from_pattern_length": (False, False),
    "no_tests_after_truncation": (False, False),
}


# ---------------------------------------------------------------------------------------------- unit tests


@dataclass(frozen=True)
class ParsedUnittests:
    """`question_unittests` split the way HELM splits it; `parsed_ok` is False when a marker is missing."""

    tests: tuple[Mapping[str, str], ...]
    parsed_ok: bool
    fragments: int


def parse_unittests(text: str) -> ParsedUnittests:
    """Split on the literal "Unittest", keep what follows the first ':' of each piece, cut Input/STD input/Output."""
    tests: list[dict[str, str]] = []
    pieces = text.split(UNITTEST_SPLITTER)[1:]
    for piece in pieces:
        body = piece[piece.find(":") + 1:]
        input_at, std_in_at, output_at = body.find("Input:"), body.find("STD input:"), body.find("Output:")
        if -1 in (input_at, std_in_at, output_at):
            return ParsedUnittests(tuple(tests), False, len(pieces))
        # HELM slices by fixed marker widths (6, 10, 7) even when markers are out of order.
        tests.append({"input": body[input_at + 6:std_in_at].strip(),
                      "std_in": body[std_in_at + 10:output_at].strip(),
                      "output": body[output_at + 7:].strip()})
    return ParsedUnittests(tuple(tests), True, len(pieces))


# ---------------------------------------------------------------------------------------------- patterns


def pattern_as_shipped(pass_value: Any) -> tuple[int, ...]:
    """HELM as shipped: `[int(ch) for ch in str(int(pass))]`; raises exactly where HELM raises (NaN, text)."""
    if pass_value is None:
        return ()
    return tuple(int(ch) for ch in str(int(pass_value)))


def pattern_as_fixed(pass_text: Any) -> tuple[int, ...]:
    """The fix: `pass` read as a string, a '.' is an error, every character one bit (leading zeros kept)."""
    if "." in pass_text:  # a NaN here raises TypeError, as in the fork
        raise RuntimeError("The type of `pass` column should be string!")
    return tuple(int(ch) for ch in pass_text)


def true_pattern(pass_text: str | None) -> tuple[int, ...] | None:
    """The bits as written in the file (read as text); `None` when missing or not a string of 0/1 digits."""
    if pass_text is None:
        return None
    stripped = pass_text.strip()
    if not stripped or any(ch not in "01" for ch in stripped):
        return None
    return tuple(int(ch) for ch in stripped)


def failing_indices(pattern: Sequence[int]) -> tuple[int, ...]:
    return tuple(index for index, bit in enumerate(pattern) if bit == 0)


def single_failure_index(pattern: Sequence[int] | None) -> int | None:
    """The gold index the metric can score: the position of the only 0, else None."""
    if pattern is None:
        return None
    failed = failing_indices(pattern)
    return failed[0] if len(failed) == 1 else None


FIRST_INTEGER = re.compile(r"-?\d+")


def unittest_alignment(completion: str | None, pattern: Sequence[int]) -> float:
    """`UnittestAlignmentMetric`: first `-?\\d+` of the stripped completion vs the only failing index."""
    if not completion:
        return 0.0
    match = FIRST_INTEGER.search(completion.strip())
    if match is None:
        return 0.0
    gold = single_failure_index(pattern)
    if gold is None:
        return 0.0
    return 1.0 if int(match.group()) == gold else 0.0


# ---------------------------------------------------------------------------------------------- prompts

PROMPT_OPENING = (
    "You are analyzing a student’s likely mistakes on an upcoming programming problem.\n"
    "Your task: **predict exactly ONE unit-test index (0-based) that the student is most likely to fail.**\n"
    "Return *only* that integer. No explanation.\n\n"
    "=== Student Profile ===\n"
)
PROMPT_INSTRUCTION = ("For the given programming question, identify which unit test the student would fail considering "
                      "their past performance, as well as consideration of unit test difficulty.\n")
PROMPT_THINK = ("Think silently about:\n"
                "• Which test seems hardest for the given topic?\n"
                "• Where has the student historically struggled?\n"
                "• Any edge-cases in the tests’ inputs/outputs?\n\n")
SHIPPED_ANSWER_FORMAT = ("******** ANSWER FORMAT (STRICT) ********\n"
                         "<integer>\n"
                         "****************************************")
FIXED_ANSWER_FORMAT = ("******** OUTPUT (STRICT) ********\n"
                       "Respond with **exactly one integer**.\n"
                       "Your **entire** response must be that integer—no code blocks, no explanations, "
                       "no extra whitespace or punctuation."
                       "****************************************")


TopicRows = Mapping[Any, Sequence[tuple[Any, Any, Any]]]


def topic_rows_by_student(topic_performance: pd.DataFrame) -> dict[Any, list[tuple[Any, Any, Any]]]:
    """(topic, pass_rate, perfect) per student in file order: what HELM's `student_id ==` filter selects."""
    rows: dict[Any, list[tuple[Any, Any, Any]]] = {}
    columns = [topic_performance[name].tolist() for name in ("student_id", "topic", "pass_rate", "perfect")]
    for student_id, topic, pass_rate, perfect in zip(*columns):
        if student_id == student_id:  # a NaN id never equals anything, so HELM's filter never selects it
            rows.setdefault(student_id, []).append((topic, pass_rate, perfect))
    return rows


def topic_profile(student_id: Any, topic_rows: TopicRows | pd.DataFrame) -> str:
    """The "Student N has the following performance across topics" block, rows in file order."""
    if isinstance(topic_rows, pd.DataFrame):
        topic_rows = topic_rows_by_student(topic_rows)
    text = f"Student {student_id} has the following performance across topics:\n"
    for topic, pass_rate, perfect in topic_rows.get(student_id, ()):
        text += (f"- For topic '{topic}', the unit test pass rate is {round(pass_rate, 2)}, "
                 f"and the rate of passing all unit tests is {round(perfect, 2)}.\n")
    return text


def _question_block(profile: str, target: Mapping[str, Any]) -> str:
    return (PROMPT_OPENING + f"{profile}\n" + PROMPT_INSTRUCTION + f"Week: {target['week']}\n"
            + f"Topic: {target['topic']}\n\n" + f"Question: {target['question_name']} — {target['question_text']}\n")


def _tests_line(tests: Sequence[Mapping[str, str]]) -> str:
    return f"Unit Tests: {list(tests)}\n"


def prompt_as_shipped(profile: str, target: Mapping[str, Any], tests: Sequence[Mapping[str, str]]) -> str:
    """The prompt HELM really builds.

    Upstream writes one parenthesised run of adjacent literals with `if target_test_cases else ""` in the middle.
    Adjacent literals are joined before the conditional applies, so the expression is
    `(opening … "Unit Tests: …\\n") if tests else ("" "Think silently…" … answer format)`: with tests the
    prompt stops after the test list; without tests it is only the closing block.
    """
    if tests:
        return _question_block(profile, target) + _tests_line(tests)
    return PROMPT_THINK + SHIPPED_ANSWER_FORMAT


def prompt_intended(profile: str, target: Mapping[str, Any], tests: Sequence[Mapping[str, str]]) -> str:
    """What the shipped code reads as if the conditional guarded only the "Unit Tests" line."""
    tests_line = _tests_line(tests) if tests else ""
    return _question_block(profile, target) + tests_line + PROMPT_THINK + SHIPPED_ANSWER_FORMAT


def prompt_as_fixed(profile: str, target: Mapping[str, Any], tests: Sequence[Mapping[str, str]]) -> str:
    """The fork's prompt: one "Unit test i:" block per test (code and std input only), no conditional."""
    unit_tests_text = "".join(f"Unit test {index}:\n" + str({"code": test["input"], "std_input": test["std_in"]})
                              + "\n" for index, test in enumerate(tests))
    return _question_block(profile, target) + unit_tests_text + PROMPT_THINK + FIXED_ANSWER_FORMAT


# ---------------------------------------------------------------------------------------------- instances


@dataclass(frozen=True)
class EdgeCaseInstance:
    """One instance HELM would emit; `record` is the 1-based data row of `Scenario5_data.csv`."""

    variant: Variant
    student_id: Any
    question_unittest_id: Any
    record: int
    instance_id: str
    tests_parsed: int
    tests_shown: tuple[Mapping[str, str], ...]
    pattern: tuple[int, ...]
    prompt: str
    intended_prompt: str


@dataclass(frozen=True)
class SkippedStudent:
    """A student whose first row yields no instance, and why (including reasons HELM does not count)."""

    variant: Variant
    student_id: Any
    question_unittest_id: Any
    record: int | None
    reason: str
    detail: str = ""

    @property
    def counted_by_helm(self) -> bool:
        return SKIP_REASONS[self.reason][0]

    @property
    def aborts_helm_run(self) -> bool:
        return SKIP_REASONS[self.reason][1]

    def as_row(self) -> dict[str, Any]:
        return {"variant": self.variant, "student_id": self.student_id, "question_unittest_id":
                self.question_unittest_id, "record": self.record, "reason": self.reason,
                "counted_by_helm": self.counted_by_helm, "aborts_helm_run": self.aborts_helm_run,
                "detail": self.detail}


@dataclass(frozen=True)
class ReplayResult:
    """Every instance and every skipped student of one replay at one `num_testcases`."""

    variant: Variant
    num_testcases: int
    instances: tuple[EdgeCaseInstance, ...]
    skipped: tuple[SkippedStudent, ...]

    def skip_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for skip in self.skipped:
            counts[skip.reason] = counts.get(skip.reason, 0) + 1
        return counts

    @property
    def helm_run_aborts(self) -> bool:
        """True when real HELM would raise during `get_instances` and emit nothing at all."""
        return any(skip.aborts_helm_run for skip in self.skipped)


def first_rows(submissions: pd.DataFrame) -> Iterator[tuple[Any, pd.Series]]:
    """HELM's target row per student: groupby `student_id`, `sort_values("timestamp")` (default kind), row 0.

    Only the key column is sorted: `DataFrame.sort_values` orders rows by the `by` column alone, so the first
    label is the same as sorting the whole group, and much cheaper with long text columns.
    """
    keys = submissions[["student_id", "timestamp"]]
    for student_id, group in keys.groupby("student_id"):
        first_label = group.sort_values("timestamp").index[0]
        yield student_id, submissions.loc[first_label]


def record_of(target: pd.Series) -> int:
    """1-based data row, from the RangeIndex `read_csv` gives (sorting keeps labels)."""
    return int(target.name) + 1


def _qid_skip(variant: Variant, student_id: Any, target: pd.Series, keys: set[str]) -> SkippedStudent | None:
    qid = target.get("question_unittest_id", None)
    if not qid:
        return SkippedStudent(variant, student_id, qid, record_of(target), "qid_falsy", f"{qid!r} is falsy")
    if str(qid) not in keys:
        return SkippedStudent(variant, student_id, qid, record_of(target), "qid_not_in_test_case_keys",
                              f"str(question_unittest_id) = {str(qid)!r}")
    return None


def _tests_or_skip(variant: Variant, student_id: Any, target: pd.Series
                   ) -> ParsedUnittests | SkippedStudent:
    text = target["question_unittests"]
    if not isinstance(text, str):
        return SkippedStudent(variant, student_id, target.get("question_unittest_id"), record_of(target),
                              "unittests_not_text", f"{type(text).__name__} has no .split (HELM raises)")
    return parse_unittests(text)


def _no_keys(variant: Variant, submissions: pd.DataFrame, num_testcases: int) -> ReplayResult:
    skipped = tuple(SkippedStudent(variant, sid, target.get("question_unittest_id"), record_of(target),
                                   "no_test_cases_loaded", "HELM returns [] when the JSON is empty")
                    for sid, target in first_rows(submissions))
    return ReplayResult(variant, num_testcases, (), skipped)


def build_as_shipped(submissions: pd.DataFrame, topic_performance: pd.DataFrame,
                     test_case_keys: Sequence[str], num_testcases: int) -> ReplayResult:
    """`CodeInsightsEdgeCaseScenario.get_instances` as shipped, on `pass` read with default inference."""
    keys = set(test_case_keys)
    if not keys:
        return _no_keys("as_shipped", submissions, num_testcases)
    topic_rows = topic_rows_by_student(topic_performance)
    instances: list[EdgeCaseInstance] = []
    skipped: list[SkippedStudent] = []
    for student_id, target in first_rows(submissions):
        qid = target.get("question_unittest_id", None)
        skip = _qid_skip("as_shipped", student_id, target, keys)
        parsed = skip or _tests_or_skip("as_shipped", student_id, target)
        if isinstance(parsed, SkippedStudent):
            skipped.append(parsed)
            continue
        if not parsed.parsed_ok:
            skipped.append(SkippedStudent("as_shipped", student_id, qid, record_of(target), "unittest_marker_missing",
                                          f"{parsed.fragments} fragments after splitting on 'Unittest'"))
            continue
        tests = parsed.tests
        if len(tests) < num_testcases:
            skipped.append(SkippedStudent("as_shipped", student_id, qid, record_of(target),
                                          "fewer_tests_than_num_testcases", f"{len(tests)} < {num_testcases}"))
            continue
        shown = tests[:num_testcases] if num_testcases >= 0 else tests
        try:
            pattern = pattern_as_shipped(target.get("pass", None))
        except (ValueError, TypeError, OverflowError) as exc:
            reason = "pass_missing" if _is_missing(target.get("pass")) else "pass_not_convertible_by_int"
            skipped.append(SkippedStudent("as_shipped", student_id, qid, record_of(target), reason,
                                          f"int(pass) raises {type(exc).__name__}: {exc}"))
            continue
        profile = topic_profile(student_id, topic_rows)
        instances.append(EdgeCaseInstance(
            "as_shipped", student_id, qid, record_of(target), f"{student_id}_{target['question_unittest_id']}",
            len(tests), tuple(shown), pattern, prompt_as_shipped(profile, target, shown),
            prompt_intended(profile, target, shown)))
    return ReplayResult("as_shipped", num_testcases, tuple(instances), tuple(skipped))


def build_as_fixed(submissions_pass_as_str: pd.DataFrame, topic_performance: pd.DataFrame,
                   test_case_keys: Sequence[str], num_testcases: int) -> ReplayResult:
    """The fork's `get_instances`, on a frame read with `dtype={"pass": "str"}`."""
    keys = set(test_case_keys)
    if not keys:
        return _no_keys("as_fixed", submissions_pass_as_str, num_testcases)
    topic_rows = topic_rows_by_student(topic_performance)
    instances: list[EdgeCaseInstance] = []
    skipped: list[SkippedStudent] = []
    for student_id, target in first_rows(submissions_pass_as_str):
        qid = target.get("question_unittest_id", None)
        record = record_of(target)
        skip = _qid_skip("as_fixed", student_id, target, keys)
        parsed = skip or _tests_or_skip("as_fixed", student_id, target)
        if isinstance(parsed, SkippedStudent):
            skipped.append(parsed)
            continue
        pass_text = target.get("pass", "")
        try:
            pattern = pattern_as_fixed(pass_text)
        except (RuntimeError, TypeError, ValueError) as exc:
            reason = ("pass_missing" if _is_missing(pass_text) else
                      "pass_contains_dot" if isinstance(exc, RuntimeError) else "pass_has_non_digit")
            skipped.append(SkippedStudent("as_fixed", student_id, qid, record, reason,
                                          f"raises {type(exc).__name__}: {exc}"))
            continue
        tests = parsed.tests
        reason = ("unittest_marker_missing" if not parsed.parsed_ok else
                  "fewer_tests_than_num_testcases" if len(tests) < num_testcases else
                  "pattern_shorter_than_num_testcases" if len(pattern) < num_testcases else None)
        if reason:
            skipped.append(SkippedStudent("as_fixed", student_id, qid, record, reason,
                                          f"{len(tests)} tests, pattern of {len(pattern)}"))
            continue
        shown, kept = (tests[:num_testcases], pattern[:num_testcases]) if num_testcases >= 0 else (tests, pattern)
        if len(shown) != len(kept) or not shown:
            reason = "no_tests_after_truncation" if not shown and not kept else "test_count_differs_from_pattern_length"
            skipped.append(SkippedStudent("as_fixed", student_id, qid, record, reason,
                                          f"{len(shown)} tests shown, pattern of {len(kept)}"))
            continue
        profile = topic_profile(student_id, topic_rows)
        prompt = prompt_as_fixed(profile, target, shown)
        instances.append(EdgeCaseInstance(
            "as_fixed", student_id, qid, record, f"{student_id}_{target['question_unittest_id']}", len(tests),
            tuple(shown), tuple(kept), prompt, prompt))
    return ReplayResult("as_fixed", num_testcases, tuple(instances), tuple(skipped))


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and value != value)


Builder = Callable[[pd.DataFrame, pd.DataFrame, Sequence[str], int], ReplayResult]
