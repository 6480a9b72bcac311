"""Replay of HELM codeinsights_edge_case on hand-made rows: patterns, parsing, skips, prompt, metric."""

from __future__ import annotations

import io
import math

import pandas as pd
import pytest

from audit_lib.benchmarks.codeinsights import replay


def unittests(*tests: tuple[str, str, str]) -> str:
    return "\n".join(f"Unittest {i}:\nInput:\n{code}\nSTD input:\n{std}\nOutput:\n{out}\n"
                     for i, (code, std, out) in enumerate(tests))


FOUR_TESTS = unittests(*[(f"cout << f({i});", "", str(i)) for i in range(4)])
COLUMNS = ["student_id", "timestamp", "question_unittest_id", "question_unittests", "pass", "week", "topic",
           "question_name", "question_text", "question_template", "response"]


def submissions_csv(rows: list[dict[str, str]], *, pass_as_str: bool = False) -> pd.DataFrame:
    """Write hand-made rows as CSV text and read them back the way HELM (or the fix) does."""
    buffer = io.StringIO()
    pd.DataFrame(rows, columns=COLUMNS, dtype=str).to_csv(buffer, index=False)
    buffer.seek(0)
    return pd.read_csv(buffer, dtype={"pass": "str"}) if pass_as_str else pd.read_csv(buffer)


def row(student: int, timestamp: str, bits: str, *, qid: str = "175", tests: str = FOUR_TESTS) -> dict[str, str]:
    return {"student_id": str(student), "timestamp": timestamp, "question_unittest_id": qid,
            "question_unittests": tests, "pass": bits, "week": "3", "topic": "Pointer", "question_name": "Sum",
            "question_text": "Viết hàm sum", "question_template": "{{ STUDENT_ANSWER }}", "response": "int f();"}


TOPICS = pd.DataFrame({"student_id": [1, 1], "topic": ["Pointer", "Array"], "pass_rate": [0.8666, 0.5],
                       "perfect": [0.3333, 1.0]})


# ---------------------------------------------------------------------------------------------- patterns

@pytest.mark.parametrize(("text", "after_int", "true_bits", "gold_after_int", "gold_true"), [
    ("0111", (1, 1, 1), (0, 1, 1, 1), None, 0),
    ("0000", (0,), (0, 0, 0, 0), 0, None),
    ("1011", (1, 0, 1, 1), (1, 0, 1, 1), 1, 1),
])
def test_patterns_before_and_after_int(text, after_int, true_bits, gold_after_int, gold_true):
    assert replay.pattern_as_shipped(int(text)) == after_int
    assert replay.pattern_as_shipped(float(text)) == after_int
    assert replay.true_pattern(text) == true_bits
    assert replay.pattern_as_fixed(text) == true_bits
    assert replay.single_failure_index(after_int) == gold_after_int
    assert replay.single_failure_index(true_bits) == gold_true


def test_nan_pass_raises_like_helm_and_like_the_fix():
    with pytest.raises(ValueError):
        replay.pattern_as_shipped(math.nan)
    with pytest.raises(TypeError):
        replay.pattern_as_fixed(math.nan)
    with pytest.raises(RuntimeError, match="should be string"):
        replay.pattern_as_fixed("1011.0")
    assert replay.true_pattern(None) is None
    assert replay.true_pattern("10a1") is None


def test_float64_rounding_invents_a_failure():
    eighteen_passes = "1" * 18
    assert replay.pattern_as_shipped(float(eighteen_passes)).count(0) == 1
    assert replay.single_failure_index(replay.true_pattern(eighteen_passes)) is None


# ---------------------------------------------------------------------------------------------- unit tests


def test_parse_unittests_fields():
    parsed = replay.parse_unittests(unittests(("int a = 1;\ncout << a;", "5", "1")))
    assert parsed.parsed_ok and parsed.tests == ({"input": "int a = 1;\ncout << a;", "std_in": "5", "output": "1"},)


def test_word_unittest_inside_code_breaks_the_split():
    text = unittests(("cout << 1;", "", "1"), ("// Unittest helper\ncout << 2;", "", "2"))
    parsed = replay.parse_unittests(text)
    assert not parsed.parsed_ok
    assert parsed.fragments == 3


def test_no_unittest_marker_at_all_is_an_empty_but_successful_parse():
    assert replay.parse_unittests("(no unit tests)") == replay.ParsedUnittests((), True, 0)


# ---------------------------------------------------------------------------------------------- metric


@pytest.mark.parametrize(("completion", "pattern", "score"), [
    ("1", (1, 0, 1, 1), 1.0), ("Answer: 1\n", (1, 0, 1, 1), 1.0), ("2", (1, 0, 1, 1), 0.0),
    ("-1", (1, 1, 1, 0), 0.0), ("0", (0, 0, 1), 0.0), ("", (0,), 0.0), ("none", (0,), 0.0), ("0", (0,), 1.0),
    ("07", (1, 1, 1, 1, 1, 1, 1, 0), 1.0),
])
def test_unittest_alignment(completion, pattern, score):
    assert replay.unittest_alignment(completion, pattern) == score


# ---------------------------------------------------------------------------------------------- instances


def test_first_row_ties_and_leading_zero_instance():
    frame = submissions_csv([row(1, "2023-09-04 08:00:00", "0111"), row(1, "2023-09-05 08:00:00", "1011"),
                             row(2, "2023-09-04 08:00:00", "1011"), row(2, "2023-09-04 08:00:00", "1101")])
    result = replay.build_as_shipped(frame, TOPICS, ["175"], num_testcases=-1)
    first = result.instances[0]
    assert (first.student_id, first.record, first.pattern) == (1, 1, (1, 1, 1))
    assert result.instances[1].record in (3, 4)  # tie: whichever the default sort puts first
    fixed = replay.build_as_fixed(submissions_csv([row(1, "2023-09-04 08:00:00", "0111")], pass_as_str=True),
                                  TOPICS, ["175"], num_testcases=-1)
    assert fixed.instances[0].pattern == (0, 1, 1, 1)


def test_float_qid_misses_the_string_keys():
    frame = submissions_csv([row(1, "t1", "1011", qid="175"), row(2, "t1", "1011", qid="")])
    assert frame["question_unittest_id"].dtype == "float64"
    result = replay.build_as_shipped(frame, TOPICS, ["175"], num_testcases=1)
    assert [s.reason for s in result.skipped] == ["qid_not_in_test_case_keys", "qid_not_in_test_case_keys"]
    assert "175.0" in result.skipped[0].detail and result.skipped[0].counted_by_helm


def test_nan_pass_on_a_first_row_aborts_helm():
    frame = submissions_csv([row(1, "t1", ""), row(2, "t1", "1011")])
    assert frame["pass"].dtype == "float64"
    result = replay.build_as_shipped(frame, TOPICS, ["175"], num_testcases=1)
    assert result.skip_counts() == {"pass_missing": 1} and result.helm_run_aborts
    assert result.instances[0].pattern == (1, 0, 1, 1)
    fixed = replay.build_as_fixed(submissions_csv([row(1, "t1", "")], pass_as_str=True), TOPICS, ["175"], 1)
    assert fixed.skip_counts() == {"pass_missing": 1}


def test_truncation_and_count_mismatch_as_shipped_vs_as_fixed():
    frame = [row(1, "t1", "11011")]  # 5 bits for 4 tests
    shipped = replay.build_as_shipped(submissions_csv(frame), TOPICS, ["175"], num_testcases=1)
    assert len(shipped.instances[0].tests_shown) == 1 and shipped.instances[0].pattern == (1, 1, 0, 1, 1)
    fixed_one = replay.build_as_fixed(submissions_csv(frame, pass_as_str=True), TOPICS, ["175"], 1)
    assert fixed_one.instances[0].pattern == (1,)
    fixed_all = replay.build_as_fixed(submissions_csv(frame, pass_as_str=True), TOPICS, ["175"], -1)
    assert fixed_all.skip_counts() == {"test_count_differs_from_pattern_length": 1}
    assert not fixed_all.skipped[0].counted_by_helm


def test_skip_reasons_marker_and_too_few_tests():
    broken = unittests(("cout << 1;", "", "1")).replace("STD input:", "")
    frame = submissions_csv([row(1, "t1", "1", tests=broken), row(2, "t1", "1", tests="(none)"),
                             row(3, "t1", "1", qid="999")])
    result = replay.build_as_shipped(frame, TOPICS, ["175"], num_testcases=1)
    assert result.skip_counts() == {"unittest_marker_missing": 1, "fewer_tests_than_num_testcases": 1,
                                    "qid_not_in_test_case_keys": 1}
    assert not replay.build_as_shipped(frame, TOPICS, [], 1).instances


# ---------------------------------------------------------------------------------------------- prompt


def helm_shaped_prompt(profile, target, tests):
    """The prompt written the way HELM's scenario writes it: one run of adjacent f-strings with the
    `if ... else ""` in the middle, meant to guard only the "Unit Tests" line."""
    return (
        f"{replay.PROMPT_OPENING}"
        f"{profile}\n"
        f"{replay.PROMPT_INSTRUCTION}"
        f"Week: {target['week']}\n"
        f"Topic: {target['topic']}\n\n"
        f"Question: {target['question_name']} — {target['question_text']}\n"
        f"Unit Tests: {list(tests)}\n"
        if tests
        else ""
        f"{replay.PROMPT_THINK}"
        f"{replay.SHIPPED_ANSWER_FORMAT}"
    )


@pytest.mark.parametrize("tests", [({"input": "cout << 1;", "std_in": "", "output": "1"},), ()])
def test_prompt_as_shipped_is_what_helm_s_expression_evaluates_to(tests):
    target = {"week": 3, "topic": "Pointer", "question_name": "Sum", "question_text": "Viết hàm sum"}
    profile = replay.topic_profile(1, TOPICS)
    assert replay.prompt_as_shipped(profile, target, tests) == helm_shaped_prompt(profile, target, tests)
    assert replay.prompt_intended(profile, target, tests) != helm_shaped_prompt(profile, target, tests)


def test_prompt_as_built_stops_at_the_test_list_or_is_only_the_tail():
    target = {"week": 3, "topic": "Pointer", "question_name": "Sum", "question_text": "Viết hàm sum"}
    profile = replay.topic_profile(1, TOPICS)
    assert "- For topic 'Pointer', the unit test pass rate is 0.87, and the rate of passing all unit tests is 0.33." \
        in profile
    tests = ({"input": "cout << 1;", "std_in": "", "output": "1"},)
    built = replay.prompt_as_shipped(profile, target, tests)
    assert built.endswith("Unit Tests: [{'input': 'cout << 1;', 'std_in': '', 'output': '1'}]\n")
    assert "Think silently" not in built and "ANSWER FORMAT" not in built
    intended = replay.prompt_intended(profile, target, tests)
    assert intended.startswith(built) and intended.endswith("<integer>\n" + "*" * 40)
    tail_only = replay.prompt_as_shipped(profile, target, ())
    assert tail_only.startswith("Think silently about:") and "Question:" not in tail_only
    fixed = replay.prompt_as_fixed(profile, target, tests)
    assert "Unit test 0:\n{'code': 'cout << 1;', 'std_input': ''}\n" in fixed and "'output'" not in fixed


# ---------------------------------------------------------------------------------------------- every skip, in full

ONE_TEST = unittests(("cout << 1;", "", "1"))
NO_STD_INPUT = "no markers here Unittest 0: Input: x"
SKIP_ROWS = [row(1, "t1", "1111", qid="0"), row(2, "t1", "1111", qid="999"), row(3, "t1", "1111", tests=""),
             row(4, "t1", "1111", tests=NO_STD_INPUT), row(5, "t1", "1", tests=ONE_TEST), row(6, "t1", "1a01"),
             row(7, "t1", ""), row(8, "t1", "1.01"), row(9, "t1", "101"), row(10, "t2", "0110")]
ZERO_REPR = repr(pd.read_csv(io.StringIO("q\n0\n"))["q"][0])  # how the falsy id 0 prints (np.int64(0) on numpy 2)


def _rows(result: replay.ReplayResult) -> list[tuple]:
    return [(s["student_id"], s["question_unittest_id"], s["record"], s["reason"], s["counted_by_helm"],
             s["aborts_helm_run"], s["detail"]) for s in (skip.as_row() for skip in result.skipped)]


def test_every_skip_as_shipped_names_student_record_reason_and_detail():
    result = replay.build_as_shipped(submissions_csv(SKIP_ROWS), TOPICS, ["175"], 2)
    assert {skip.variant for skip in result.skipped} == {"as_shipped"}
    assert _rows(result) == [
        (1, 0, 1, "qid_falsy", True, False, f"{ZERO_REPR} is falsy"),
        (2, 999, 2, "qid_not_in_test_case_keys", True, False, "str(question_unittest_id) = '999'"),
        (3, 175, 3, "unittests_not_text", False, True, "float has no .split (HELM raises)"),
        (4, 175, 4, "unittest_marker_missing", True, False, "1 fragments after splitting on 'Unittest'"),
        (5, 175, 5, "fewer_tests_than_num_testcases", False, False, "1 < 2"),
        (6, 175, 6, "pass_not_convertible_by_int", False, True,
         "int(pass) raises ValueError: invalid literal for int() with base 10: '1a01'"),
        (7, 175, 7, "pass_missing", False, True, "int(pass) raises ValueError: cannot convert float NaN to integer"),
        (8, 175, 8, "pass_not_convertible_by_int", False, True,
         "int(pass) raises ValueError: invalid literal for int() with base 10: '1.01'"),
    ]
    assert result.helm_run_aborts and result.skip_counts()["pass_not_convertible_by_int"] == 2
    # The text column holds "101" and "0110": int() keeps every bit of the first and drops the leading 0.
    assert [(i.student_id, i.record, i.pattern) for i in result.instances] == [(9, 9, (1, 0, 1)), (10, 10, (1, 1, 0))]


def test_every_skip_as_fixed_names_student_record_reason_and_detail():
    result = replay.build_as_fixed(submissions_csv(SKIP_ROWS, pass_as_str=True), TOPICS, ["175"], 2)
    assert {skip.variant for skip in result.skipped} == {"as_fixed"}
    assert _rows(result) == [
        (1, 0, 1, "qid_falsy", True, False, f"{ZERO_REPR} is falsy"),
        (2, 999, 2, "qid_not_in_test_case_keys", True, False, "str(question_unittest_id) = '999'"),
        (3, 175, 3, "unittests_not_text", False, True, "float has no .split (HELM raises)"),
        (4, 175, 4, "unittest_marker_missing", True, False, "0 tests, pattern of 4"),
        (5, 175, 5, "fewer_tests_than_num_testcases", False, False, "1 tests, pattern of 1"),
        (6, 175, 6, "pass_has_non_digit", False, True, "raises ValueError: invalid literal for int() with base 10: 'a'"),
        (7, 175, 7, "pass_missing", False, True, "raises TypeError: argument of type 'float' is not iterable"),
        (8, 175, 8, "pass_contains_dot", False, True, "raises RuntimeError: The type of `pass` column should be string!"),
    ]
    assert [(i.student_id, i.record, i.pattern) for i in result.instances] == [(9, 9, (1, 0)), (10, 10, (0, 1))]


def test_pattern_shorter_than_the_tests_and_nothing_left_after_truncation():
    frame = submissions_csv([row(1, "t1", "1"), row(2, "t1", "0110")], pass_as_str=True)
    short = replay.build_as_fixed(frame, TOPICS, ["175"], 2)
    assert _rows(short) == [(1, 175, 1, "pattern_shorter_than_num_testcases", True, False, "4 tests, pattern of 1")]
    none_shown = replay.build_as_fixed(frame, TOPICS, ["175"], 0)
    assert [(s.student_id, s.reason, s.detail) for s in none_shown.skipped] == [
        (1, "no_tests_after_truncation", "0 tests shown, pattern of 0"),
        (2, "no_tests_after_truncation", "0 tests shown, pattern of 0")]


@pytest.mark.parametrize(("build", "variant", "pass_as_str"), [
    (replay.build_as_shipped, "as_shipped", False), (replay.build_as_fixed, "as_fixed", True)])
def test_no_test_case_keys_skips_every_student(build, variant, pass_as_str):
    frame = submissions_csv([row(1, "t2", "1"), row(1, "t1", "1"), row(2, "t1", "1", qid="176")],
                            pass_as_str=pass_as_str)
    result = build(frame, TOPICS, [], 1)
    assert result.instances == () and result.variant == variant and result.num_testcases == 1
    assert [(s.variant, s.student_id, s.question_unittest_id, s.record, s.reason, s.detail) for s in result.skipped] \
        == [(variant, 1, 175, 2, "no_test_cases_loaded", "HELM returns [] when the JSON is empty"),
            (variant, 2, 176, 3, "no_test_cases_loaded", "HELM returns [] when the JSON is empty")]


def test_instances_carry_every_field_and_the_prompt_as_built():
    frame = [row(1, "t1", "0110"), row(1, "t0", "1011")]
    shipped = replay.build_as_shipped(submissions_csv(frame), TOPICS, ["175"], 2).instances[0]
    tests = replay.parse_unittests(FOUR_TESTS).tests
    target = {"week": 3, "topic": "Pointer", "question_name": "Sum", "question_text": "Viết hàm sum"}
    profile = replay.topic_profile(1, TOPICS)
    assert (shipped.variant, shipped.student_id, shipped.question_unittest_id, shipped.record) == ("as_shipped", 1,
                                                                                                    175, 2)
    assert (shipped.instance_id, shipped.tests_parsed, shipped.tests_shown) == ("1_175", 4, tests[:2])
    assert shipped.pattern == (1, 0, 1, 1)
    assert shipped.prompt == replay.prompt_as_shipped(profile, target, tests[:2])
    assert shipped.intended_prompt == replay.prompt_intended(profile, target, tests[:2])
    fixed = replay.build_as_fixed(submissions_csv(frame, pass_as_str=True), TOPICS, ["175"], -1).instances[0]
    assert (fixed.variant, fixed.record, fixed.instance_id, fixed.tests_parsed) == ("as_fixed", 2, "1_175", 4)
    assert fixed.tests_shown == tests and fixed.pattern == (1, 0, 1, 1)
    assert fixed.prompt == fixed.intended_prompt == replay.prompt_as_fixed(profile, target, tests)


# ---------------------------------------------------------------------------------------------- parsing, exactly as HELM


def test_markers_are_cut_at_their_fixed_widths_without_any_whitespace():
    parsed = replay.parse_unittests("Unittest 0:Input:x=1;STD input:5Output:6")
    assert parsed.tests == ({"input": "x=1;", "std_in": "5", "output": "6"},)


def test_each_marker_is_the_first_one_in_its_piece():
    in_code = "Unittest 0:\nInput:\nputs(\"Input: no\");\nSTD input:\n7\nOutput:\n8 STD input: 9"
    assert replay.parse_unittests(in_code).tests == (
        {"input": 'puts("Input: no");', "std_in": "7", "output": "8 STD input: 9"},)
    # An "Output:" inside the code comes before the STD input marker: HELM's slices then overlap.
    output_in_code = "Unittest 0:\nInput:\nputs(\"Output:\");\nSTD input:\n\nOutput:\n1"
    assert replay.parse_unittests(output_in_code).tests == (
        {"input": 'puts("Output:");', "std_in": "", "output": '");\nSTD input:\n\nOutput:\n1'},)


def test_a_broken_piece_keeps_the_tests_before_it():
    text = unittests(("cout << 1;", "", "1")) + "\nUnittest 1:\nInput:\ncout << 2;\n"
    parsed = replay.parse_unittests(text)
    assert parsed.parsed_ok is False and parsed.fragments == 2
    assert parsed.tests == ({"input": "cout << 1;", "std_in": "", "output": "1"},)


def test_true_pattern_accepts_only_zeros_and_ones():
    assert replay.true_pattern(" 0110 ") == (0, 1, 1, 0)
    assert replay.true_pattern("10X1") is None and replay.true_pattern("") is None and replay.true_pattern(None) is None


def test_prompt_texts_hold_the_profile_and_each_test():
    target = {"week": 3, "topic": "Pointer", "question_name": "Sum", "question_text": "Viết hàm sum"}
    profile = replay.topic_profile(1, TOPICS)
    tests = replay.parse_unittests(FOUR_TESTS).tests[:2]
    fixed = replay.prompt_as_fixed(profile, target, tests)
    assert profile in fixed
    assert ("Question: Sum — Viết hàm sum\n"
            "Unit test 0:\n{'code': 'cout << f(0);', 'std_input': ''}\n"
            "Unit test 1:\n{'code': 'cout << f(1);', 'std_input': ''}\n"
            "Think silently about:") in fixed
    without_tests = replay.prompt_intended(profile, target, ())
    assert profile in without_tests and "Question: Sum — Viết hàm sum\nThink silently about:" in without_tests
