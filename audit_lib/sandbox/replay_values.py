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
import operator
from typing import Any

from audit_lib.sandbox.replay_arith import Unsupported

_REAL = (int, float, bool)
# `is` keeps its meaning on decoded values only against these, which exist once.
_SINGLETONS = (None, True, False, ...)
# What `.keys()`, `.values()` and `.items()` give: they print and iterate what they view (a set among it too).
DICT_VIEWS = (type({}.keys()), type({}.values()), type({}.items()))


# What the parent may spend looking through one value (a NaN, a set, a defaultdict), before and during the replay:
# each item counts 1 (types read at C speed, ~30 ns), each container 16 more (~0.4 us in Python). A walk of every
# item in Python over a decoded `[0] * 20_000_000` took 5.9-9.3 s; at this limit ~0.1-0.2 s. A bigger value runs in
# assert mode.
MAX_SCAN_WORK = 4_000_000
_CONTAINER_COST = 16
_PLAIN_CONTAINERS = (list, tuple, set, frozenset, *DICT_VIEWS)
_NAN_KINDS = (float, complex)


def _scan(value: Any) -> tuple[set[type], bool]:
    """(the types of `value` and of every item it holds at any depth, whether one is a NaN); refuses (`Unsupported`)
    past MAX_SCAN_WORK."""
    kinds: set[type] = set()
    nan = False
    pending = [value]
    work = 0
    while pending:
        item = pending.pop()
        kinds.add(type(item))
        if type(item) in _PLAIN_CONTAINERS:
            children: Any = item
        elif isinstance(item, dict):  # OrderedDict, Counter and defaultdict too
            children = [*item.keys(), *item.values()]
        else:
            nan = nan or (type(item) in _NAN_KINDS and item != item)
            continue
        work += len(children) + _CONTAINER_COST
        if work > MAX_SCAN_WORK:
            raise Unsupported(f"a value too large for the parent to look through (over {MAX_SCAN_WORK:,} items)")
        own = set(map(type, children))
        kinds |= own
        if not own.isdisjoint(_NAN_KINDS):
            if own <= {float, complex, int, bool, str, bytes, type(None)}:
                nan = nan or any(map(operator.ne, children, children))  # only a NaN differs from itself
            else:
                nan = nan or any(child != child for child in children if type(child) in _NAN_KINDS)
        if not all(kind in _SCALARS for kind in own):
            pending.extend(child for child in children if type(child) not in _SCALARS)
    return kinds, nan


_SCALARS = frozenset({int, float, complex, bool, str, bytes, bytearray, type(None), type(...)})


def holds_nan(value: Any) -> bool:
    """Whether `value` is or holds a NaN (a float, or a complex with a NaN part)."""
    return _scan(value)[1]


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


def text_hazard(value: Any) -> str | None:
    """Why the parent cannot print `value` as the child would (one look through it): a set in it (the child's
    iteration order is not the rebuilt set's) or a defaultdict (decoded without its default factory)."""
    kinds = _scan(value)[0]
    if not kinds.isdisjoint((set, frozenset)):
        return "the order of a set the child returned"
    if collections.defaultdict in kinds:
        return "the text of a defaultdict (decoded without its default factory)"
    return None


def holds_a_set(value: Any) -> bool:
    """Whether `value` is or holds (in lists, tuples, dicts, dict views) a set or frozenset."""
    return not _scan(value)[0].isdisjoint((set, frozenset))


def identity_is_kept(node: ast.Compare) -> bool:
    """Whether each `is` / `is not` in the comparison has a None, True, False or ... literal on one side."""
    operands = [node.left, *node.comparators]
    return all(not isinstance(op, (ast.Is, ast.IsNot))
               or any(isinstance(side, ast.Constant) and any(side.value is singleton for singleton in _SINGLETONS)
                      for side in operands[position:position + 2])
               for position, op in enumerate(node.ops))
