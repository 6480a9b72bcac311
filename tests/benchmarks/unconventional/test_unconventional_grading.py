"""The grader-transcript parser: every accepted form and every typed reason for having no grade."""

from __future__ import annotations

import pytest

from audit_lib.benchmarks.unconventional.grading import (
    GRADE_FORMS,
    NO_GRADE_REASONS,
    GradeCandidate,
    ParsedGrade,
    parse_grade,
)


@pytest.mark.parametrize(("transcript", "grade", "form"), [
    ("The candidate matches the reference.\nGrade: 7", 7.0, "labelled"),
    ("Close, but the threshold is strict.\nGrade: 7.5", 7.5, "labelled"),
    ("Handles everything except deduplication. 7/10", 7.0, "ratio_slash"),
    ("I would rate this solution 7 out of 10.", 7.0, "ratio_out_of"),
    ("Verbal part.\n**Final grade:** 9/10", 9.0, "labelled_ratio"),
    ("Verbal part.\nGrade: 7 (out of 10)", 7.0, "labelled_ratio"),
    ("Overall I would give it a grade of 8.", 8.0, "inline_labelled"),
    ("It is mostly correct.\n8", 8.0, "bare_final"),
    ("Perfect.\nGrade: 10", 10.0, "labelled"),
    ("Nothing works.\nGrade: 0", 0.0, "labelled"),
])
def test_accepted_forms_give_the_grade_and_the_form(transcript: str, grade: float, form: str) -> None:
    parsed = parse_grade(transcript)
    assert (parsed.grade, parsed.form, parsed.reason) == (grade, form, None)
    assert parsed.outcome == form


def test_fractional_grade_is_kept_and_flagged() -> None:
    parsed = parse_grade("Mostly right.\nGrade: 7.5")
    assert parsed.grade == 7.5
    assert parsed.is_fractional
    assert not parse_grade("Fine.\nGrade: 7").is_fractional


@pytest.mark.parametrize(("transcript", "reason"), [
    ("The answer reads the task differently.", "no_number"),
    ("", "no_number"),
    ("It squares the entries at indices 0, 2 and 4 correctly.", "verbal_numbers_only"),
    ("Score function is wrong in 2 places.", "verbal_numbers_only"),
    ("Fine.\nGrade: N/A", "label_without_number"),
    ("Fine.\nGrade: seven", "label_without_number"),
    ("Good.\nGrade: 6 or 7", "several_candidates"),
    ("Good.\nGrade: 6-7", "several_candidates"),
    ("I'd say 6/10, maybe 8/10.", "several_candidates"),
    ("Grade: 6\nOn reflection.\nFinal grade: 8", "several_candidates"),
    ("Excellent.\nGrade: 12", "out_of_range"),
    ("Broken.\nGrade: -1", "out_of_range"),
    ("Excellent.\n11/10", "out_of_range"),
    ("Works in most cases; rating is 4/5", "wrong_scale"),
    ("It does 3 out of 4 steps.", "wrong_scale"),
])
def test_each_reason_for_no_grade(transcript: str, reason: str) -> None:
    parsed = parse_grade(transcript)
    assert parsed.grade is None
    assert parsed.reason == reason
    assert parsed.outcome == reason


def test_numbers_in_the_verbal_part_are_not_the_grade() -> None:
    parsed = parse_grade("It squares indices 0, 2 and 4 but misses 1 case.\nGrade: 6")
    assert parsed.grade == 6.0
    assert parsed.verbal_numbers == (0.0, 2.0, 4.0, 1.0)


def test_a_ratio_in_the_verbal_part_loses_to_the_labelled_grade() -> None:
    parsed = parse_grade("It passes 9/10 of my own examples but is wrong on duplicates.\nGrade: 5")
    assert (parsed.grade, parsed.form) == (5.0, "labelled")
    assert 9.0 in parsed.verbal_numbers


def test_the_same_grade_repeated_is_one_grade() -> None:
    assert parse_grade("Grade: 7\nGood overall.\nFinal grade: 7").grade == 7.0


def test_a_lone_number_without_a_verbal_part_is_not_taken_as_a_grade() -> None:
    assert parse_grade("7").reason == "verbal_numbers_only"


def test_parsed_grade_has_a_grade_or_a_reason_never_both() -> None:
    with pytest.raises(ValueError):
        ParsedGrade(grade=7.0, reason="no_number", form="labelled")
    with pytest.raises(ValueError):
        ParsedGrade(grade=None, reason=None, form=None)


def test_the_typed_outcomes_are_disjoint() -> None:
    assert not set(GRADE_FORMS) & set(NO_GRADE_REASONS)


def _c(value: float, form: str, text: str, denominator: float | None = None) -> GradeCandidate:
    return GradeCandidate(value, form, text, denominator)  # type: ignore[arg-type]


@pytest.mark.parametrize(("transcript", "parsed"), [
    # a grade: the candidates it was read from, the numbers of the verbal part, and the text as evidence
    ("Handles 3 cases, misses 1.\nGrade: 7", ParsedGrade(7.0, None, "labelled", (_c(7.0, "labelled", "Grade: 7"),),
                                                          (3.0, 1.0), "Grade: 7")),
    ("Uses 2 loops.\nI give it a score of 8 overall.",
     ParsedGrade(8.0, None, "inline_labelled", (_c(8.0, "inline_labelled", "score of 8"),), (2.0,), "score of 8")),
    ("Clean code, 2 bugs.\n\n  9  \n", ParsedGrade(9.0, None, "bare_final", (_c(9.0, "bare_final", "9"),), (2.0,),
                                                    "9")),
    ("Clean code.\n3 bugs.\n8", ParsedGrade(8.0, None, "bare_final", (_c(8.0, "bare_final", "8"),), (3.0,), "8")),
    # no grade: the reason, what was offered, every number as verbal where none was in a grade position
    ("Grade: 6 or 7", ParsedGrade(None, "several_candidates", None,
                                  (_c(6.0, "labelled", "Grade: 6 or 7"), _c(7.0, "labelled", "Grade: 6 or 7")), (),
                                  "Grade: 6 or 7")),
    ("Fine, 2 issues.\n6/10 at first, then 8/10", ParsedGrade(
        None, "several_candidates", None, (_c(6.0, "ratio_slash", "6/10", 10.0), _c(8.0, "ratio_slash", "8/10", 10.0)),
        (), "6/10; 8/10")),
    ("Solid, 1 flaw.\nGrade: 4/5", ParsedGrade(None, "wrong_scale", None, (_c(4.0, "labelled_ratio", "Grade: 4/5", 5.0),),
                                              (1.0,), "Grade: 4/5")),
    ("Has 2 bugs.\nGrade: 12", ParsedGrade(None, "out_of_range", None, (_c(12.0, "labelled", "Grade: 12"),), (2.0,),
                                           "Grade: 12")),
    ("Tried 3 inputs.\nGrade: N/A", ParsedGrade(None, "label_without_number", None, (), (3.0,), "Grade: N/A")),
    ("It passed 4 of 5 tests, 2 slowly.\nGood work overall.",
     ParsedGrade(None, "verbal_numbers_only", None, (), (4.0, 5.0, 2.0), "Good work overall.")),
    ("No numbers here.\n" + "x" * 300, ParsedGrade(None, "no_number", None, (), (), "x" * 200)),
    ("", ParsedGrade(None, "no_number", None, (), (), "")),
])
def test_every_field_of_a_parsed_grade(transcript: str, parsed: ParsedGrade) -> None:
    assert parse_grade(transcript) == parsed


def test_a_verbal_number_that_repeats_the_grade_is_still_counted() -> None:
    # the grade's line is taken out once: the same words quoted in the evaluation stay verbal
    assert parse_grade("Grade: 7\nA draft said Grade: 7 as well.").verbal_numbers == (7.0,)


def test_a_parsed_grade_has_a_grade_or_a_reason() -> None:
    for grade, reason in ((None, None), (7.0, "no_number")):
        with pytest.raises(ValueError, match="^a parsed grade has either a grade or a reason, never both or neither$"):
            ParsedGrade(grade, reason, None)  # type: ignore[arg-type]
