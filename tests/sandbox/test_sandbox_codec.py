"""Tagged JSON round trips values faithfully and refuses what is not plain data."""

from __future__ import annotations

import fractions

import collections
import hashlib
import json
import math
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from audit_lib.sandbox import codec
from audit_lib.sandbox import codec as sandbox_codec

plain_leaves = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(),
                         st.binary(), st.complex_numbers(allow_nan=False))
hashable = st.one_of(st.none(), st.booleans(), st.integers(), st.text(), st.binary(),
                     st.tuples(st.integers(), st.text()))
values = st.recursive(plain_leaves, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.tuples(inner, inner), st.frozensets(hashable, max_size=4),
    st.sets(hashable, max_size=4), st.dictionaries(hashable, inner, max_size=4),
    st.dictionaries(st.text(), inner, max_size=4)), max_leaves=20)


def round_trip(value):
    return codec.decode(json.loads(json.dumps(codec.encode(value))))


def same(a, b) -> bool:
    """Equality that also requires the same types all the way down (1 == 1.0 == True is not enough)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return a == b


@given(values)
def test_round_trip_keeps_value_and_type(value) -> None:
    assert same(round_trip(value), value)


def repr_id(value) -> str:
    return type(value).__name__


@pytest.mark.parametrize("value", [
    float("nan"), float("inf"), float("-inf"), -0.0, 2**53, -(2**53), 2**20000, (1,), [(1, 2), [3]],
    {1: "a", (2, 3): {4}}, {"$tuple": 1}, b"\x00\xff", bytearray(b"ab"), frozenset({1, 2}), complex(1, -2),
    collections.OrderedDict(a=1), collections.Counter("aab"), True, {"a": [None, 1.5]},
], ids=repr_id)
def test_special_values_round_trip(value) -> None:
    assert same(round_trip(value), value) or (isinstance(value, float) and math.isnan(round_trip(value)))


flat_leaves = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=3))


@given(st.lists(flat_leaves, max_size=12))
def test_flat_lists_of_mixed_leaves_round_trip(items) -> None:
    """The C-speed path for flat lists (mixed ints, floats, bools, str, None) keeps every type and value."""
    decoded = round_trip(items)
    assert len(decoded) == len(items)
    assert all(same(x, y) or (isinstance(y, float) and math.isnan(x) and math.isnan(y))
               for x, y in zip(decoded, items))
    assert same(round_trip(tuple(items)), tuple(items)) or any(isinstance(y, float) and math.isnan(y)
                                                               for y in items)


@pytest.mark.parametrize("items", [[1, 2.5, True], [1, 2**60, 0.5], [1.5, float("nan")], [None, "a", 2**53, 1.0],
                                   [2**1100, 1.0], [-0.0, 3, "x"]], ids=str)
def test_mixed_flat_lists_with_out_of_range_numbers_are_tagged(items) -> None:
    encoded = codec.encode(items)
    has_special = any((type(i) is int and abs(i) >= 2**53) or (type(i) is float and not math.isfinite(i))
                      for i in items)
    assert (encoded is not items) == has_special
    assert all(same(x, y) or (math.isnan(x) and math.isnan(y)) for x, y in zip(round_trip(items), items))


@given(st.lists(st.one_of(st.floats(), st.integers(-(2**53) + 1, 2**53 - 1)), min_size=1, max_size=40))
def test_long_lists_of_floats_go_packed_and_come_back_the_same(items) -> None:
    items = items * (codec.PACK_FLOATS_FROM // len(items) + 1)
    encoded = codec.encode(items)
    if any(type(x) is float for x in items):
        assert list(encoded) == ["$f64"]
    else:  # ints alone are cheap in JSON
        assert encoded is items
    decoded = codec.decode(json.loads(json.dumps(encoded)))
    assert len(decoded) == len(items)
    assert all(type(x) is type(y) and (x == y or (math.isnan(x) and math.isnan(y)))
               and math.copysign(1, x) == math.copysign(1, y) for x, y in zip(decoded, items))


@pytest.mark.parametrize("items", [[0.5] * 255, [0.5, 2**53] * 200, [0.5, True] * 200, [0.5, "x"] * 200], ids=len)
def test_only_long_lists_of_floats_and_exact_ints_are_packed(items) -> None:
    encoded = codec.encode(items)
    assert not isinstance(encoded, dict)
    assert [type(x) for x in codec.decode(json.loads(json.dumps(encoded)))] == [type(x) for x in items]


def test_defaultdict_round_trips_as_defaultdict() -> None:
    value = collections.defaultdict(list, {"a": [1]})
    assert type(round_trip(value)) is collections.defaultdict and round_trip(value) == {"a": [1]}


def test_big_ints_are_not_limited_by_decimal_digits() -> None:
    big = 7**20000
    assert codec.encode(big)["$int"].startswith("0x")
    assert round_trip(big) == big


class RiggedInt(int):
    def __eq__(self, other):
        return True


class RiggedTuple(tuple):
    def __iter__(self):
        return iter((9, 9))


class RiggedClass:
    """An object that claims to be an int through `__class__`: the codec reads its real type."""

    @property
    def __class__(self):  # noqa: D401
        return int


def test_builtin_subclasses_and_numpy_scalars_cross_as_their_base_values() -> None:
    numpy = pytest.importorskip("numpy")
    for value, expected in ((RiggedInt(1), 1), (RiggedTuple((1, 2)), (1, 2)), (numpy.int64(5), 5),
                            (numpy.float64(0.5), 0.5), (numpy.bool_(True), True)):
        decoded = round_trip(value)
        assert (type(decoded), decoded) == (type(expected), expected)
    assert round_trip(fractions.Fraction(2, 6)) == fractions.Fraction(1, 3)
    with pytest.raises(codec.MalformedTaggedValue):
        codec.decode({"$fraction": [1, 0]})


@pytest.mark.parametrize("value, name", [
    (object(), "object"), (iter([]), "list_iterator"), ([1, {2: object()}], "object"), (type, "type"),
    (RiggedClass(), "RiggedClass"),
], ids=["object", "list_iterator", "nested_object", "type", "RiggedClass"])
def test_non_plain_values_are_refused_with_their_type(value, name) -> None:
    with pytest.raises(codec.Unserializable) as caught:
        codec.encode(value)
    assert caught.value.type_name.endswith(name)


def test_recursive_structures_are_refused() -> None:
    loop: list = []
    loop.append(loop)
    with pytest.raises(codec.Unserializable):
        codec.encode(loop)


@pytest.mark.parametrize("bad", [{"$nope": 1}, {"$int": 5}, {"$tuple": 1}, {"$float": "1.0"}, {"$x": 1, "y": 2},
                                 {"$dict": [[1]]}, {"$bytes": "***"}])
def test_malformed_tags_raise(bad) -> None:
    with pytest.raises((codec.MalformedTaggedValue, ValueError)):
        codec.decode(bad)


# ---------------------------------------------------------------------------------------------- exact limits


def _nested_lists(levels: int) -> list:
    value: list = [0]
    for _ in range(levels - 1):
        value = [value]
    return value


def _nested(levels: int, wrap) -> object:
    value: object = 0
    for _ in range(levels):
        value = wrap(value)
    return value


def test_nesting_is_counted_the_same_way_for_every_container(monkeypatch: pytest.MonkeyPatch) -> None:
    # Room for 200 levels even when each call gains wrapper frames (a profiler, or mutmut's trampolines).
    old_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old_limit, 20_000))
    try:
        _check_nesting()
    finally:
        sys.setrecursionlimit(old_limit)


def _check_nesting() -> None:
    limit = sandbox_codec.MAX_DEPTH
    # Lists and tuples: the innermost flat one is sent as is, so N levels reach depth N - 1.
    assert sandbox_codec.decode(sandbox_codec.encode(_nested_lists(limit + 1))) == _nested_lists(limit + 1)
    with pytest.raises(sandbox_codec.Unserializable) as caught:
        sandbox_codec.encode(_nested_lists(limit + 2))
    assert str(caught.value) == f"list: nested deeper than {limit}" and caught.value.reason.startswith("nested")
    assert sandbox_codec.encode(_nested(limit, lambda v: (v,)))
    with pytest.raises(sandbox_codec.Unserializable):
        sandbox_codec.encode(_nested(limit + 2, lambda v: (v,)))
    # Dicts, sets and pairs encode every item, so the leaf itself sits at depth N.
    for wrap in (lambda v: {"k": v}, lambda v: frozenset({v}), lambda v: {1: v},
                 lambda v: collections.OrderedDict([("k", v)])):
        assert sandbox_codec.decode(sandbox_codec.encode(_nested(limit, wrap))) == _nested(limit, wrap)
        with pytest.raises(sandbox_codec.Unserializable) as caught:
            sandbox_codec.encode(_nested(limit + 1, wrap))
        assert str(caught.value).endswith(f": nested deeper than {limit}")  # the key, for pairs, comes first


def test_plain_ints_stop_one_short_of_two_to_the_53() -> None:
    bound = sandbox_codec.PLAIN_INT_BOUND
    assert sandbox_codec.encode(bound - 1) == bound - 1 and sandbox_codec.encode(-(bound - 1)) == -(bound - 1)
    assert sandbox_codec.encode(bound) == {"$int": hex(bound)}
    assert sandbox_codec.encode(-bound) == {"$int": hex(-bound)}
    assert sandbox_codec.encode([bound - 1, -(bound - 1)]) == [bound - 1, -(bound - 1)]
    assert sandbox_codec.encode([-bound]) == [{"$int": hex(-bound)}]
    assert sandbox_codec.encode(("a", bound)) == {"$tuple": ["a", {"$int": hex(bound)}]}
    assert sandbox_codec.decode({"$int": hex(-bound)}) == -bound


def test_unserializable_names_the_type() -> None:
    class Local:
        pass

    with pytest.raises(sandbox_codec.Unserializable) as caught:
        sandbox_codec.encode(Local())
    assert caught.value.type_name == f"{__name__}.{Local.__qualname__}"
    assert str(caught.value) == f"{__name__}.{Local.__qualname__}: not plain data"
    assert caught.value.reason == "not plain data"
    with pytest.raises(sandbox_codec.Unserializable) as caught:
        sandbox_codec.encode(object())
    assert caught.value.type_name == "object"
    nameless = type("Nameless", (), {})
    nameless.__module__ = None
    assert sandbox_codec._type_name(nameless()) == ".Nameless"
    odd = type("Odd", (), {})
    odd.__module__ = 5
    assert sandbox_codec._type_name(odd()) == "?"


@pytest.mark.parametrize(("payload", "message"), [
    ({"$tuple": 1}, "$tuple needs a list"), ({"$set": "x"}, "$set needs a list"),
    ({"$int": 5}, "$int needs a hex string"), ({"$bytes": 5}, "$bytes needs base64 text"),
    ({"$complex": [1]}, "$complex needs [re, im]"), ({"$complex": "ab"}, "$complex needs [re, im]"),
    ({"$dict": [[1, 2, 3]]}, "a mapping tag needs a list of [key, value] pairs"),
    ({"$dict": {"a": 1}}, "a mapping tag needs a list of [key, value] pairs"),
    ({"$dict": [1]}, "a mapping tag needs a list of [key, value] pairs"),
    ({"$float": "one"}, "bad float {'$float': 'one'}"), ({"$complex": ["x", 1]}, "bad float 'x'"),
    ({"$what": 1}, "unknown tag '$what'"), ({"a": 1, "$b": 2}, "a plain object may not have keys starting with '$'"),
    ({"$f64": "AAAAAAAA4D8="}, "$f64 needs [base64 text, [int positions]]"),
    ({"$f64": ["AAAAAAAA4D8=", [], 1]}, "$f64 needs [base64 text, [int positions]]"),
    ({"$f64": ["AAAA", []]}, "$f64 needs a whole number of doubles"),
    ({"$f64": ["AAAAAAAA4D8=", [1]]}, "$f64 positions must be increasing ints within the list"),
    ({"$f64": ["AAAAAAAA4D8=", [-1]]}, "$f64 positions must be increasing ints within the list"),
    ({"$f64": ["AAAAAAAA4D8=", [True]]}, "$f64 positions must be increasing ints within the list"),
    ({"$f64": ["AAAAAAAA4D8AAAAAAADwPw==", [1, 1]]}, "$f64 positions must be increasing ints within the list"),
    ({"$f64": ["AAAAAAAA4D8=", [0]]}, "$f64 position 0 holds 0.5, not an exact integer"),
    ({"$f64": ["AAAAAAAA+H8=", [0]]}, "$f64 position 0 holds nan, not an exact integer"),
])
def test_malformed_tagged_values_say_what_is_wrong(payload, message) -> None:
    with pytest.raises(sandbox_codec.MalformedTaggedValue) as caught:
        sandbox_codec.decode(payload)
    assert str(caught.value) == message


def test_a_non_json_object_is_refused_by_name() -> None:
    with pytest.raises(sandbox_codec.MalformedTaggedValue) as caught:
        sandbox_codec.decode(b"raw")
    assert str(caught.value) == "not a JSON value: bytes"


# ---------------------------------------------------------------------------------------------- digests in full


def test_canonical_encoding_is_compact_sorted_utf8() -> None:
    assert sandbox_codec.canonical_encoding({"b": [1, 2], "a": "é"}) == b'{"a":"\\u00e9","b":[1,2]}'
    assert sandbox_codec.canonical_encoding((1, "x")) == b'{"$tuple":[1,"x"]}'


def test_large_value_digest_only_for_float_free_values_above_the_size() -> None:
    value = {"k": list(range(30))}
    tagged = sandbox_codec.encode(value)
    canonical = json.dumps(tagged, sort_keys=True, separators=(",", ":")).encode("utf-8")
    digest = sandbox_codec.large_value_digest(value, tagged, len(canonical) - 1)
    assert digest == sandbox_codec.ValueDigest(hashlib.sha256(canonical).hexdigest(), len(canonical), "dict")
    assert digest == sandbox_codec.digest_of(value)  # the child's rule and the parent's agree
    assert sandbox_codec.large_value_digest(value, tagged, len(canonical)) is None  # not larger: kept
    assert sandbox_codec.large_value_digest([0.5] * 100, sandbox_codec.encode([0.5] * 100), 0) is None


@pytest.mark.parametrize("payload", [
    {"$digest": ["a" * 64, 10, "list"], "x": 1}, {"$digest": ["a" * 64, 10]}, {"$digest": "abc"},
    {"$digest": ["a" * 63, 10, "list"]}, {"$digest": [1, 10, "list"]}, {"$digest": ["a" * 64, "10", "list"]},
    {"$digest": ["a" * 64, 10, 5]}, ["$digest"], {"$other": ["a" * 64, 10, "list"]},
])
def test_malformed_digests_are_not_digests(payload) -> None:
    assert sandbox_codec.digest_from_json(payload) is None


def test_a_digest_keeps_its_fields_and_at_most_200_characters_of_type_name() -> None:
    assert sandbox_codec.digest_from_json({"$digest": ["a" * 64, 10, "T" * 300]}) == \
        sandbox_codec.ValueDigest("a" * 64, 10, "T" * 200)


def test_infinities_keep_their_sign() -> None:
    assert sandbox_codec.encode(float("inf")) == {"$float": "inf"}
    assert sandbox_codec.encode(float("-inf")) == {"$float": "-inf"}
    assert sandbox_codec.encode(complex(float("-inf"), 1)) == {"$complex": [{"$float": "-inf"}, 1.0]}


def test_dicts_with_dollar_or_non_string_keys_go_as_pairs() -> None:
    assert sandbox_codec.encode({"$x": 1}) == {"$dict": [["$x", 1]]}
    assert sandbox_codec.encode({1: "a"}) == {"$dict": [[1, "a"]]}
    assert sandbox_codec.encode({"a": 1}) == {"a": 1}


def test_a_value_digest_is_a_frozen_value_that_pickles_and_copies() -> None:
    import copy  # noqa: PLC0415
    import pickle  # noqa: PLC0415

    digest = sandbox_codec.ValueDigest("ab" * 32, 10, "list")
    assert digest == sandbox_codec.ValueDigest("ab" * 32, 10, "list") and hash(digest) == hash(copy.deepcopy(digest))
    assert digest != ("ab" * 32, 10, "list") and digest != sandbox_codec.ValueDigest("ab" * 32, 11, "list")
    assert pickle.loads(pickle.dumps(digest)) == digest  # the dask executor pickles results
    with pytest.raises(AttributeError):
        digest.nbytes = 11  # type: ignore[misc]


# ------------------------------------------------------------------------------- Decimal and defaultdict factories

DECIMALS = ["0.5", "-0.00", "1E+999999", "123456789012345678901234567890.123456789", "Infinity", "-Infinity", "NaN",
            "sNaN", "-1.230E-7"]


@pytest.mark.parametrize("text", DECIMALS)
def test_a_decimal_crosses_exactly_through_both_decoders(text: str) -> None:
    """Sign, digits and exponent: the decoded Decimal prints as the program's did (the parent's bounded decoder and
    the codec's agree)."""
    import decimal

    from audit_lib.sandbox.budget import JobDecoder

    tagged = json.loads(json.dumps(codec.encode([decimal.Decimal(text)])))
    for back in (codec.decode(tagged)[0], JobDecoder().decode(tagged)[0]):
        assert type(back) is decimal.Decimal and str(back) == str(decimal.Decimal(text))


@pytest.mark.parametrize("factory", [None, int, float, complex, bool, str, bytes, bytearray, list, tuple, dict, set,
                                     frozenset], ids=repr)
def test_a_defaultdict_keeps_a_builtin_types_factory(factory) -> None:
    from audit_lib.sandbox.budget import JobDecoder

    value = collections.defaultdict(factory, {"a": 1, (2, 3): [4]})
    tagged = json.loads(json.dumps(codec.encode(value)))
    for back in (codec.decode(tagged), JobDecoder().decode(tagged)):
        assert type(back) is collections.defaultdict and back == value and back.default_factory is factory
        if factory is not None:
            assert back["missing"] == factory()


def test_a_defaultdict_with_the_programs_factory_refuses_a_missing_key_by_name() -> None:
    class Zero(int):
        pass

    def make() -> int:
        return 0

    for factory, what in ((make, "function " + make.__qualname__), (Zero, "type"), (lambda: 0, "function")):
        back = round_trip(collections.defaultdict(factory, {"a": 1}))
        assert back == {"a": 1} and back["a"] == 1
        assert isinstance(back.default_factory, codec.UncarriedFactory) and back.default_factory.what.startswith(what)
        with pytest.raises(TypeError, match=r"default_factory \(" + what):
            back["b"]


@pytest.mark.parametrize(("payload", "message"), [
    ({"$decimal": 5}, "$decimal needs a string"), ({"$decimal": "five"}, "$decimal 'five' is not a number"),
    ({"$defaultdict": [[["a", 1]]]}, "$defaultdict needs [factory, [[key, value], ...]]"),
    ({"$defaultdict": ["open", []]}, "bad default_factory 'open'"),
    ({"$defaultdict": [["program"], []]}, "bad default_factory ['program']"),
])
def test_malformed_decimals_and_defaultdicts_say_what_is_wrong(payload, message: str) -> None:
    from audit_lib.sandbox.budget import JobDecoder

    for decode in (codec.decode, JobDecoder().decode):
        with pytest.raises(codec.MalformedTaggedValue) as caught:
            decode(payload)
        assert str(caught.value).startswith(message)


def test_a_decimal_longer_than_the_int_limit_is_refused_by_the_parents_decoder() -> None:
    from audit_lib.sandbox.budget import BudgetExceeded, DecodeBudget, JobDecoder

    with pytest.raises(BudgetExceeded, match="Decimal of 1,001 characters"):
        JobDecoder(DecodeBudget(max_int_bits=1000)).decode({"$decimal": "9" * 1001})
    assert JobDecoder(DecodeBudget(max_int_bits=1000)).decode({"$decimal": "9" * 300}) == int("9" * 300)


# ------------------------------------------------------------------------------- canonical order for digests

def _reordered(value):
    """The same value with every set and mapping built in reverse order (equal by `==`)."""
    if type(value) in (set, frozenset):
        return type(value)(sorted((_reordered(v) for v in value), key=repr, reverse=True))
    if type(value) in (dict, collections.Counter, collections.OrderedDict):
        return type(value)(dict((_reordered(k), _reordered(v)) for k, v in reversed(list(value.items()))))
    if type(value) is collections.defaultdict:
        return collections.defaultdict(value.default_factory, reversed(list(value.items())))
    if type(value) in (list, tuple):
        return type(value)(_reordered(v) for v in value)
    return value


ORDERLESS = [
    {i: i * i for i in range(300)},
    {f"${i}": [i, {i}] for i in range(50)},
    {(i, str(i)): frozenset({i, -i, str(i)}) for i in range(40)},
    [{1, "a", (2, 3), None, b"x"}, {"k": {5, 4, 3}}],
    collections.Counter({i: i for i in range(1, 30)}),
    collections.defaultdict(list, {i: [i] for i in range(30)}),
    {2**70: "big", -(2**70): "neg", 1: "small"},
]


@pytest.mark.parametrize("value", ORDERLESS, ids=repr_id)
def test_equal_values_in_another_insertion_order_have_one_digest(value) -> None:
    """A digest stands for `==`: the same set or mapping built in another order has the same canonical encoding."""
    other = _reordered(value)
    assert other == value and json.dumps(codec.encode(other)) != json.dumps(codec.encode(value))
    assert codec.canonical_encoding(other) == codec.canonical_encoding(value)
    assert codec.digest_of(other) == codec.digest_of(value)
    tagged = codec.encode(value)
    assert codec.large_value_digest(other, codec.encode(other), 0) == codec.large_value_digest(value, tagged, 0)


@given(st.dictionaries(hashable, st.one_of(hashable, st.sets(hashable, max_size=4)), max_size=12))
def test_the_canonical_encoding_ignores_insertion_order(value) -> None:
    assert codec.canonical_encoding(_reordered(value)) == codec.canonical_encoding(value)


def test_what_differs_by_order_or_value_keeps_its_own_digest() -> None:
    """An OrderedDict's order is part of `==` between two of them; a changed value or key is another value."""
    ordered = collections.OrderedDict((i, i) for i in range(5))
    assert codec.digest_of(_reordered(ordered)) != codec.digest_of(ordered)
    squares = {i: i * i for i in range(300)}
    assert codec.digest_of({**squares, 7: 50}) != codec.digest_of(squares)
    assert codec.digest_of({**squares, 300: 0}) != codec.digest_of(squares)
    assert codec.digest_of({1, 2, 3}) != codec.digest_of({1, 2, 4})


def test_a_value_without_sets_or_pair_mappings_keeps_its_old_canonical_text() -> None:
    value = [{"b": [1, 2], "a": "x"}, ("t", 2**60), "$set"]
    assert codec.canonical_text(codec.encode(value)) == json.dumps(codec.encode(value), sort_keys=True,
                                                                   separators=(",", ":"))
