"""Tagged JSON round trips values faithfully and refuses what is not plain data."""

from __future__ import annotations

import collections
import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from audit_lib.sandbox import codec

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


@pytest.mark.parametrize("value, name", [
    (RiggedInt(1), "RiggedInt"), (object(), "object"), (iter([]), "list_iterator"), ([1, {2: object()}], "object"),
    (type, "type"),
])
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
