"""Parse a grader transcript (a verbal evaluation, then a grade from 0 to 10) into a grade.

phi-1's grading prompt and transcripts were never released (arXiv 2306.11644v2, §4), so this parser accepts the forms
such transcripts take and gives a typed reason when it finds no grade. Most explicit first: a line that starts with a
label (`Grade:`, `**Rating:**`), a label in a sentence or a ratio (`7/10`), a bare number alone on the last line. Other
numbers belong to the verbal part and are reported, never used.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

GRADE_MIN = 0.0
GRADE_MAX = 10.0
GRADE_SCALE = 10.0

GradeForm = Literal["labelled", "labelled_ratio", "inline_labelled", "ratio_slash", "ratio_out_of", "bare_final"]
NoGradeReason = Literal[
    "no_number",  # the transcript contains no digits at all
    "verbal_numbers_only",  # digits exist, but only inside the verbal evaluation, none in a grade position
    "label_without_number",  # a `Grade:` label whose value is not a number ("Grade: N/A", "Grade: seven")
    "several_candidates",  # two or more different grades are offered ("Grade: 6 or 7", "6/10 ... 8/10")
    "out_of_range",  # the grade lies outside 0..10 ("Grade: 12", "Grade: -1")
    "wrong_scale",  # a ratio whose denominator is not 10 ("4/5", "3 out of 4")
]
GRADE_FORMS: tuple[str, ...] = GradeForm.__args__  # type: ignore[attr-defined]
NO_GRADE_REASONS: tuple[str, ...] = NoGradeReason.__args__  # type: ignore[attr-defined]

_NUMBER = r"(?<![\d.])-?\d+(?:\.\d+)?"
_NUMBER_RE = re.compile(_NUMBER)
# A ratio: numerator, then "/" or "out of", then the denominator.
_RATIO_RE = re.compile(rf"(?P<num>{_NUMBER})\s*\(?\s*(?P<sep>/|out\s+of)\s*(?P<den>{_NUMBER})\)?", re.IGNORECASE)
_LABEL_WORDS = r"(?:grade|score|rating|mark)"
# A label at the start of a line, after optional markdown decoration.
_LABEL_LINE_RE = re.compile(
    rf"^[\s*_#>\-]*(?:(?:final|overall|my)\s+)?{_LABEL_WORDS}\b[\s*_]*(?P<sep>[:=]|\bis\b|\bof\b)?[\s*_]*"
    r"(?P<value>.*)$",
    re.IGNORECASE | re.MULTILINE)
# A label inside a sentence must be followed by "of", "is" or ":" and then directly by a number.
_INLINE_LABEL_RE = re.compile(rf"\b{_LABEL_WORDS}\s*(?:of|is|:|=)\s*[*_]*\s*(?P<num>{_NUMBER})", re.IGNORECASE)
_BARE_LINE_RE = re.compile(rf"^[\s*_>]*(?P<num>{_NUMBER})[\s*_.!]*$")


@dataclass(frozen=True)
class GradeCandidate:
    """One number found in a grade position, with the denominator when it was written as a ratio."""

    value: float
    form: GradeForm
    text: str
    denominator: float | None = None


@dataclass(frozen=True)
class ParsedGrade:
    """A grade in 0..10, or `grade=None` with the reason; `verbal_numbers` are numbers that were not the grade."""

    grade: float | None
    reason: NoGradeReason | None
    form: GradeForm | None
    candidates: tuple[GradeCandidate, ...] = ()
    verbal_numbers: tuple[float, ...] = ()
    evidence: str = ""

    def __post_init__(self) -> None:
        if (self.grade is None) == (self.reason is None):
            raise ValueError("a parsed grade has either a grade or a reason, never both or neither")

    @property
    def has_grade(self) -> bool:
        return self.grade is not None

    @property
    def is_fractional(self) -> bool:
        return self.grade is not None and self.grade != int(self.grade)

    @property
    def outcome(self) -> str:
        """The form when a grade was found, else the reason: one label per parser branch."""
        return str(self.form if self.grade is not None else self.reason)


def parse_grade(transcript: str) -> ParsedGrade:
    """Find the grade in one grader transcript, or say why there is none."""
    label_candidates, label_without_number, several_in_one_label = _labelled_line_candidates(transcript)
    if several_in_one_label:
        return _no_grade("several_candidates", transcript, several_in_one_label, ())
    if label_candidates:
        return _decide(label_candidates, transcript)
    inline_candidates = _inline_candidates(transcript)
    if inline_candidates:
        return _decide(inline_candidates, transcript)
    if label_without_number:
        return _no_grade("label_without_number", transcript, (), ())
    bare = _bare_final_candidate(transcript)
    if bare is not None:
        return _decide((bare,), transcript)
    if _NUMBER_RE.search(transcript):
        return _no_grade("verbal_numbers_only", transcript, (), ())
    return _no_grade("no_number", transcript, (), ())


def _labelled_line_candidates(
        transcript: str) -> tuple[tuple[GradeCandidate, ...], bool, tuple[GradeCandidate, ...]]:
    """Candidates from `Grade: ...` lines; also whether a label had no number, and any line offering several."""
    found: list[GradeCandidate] = []
    label_without_number = False
    for match in _LABEL_LINE_RE.finditer(transcript):
        value_text = match.group("value")
        if match.group("sep") is None and not _NUMBER_RE.match(value_text):
            continue  # "Score function is ..." is prose, not a label
        line_candidates = _numbers_in_label_value(value_text, match.group(0).strip())
        if not line_candidates:
            label_without_number = True
            continue
        if len({(c.value, c.denominator) for c in line_candidates}) > 1:
            return (), False, line_candidates
        found.append(line_candidates[0])
    return tuple(found), label_without_number, ()


def _numbers_in_label_value(value_text: str, line: str) -> tuple[GradeCandidate, ...]:
    candidates: list[GradeCandidate] = []
    consumed: list[tuple[int, int]] = []
    for ratio in _RATIO_RE.finditer(value_text):
        candidates.append(GradeCandidate(float(ratio.group("num")), "labelled_ratio", line,
                                         float(ratio.group("den"))))
        consumed.append(ratio.span())
    for number in _NUMBER_RE.finditer(value_text):
        if any(start <= number.start() < end for start, end in consumed):
            continue
        candidates.append(GradeCandidate(float(number.group(0)), "labelled", line))
    return tuple(candidates)


def _inline_candidates(transcript: str) -> tuple[GradeCandidate, ...]:
    found: list[GradeCandidate] = []
    ratio_spans: list[tuple[int, int]] = []
    for ratio in _RATIO_RE.finditer(transcript):
        form: GradeForm = "ratio_slash" if ratio.group("sep") == "/" else "ratio_out_of"
        found.append(GradeCandidate(float(ratio.group("num")), form, ratio.group(0), float(ratio.group("den"))))
        ratio_spans.append(ratio.span())
    for inline in _INLINE_LABEL_RE.finditer(transcript):
        start = inline.start("num")
        if any(s <= start < e for s, e in ratio_spans):
            continue  # "a grade of 7/10" is already the ratio candidate
        found.append(GradeCandidate(float(inline.group("num")), "inline_labelled", inline.group(0)))
    return tuple(found)


def _bare_final_candidate(transcript: str) -> GradeCandidate | None:
    lines = [line for line in transcript.splitlines() if line.strip()]
    if len(lines) < 2:  # a lone number with no verbal evaluation before it is not the documented format
        return None
    match = _BARE_LINE_RE.match(lines[-1])
    if match is None:
        return None
    return GradeCandidate(float(match.group("num")), "bare_final", lines[-1].strip())


def _decide(candidates: tuple[GradeCandidate, ...], transcript: str) -> ParsedGrade:
    distinct = {(c.value, c.denominator) for c in candidates}
    if len(distinct) > 1:
        return _no_grade("several_candidates", transcript, candidates, ())
    chosen = candidates[0]
    verbal = _verbal_numbers(transcript, candidates)
    if chosen.denominator is not None and chosen.denominator != GRADE_SCALE:
        return _no_grade("wrong_scale", transcript, candidates, verbal)
    if not GRADE_MIN <= chosen.value <= GRADE_MAX:
        return _no_grade("out_of_range", transcript, candidates, verbal)
    return ParsedGrade(grade=chosen.value, reason=None, form=chosen.form, candidates=candidates,
                       verbal_numbers=verbal, evidence=chosen.text)


def _no_grade(reason: NoGradeReason, transcript: str, candidates: tuple[GradeCandidate, ...],
              verbal: tuple[float, ...]) -> ParsedGrade:
    if not verbal and reason in ("verbal_numbers_only", "no_number", "label_without_number"):
        verbal = tuple(float(m.group(0)) for m in _NUMBER_RE.finditer(transcript))
    evidence = "; ".join(dict.fromkeys(c.text for c in candidates)) if candidates else _last_line(transcript)
    return ParsedGrade(grade=None, reason=reason, form=None, candidates=candidates, verbal_numbers=verbal,
                       evidence=evidence)


def _verbal_numbers(transcript: str, candidates: tuple[GradeCandidate, ...]) -> tuple[float, ...]:
    """Numbers in the transcript outside the text the grade was read from."""
    remaining = transcript
    for candidate in candidates:
        remaining = remaining.replace(candidate.text, " ", 1)
    return tuple(float(m.group(0)) for m in _NUMBER_RE.finditer(remaining))


def _last_line(transcript: str) -> str:
    lines = [line.strip() for line in transcript.splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""
