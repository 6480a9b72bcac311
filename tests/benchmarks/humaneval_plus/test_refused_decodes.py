"""A value the sandbox kept encoded whose later decode is refused: a non-pass with its reason, never a crash.

Call mode keeps a value past a job's keep room as `sandbox.EncodedValue` and decodes it only when asked, within a
budget of its own. Each HumanEval+ site that compares or stores such values (scoring, the two canonical runs, the
ground-truth cache, the EvalPlus driver) must record a refused decode as `unserializable`, as the job would have.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from audit_lib import sandbox
from audit_lib.benchmarks.harness_exploits.drivers.evalplus import EvalPlusUnavailable, _split_literals
from audit_lib.benchmarks.humaneval_plus.checks_canonical import ground_truth_from, ground_truth_problems
from audit_lib.benchmarks.humaneval_plus.data import PlusTask
from audit_lib.benchmarks.humaneval_plus.groundtruth import GroundTruth, read_cache, write_cache
from audit_lib.benchmarks.humaneval_plus.replay import score_split
from audit_lib.benchmarks.humaneval_plus.runs import InputOutcome, SplitRun, settled
from audit_lib.sandbox import codec as sandbox_codec

P61 = 2**61 - 1  # ints k * P61 all hash to 0: decoding a set of them is refused (repeated hashes)
TASK = PlusTask("T/0", "def f(x):\n    \"\"\"doc\"\"\"\n", "f", "    return x\n", "", ((1,),), ((2,),), 0.0, None, 1)


def refused_value() -> sandbox.EncodedValue:
    colliding = [sandbox_codec.encode(k * P61) for k in range(1, 3000)]
    return sandbox.EncodedValue(json.dumps({"$set": colliding}).encode())


def malformed_value() -> sandbox.EncodedValue:
    return sandbox.EncodedValue(b'{"$nosuchtag": 1}')


def value(v: object) -> InputOutcome:
    return InputOutcome("value", v, 0.01, cpu_s=0.01)


def runs(base: InputOutcome, plus: InputOutcome) -> dict:
    return {("T/0", "base"): SplitRun("T/0", "base", (base,)), ("T/0", "plus"): SplitRun("T/0", "plus", (plus,))}


@pytest.mark.parametrize("make", [refused_value, malformed_value])
def test_a_refused_decode_settles_as_unserializable_with_its_reason(make) -> None:
    outcome = settled(value(make()))
    assert outcome.kind == "unserializable" and outcome.value is None
    assert outcome.exc_type in ("BudgetExceeded", "MalformedResult") and "refused when decoded" in outcome.exc_message
    assert outcome.duration_s == 0.01  # the call's measurements stay
    assert settled(value(sandbox.EncodedValue(b"[1, 2]"))).value == [1, 2]


def test_scoring_a_refused_output_or_expected_value_is_a_non_pass() -> None:
    got = SplitRun("T/0", "plus", (value(refused_value()),))
    expected = SplitRun("T/0", "plus", (value(2),))
    (verdict,) = score_split(TASK, "humaneval", got, expected)
    assert not verdict.passed and verdict.kind == "unserializable" and "repeated hashes" in verdict.detail
    (verdict,) = score_split(TASK, "humaneval", expected, got)
    assert not verdict.passed and verdict.kind == "no_expected_output" and "repeated hashes" in verdict.detail


def test_two_canonical_runs_with_a_refused_value_are_reported_not_a_crash() -> None:
    first = GroundTruth("humaneval", "t", runs(value(1), value(refused_value())), Path("x"), 0, 1)
    problems = ground_truth_problems(first)
    assert [(p["split"], p["problem"], p["kind"]) for p in problems] == \
        [("plus", "exceeds_sandbox_limits", "unserializable")]
    check = ground_truth_from([TASK], "humaneval", first, runs(value(1), value(2)))
    assert check.status != "pass" and check.observed["exceeds_sandbox_limits"] == 1
    (row,) = [row for row in check.details if row["problem"] == "nondeterministic"]
    assert "repeated hashes" in row["first_run"] and not row["accepted_by_evalplus_rules"]


def test_the_cache_records_a_refused_value_as_unserializable(tmp_path: Path) -> None:
    path = tmp_path / "gt.json.gz"
    write_cache(path, "abc", "humaneval", runs(value(1), value(refused_value())))
    cached = read_cache(path, "abc")
    (plus,) = cached[("T/0", "plus")].outcomes
    assert plus.kind == "unserializable" and plus.exc_type == "BudgetExceeded" and plus.value is None
    assert cached[("T/0", "base")].outcomes[0].value == 1


def test_the_evalplus_driver_declines_a_task_whose_expected_value_is_refused() -> None:
    gt = GroundTruth("humaneval", "t", runs(value(1), value(refused_value())), Path("x"), 0, 1)
    assert _split_literals(TASK, gt, "base")[1] == "[1]"
    with pytest.raises(EvalPlusUnavailable, match="repeated hashes"):
        _split_literals(TASK, gt, "plus")


def test_the_cache_round_trips_a_value_as_deep_as_the_codec_carries(tmp_path: Path) -> None:
    # Tuples take two JSON levels each: 900 of them are 1,800 levels, past the parser's default recursion limit.
    deep: object = 0
    for _ in range(900):
        deep = (deep,)
    path = tmp_path / "gt.json.gz"
    write_cache(path, "abc", "humaneval", runs(value(1), value(deep)))
    assert read_cache(path, "abc")[("T/0", "plus")].outcomes[0].value == deep
