"""EvalPlus comparison rules replayed by audit_lib.benchmarks.humaneval_plus.compare."""

from __future__ import annotations

import pytest

from audit_lib.benchmarks.humaneval_plus.compare import (
    SampleComparer,
    compare_one,
    contains_float,
    digest_of,
    digit_distance_oracle,
    find_zero_oracle,
    is_floats,
    not_none_wrapper,
    poly,
)


def test_exact_match_passes_and_different_value_fails() -> None:
    assert compare_one([1], [1, 2], [1, 2]).passed
    assert not compare_one([1], [1, 2], [1, 3]).passed


def test_float_expected_gets_default_atol_when_atol_is_zero() -> None:
    assert compare_one([], 0.1 + 0.2, 0.3).passed
    assert not compare_one([], 0.3001, 0.3).passed
    assert compare_one([], [1.0 + 1e-9, 2.0], [1.0, 2.0]).passed


def test_int_expected_has_no_tolerance() -> None:
    result = compare_one([], 3.0000001, 3)
    assert not result.passed


def test_tolerance_path_requires_same_type_and_length() -> None:
    assert not compare_one([], (1.0, 2.0), [1.0, 2.0]).passed  # exact: tuple != list
    assert "type" in compare_one([], (1.0, 2.0 + 1e-9), [1.0, 2.0]).reason
    assert "length" in compare_one([], [1.0], [1.0, 2.0]).reason
    assert not compare_one([], 1, 1.0000001).passed  # int vs float fails the type check


def test_explicit_atol_is_used() -> None:
    assert compare_one([], 1.00005, 1.0, atol=1e-4).passed
    assert not compare_one([], 1.0005, 1.0, atol=1e-4).passed


def test_atol_promotion_sticks_for_later_inputs_like_evalplus() -> None:
    comparer = SampleComparer(dataset="humaneval", entry_point="f", atol=0)
    assert not comparer.compare([], [1.0000001, 2], [1, 2]).passed  # before any float: exact only
    assert comparer.compare([], 0.5, 0.5).passed  # first float expected output promotes atol
    assert comparer.atol == 1e-6
    assert comparer.compare([], [1.0000001, 2], [1, 2]).passed  # now the allclose path accepts it


def test_exception_in_comparison_is_a_failure() -> None:
    assert not compare_one([], ["a"], [1.0]).passed


def test_is_floats() -> None:
    assert is_floats(1.0) and is_floats([1.0, 2.0]) and is_floats((1.5,))
    assert not is_floats([]) and not is_floats([1.0, 2]) and not is_floats(1)


def test_find_zero_oracle_checks_the_root_not_the_expected_value() -> None:
    xs = [-6, 11, -6, 1]  # (x-1)(x-2)(x-3)
    assert poly(xs, 2.0) == 0
    assert compare_one([xs], 3.0, 1.0, entry_point="find_zero", atol=1e-4).passed
    assert not compare_one([xs], 2.5, 2.5, entry_point="find_zero", atol=1e-4).passed
    assert not find_zero_oracle([xs], "not a number", 1e-4).passed


def test_mbpp_set_equality_and_special_oracles() -> None:
    assert compare_one([], (5, 4), (4, 5), dataset="mbpp", entry_point="similar_elements").passed
    assert not compare_one([], (5, 4), (4, 5), dataset="humaneval", entry_point="similar_elements").passed
    assert compare_one([], False, True, dataset="mbpp", entry_point="are_equivalent").passed
    assert compare_one([], 0, 7, dataset="mbpp", entry_point="sum_div").passed
    assert compare_one([123, 4], digit_distance_oracle(123, 4), 99, dataset="mbpp",
                       entry_point="digit_distance_nums").passed
    assert compare_one([], True, True, dataset="mbpp", entry_point="check_str").passed
    assert not compare_one([], False, True, dataset="mbpp", entry_point="check_str").passed


def test_not_none_wrapper_text() -> None:
    ground_truth = not_none_wrapper("f", "g", for_ground_truth=True)
    candidate = not_none_wrapper("f", "g", for_ground_truth=False)
    assert "return out is not None" in ground_truth
    assert "isinstance(out, bool)" in candidate


def test_unknown_dataset_is_rejected() -> None:
    with pytest.raises(ValueError, match="dataset"):
        SampleComparer(dataset="apps", entry_point="f", atol=0)  # type: ignore[arg-type]


def test_digest_stands_in_for_a_huge_float_free_value() -> None:
    expected = digest_of(list(range(50_000)))
    assert compare_one([], list(range(50_000)), expected).passed
    assert not compare_one([], list(range(49_999)), expected).passed
    assert not compare_one([], tuple(range(50_000)), expected).passed  # type differs, as with ==
    assert contains_float([[1, 2], (3, 0.5)]) and not contains_float([[1, 2], "a"])


def test_decided_by_inequality_follows_evalplus_sticky_atol_and_oracles() -> None:
    from audit_lib.benchmarks.humaneval_plus.compare import ValueDigest, decided_by_inequality

    ints = [(True, 1), (False, None), (True, [2, 3]), (True, "x")]
    assert decided_by_inequality("humaneval", "f", 0.0, ints) == {0: 1, 2: [2, 3], 3: "x"}
    # A float expected output promotes atol at its own input and for every later one.
    mixed = [(True, 1), (True, 2.5), (True, 3)]
    assert decided_by_inequality("humaneval", "f", 0.0, mixed) == {0: 1}
    assert decided_by_inequality("humaneval", "f", 1e-3, ints) == {}
    # A list of floats promotes too, a list with one int in it does not (EvalPlus's is_floats).
    assert decided_by_inequality("humaneval", "f", 0.0, [(True, [1.0, 2.0]), (True, 1)]) == {}
    assert decided_by_inequality("humaneval", "f", 0.0, [(True, [1.0, 2]), (True, 1)]) == {0: [1.0, 2], 1: 1}
    assert decided_by_inequality("humaneval", "find_zero", 0.0, ints) == {}
    assert decided_by_inequality("mbpp", "similar_elements", 0.0, ints) == {}
    assert decided_by_inequality("mbpp", "check_str", 0.0, ints) == {}
    assert decided_by_inequality("mbpp", "sum_div", 0.0, ints) == {}
    digest = ValueDigest("0" * 64, 10**6, "str")
    assert decided_by_inequality("humaneval", "f", 0.0, [(True, digest), (True, "x" * 70000), (True, 2)]) == {2: 2}
