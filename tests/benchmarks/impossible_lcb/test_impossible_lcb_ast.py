"""AST diff, assertion extraction, dependency analysis and per-assertion snippets."""

from __future__ import annotations

import ast

import pytest
from test_impossible_lcb_tasks import (
    OPERATOR_MUTATION,
    OPERATOR_ORIGINAL,
    ORIGINAL_TEST,
    PRELUDE_AND_LOOP_TEST,
    SPLIT_MUTATION,
    VALUE_MUTATION,
)

from audit_lib.benchmarks.impossible_lcb.assertions import (
    assertion_snippet,
    classify_change,
    count_asserts,
    diff_tests,
    inspect_structure,
    parse_test,
)
from audit_lib.errors import SchemaError


def test_assertions_are_numbered_in_source_order_with_their_calls():
    parsed = parse_test(ORIGINAL_TEST)
    assert [a.source for a in parsed.assertions] == [
        "assert candidate(1, 2) == 3", "assert candidate(2, 2) == 4", "assert result is not None",
        "assert candidate(5, 5) == 10"]
    via_setup = parsed.assertions[2]
    assert via_setup.call == "candidate(0, 0)" and via_setup.call_via_setup
    assert via_setup.setup_statements == (2,)
    assert parsed.assertions[0].setup_statements == ()


def test_value_mutation_is_one_assertion_on_the_same_call():
    diff = diff_tests(parse_test(ORIGINAL_TEST), parse_test(VALUE_MUTATION))
    assert diff.asserts_removed == (1,) and diff.asserts_added == (1,)
    assert [c.kind for c in diff.changes] == ["value"]
    assert diff.changes[0].removed_expected == "4" and diff.changes[0].added_expected == "5"
    assert diff.single_assertion and diff.violations == ()


def test_operator_mutation_is_classified_as_operator_change():
    diff = diff_tests(parse_test(OPERATOR_ORIGINAL), parse_test(OPERATOR_MUTATION))
    assert [c.kind for c in diff.changes] == ["operator"]
    assert (diff.changes[0].removed_operator, diff.changes[0].added_operator) == ("is", "is not")
    assert diff.single_assertion


def test_one_assertion_rewritten_into_several_breaks_the_rule():
    diff = diff_tests(parse_test(ORIGINAL_TEST), parse_test(SPLIT_MUTATION))
    assert diff.asserts_removed == (3,)
    assert diff.asserts_added == (3, 4, 5)
    assert diff.setup_added == ("pair = candidate(5, 5)",)
    assert diff.added_without_call == (3, 4, 5)
    assert not diff.single_assertion
    assert "3 asserts added" in diff.violations and "setup lines +1/-0" in diff.violations
    # the rewritten asserts still check the same call, reached through the setup line
    assert {c.call for c in diff.changes} == {"candidate(5, 5)"}


def test_identical_tests_have_no_change_and_break_the_rule():
    diff = diff_tests(parse_test(ORIGINAL_TEST), parse_test(ORIGINAL_TEST))
    assert diff.changes == () and not diff.single_assertion
    assert "0 asserts removed" in diff.violations


@pytest.mark.parametrize(("removed", "added", "kind"), [
    ("assert candidate(1) == 2", "assert candidate(1) == 3", "value"),
    ("assert candidate(1) is None", "assert candidate(1) is not None", "operator"),
    ("assert candidate(1) == (1, 2)", "assert candidate(1) is None", "operator_and_value"),
    ("assert candidate(1) == 2", "assert candidate(2) == 2", "different_call"),
    ("assert x > 0 and x ** 3 == 7", "assert x > 0 and x ** 3 == 8", "value_without_call"),
    ("assert x > 0", "assert y < 0", "different_call"),
])
def test_classify_change_on_manifest_one_liners(removed, added, kind):
    assert classify_change(removed, added).kind == kind


def test_count_asserts_on_a_one_liner_with_several():
    assert count_asserts("r = candidate(1); assert r is not None; assert len(r) == 9") == 2


def test_structure_of_broken_tests():
    assert inspect_structure("def check(candidate):\n    assert candidate('a) == 1\n").syntax_error
    bare = inspect_structure("assert candidate(1) == 2\n")
    assert bare.syntax_error is None and not bare.has_check and bare.broken
    assert not inspect_structure(ORIGINAL_TEST).broken


def test_parse_errors_name_file_row_and_field():
    with pytest.raises(SchemaError) as caught:
        parse_test("assert candidate(1) == 2\n", file="oneoff.parquet", row=7, field="test")
    assert caught.value.fields == {"file": "oneoff.parquet", "row": 7, "field": "test"}
    assert "oneoff.parquet" in str(caught.value) and "row 7" in str(caught.value)


def test_dependencies_follow_loops_helpers_and_chains():
    parsed = parse_test(PRELUDE_AND_LOOP_TEST)
    loop_plain, loop_helper, chained = parsed.assertions
    assert loop_plain.nested and loop_plain.setup_statements == (0,)       # `cases`
    assert loop_helper.uses_prelude and not loop_plain.uses_prelude         # `is_close` lives outside check
    assert chained.setup_statements == (3, 4)                              # doubled <- total, not `unused`
    assert chained.call == "candidate(10, 20)" and chained.call_via_setup


def test_snippet_runs_exactly_one_assertion_with_its_setup():
    parsed = parse_test(PRELUDE_AND_LOOP_TEST)
    snippet = assertion_snippet(parsed, 1, "add_pair")
    tree = ast.parse(snippet)
    asserts = [node for node in ast.walk(tree) if isinstance(node, ast.Assert)]
    assert [ast.unparse(a) for a in asserts] == ["assert is_close(candidate(a, b), want)"]
    assert "def is_close" in snippet and "cases = [" in snippet and "unused" not in snippet
    assert snippet.rstrip().endswith("check(add_pair)")
