"""EvalPlus's rule functions called directly on values: tolerance, types, NaN, nested containers, oracles.

Pure tests (no sandbox): `tools/mutation.toml` measures `evalplus_rules` and `compare` with these and test_compare.py.
"""

from __future__ import annotations

import collections
import math
from types import SimpleNamespace

import numpy as np
import pytest

from audit_lib import sandbox
from audit_lib.benchmarks.humaneval_plus import evalplus_rules
from audit_lib.benchmarks.humaneval_plus.compare import (
    CODEC_API,
    RULES_SOURCE,
    SampleComparer,
    compare_one,
    evalplus_judge,
    find_zero_oracle,
    not_none_wrapper,
)
from audit_lib.benchmarks.humaneval_plus.evalplus_rules import (
    Rules,
    digit_distance_oracle,
    integer_forms,
    is_floats,
    make_comparer,
    poly,
    safe_equal,
    surface_area_oracle,
)
from audit_lib.sandbox import digest_of


def _forms(value: object) -> list[tuple[str, object]]:
    """Each form with its type's name, so `1 == 1.0` cannot hide a form of the wrong type."""
    return [(type(form).__name__, form) for form in integer_forms(value)]


# ---- is_floats -----------------------------------------------------------------------------------------------------

def test_is_floats_reads_numpy_arrays_by_dtype() -> None:
    assert is_floats(np.array([1.0, 2.0])) and is_floats(np.array([1.0], dtype=np.float32))
    assert not is_floats(np.array([1, 2])) and not is_floats(np.array([1.0], dtype=np.float16))


def test_is_floats_rejects_non_sequences_and_nested_lists() -> None:
    assert not is_floats(3) and not is_floats("1.0") and not is_floats(None)
    assert not is_floats(()) and not is_floats([[1.0]]) and not is_floats({1.0})
    assert is_floats(float("nan")) and is_floats([float("inf"), -0.0])


# ---- the oracles' arithmetic ---------------------------------------------------------------------------------------

def test_poly_sums_each_coefficient_times_its_power() -> None:
    assert poly([1, 2, 3], 2.0) == 1 + 2 * 2 + 3 * 4
    assert poly([5], 10.0) == 5 and poly([], 3.0) == 0
    assert poly([0, 0, 1], -3.0) == 9


def test_surface_area_oracle_uses_the_slant_height_from_half_the_base() -> None:
    # base 6, height 4: slant sqrt(3**2 + 4**2) = 5, area 36 + 2 * 6 * 5 = 96.
    assert surface_area_oracle(6, 4) == 96
    # base 4, height 1: slant sqrt(5) = 2.236..., area 16 + 17.88... = 33.88..., rounded to 34.
    assert surface_area_oracle(4, 1) == 34
    assert type(surface_area_oracle(6, 4)) is int


def test_digit_distance_oracle_pads_either_side() -> None:
    assert digit_distance_oracle(123, 5) == 1 + 2 + 2  # 123 against 005
    assert digit_distance_oracle(5, 123) == 1 + 2 + 2
    assert digit_distance_oracle(19, 91) == 8 + 8
    assert digit_distance_oracle(7, 7) == 0


def test_safe_equal_is_a_plain_bool_and_never_raises() -> None:
    class Raises:
        def __eq__(self, other: object) -> bool:
            raise RuntimeError("no")

    assert safe_equal([1, 2], [1, 2]) is True and safe_equal(1, 2) is False
    assert safe_equal(Raises(), 1) is False
    assert safe_equal(np.array([1, 2]), np.array([1, 2])) is False  # an ambiguous array truth value is no match
    assert safe_equal(np.array([1]), np.array([1])) is True


# ---- integer_forms -------------------------------------------------------------------------------------------------

def test_integer_forms_of_scalars() -> None:
    assert _forms(2.0) == [("float", 2.0), ("int", 2)]
    assert _forms(2.5) == [("float", 2.5)]
    assert _forms(float("inf")) == [("float", float("inf"))]
    nan = _forms(float("nan"))
    assert len(nan) == 1 and math.isnan(nan[0][1])
    assert _forms(True) == [("bool", True), ("int", 1)]
    assert _forms(3) == [("int", 3)] and _forms("3") == [("str", "3")]
    assert _forms(complex(4, 0)) == [("complex", 4 + 0j), ("int", 4)]
    assert _forms(complex(4.5, 0)) == [("complex", 4.5 + 0j)]
    assert _forms(complex(4, 1)) == [("complex", 4 + 1j)]


def test_integer_forms_of_containers_keep_their_types() -> None:
    assert _forms([1.0, 2]) == [("list", [1.0, 2]), ("list", [1, 2])]
    assert [type(item) for item in list(integer_forms([1.0, 2]))[1]] == [int, int]
    assert _forms((1.0,))[1] == ("tuple", (1,))
    assert _forms({2.0})[1] == ("set", {2}) and _forms(frozenset({2.0}))[1] == ("frozenset", frozenset({2}))
    # Numbers first, bools second: [True, 2.0] -> [True, 2] -> [1, 2].
    forms = list(integer_forms([True, 2.0]))
    assert [[type(item) for item in form] for form in forms] == [[bool, float], [bool, int], [int, int]]
    assert [[[type(x) for x in inner] for inner in form] for form in integer_forms([[1.0]])] == [[[float]], [[int]]]


def test_integer_forms_leave_an_unchanged_value_as_the_same_object() -> None:
    value = [1, "a", (2, 3)]
    assert [form is value for form in integer_forms(value)] == [True]
    mapping = {"a": 1}
    assert [form is mapping for form in integer_forms(mapping)] == [True]
    forms = list(integer_forms([1.5, True]))
    assert forms[0] is forms[0] and len(forms) == 2 and forms[1] == [1.5, 1] and type(forms[1][1]) is int


def test_integer_forms_of_mappings_keep_their_kind_and_counts() -> None:
    (_, plain), (_, as_ints) = _forms({1.0: 2.0})
    assert type(as_ints) is dict and [(type(k), type(v)) for k, v in as_ints.items()] == [(int, int)]
    assert [(type(k), type(v)) for k, v in as_ints.items()] != [(type(k), type(v)) for k, v in plain.items()]
    counts = collections.Counter({2.0: 3})
    rebuilt = list(integer_forms(counts))[1]
    assert type(rebuilt) is collections.Counter and rebuilt == {2: 3} and rebuilt[2] == 3  # not added twice
    ordered = list(integer_forms(collections.OrderedDict([("b", 1.0), ("a", 2.0)])))[1]
    assert type(ordered) is collections.OrderedDict and list(ordered.items()) == [("b", 1), ("a", 2)]
    default = list(integer_forms(collections.defaultdict(list, {"k": 1.0})))[1]
    assert type(default) is collections.defaultdict and default.default_factory is list and default["k"] == 1
    only_value = list(integer_forms({"k": 1.0}))[1]
    assert type(only_value["k"]) is int
    only_key = list(integer_forms({1.0: "v"}))[1]  # noqa: RUF015
    assert [type(k) for k in only_key] == [int]


# ---- Rules ---------------------------------------------------------------------------------------------------------

def test_rules_take_their_setup_as_given() -> None:
    rules = Rules("mbpp", "f", 1, CODEC_API)
    assert (rules.dataset, rules.entry_point, rules.atol, rules.api) == ("mbpp", "f", 1.0, CODEC_API)
    assert type(rules.atol) is float
    with pytest.raises(ValueError, match="dataset must be 'humaneval' or 'mbpp', not 'apps'"):
        Rules("apps", "f", 0, CODEC_API)
    made = make_comparer({"dataset": "humaneval", "entry_point": "g", "atol": "0.5"}, CODEC_API)
    assert (made.dataset, made.entry_point, made.atol, made.api) == ("humaneval", "g", 0.5, CODEC_API)
    assert make_comparer({"dataset": "mbpp", "entry_point": 7, "atol": 0}, CODEC_API).entry_point == "7"


def test_a_comparison_that_raises_is_a_failure_with_its_reason() -> None:
    rules = Rules("humaneval", "f", 1e-3, CODEC_API)
    passed, reason, atol = rules.compare([], ["a", "b"], [1.0, 2.0])
    assert (passed, atol) == (False, 1e-3)
    assert reason.startswith("comparison raised ") and "TypeError: " in reason


def test_tolerance_path_reasons_name_what_differs() -> None:
    rules = Rules("humaneval", "f", 0.5, CODEC_API)
    assert rules.compare([], (1.0,), [1.0]) == (False, "type tuple != expected list", 0.5)
    assert rules.compare([], [1.0], [1.0, 2.0]) == (False, "length 1 != expected 2", 0.5)
    assert rules.compare([], 2.0, 1.0) == (False, "not allclose (rtol=1e-07, atol=0.5)", 0.5)
    assert rules.compare([], 1.4, 1.0) == (True, "", 0.5)
    assert Rules("humaneval", "f", 0, CODEC_API).compare([], 1, 2) == (False, "not equal", 0.0)


def test_tolerance_boundaries() -> None:
    rules = Rules("humaneval", "f", 0.5, CODEC_API)
    assert rules.compare([], 1.5, 1.0)[0]  # |diff| == atol: allclose's <= holds
    assert not rules.compare([], 1.5000001, 1.0)[0]
    # rtol is 1e-7 of the expected value: 1e9 + 50 is within atol 0 + 1e-7 * 1e9 = 100.
    tight = Rules("humaneval", "f", 1e-12, CODEC_API)
    assert tight.compare([], 1e9 + 50, 1e9)[0] and not tight.compare([], 1e9 + 200, 1e9)[0]


def test_nan_never_matches_even_with_tolerance() -> None:
    comparer = SampleComparer(dataset="humaneval", entry_point="f", atol=0)
    result = comparer.compare([], float("nan"), float("nan"))
    assert not result.passed and result.atol_used == 1e-6  # the float expected value still promoted atol
    assert not compare_one([], [1.0, float("nan")], [1.0, float("nan")]).passed


def test_nested_containers_of_floats_get_no_promotion() -> None:
    # EvalPlus's is_floats looks one level deep: [[0.1 + 0.2]] against [[0.3]] is compared exactly.
    result = compare_one([], [[0.1 + 0.2]], [[0.3]])
    assert (result.passed, result.reason, result.atol_used) == (False, "not equal", 0.0)
    assert compare_one([], [[0.1 + 0.2]], [[0.3]], atol=1e-6).passed  # an explicit atol reaches allclose


def test_a_promotion_happens_before_the_match_so_a_passing_float_input_promotes() -> None:
    comparer = SampleComparer(dataset="humaneval", entry_point="f", atol=0)
    assert comparer.compare([], 2.0, 2.0).atol_used == 1e-6
    assert comparer.atol == 1e-6
    explicit = SampleComparer(dataset="humaneval", entry_point="f", atol=0.25)
    assert explicit.compare([], 2.0, 2.0).atol_used == 0.25  # only an atol of 0 is promoted


def test_find_zero_residual_boundary_and_reasons() -> None:
    rules = Rules("humaneval", "find_zero", 0.5, CODEC_API)
    assert rules.compare([[-1.5, 1.0]], 2.0, 123) == (True, "", 0.5)  # |-1.5 + 2| = 0.5: at the bound
    assert rules.compare([[-1.5, 1.0]], 2.25, 123) == (False, "|poly(xs, out)| = 0.75 > atol 0.5", 0.5)
    passed, reason, atol = rules.compare([[1.0]], "x", 0.0)
    assert (passed, atol) == (False, 0.5) and reason.startswith("find_zero oracle raised TypeError: ")
    assert find_zero_oracle([[-1.5, 1.0]], 2.25, 0.25).reason == "|poly(xs, out)| = 0.75 > atol 0.25"
    assert find_zero_oracle([[-1.5, 1.0]], 2.25, 0.75).passed
    assert Rules("mbpp", "find_zero", 0.5, CODEC_API).compare([[-1.5, 1.0]], 2.0, 123)[0] is False  # HumanEval only


def test_mbpp_oracles_accept_their_alternative_answers_only() -> None:
    def mbpp(entry_point: str, inputs: list, output: object, expected: object, atol: float = 0.0) -> bool:
        return compare_one(inputs, output, expected, dataset="mbpp", entry_point=entry_point, atol=atol).passed

    assert mbpp("sum_div", [], 0, 7) and mbpp("sum_div", [], 7, 7) and not mbpp("sum_div", [], 6, 7)
    # Mbpp/581: the expected value (slant height read) or the perpendicular-height reading, within atol.
    assert mbpp("surface_Area", [6, 4], 96, 200) and mbpp("surface_Area", [6, 4], 200, 200)
    assert not mbpp("surface_Area", [6, 4], 97, 200)
    assert mbpp("surface_Area", [6, 4], 96.5, 200, atol=0.5) and not mbpp("surface_Area", [6, 4], 96.6, 200, atol=0.5)
    assert mbpp("digit_distance_nums", [123, 5], 5, 99) and mbpp("digit_distance_nums", [123, 5], 99, 99)
    assert not mbpp("digit_distance_nums", [123, 5], 4, 99)
    assert mbpp("are_equivalent", [], "anything", 1)
    assert mbpp("Diff", [], [3, 1, 2], [1, 2, 3]) and not mbpp("Diff", [], [3, 1], [1, 2, 3])
    assert mbpp("text_match_three", [], False, False) and not mbpp("text_match_three", [], None, False)
    assert not mbpp("other", [], (1, 2), [1, 2]) and mbpp("other", [], [1, 2], [1, 2])


def test_mbpp_set_rule_uses_the_codec_s_bounded_set() -> None:
    seen = []
    api = SimpleNamespace(**vars(CODEC_API))
    api.bounded_set = lambda value: seen.append(value) or set(value)
    rules = Rules("mbpp", "similar_elements", 0, api)
    assert rules.compare([], (5, 4), [4, 5])[0] and seen == [(5, 4)]


def test_digest_comparison_reasons_and_refusals() -> None:
    expected = digest_of([1, 2, 3])
    rules = Rules("humaneval", "f", 0.25, CODEC_API)
    assert rules.compare([], [1, 2, 3], expected) == (True, "", 0.25)
    assert rules.compare([], digest_of([1, 2, 3]), expected) == (True, "", 0.25)
    passed, reason, atol = rules.compare([], [1, 2], expected)
    assert (passed, atol) == (False, 0.25)
    assert reason == f"not equal (expected list of {expected.nbytes:,} encoded bytes)"
    big = digest_of(list(range(1000)))
    assert big.nbytes >= 1000 and f"{big.nbytes:,}" in rules.compare([], [], big)[1]
    assert rules.compare([], digest_of([1, 2]), expected)[0] is False
    deep: list = []
    for _ in range(100_000):
        deep = [deep]
    assert rules.compare([], deep, expected)[0] is False  # too deep to encode: no match, no exception


def test_digest_comparison_refusals_come_from_the_api() -> None:
    class Refused(Exception):
        pass

    def refuse(value: object) -> object:
        raise Refused

    def too_deep(value: object) -> object:
        raise RecursionError

    for digest in (refuse, too_deep):
        api = SimpleNamespace(**vars(CODEC_API))
        api.Unserializable, api.digest_of = Refused, digest
        assert Rules("humaneval", "f", 0, api).compare([], [1], digest_of([1]))[0] is False


# ---- compare.py: the parent's face of the rules -----------------------------------------------------------------

def test_evalplus_judge_sends_the_rules_source_and_setup() -> None:
    judge = evalplus_judge("mbpp", "similar_elements", 1, [1, sandbox.NO_EXPECTED])
    assert judge.source == RULES_SOURCE and "def make_comparer(" in judge.source
    assert judge.expected == (1, sandbox.NO_EXPECTED)
    assert dict(judge.setup) == {"dataset": "mbpp", "entry_point": "similar_elements", "atol": 1.0}
    assert type(judge.setup["atol"]) is float


def test_compare_one_defaults_to_humaneval_with_no_tolerance() -> None:
    assert compare_one([[-1.0, 1.0]], 5.0, 5.0).passed  # no find_zero oracle without its entry point
    result = compare_one([], 1, 2)
    assert (result.passed, result.reason, result.atol_used) == (False, "not equal", 0.0)
    assert compare_one([], 2, 1, dataset="mbpp", entry_point="sum_div").passed is False
    assert compare_one([], 0, 1, dataset="mbpp", entry_point="sum_div").passed


def test_sample_comparer_keeps_its_dataset_and_entry_point() -> None:
    comparer = SampleComparer(dataset="mbpp", entry_point="sum_div", atol=0.5)
    assert (comparer.dataset, comparer.entry_point, comparer.atol) == ("mbpp", "sum_div", 0.5)
    assert comparer.compare([], 0, 3).passed


def test_not_none_wrapper_source_runs_as_evalplus_maps_outputs() -> None:
    for for_ground_truth, outputs in ((True, [(0, True), (None, False), (False, True)]),
                                      (False, [(0, True), (None, False), (False, False), (True, True)])):
        source = "def f(x):\n    return x\n" + not_none_wrapper("f", "g", for_ground_truth=for_ground_truth)
        namespace: dict = {}
        exec(source, namespace)  # noqa: S102 - our own generated text, on trusted values
        assert [(value, namespace["g"](value)) for value, _ in outputs] == outputs
    assert not_none_wrapper("f", "g", for_ground_truth=True).startswith("\n\ndef g(*args, _benchaudit_wrapped=f):\n")


def test_rules_source_is_the_module_text() -> None:
    assert RULES_SOURCE == open(evalplus_rules.__file__, encoding="utf-8").read()


def test_an_ordered_dict_output_is_compared_by_its_items() -> None:
    """EvalPlus finds `OrderedDict(b=1.0) == OrderedDict(b=1)`; its integer form once had no items at all, so it
    matched an empty expected OrderedDict and missed the right one."""
    output = collections.OrderedDict([("b", 1.0)])
    assert compare_one([], output, digest_of(collections.OrderedDict([("b", 1)]))).passed
    assert not compare_one([], output, digest_of(collections.OrderedDict())).passed


def test_integer_forms_turn_a_mapping_s_bool_keys_and_values_into_ints_last() -> None:
    keys = [[type(k) for k in form] for form in integer_forms({True: "v"})]
    assert keys == [[bool], [int]]
    values = [[type(v) for v in form.values()] for form in integer_forms({"k": True})]
    assert values == [[bool], [int]]
    # The digest tells a bool from an int, so the last form is the one that can match an int-keyed expected value.
    assert compare_one([], {True: 2.0}, digest_of({1: 2})).passed


def test_an_exact_match_has_no_reason() -> None:
    assert compare_one([], [1, 2], [1, 2]).reason == ""
    rules = Rules("humaneval", "f", 0.0, CODEC_API)
    assert rules.compare([], 0.5, 0.5) == (True, "", 1e-6)
    assert rules.compare([], "a", "a") == (True, "", 1e-6)
