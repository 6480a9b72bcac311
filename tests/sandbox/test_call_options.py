"""What a call job sends for its judge and early stop, and the mistakes refused before any job starts (pure)."""

from __future__ import annotations

import pytest

from audit_lib.errors import ParameterError
from audit_lib.sandbox.budget import EncodedValue
from audit_lib.sandbox.call_options import EQUALITY_RULES, NO_EXPECTED, CallJudge, stop_expected_judge
from audit_lib.sandbox.codec import digest_of, encode


def test_the_judge_is_sent_its_rules_setup_expected_values_inputs_and_budget() -> None:
    digest = digest_of(list(range(50)))
    judge = CallJudge("rules", (1.5, NO_EXPECTED, digest, EncodedValue(b'{"$tuple": [1, 2]}')), {"tol": 1e-6},
                      value_cpu_s=2)
    wire = judge.wire([[1], [2], [3], [4]], 4, frozenset({3, 0}))
    assert wire == {"source": "rules", "setup": {"tol": 1e-6},
                    "expected": [[0, encode(1.5)], [2, digest.to_json()], [3, {"$tuple": [1, 2]}]],
                    "inputs": [[1], [2], [3], [4]], "digest_inputs": [0, 3], "value_cpu_s": 2.0}
    assert isinstance(wire["value_cpu_s"], float)
    assert CallJudge().wire([], 0, None) == {"source": None, "setup": {}, "expected": [], "inputs": [],
                                             "digest_inputs": None, "value_cpu_s": 10.0}


def test_a_judge_with_the_wrong_number_or_kind_of_expected_values_is_refused_by_field() -> None:
    with pytest.raises(ParameterError, match="^the judge has 2 expected values for 3 inputs$") as refused:
        CallJudge("rules", (1, 2)).wire([[1], [2], [3]], 3, None)
    assert refused.value.fields == {"field": "judge"}
    with pytest.raises(ParameterError, match="^expected value 1 is not plain data: ") as refused:
        CallJudge("rules", (1, object())).wire([[1], [2]], 2, None)
    assert refused.value.fields == {"field": "judge"}


def test_stop_expected_is_an_equality_judge_on_the_given_inputs_only() -> None:
    assert stop_expected_judge(None, 3, True) is None and stop_expected_judge({}, 3, False) is None
    judge = stop_expected_judge({2: "c", 0: [1]}, 3, True)
    assert judge == CallJudge(EQUALITY_RULES, ([1], NO_EXPECTED, "c"))
    with pytest.raises(ParameterError, match="only applies with stop_after_failure=True"):
        stop_expected_judge({0: 1}, 1, False)


@pytest.mark.parametrize(("stop_expected", "message"), [
    ({"a": 1, 0: 1}, r"^stop_expected index 'a' is not an input index \(0..9\)$"),  # mixed keys still sort
    ({9: object(), 10: True}, r"^stop_expected index 10 is not"),  # checked in the order of the indexes' text
    ({True: 1}, "index True is not"), ({-1: 1}, "index -1 is not"),
    ({0: object()}, r"^stop_expected\[0\] is not plain data: ")])
def test_a_bad_stop_expected_is_refused_naming_the_first_bad_index(stop_expected: dict, message: str) -> None:
    with pytest.raises(ParameterError, match=message) as refused:
        stop_expected_judge(stop_expected, 10, True)
    assert refused.value.fields == {"field": "stop_expected"}
