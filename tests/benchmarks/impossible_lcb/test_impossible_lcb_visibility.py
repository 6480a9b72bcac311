"""Both readings of "the even-numbered assertions are shown, plus the changed one"."""

from __future__ import annotations

import pytest
from test_impossible_lcb_tasks import ORIGINAL_TEST, PRELUDE_AND_LOOP_TEST, SPLIT_MUTATION, VALUE_MUTATION

from audit_lib.benchmarks.impossible_lcb.assertions import diff_tests, parse_test
from audit_lib.benchmarks.impossible_lcb.visibility import Visibility, even_numbered_positions, visibility


def test_even_positions_under_each_numbering():
    assert even_numbered_positions(5, "zero_based") == (0, 2, 4)
    assert even_numbered_positions(5, "one_based") == (1, 3)
    assert even_numbered_positions(0, "zero_based") == ()
    with pytest.raises(ValueError):
        even_numbered_positions(3, "two_based")  # type: ignore[arg-type]


def test_changed_assertion_is_added_when_not_already_shown():
    mutated = parse_test(VALUE_MUTATION)           # 4 assertions, the changed one at index 1
    zero = visibility(mutated, (1,), "zero_based")
    one = visibility(mutated, (1,), "one_based")
    assert zero.shown == (0, 1, 2) and zero.held_back == (3,) and zero.changed_already_shown == "none"
    assert one.shown == (1, 3) and one.held_back == (0, 2) and one.changed_already_shown == "all"


def test_shown_assertions_that_need_setup_lines():
    mutated = parse_test(SPLIT_MUTATION)
    changed = diff_tests(parse_test(ORIGINAL_TEST), mutated).asserts_added     # (3, 4, 5)
    zero = visibility(mutated, changed, "zero_based")
    assert zero.changed_already_shown == "some"
    assert zero.shown_needing_setup == (2, 3, 4, 5)
    assert zero.setup_statements_needed == (2, 4)          # `result = ...` and `pair = ...`
    assert zero.setup_lines_needed == (4, 6)
    one = visibility(mutated, (), "one_based")
    assert one.changed_already_shown == "no change" and one.shown == (1, 3, 5)


def test_changed_index_out_of_range_is_rejected():
    with pytest.raises(ValueError):
        visibility(parse_test(VALUE_MUTATION), (9,), "zero_based")


def test_the_first_and_last_assertions_may_change_and_the_next_index_is_refused():
    mutated = parse_test(VALUE_MUTATION)  # 4 assertions
    assert visibility(mutated, (3, 0), "one_based") == Visibility(
        numbering="one_based", n_assertions=4, shown=(0, 1, 3), held_back=(2,), changed=(0, 3),
        changed_already_shown="some", shown_needing_setup=(), setup_statements_needed=(), setup_lines_needed=(),
        needs_prelude=False)
    with pytest.raises(ValueError, match=r"^changed assertion index 4 is outside 0\.\.3$"):
        visibility(mutated, (4,), "zero_based")
    with pytest.raises(ValueError, match=r"^numbering 'two_based' is not one of \('zero_based', 'one_based'\)$"):
        even_numbered_positions(3, "two_based")  # type: ignore[arg-type]


def test_a_shown_assertion_that_uses_a_helper_outside_the_check_needs_the_prelude():
    parsed = parse_test(PRELUDE_AND_LOOP_TEST)  # its second assertion calls `is_close`, defined before `check`
    assert visibility(parsed, (), "one_based").needs_prelude
    assert not visibility(parsed, (), "zero_based").needs_prelude
