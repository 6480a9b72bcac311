"""pass@k: the stable estimator against brute-force enumeration of subsets."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from audit_lib.benchmarks.humaneval_plus.passk import (
    mean_pass_at_k,
    naive_pass_at_k,
    pass_at_k,
    pass_at_k_exact,
    shortcut_error_table,
)


def brute_force_pass_at_k(n: int, c: int, k: int) -> float:
    """Fraction of all k-subsets of n samples (the first c correct) that contain a correct sample."""
    subsets = list(itertools.combinations(range(n), k))
    return sum(any(index < c for index in subset) for subset in subsets) / len(subsets)


@st.composite
def small_nck(draw: st.DrawFn) -> tuple[int, int, int]:
    n = draw(st.integers(min_value=1, max_value=12))
    return n, draw(st.integers(min_value=0, max_value=n)), draw(st.integers(min_value=1, max_value=n))


@settings(max_examples=150, deadline=None)
@given(small_nck())
def test_stable_estimator_equals_subset_enumeration(nck: tuple[int, int, int]) -> None:
    n, c, k = nck
    assert pass_at_k(n, c, k) == pytest.approx(brute_force_pass_at_k(n, c, k), abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=1, max_value=5000).flatmap(
    lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, min(n, 200)))))
def test_stable_estimator_equals_exact_binomials_for_large_n(nck: tuple[int, int, int]) -> None:
    n, c, k = nck
    value = pass_at_k(n, c, k)
    assert math.isfinite(value) and 0.0 <= value <= 1.0
    assert value == pytest.approx(pass_at_k_exact(n, c, k), abs=1e-9)


def test_edge_cases() -> None:
    assert pass_at_k(10, 0, 5) == 0.0
    assert pass_at_k(10, 10, 1) == 1.0
    assert pass_at_k(10, 6, 5) == 1.0  # n - c < k: every draw holds a correct sample
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)


def test_naive_shortcut_is_biased_for_k_above_one() -> None:
    assert naive_pass_at_k(10, 3, 1) == pytest.approx(pass_at_k(10, 3, 1))
    assert naive_pass_at_k(10, 2, 10) < pass_at_k(10, 2, 10) == 1.0
    table = shortcut_error_table([10, 100], [1, 10])
    assert all(abs(row.error) < 1e-12 for row in table if row.k == 1)
    assert any(abs(row.error) > 0.05 for row in table if row.k == 10)


def test_mean_and_invalid_arguments() -> None:
    assert mean_pass_at_k([2, 2], [1, 2], 1) == pytest.approx(0.75)
    with pytest.raises(ValueError):
        pass_at_k(5, 6, 1)
    with pytest.raises(ValueError):
        pass_at_k(5, 1, 6)
    with pytest.raises(ValueError):
        mean_pass_at_k([1], [1, 1], 1)


def test_naive_shortcut_values() -> None:
    # Drawing with replacement: 1 - (1 - c/n)^k.
    assert naive_pass_at_k(10, 5, 3) == pytest.approx(1 - 0.5 ** 3)
    assert naive_pass_at_k(4, 1, 2) == pytest.approx(1 - 0.75 ** 2)
    assert pass_at_k(4, 1, 2) == pytest.approx(0.5)  # 3 of the 6 pairs hold the correct sample


def test_shortcut_table_rows_for_given_n_and_k() -> None:
    # c at 1/5, 2/5, 3/5, 4/5 of n; k above n is left out.
    table = shortcut_error_table([10], [1, 2, 20])
    assert [(row.n, row.c, row.k) for row in table] == [
        (10, 2, 1), (10, 4, 1), (10, 6, 1), (10, 8, 1), (10, 2, 2), (10, 4, 2), (10, 6, 2), (10, 8, 2)]
    assert table[4].unbiased == pytest.approx(pass_at_k(10, 2, 2))
    assert table[4].naive == pytest.approx(naive_pass_at_k(10, 2, 2))
    assert table[4].error == pytest.approx(naive_pass_at_k(10, 2, 2) - pass_at_k(10, 2, 2))
    # Small n: c is kept strictly between 0 and n, duplicates collapse.
    assert [row.c for row in shortcut_error_table([2], [1])] == [1]
    assert [row.c for row in shortcut_error_table([3], [1])] == [1, 2]
    assert [row.c for row in shortcut_error_table([10], [1], c_steps=1)] == [5]


def test_invalid_arguments_say_what_is_wrong() -> None:
    with pytest.raises(ValueError, match="1 sample counts but 2 correct counts"):
        mean_pass_at_k([1], [1, 1], 1)
    with pytest.raises(ValueError, match="zero tasks"):
        mean_pass_at_k([], [], 1)
    with pytest.raises(ValueError, match="got n=5, c=6, k=1"):
        pass_at_k(5, 6, 1)
    with pytest.raises(ValueError, match="got n=0, c=0, k=1"):
        naive_pass_at_k(0, 0, 1)
    with pytest.raises(ValueError, match="got n=3, c=-1, k=1"):
        pass_at_k_exact(3, -1, 1)
