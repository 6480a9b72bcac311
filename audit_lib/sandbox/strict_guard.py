"""The child side of assert mode's strict comparisons (`strict`): the guard a rewritten snippet calls (stdlib only).

Imported by the zygote before any code under test runs; every reference the guard uses at call time is bound here
then, so later patches to builtins or modules do not reach it. See `strict` for what it covers and what it does not.
"""

from __future__ import annotations

import collections
import datetime
import decimal
import gc
import math
import operator
import re
import signal
import sys
from typing import Any

OVERLOAD_ERROR = "ComparisonOverload"
REASON = "comparison_overload"

# Types whose values compare by builtin C code the code under test cannot change (immutable static types).
_LEAF_TYPES = frozenset({
    type(None), bool, int, float, complex, str, bytes, bytearray, range, type, type(Ellipsis), type(NotImplemented),
    decimal.Decimal, datetime.date, datetime.datetime, datetime.time, datetime.timedelta, datetime.timezone,
    re.Match, re.Pattern,  # C types; a match object is always true and compares by identity
})
_SEQUENCE_TYPES = frozenset({list, tuple, set, frozenset, collections.deque,
                             type({}.keys()), type({}.values()), type({}.items())})
# Counter's own comparisons are Python code that reads patchable builtins: the guard compares Counters itself.
_MAPPING_TYPES = frozenset({dict, collections.OrderedDict, collections.defaultdict, collections.Counter})
_OPERATORS = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt,
              ">=": operator.ge, "in": operator.contains, "not in": None, "is": operator.is_, "is not": operator.is_not}


class ComparisonOverload(AssertionError):
    """An assert compared or tested a value that is not an exact builtin type."""


ComparisonOverload.__name__ = ComparisonOverload.__qualname__ = OVERLOAD_ERROR


class _Guard:
    """Installed in the child before the code under test runs; every reference it uses is its own."""

    __slots__ = ()

    def cmp(self, op: str, left: Any, right: Any) -> bool:
        if op == "is":
            return left is right
        if op == "is not":
            return left is not right
        quiet = _quiet_enter()
        try:
            # Compared: copies made of exact builtin objects, each item checked as it is copied, which nothing of the
            # program's holds (a thread or an audit hook that changes the values meanwhile changes the originals).
            left_type, right_type = _type(left), _type(right)
            memo: dict = {}  # one memo for both: an object on both sides is one copy (identity shortcuts hold)
            left, right = _exact_copy(op, left, memo), _exact_copy(op, right, memo)
            if left_type is _Counter or right_type is _Counter:
                return _compare_counter(op, left, right, left_type, right_type)
            if op == "in":
                return _contains(right, left)
            if op == "not in":
                return not _contains(right, left)
            return _bool(_operators[op](left, right))
        finally:
            _quiet_leave(quiet)

    def truth(self, value: Any) -> bool:
        quiet = _quiet_enter()
        try:
            _require_exact("truth test", value)
            return _bool(value)
        finally:
            _quiet_leave(quiet)

    def isclose(self, function: Any, *args: Any, **kwargs: Any) -> bool:
        if function is not _isclose:
            raise _Overload(f"{REASON}: math.isclose is not the real one (the program rebound it)")
        for value in (*args, *kwargs.values()):
            _require_exact("math.isclose", value)
        return _isclose(*args, **kwargs)

    def abs(self, function: Any, value: Any) -> Any:
        return _helper("abs", function, value)

    def len(self, function: Any, value: Any) -> Any:
        return _helper("len", function, value)

    def round(self, function: Any, value: Any, *digits: Any) -> Any:
        return _helper("round", function, value, *digits)

    def slice(self, start: Any, stop: Any, step: Any) -> slice:
        return _slice(start, stop, step)

    def binop(self, symbol: str, left: Any, right: Any) -> Any:
        # On the checked copies (`'%.2f' % (value,)`: what a tuple holds is formatted too), as `cmp` compares them.
        _require_value(symbol, left)
        _require_value(symbol, right)
        return _binary[symbol](_exact_copy(symbol, left), _exact_copy(symbol, right))

    def item(self, container: Any, key: Any) -> Any:
        _require_value("[]", container)  # a class's own __class_getitem__ would decide
        if _type(key) is _slice:  # an index or a slice touches no element of the container
            for part in (key.start, key.stop, key.step):
                _require_exact("[]", part)
        else:
            key = _exact_copy("[]", key)
        cls = _type(container)
        if cls is _defaultdict:  # checked through a copy, looked up in itself (a copy has no default factory)
            _exact_copy("[]", container)
        elif cls in _mapping_types:  # a lookup compares keys: on the checked copy
            return _getitem(_exact_copy("[]", container), key)
        else:
            _require_exact("[]", container)
        return _getitem(container, key)

    def chain(self, left: Any, *steps: tuple[str, Any]) -> bool:
        for op, thunk in steps:
            right = thunk()
            if not self.cmp(op, left, right):
                return False
            left = right
        return True


# Captured when the zygote imports this module, before any code under test: later patches to builtins do not reach
# the guard (only the names below are used at call time).
_type, _bool, _contains, _set, _all, _str = type, bool, operator.contains, set, all, str
_identity_hash, _list, _dict, _bytearray, _deque = object.__hash__, list, dict, bytearray, collections.deque
_dict_items, _dict_fromkeys = dict.items, dict.fromkeys
_keys_view, _items_view = type({}.keys()), type({}.items())
_OrderedDict, _od_items, _type_type = collections.OrderedDict, collections.OrderedDict.items, type
_defaultdict = collections.defaultdict
_views = frozenset({_keys_view, _items_view, type({}.values())})
_BaseException = BaseException
_operators = dict(_OPERATORS)
_dict_keys = dict.keys
_leaf_types, _sequence_types, _mapping_types = _LEAF_TYPES, _SEQUENCE_TYPES, _MAPPING_TYPES
_Overload = ComparisonOverload
_isclose = math.isclose
_gc_isenabled, _gc_enable, _gc_disable = gc.isenabled, gc.enable, gc.disable
_sigmask, _SIG_BLOCK, _SIG_SETMASK, _all_signals = (signal.pthread_sigmask, signal.SIG_BLOCK, signal.SIG_SETMASK,
                                                     signal.valid_signals())
_gettrace, _settrace, _getprofile, _setprofile = sys.gettrace, sys.settrace, sys.getprofile, sys.setprofile


_helpers = {"abs": abs, "len": len, "round": round}
_binary = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv, "//": operator.floordiv,
           "%": operator.mod, "**": operator.pow}
_getitem, _slice = operator.getitem, slice


def _helper(name: str, function: Any, value: Any, *more: Any) -> Any:
    """The builtin `name` on exact builtin arguments, when the snippet's `name` is still it."""
    if function is not _helpers[name]:
        raise _Overload(f"{REASON}: {name} is not the builtin (the program rebound it)")
    for argument in (value, *more):
        _require_exact(name, argument)
    return _helpers[name](value, *more)


def _quiet_enter() -> tuple:
    """No code of the program's runs between the guard's check of a value and its comparison: the check allocates,
    which can start a collection (gc callbacks, finalizers), and a signal handler or trace function runs between
    any two bytecodes; so collections are off, signals held and tracing off until `_quiet_leave`."""
    state = (_gc_isenabled(), _sigmask(_SIG_BLOCK, _all_signals), _gettrace(), _getprofile())
    _gc_disable()
    _settrace(None)
    _setprofile(None)
    return state


def _quiet_leave(state: tuple) -> None:
    collecting, mask, trace, profile = state
    _settrace(trace)
    _setprofile(profile)
    _sigmask(_SIG_SETMASK, mask)
    if collecting:
        _gc_enable()


_Counter, _dict_get, _dict_eq, _mappings = collections.Counter, dict.get, dict.__eq__, _MAPPING_TYPES


def _compare_counter(op: str, left: Any, right: Any, left_type: type, right_type: type) -> bool:
    """`==`/`!=`/`in`/`not in` with a Counter operand (copied as a dict), as Python 3.10+ decides them, without
    Counter's methods."""
    if op in ("in", "not in"):
        if left_type is _Counter:  # the container would compare it with Counter.__eq__, which is Python code
            raise _Overload(f"{REASON}: {op} with a collections.Counter as the element")
        return _contains(right, left) == (op == "in")  # dict.__contains__: Counter does not override it
    if op in ("<", "<=", ">", ">="):
        if left_type is not _Counter or right_type is not _Counter:  # Counter declines, dict has no ordering
            raise _Overload(f"{REASON}: {op} between a collections.Counter and a {_type_label(right_type)}")
        if op in (">", ">="):
            left, right, op = right, left, "<" if op == ">" else "<="
        included = _all(_operators["<="](_dict_get(left, key, 0), _dict_get(right, key, 0))
                        for mapping in (left, right) for key in mapping)
        if op == "<=":
            return _bool(included)
        return _bool(included) and not _compare_counter("==", left, right, _Counter, _Counter)
    if op not in ("==", "!="):
        raise _Overload(f"{REASON}: {op} on a collections.Counter (its ordering is Python code)")
    if left is right:
        equal = True
    elif left_type is _Counter and right_type is _Counter:  # missing elements count as zero
        equal = _all(_operators["=="](_dict_get(left, key, 0), _dict_get(right, key, 0))
                    for mapping in (left, right) for key in mapping)
    elif left_type in _mappings and right_type in _mappings:
        equal = _dict_eq(left, right)  # Counter vs dict: Counter.__eq__ declines, dict's decides
    else:
        equal = False
    return _bool(equal) == (op == "==")


def _type_label(cls: type) -> str:
    try:
        module, name = cls.__module__, cls.__qualname__
        return f"{module}.{name}" if _type(module) is _str and _type(name) is _str else "?"
    except _BaseException:  # noqa: BLE001 - a hostile metaclass
        return "?"


def _require_value(op: str, value: Any) -> None:
    """Refuse a class as an operand: its metaclass and `__class_getitem__` are the program's code."""
    if _type(value) is _type_type:
        raise _Overload(f"{REASON}: {op} on a class, whose operators are its own code")


def _require_exact(op: str, value: Any) -> None:
    """Raise ComparisonOverload unless `value` itself (not what it holds) is of an exact builtin type."""
    cls = _type(value)
    if cls not in _leaf_types and cls not in _sequence_types and cls not in _mapping_types:
        raise _Overload(f"{REASON}: {op} on a {_type_label(cls)}, which is not an exact builtin type")


def _exact_copy(op: str, value: Any, memo: dict | None = None) -> Any:
    """A copy of `value` made of exact builtin objects (immutable leaves shared), each item type-checked as it is
    copied; ComparisonOverload for anything else. A Counter is copied as a dict (the caller knows it was one)."""
    try:
        return _copy(op, value, {} if memo is None else memo, value)
    except RecursionError:
        raise _Overload(f"{REASON}: {op} on a value nested too deep to copy") from None


def _copy(op: str, item: Any, memo: dict, top: Any) -> Any:
    cls = _type(item)
    if cls in _leaf_types:
        return _bytearray(item) if cls is _bytearray else item
    if cls is _Counter and item is not top:
        raise _Overload(f"{REASON}: {op} on a collections.Counter inside a container (compared by Python code)")
    if cls not in _sequence_types and cls not in _mapping_types:
        raise _Overload(f"{REASON}: {op} on a {_type_label(cls)}, which is not an exact builtin type")
    # Identity memo (for shared and cyclic containers): object.__hash__ is identity-based and, unlike id(), raises
    # no audit event a hook of the program's could run on.
    key = _identity_hash(item)
    for original, copied in memo.get(key, ()):
        if original is item:
            return copied
    if cls in _mapping_types:
        copied = _dict() if cls is _Counter else cls()
        memo.setdefault(key, []).append((item, copied))
        for item_key, item_value in _list((_od_items if cls is _OrderedDict else _dict_items)(item)):
            copied[_copy(op, item_key, memo, top)] = _copy(op, item_value, memo, top)  # its C type's own setitem
        return copied
    if cls is _list or cls is _deque:
        copied = cls()
        memo.setdefault(key, []).append((item, copied))
        for element in _list(item):
            copied.append(_copy(op, element, memo, top))
        return copied
    elements = [_copy(op, element, memo, top) for element in _list(item)]
    if cls in _views:  # a view compares like the set of its keys or items; a values view, `in` it, like a list
        return _dict_keys(_dict_fromkeys(elements)) if cls is _keys_view else \
            _dict_items(_dict(elements)) if cls is _items_view else elements
    return cls(elements)


def install_guard(namespace: dict, name: str) -> None:
    """Bind a guard under `name` in the module namespace the snippet runs in (child side, before user code)."""
    namespace[name] = _Guard()
