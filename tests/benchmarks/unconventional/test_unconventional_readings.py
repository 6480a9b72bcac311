"""Readings of `sort_concat_square_deduplicate`, run only through the sandbox, on hand-worked inputs."""

from __future__ import annotations

import pytest

from audit_lib.benchmarks.unconventional import readings

# Hand-worked outputs. Example: ([1, 2, 3], [4, 5], 2) concatenates to [1, 2, 3, 4, 5]; squaring 0-based even
# indices gives [1, 2, 9, 4, 25]; keeping x >= 2 gives [2, 9, 4, 25].
EXPECTED: dict[tuple[tuple[int, ...], tuple[int, ...], int], dict[str, list[int]]] = {
    ((3, 1), (2,), 0): {"literal": [1, 3, 4], "square_each_list": [1, 3, 4], "square_one_based_even": [1, 9, 2],
                        "dedup_before_square": [1, 3, 4], "strict_threshold": [1, 3, 4],
                        "dedup_sorted_set": [1, 3, 4]},
    ((1, 2, 3), (4, 5), 2): {"literal": [2, 9, 4, 25], "square_each_list": [2, 9, 16, 5],
                             "square_one_based_even": [4, 3, 16, 5], "dedup_before_square": [2, 9, 4, 25],
                             "strict_threshold": [9, 4, 25], "dedup_sorted_set": [2, 4, 9, 25]},
    ((-2, 2), (), 0): {"literal": [4, 2], "square_each_list": [4, 2], "square_one_based_even": [4],
                       "dedup_before_square": [4, 2], "strict_threshold": [4, 2], "dedup_sorted_set": [2, 4]},
    ((2,), (2,), 4): {"literal": [4], "square_each_list": [4], "square_one_based_even": [4],
                      "dedup_before_square": [4], "strict_threshold": [], "dedup_sorted_set": [4]},
    ((-3, 1), (0, 2), 1): {"literal": [9, 1, 2], "square_each_list": [9, 1, 2], "square_one_based_even": [1, 4],
                           "dedup_before_square": [9, 1, 2], "strict_threshold": [9, 2],
                           "dedup_sorted_set": [1, 2, 9]},
    ((1, 1), (2,), 0): {"literal": [1, 4], "square_each_list": [1, 4], "square_one_based_even": [1, 2],
                        "dedup_before_square": [1, 2], "strict_threshold": [1, 4], "dedup_sorted_set": [1, 4]},
    ((), (), 0): {name: [] for name in (r.name for r in readings.READINGS)},
}


@pytest.fixture(scope="module")
def fixed_report() -> readings.AmbiguityReport:
    inputs = [(list(a), list(b), t) for a, b, t in EXPECTED]
    return readings.run_readings(inputs, executor="local")


def test_every_reading_ran_in_the_sandbox(fixed_report: readings.AmbiguityReport) -> None:
    assert fixed_report.sandbox_statuses == {r.name: "pass" for r in readings.READINGS}


@pytest.mark.parametrize("reading", [r.name for r in readings.READINGS])
def test_reading_outputs_on_fixed_inputs(fixed_report: readings.AmbiguityReport, reading: str) -> None:
    got = [outcome.value for outcome in fixed_report.outcomes[reading]]
    assert got == [expected[reading] for expected in EXPECTED.values()]


def test_counterexamples_are_the_smallest_differing_inputs(fixed_report: readings.AmbiguityReport) -> None:
    by_reading = {c.reading: c for c in fixed_report.counterexamples}
    assert set(by_reading) == {r.name for r in readings.READINGS} - {readings.LITERAL_READING}
    strict = by_reading["strict_threshold"]
    assert (strict.list1, strict.list2, strict.my_threshold) == ((2,), (2,), 4)
    assert (strict.literal_output, strict.reading_output) == ("[4]", "[]")
    assert by_reading["dedup_before_square"].disagreements == 1


def test_fixed_inputs_constant_matches_the_worked_examples() -> None:
    assert {(tuple(a), tuple(b), t) for a, b, t in readings.FIXED_INPUTS} == set(EXPECTED)


def test_compare_outcomes_without_the_sandbox() -> None:
    two = (readings.READINGS[0], readings.READINGS[4])
    outcomes = {
        "literal": (readings.ReadingOutcome("value", [1]), readings.ReadingOutcome("value", [2])),
        "strict_threshold": (readings.ReadingOutcome("value", [1]),
                             readings.ReadingOutcome("exception", detail="ValueError boom")),
    }
    report = readings.compare_outcomes([([1], [], 0), ([2, 3], [1], 0)], outcomes, two)
    assert report.inputs_with_any_disagreement == 1
    assert report.distinct_outputs_per_input == (1, 2)
    (only,) = report.counterexamples
    assert only.reading_output == "<exception: ValueError boom>" and only.literal_output == "[2]"
    assert report.pairwise_disagreement["literal"]["strict_threshold"] == 1


def test_generated_inputs_are_seeded() -> None:
    assert readings.generated_inputs(1, 20) == readings.generated_inputs(1, 20)
    assert readings.generated_inputs(1, 20) != readings.generated_inputs(2, 20)
    assert any(v < 0 for a, b, _ in readings.generated_inputs(1, 50) for v in a + b)
