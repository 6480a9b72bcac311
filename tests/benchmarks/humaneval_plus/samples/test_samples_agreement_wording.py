"""What the agreement with official verdicts tells a user: every field of its summary and rows, each evidence text."""

from __future__ import annotations

from audit_lib.benchmarks.humaneval_plus.samples.agreement import SplitComparison, compare
from audit_lib.benchmarks.humaneval_plus.samples.official_results import OfficialResults, OfficialVerdict
from audit_lib.benchmarks.humaneval_plus.samples.verdicts import PASSED, SampleVerdict, SplitVerdict

WRONG_AT_0 = SplitVerdict("fail", "deterministic", "wrong_value", 0, "(1,)", "2", "3")
RAISED = SplitVerdict("fail", "deterministic", "exception", 4, "(5,)", "", "ValueError")
SYNTAX = SplitVerdict("fail", "deterministic", "syntax", got="IndentationError")
SLOW = SplitVerdict("fail", "timing", "timeout", 2, "(9,)", "1", "timeout", cpu_s=2.5, limit_s=1.25,
                    timing_state="confirmed")
PASSED_ON_CLOCK = SplitVerdict("pass", "timing")
SLOW_WITHOUT_LIMIT = SplitVerdict("fail", "timing", "timeout", cpu_s=3.0)


def _official(*verdicts: OfficialVerdict, md5: str | None = None) -> OfficialResults:
    return OfficialResults("results.json", "evalplus-0.3", {(v.task_id, v.sample): v for v in verdicts}, md5)


def _by_key(comparisons: list[SplitComparison]) -> dict[tuple[str, int, str], SplitComparison]:
    return {(c.task_id, c.sample, c.split): c for c in comparisons}


OURS = [SampleVerdict("A", 0, PASSED, PASSED), SampleVerdict("A", 1, PASSED, WRONG_AT_0),
        SampleVerdict("B", 0, PASSED, SLOW), SampleVerdict("C", 0, PASSED), SampleVerdict("D", 0, PASSED_ON_CLOCK),
        SampleVerdict("E", 0, SLOW_WITHOUT_LIMIT), SampleVerdict("F", 0, RAISED, PASSED),
        SampleVerdict("G", 0, SYNTAX), SampleVerdict("H", 0, PASSED)]
OFFICIAL = _official(OfficialVerdict("Z", 3, "fail", "fail"), OfficialVerdict("A", 0, "pass", "pass"), OfficialVerdict("A", 1, "pass", "pass"),
                     OfficialVerdict("B", 0, "pass", "timeout", "timed out"),
                     OfficialVerdict("C", 0, "fail", "pass", "failed: x"),
                     OfficialVerdict("D", 0, "timeout", None), OfficialVerdict("E", 0, "pass", None),
                     OfficialVerdict("F", 0, "fail", "pass"), OfficialVerdict("G", 0, "fail", None))


def test_every_split_has_its_cause_and_evidence_in_words() -> None:
    agreement = compare(OURS, OFFICIAL)
    rows = {(r["task_id"], r["sample"], r["split"]): r for r in (c.row() for c in agreement.comparisons)}
    assert rows == {
        ("A", 0, "base"): {"task_id": "A", "sample": 0, "split": "base", "ours": "pass", "official": "pass",
                           "cause": None, "evidence": ""},
        ("A", 0, "plus"): {"task_id": "A", "sample": 0, "split": "plus", "ours": "pass", "official": "pass",
                           "cause": None, "evidence": ""},
        ("A", 1, "base"): {"task_id": "A", "sample": 1, "split": "base", "ours": "pass", "official": "pass",
                           "cause": None, "evidence": ""},
        ("A", 1, "plus"): {"task_id": "A", "sample": 1, "split": "plus", "ours": "fail", "official": "pass",
                           "cause": "deterministic", "evidence": "ours: wrong_value input 0 (1,): got 3, expected 2"},
        ("B", 0, "base"): {"task_id": "B", "sample": 0, "split": "base", "ours": "pass", "official": "pass",
                           "cause": None, "evidence": ""},
        ("B", 0, "plus"): {"task_id": "B", "sample": 0, "split": "plus", "ours": "fail", "official": "timeout",
                           "cause": None, "evidence": "ours: 2.500 s of CPU alone against a 1.25 s limit (confirmed); "
                                                      "official: timed out"},
        ("C", 0, "base"): {"task_id": "C", "sample": 0, "split": "base", "ours": "pass", "official": "fail",
                           "cause": "deterministic", "evidence": "ours: every input passed; official: failed: x"},
        ("D", 0, "base"): {"task_id": "D", "sample": 0, "split": "base", "ours": "pass", "official": "timeout",
                           "cause": "timing", "evidence": "ours: passed"},
        ("E", 0, "base"): {"task_id": "E", "sample": 0, "split": "base", "ours": "fail", "official": "pass",
                           "cause": "timing", "evidence": "ours: timeout: got "},
        ("F", 0, "base"): {"task_id": "F", "sample": 0, "split": "base", "ours": "fail", "official": "fail",
                           "cause": None, "evidence": ""},
        ("F", 0, "plus"): {"task_id": "F", "sample": 0, "split": "plus", "ours": "pass", "official": "pass",
                           "cause": None, "evidence": ""},
        ("G", 0, "base"): {"task_id": "G", "sample": 0, "split": "base", "ours": "fail", "official": "fail",
                           "cause": None, "evidence": ""},
    }
    comparisons = _by_key(list(agreement.comparisons))
    assert [c.decided_by_time for c in agreement.comparisons] == [
        k in {("B", 0, "plus"), ("D", 0, "base"), ("E", 0, "base")} for k in comparisons]
    assert agreement.only_ours == (("H", 0),) and agreement.only_theirs == (("Z", 3),)


def test_the_summary_counts_samples_splits_and_causes() -> None:
    agreement = compare(OURS, OFFICIAL)
    assert agreement.summary() == {
        "file": "results.json", "format": "evalplus-0.3", "samples_compared": 8, "samples_agreeing": 4,
        "splits_compared": 12, "splits_agreeing": 8, "splits_decided_by_time": 3, "disagreeing_deterministic": 2,
        "disagreeing_by_time": 2, "disagreement_causes": {"deterministic": 2, "timing": 2},
        "only_in_samples": 1, "only_in_results": 1, "text_mismatches": 0, "release_note": ""}
    assert [c.task_id for c in agreement.deterministic_disagreements()] == ["A", "C"]
    assert [c.task_id for c in agreement.disagreements()] == ["A", "C", "D", "E"]


def test_a_split_agrees_when_a_timeout_meets_our_failure() -> None:
    assert SplitComparison("T", 0, "base", "fail", "timeout", True, None, "").agrees
    assert not SplitComparison("T", 0, "base", "pass", "timeout", True, "timing", "").agrees
    assert SplitComparison("T", 0, "base", "pass", "pass", False, None, "").agrees
    assert not SplitComparison("T", 0, "base", "fail", "pass", False, "deterministic", "").agrees


def test_an_official_timeout_is_decided_by_time_whatever_decided_ours() -> None:
    agreement = compare([SampleVerdict("W", 0, WRONG_AT_0)], _official(OfficialVerdict("W", 0, "timeout", None)))
    (only,) = agreement.comparisons
    assert (only.agrees, only.decided_by_time, only.cause) == (True, True, None)
    assert only.evidence == "ours: wrong_value input 0 (1,): got 3, expected 2"
    assert agreement.summary()["splits_decided_by_time"] == 1


def test_evidence_is_cut_at_500_characters_and_names_the_exception() -> None:
    agreement = compare([SampleVerdict("F", 0, RAISED)], _official(OfficialVerdict("F", 0, "pass", None, "x" * 600)))
    (only,) = agreement.comparisons
    assert only.evidence.startswith("ours: exception input 4 (5,): got ValueError; official: xxx")
    assert len(only.evidence) == 500 and "expected" not in only.evidence


def test_the_clock_comes_before_the_release_and_the_release_before_edited_text() -> None:
    ours = [SampleVerdict("S", 0, SYNTAX), SampleVerdict("T", 0, SLOW_WITHOUT_LIMIT), SampleVerdict("W", 0, WRONG_AT_0)]
    official = _official(OfficialVerdict("S", 0, "pass", None), OfficialVerdict("T", 0, "pass", None),
                         OfficialVerdict("W", 0, "pass", None), md5="aaa")
    other = compare(ours, official, release_md5="bbb", release_name="HumanEval+ v0.1.10")
    assert [c.cause for c in other.comparisons] == ["release", "timing", "release"]
    assert other.release_note == ("the results name dataset md5 aaa, not HumanEval+ v0.1.10's bbb: they were "
                                  "computed on another release")
    assert other.summary()["release_note"] == other.release_note
    same = compare(ours, official, release_md5="aaa", release_name="HumanEval+ v0.1.10")
    assert [c.cause for c in same.comparisons] == ["edited_text", "timing", "deterministic"]
    assert same.release_note == ""
    unnamed = compare(ours, _official(*official.verdicts.values(), md5=None), release_md5="bbb")
    assert unnamed.release_note == "" and unnamed.causes() == {"edited_text": 1, "timing": 1, "deterministic": 1}
    assert compare(ours, official).causes() == {"edited_text": 1, "timing": 1, "deterministic": 1}
    # A syntax failure the official harness also failed is no edited text.
    failed_too = compare(ours[:1], _official(OfficialVerdict("S", 0, "fail", None)))
    assert failed_too.causes() == {}


def test_text_mismatches_need_both_texts() -> None:
    ours = [SampleVerdict("A", 0, PASSED), SampleVerdict("B", 0, PASSED), SampleVerdict("C", 0, PASSED)]
    official = _official(OfficialVerdict("A", 0, "pass", None, text="one"), OfficialVerdict("B", 0, "pass", None),
                         OfficialVerdict("C", 0, "pass", None, text="three"))
    agreement = compare(ours, official, texts={("A", 0): "other", ("B", 0): "two"})
    assert agreement.text_mismatches == (("A", 0),)
    assert agreement.summary()["text_mismatches"] == 1
    assert compare(ours, official).text_mismatches == ()
