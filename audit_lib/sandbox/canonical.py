"""The canonical text of a tagged value: what a `ValueDigest` hashes (stdlib only: sandboxed children import it).

Equal float-free values of the same types get one text whatever their insertion order, as `==` finds them equal:
every set's items and every dict's, Counter's and defaultdict's pairs are put in one order (an OrderedDict keeps
its own: `==` between two of them compares it). A value with no set or such mapping costs one `json.dumps`, and its
text is the compact, key-sorted JSON it always was.
"""

from __future__ import annotations

import json
import operator
from typing import Any

from audit_lib.sandbox.nesting import depth_room

_LEAVES = frozenset({str, bool, type(None), int, float})
# Tags whose items `==` compares in any order (a defaultdict's payload is [factory, pairs]).
_UNORDERED_ITEMS = frozenset({"$set", "$frozenset"})
_UNORDERED_PAIRS = frozenset({"$dict", "$counter"})
# Text that shows one of them may be in an encoding (a string "$set" shows as much: it only costs a walk).
_UNORDERED_MARKERS = ('"$set"', '"$frozenset"', '"$dict"', '"$counter"', '"$defaultdict"')


def canonical_text(tagged: Any) -> str:
    """The canonical text of `codec.encode`'s tagged JSON: compact, keys sorted, sets and mappings in one order."""
    with depth_room():
        text = json.dumps(tagged, sort_keys=True, separators=(",", ":"))
        # Every marker starts with `"$`: one pass over a long text usually rules them all out.
        if '"$' in text and any(marker in text for marker in _UNORDERED_MARKERS):
            text = json.dumps(_in_canonical_order(tagged), sort_keys=True, separators=(",", ":"))
    return text


def _in_canonical_order(tagged: Any) -> Any:
    cls = type(tagged)
    if cls is list:
        return tagged if set(map(type, tagged)) <= _LEAVES else [_in_canonical_order(item) for item in tagged]
    if cls is not dict:
        return tagged
    if len(tagged) == 1:
        ((tag, payload),) = tagged.items()
        if tag in _UNORDERED_ITEMS and type(payload) is list:
            return {tag: _sorted([_in_canonical_order(item) for item in payload])}
        if tag in _UNORDERED_PAIRS and type(payload) is list:
            return {tag: _sorted_pairs(payload)}
        if tag == "$defaultdict" and type(payload) is list and len(payload) == 2 and type(payload[1]) is list:
            return {tag: [payload[0], _sorted_pairs(payload[1])]}
    return {key: _in_canonical_order(value) for key, value in tagged.items()}


def _sorted_pairs(pairs: list) -> list:
    canonical = [[_in_canonical_order(part) for part in pair] if type(pair) is list else pair for pair in pairs]
    keys = [pair[0] if type(pair) is list and pair else None for pair in canonical]
    return [pair for _key, pair in sorted(zip(_sort_keys(keys), canonical), key=operator.itemgetter(0))]


def _sorted(items: list) -> list:
    return [item for _key, item in sorted(zip(_sort_keys(items), items), key=operator.itemgetter(0))]


def _sort_keys(items: list) -> list:
    """A total order's keys for encoded items: the items themselves when all are str or all int, else their text.

    Ties only between equal texts, whose items are then interchangeable."""
    kinds = set(map(type, items))
    if kinds == {str} or kinds == {int}:
        return items
    return [json.dumps(item, sort_keys=True, separators=(",", ":")) for item in items]
