"""EvalPlus comparison rules replayed by audit_lib.benchmarks.humaneval_plus.compare."""

from __future__ import annotations

import pytest

from audit_lib.benchmarks.humaneval_plus.compare import (
    Comparison,
    SampleComparer,
    compare_one,
    contains_float,
    digest_of,
    digit_distance_oracle,
    find_zero_oracle,
    is_floats,
    not_none_wrapper,
    poly,
    surface_area_oracle,
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
    assert compare_one([], True, True, dataset="mbpp", entry_point="check_str").passed
    assert not compare_one([], False, True, dataset="mbpp", entry_point="check_str").passed


def test_not_none_wrapper_text() -> None:
    ground_truth = not_none_wrapper("f", "g", for_ground_truth=True)
    candidate = not_none_wrapper("f", "g", for_ground_truth=False)
    assert "return out is not None" in ground_truth
    assert "out is True or out is False" in candidate
    assert "isinstance" not in candidate  # the program could bind it (it runs in the program's globals)


def test_unknown_dataset_is_rejected() -> None:
    with pytest.raises(ValueError, match="dataset"):
        SampleComparer(dataset="apps", entry_point="f", atol=0)  # type: ignore[arg-type]


def test_digest_stands_in_for_a_huge_float_free_value() -> None:
    expected = digest_of(list(range(50_000)))
    assert compare_one([], list(range(50_000)), expected).passed
    assert not compare_one([], list(range(49_999)), expected).passed
    assert not compare_one([], tuple(range(50_000)), expected).passed  # type differs, as with ==
    assert contains_float([[1, 2], (3, 0.5)]) and not contains_float([[1, 2], "a"])


def test_atol_promotion_is_keyed_on_the_expected_value_not_the_output() -> None:
    # A float output against an int expected value: no promotion, so only `==` can pass.
    assert not compare_one([], [1.0000001, 2], [1, 2]).passed
    assert not compare_one([], 2.0000001, 2).passed
    comparer = SampleComparer(dataset="humaneval", entry_point="f", atol=0)
    assert not comparer.compare([], 0.5, 1).passed
    assert comparer.atol == 0  # a float output did not promote atol for the inputs after it
    # An int output against a float expected value promotes atol, then fails on type, as in EvalPlus.
    result = compare_one([], 1, 1.0000001)
    assert not result.passed and result.atol_used == 1e-6 and "type" in result.reason


def test_allclose_uses_rtol_1e_7_so_large_values_get_no_extra_slack() -> None:
    # |1e6+5 - 1e6| = 5 > atol 1e-6 + rtol 1e-7 * 1e6 = 0.100001: fails; rtol 1e-5 would allow 10.
    assert not compare_one([], 1e6 + 5, 1e6).passed
    assert not compare_one([], [1e6 + 5, 1.0], [1e6, 1.0]).passed
    assert compare_one([], 1e6 + 0.05, 1e6).passed  # within 0.1 of it: passes
    assert compare_one([], [1e6 + 0.05, 1.0], [1e6, 1.0]).passed


def test_int_values_at_atol_zero_are_compared_exactly() -> None:
    assert not compare_one([], [10**9 + 1], [10**9]).passed  # allclose would call these close
    assert not compare_one([], 10**9 + 1, 10**9).passed
    assert compare_one([], [10**9], [10**9]).passed


def test_mbpp_581_surface_area_oracle_reads_height_as_the_perpendicular_height() -> None:
    # Square pyramid, base edge 6, height 4: slant height sqrt(3**2 + 4**2) = 5, area 6*6 + 4 * (6 * 5 / 2) = 96.
    # MBPP's own reading takes 4 as the slant height: 6*6 + 4 * (6 * 4 / 2) = 84.
    assert surface_area_oracle(6, 4) == 96
    assert surface_area_oracle(10, 12) == 360  # slant 13: 100 + 2 * 10 * 13
    assert surface_area_oracle(2, 1) == 10  # slant sqrt(2): 4 + 4 * 1.414... = 9.66 -> rounds to 10
    kwargs = {"dataset": "mbpp", "entry_point": "surface_Area"}
    assert compare_one([6, 4], 84, 84, **kwargs).passed  # the expected value still passes
    assert compare_one([6, 4], 96, 84, **kwargs).passed  # the alternative reading passes, at atol 0 (`<=`)
    assert not compare_one([6, 4], 95, 84, **kwargs).passed
    assert not compare_one([6, 4], 97, 84, **kwargs).passed
    assert compare_one([6, 4], 95.5, 84.0, atol=0.5, **kwargs).passed  # |95.5 - 96| <= atol
    assert not compare_one([6, 4], 96, 84, dataset="humaneval", entry_point="surface_Area").passed


def test_mbpp_558_digit_distance_oracle_zero_pads_the_shorter_number() -> None:
    # 123 vs 4 padded to 004: |1-0| + |2-0| + |3-4| = 4; without padding zip stops after one pair: |1-4| = 3.
    assert digit_distance_oracle(123, 4) == 4
    assert digit_distance_oracle(4, 123) == 4
    assert digit_distance_oracle(1000, 1) == 2  # 1000 vs 0001: 1 + 0 + 0 + 1
    assert digit_distance_oracle(57, 75) == 4
    kwargs = {"dataset": "mbpp", "entry_point": "digit_distance_nums"}
    assert compare_one([123, 4], 3, 3, **kwargs).passed  # the expected value still passes
    assert compare_one([123, 4], 4, 3, **kwargs).passed  # the zero-padded reading passes too
    assert not compare_one([123, 4], 5, 3, **kwargs).passed


def test_digest_comparison_accepts_a_digest_from_the_sandbox_and_reports_the_expected_size() -> None:
    big = list(range(50_000))
    expected = digest_of(big)
    same = compare_one([], digest_of(list(range(50_000))), expected, atol=0.5)  # the sandbox digested the output
    assert same == Comparison(True, "", 0.5)
    other = compare_one([], digest_of(big[:-1]), expected)
    assert other.passed is False and other.atol_used == 0.0
    assert other.reason == f"not equal (expected list of {expected.nbytes:,} encoded bytes)"

    class Opaque:
        pass

    unsendable = compare_one([], Opaque(), expected)  # cannot be encoded, so it cannot match
    assert unsendable.passed is False and unsendable.reason.startswith("not equal (expected list of ")


def test_digest_comparison_follows_numeric_equality_like_evalplus() -> None:
    # HumanEval/100 plus[109] is cached as a digest of ints; a correct sample returning the same numbers as floats
    # must pass, as EvalPlus's `out == exp` passes it ([1.0, 3.0] == [1, 3]).
    ints = [2 * i + 1 for i in range(20_000)]
    expected = digest_of(ints)
    assert compare_one([], [float(x) for x in ints], expected).passed
    assert compare_one([], [complex(x) for x in ints], expected).passed  # (1+0j) == 1 as well
    assert compare_one([], [True] + [float(x) for x in ints[1:]], expected).passed  # True == 1
    assert compare_one([], {"a": [float(x) for x in ints]}, digest_of({"a": ints})).passed
    # Still no match for a wrong or differently typed value.
    assert not compare_one([], [float(x) + 0.5 for x in ints], expected).passed
    assert not compare_one([], [float(x) for x in ints[:-1]] + [1e300], expected).passed
    assert not compare_one([], tuple(float(x) for x in ints), expected).passed  # a tuple is not == a list
    assert not compare_one([], [float("nan")] + [float(x) for x in ints[1:]], expected).passed
    bools = digest_of([True] * 30_000)
    assert compare_one([], [True] * 30_000, bools).passed
    assert not compare_one([], [2.0] * 30_000, bools).passed
