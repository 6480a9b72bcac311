"""What a decoded value no longer carries from the child, for the parent's replay (`sandbox_lifted_eval`).

Decoding (`sandbox_codec`, `sandbox_budget`) rebuilds a value's contents and types, not its identities, the order a
set iterates in, or a defaultdict's default factory. Python shows each of these in some operations: `is`; `==` and
`in` on containers, which take the same object as equal before comparing (`[nan] == [nan]` is true for one NaN
object); `sorted()` of items that are not totally ordered (ties keep the set's order); float sums and products
(rounding follows the order); a defaultdict's missing key or repr. The replay leaves such uses to assert mode.
"""

from __future__ import annotations

import ast
import collections
import math
from collections.abc import Iterator
from typing import Any

_REAL = (int, float, bool)
# `is` keeps its meaning on decoded values only against these, which exist once.
_SINGLETONS = (None, True, False, ...)
# What `.keys()`, `.values()` and `.items()` give: they print and iterate what they view (a set among it too).
_DICT_VIEWS = (type({}.keys()), type({}.values()), type({}.items()))


def _nested(value: Any) -> Iterator[Any]:
    """`value` and every item it holds, at any depth (lists, tuples, sets, dicts' keys and values, dict views)."""
    pending = [value]
    while pending:
        item = pending.pop()
        yield item
        if type(item) in (list, tuple, set, frozenset, *_DICT_VIEWS):
            pending.extend(item)
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())


def holds_nan(value: Any) -> bool:
    """Whether `value` is or holds a NaN (a float, or a complex with a NaN part)."""
    return any((type(item) is float and math.isnan(item))
               or (type(item) is complex and (math.isnan(item.real) or math.isnan(item.imag)))
               for item in _nested(value))


def holds_defaultdict(value: Any) -> bool:
    """Whether `value` is or holds a defaultdict (decoded without its default factory)."""
    return any(type(item) is collections.defaultdict for item in _nested(value))


def totally_ordered(items: Any) -> bool:
    """Whether `<` orders the distinct items of a set totally, so `sorted()` does not depend on the set's order:
    real numbers without NaN, strings, bytes, or tuples of one length with one such kind at each position."""
    items = list(items)
    if all(type(item) is tuple for item in items):
        lengths = {len(item) for item in items}
        return len(lengths) <= 1 and all(_one_scalar_kind(column) for column in zip(*items))
    return _one_scalar_kind(items)


def _one_scalar_kind(items: Any) -> bool:
    kinds = {float if type(item) in _REAL else type(item) for item in items}
    if kinds == {float}:
        return not any(type(item) is float and math.isnan(item) for item in items)
    return len(kinds) <= 1 and kinds <= {str, bytes}


def holds_a_set(value: Any) -> bool:
    """Whether `value` is or holds (in lists, tuples, dicts, dict views) a set or frozenset."""
    pending = [value]
    while pending:
        item = pending.pop()
        kind = type(item)
        if kind in (set, frozenset):
            return True
        if kind in (list, tuple, *_DICT_VIEWS):
            pending.extend(item)
        elif isinstance(item, dict):  # OrderedDict, Counter and defaultdict too
            pending.extend(item.values())
            pending.extend(item.keys())
    return False


def identity_is_kept(node: ast.Compare) -> bool:
    """Whether each `is` / `is not` in the comparison has a None, True, False or ... literal on one side."""
    operands = [node.left, *node.comparators]
    return all(not isinstance(op, (ast.Is, ast.IsNot))
               or any(isinstance(side, ast.Constant) and any(side.value is singleton for singleton in _SINGLETONS)
                      for side in operands[position:position + 2])
               for position, op in enumerate(node.ops))
