"""Replay a lifted test's steps in the parent, on values decoded from the child (`sandbox_lifting`).

A small interpreter over a whitelist of `ast` nodes: nothing is compiled or `eval`ed. Every value it meets is an
exact builtin type (decoded tagged JSON, literals, and results of whitelisted pure builtins on those), so no
comparison, truth test or format can run code from the child. Work is bounded: a deadline checked as it goes,
size checks before big-int arithmetic, division and repetition (`sandbox_replay_arith`), and sets built through
`sandbox_budget.bounded_set`.
Anything outside the whitelist met at run time raises `Unsupported`, and the caller falls back to assert mode.
"""

from __future__ import annotations

import ast
import collections
import copy
import math
import operator
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from audit_lib.sandbox.budget import BudgetExceeded, bounded_set
from audit_lib.sandbox.replay_arith import (
    Unsupported,
    bounded_gcd,
    bounded_prod,
    bounded_round,
    checked_floordiv,
    checked_mod,
    checked_mul,
    checked_pow,
    checked_shift,
    constructor_for,
    numeric_sum,
)
from audit_lib.sandbox.replay_values import (
    DICT_VIEWS,
    holds_a_set,
    identity_is_kept,
    text_hazard,
    totally_ordered,
)

CALL_PREFIX = "@"
# A builtin call is not interrupted: one over a value this long (sorted() of an 11-million-character string took
# 3.5 s and 800 MB) runs in the child instead, in assert mode, under the job's limits.
MAX_REPLAY_ITEMS = 1_000_000
# Builtins whose result depends on the order a set iterates in, which the parent's rebuilt set need not share with
# the child's: over a value holding a set they run in assert mode (a fourth attack round flipped verdicts this way).
_ORDER_SENSITIVE = {"list", "tuple", "str", "repr", "sum", "enumerate", "zip", "reversed", "min", "max", "prod"}
# The same through a method: `", ".join(s)`.
_ORDER_SENSITIVE_METHODS = frozenset({"join"})


class ParentTimeout(Exception):
    """The replay ran past its deadline."""


class CallFailed(Exception):
    """A step needed the value of a call that has none (it raised, timed out or was not run)."""

    def __init__(self, index: int) -> None:
        super().__init__(index)
        self.index = index


ALLOWED_BUILTINS: dict[str, Any] = {
    # set, frozenset, range and type are the real types (for isinstance and `type(x) == set`); a call of one goes
    # through its bounded constructor (`replay_arith.constructor_for`).
    "len": len, "sorted": sorted, "set": set, "frozenset": frozenset,
    "list": list, "tuple": tuple, "abs": abs, "min": min, "max": max, "sum": numeric_sum, "all": all, "any": any,
    "round": bounded_round, "isinstance": isinstance, "str": str, "int": int, "float": float, "bool": bool,
    "complex": complex, "type": type, "range": range, "enumerate": enumerate, "zip": zip,
    "reversed": reversed, "repr": repr, "ord": ord, "chr": chr,
}
ALLOWED_MATH: dict[str, Any] = {
    "isclose": math.isclose, "prod": bounded_prod, "sqrt": math.sqrt, "fabs": math.fabs, "floor": math.floor,
    "ceil": math.ceil, "isnan": math.isnan, "isinf": math.isinf, "isfinite": math.isfinite, "log": math.log,
    "log2": math.log2, "log10": math.log10, "exp": math.exp, "sin": math.sin, "cos": math.cos, "tan": math.tan,
    "atan2": math.atan2, "hypot": math.hypot, "gcd": bounded_gcd, "trunc": math.trunc, "pi": math.pi, "e": math.e,
    "tau": math.tau, "inf": math.inf, "nan": math.nan,
}
# Pure methods per exact type, called only on values of exactly that type.
ALLOWED_METHODS: dict[type, frozenset[str]] = {
    str: frozenset({"lower", "upper", "strip", "lstrip", "rstrip", "split", "startswith", "endswith", "count",
                    "find", "index", "isdigit", "isalpha", "isalnum", "isspace", "islower", "isupper", "join",
                    "title", "capitalize", "swapcase", "splitlines", "rfind"}),
    list: frozenset({"count", "index", "copy"}),
    tuple: frozenset({"count", "index"}),
    dict: frozenset({"keys", "values", "items", "get", "copy"}),
    set: frozenset({"issubset", "issuperset", "isdisjoint", "copy"}),
    frozenset: frozenset({"issubset", "issuperset", "isdisjoint"}),
    float: frozenset({"is_integer"}),
    bytes: frozenset({"decode", "count", "startswith", "endswith"}),
}
_ALL_METHOD_NAMES = frozenset().union(*ALLOWED_METHODS.values()) | ALLOWED_MATH.keys()
_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: checked_mul, ast.Div: operator.truediv,
    ast.FloorDiv: checked_floordiv, ast.Mod: checked_mod, ast.Pow: checked_pow, ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_, ast.BitXor: operator.xor, ast.LShift: checked_shift, ast.RShift: operator.rshift,
}
_COMPARE: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
    ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b, ast.NotIn: lambda a, b: a not in b,
}
_UNARY: dict[type, Callable[[Any], Any]] = {ast.Not: operator.not_, ast.USub: operator.neg, ast.UAdd: operator.pos,
                                            ast.Invert: operator.invert}
_ALLOWED_NODES = (
    ast.Constant, ast.Name, ast.Load, ast.Store, ast.Compare, ast.BoolOp, ast.UnaryOp, ast.BinOp, ast.IfExp,
    ast.Subscript, ast.Slice, ast.Attribute, ast.Call, ast.keyword, ast.JoinedStr, ast.FormattedValue,
    ast.List, ast.Tuple, ast.Set, ast.Dict, ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp,
    ast.comprehension, ast.And, ast.Or, ast.cmpop, ast.operator, ast.unaryop,
)


def check_expression(node: ast.expr, known_names: frozenset[str]) -> str | None:
    """None when the replay models every node of `node`; else what it does not model."""
    bound_in_comprehensions = {name.id for comp in ast.walk(node) if isinstance(comp, ast.comprehension)
                               for name in ast.walk(comp.target) if isinstance(name, ast.Name)}
    for child in ast.walk(node):
        if not isinstance(child, _ALLOWED_NODES):
            return f"expression node {type(child).__name__}"
        if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load) and not child.id.startswith(CALL_PREFIX) \
                and child.id not in known_names and child.id not in bound_in_comprehensions:
            return f"name {child.id!r} is not bound by the snippet"
        if isinstance(child, ast.Attribute) and child.attr not in _ALL_METHOD_NAMES:
            return f"attribute .{child.attr}"
        if isinstance(child, ast.comprehension) and child.is_async:
            return "async comprehension"
        if isinstance(child, ast.Call) and any(isinstance(arg, ast.Starred) for arg in child.args):
            return "starred call argument"
        if isinstance(child, (ast.List, ast.Tuple, ast.Set)) and any(isinstance(e, ast.Starred) for e in child.elts):
            return "starred element"
        if isinstance(child, ast.keyword) and child.arg is None:
            return "** arguments"
        if isinstance(child, ast.Compare) and not identity_is_kept(child):
            return "`is` between values other than None, True, False, ... (decoding does not keep identity)"
    return None


class Replay:
    """Replays steps on the calls' decoded values; raises Python's own exceptions where Python would."""

    def __init__(self, values: Sequence[Any], failed: frozenset[int], deadline: float,
                 arguments: Sequence[Sequence[Any]] = ()) -> None:
        self.values = values
        self.arguments = arguments  # per call, its arguments as the call left them (when the test reads them)
        self.failed = failed
        self.deadline = deadline
        self.env: dict[str, Any] = {}

    def tick(self) -> None:
        # Every step: a short snippet over huge values never reached a check made every 256 (a fourth attack round).
        if time.monotonic() > self.deadline:
            raise ParentTimeout("the parent's replay of the asserts ran past the snippet's time limit")

    # ---- statements ----------------------------------------------------------------------------------------------

    def bind(self, target: ast.expr, value: Any, env: dict[str, Any]) -> None:
        if isinstance(target, ast.Name):
            env[target.id] = value
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            if holds_a_set(value):
                raise Unsupported("the order of a set the child returned")
            items = list(value)  # TypeError for a non-iterable, as Python
            if len(items) != len(target.elts):
                raise ValueError(f"cannot unpack {len(items)} values into {len(target.elts)} names")
            for element, item in zip(target.elts, items):
                self.bind(element, item, env)
            return
        raise Unsupported(f"assignment target {type(target).__name__}")

    # ---- expressions ---------------------------------------------------------------------------------------------

    def eval(self, node: ast.expr, env: dict[str, Any]) -> Any:  # noqa: C901 - one branch per node type
        self.tick()
        kind = type(node)
        if kind is ast.Constant:
            value = node.value
            return value if isinstance(value, (int, float, complex, str, bytes, bool, type(None))) \
                else copy.deepcopy(value)
        if kind is ast.Name:
            return self.name(node.id, env)
        if kind is ast.Compare:
            left = self.eval(node.left, env)
            for op, right_node in zip(node.ops, node.comparators):
                right = self.eval(right_node, env)
                if not _COMPARE[type(op)](left, right):
                    return False
                left = right
            return True
        if kind is ast.BoolOp:
            is_and = isinstance(node.op, ast.And)
            value = None
            for operand in node.values:
                value = self.eval(operand, env)
                if bool(value) != is_and:
                    return value
            return value
        if kind is ast.UnaryOp:
            return _UNARY[type(node.op)](self.eval(node.operand, env))
        if kind is ast.BinOp:
            return _BINARY[type(node.op)](self.eval(node.left, env), self.eval(node.right, env))
        if kind is ast.IfExp:
            return self.eval(node.body if self.eval(node.test, env) else node.orelse, env)
        if kind is ast.Subscript:
            owner, key = self.eval(node.value, env), self.eval(node.slice, env)
            if type(owner) is collections.defaultdict and key not in owner:
                raise Unsupported("a missing key of a defaultdict (decoded without its default factory)")
            return owner[key]
        if kind is ast.Slice:
            return slice(*(None if part is None else self.eval(part, env)
                           for part in (node.lower, node.upper, node.step)))
        if kind is ast.Call:
            return self.call(node, env)
        if kind is ast.Attribute:
            return self.attribute(node, env, called=False)
        if kind is ast.JoinedStr:
            return "".join(self.eval(value, env) for value in node.values)
        if kind is ast.FormattedValue:
            value = self.eval(node.value, env)
            hazard = text_hazard(value)
            if hazard is not None:
                raise Unsupported(hazard)
            if node.conversion != -1:
                value = {ord("r"): repr, ord("s"): str, ord("a"): ascii}[node.conversion](value)
            spec = "" if node.format_spec is None else self.eval(node.format_spec, env)
            return format(value, spec)
        if kind is ast.List:
            return [self.eval(element, env) for element in node.elts]
        if kind is ast.Tuple:
            return tuple(self.eval(element, env) for element in node.elts)
        if kind is ast.Set:
            return _set_of(self.eval(element, env) for element in node.elts)
        if kind is ast.Dict:
            return {self.eval(k, env): self.eval(v, env) for k, v in zip(node.keys, node.values)}
        if kind is ast.ListComp:
            return list(self.comprehension(node.generators, lambda scope: self.eval(node.elt, scope), env))
        if kind is ast.GeneratorExp:
            return self.comprehension(node.generators, lambda scope: self.eval(node.elt, scope), env)
        if kind is ast.SetComp:
            return _set_of(self.comprehension(node.generators, lambda scope: self.eval(node.elt, scope), env))
        if kind is ast.DictComp:
            pairs = list(self.comprehension(
                node.generators, lambda scope: (self.eval(node.key, scope), self.eval(node.value, scope)), env))
            _set_of(key for key, _value in pairs)
            return dict(pairs)
        raise Unsupported(f"expression node {kind.__name__}")

    def name(self, name: str, env: dict[str, Any]) -> Any:
        if name.startswith(CALL_PREFIX):
            reference = name[len(CALL_PREFIX):]
            if reference.startswith("module:"):
                return _MathModule
            if reference.startswith("math:"):
                return ALLOWED_MATH[reference[len("math:"):]]
            call, _, argument = reference.partition(".arg")
            index = int(call)
            if index in self.failed:
                raise CallFailed(index)
            if argument:
                return self.arguments[index][int(argument)]
            return self.values[index]  # each call site is read by exactly one step
        if name in env:
            return env[name]
        if name in ALLOWED_BUILTINS:
            return ALLOWED_BUILTINS[name]
        raise NameError(f"name {name!r} is not defined")

    def attribute(self, node: ast.Attribute, env: dict[str, Any], called: bool) -> Any:
        owner = self.eval(node.value, env)
        if owner is _MathModule:
            if node.attr not in ALLOWED_MATH:
                raise Unsupported(f"math.{node.attr}")
            return ALLOWED_MATH[node.attr]
        allowed = ALLOWED_METHODS.get(type(owner), frozenset())
        if not called or node.attr not in allowed:
            raise Unsupported(f"{type(owner).__name__}.{node.attr}")
        if _length(owner) > MAX_REPLAY_ITEMS:  # `s.split()` of a 60 MB str took the parent to 1.4 GB
            raise Unsupported(f"a value too long to replay in the parent (.{node.attr}() of {_length(owner):,} items)")
        return getattr(owner, node.attr)

    def call(self, node: ast.Call, env: dict[str, Any]) -> Any:
        if isinstance(node.func, ast.Attribute):
            function = self.attribute(node.func, env, called=True)
        else:
            function = self.eval(node.func, env)
            if not _is_allowed_callable(function):
                raise Unsupported("call of something other than a whitelisted function")
        args = [self.eval(arg, env) for arg in node.args]
        kwargs = {keyword.arg: self.eval(keyword.value, env) for keyword in node.keywords}
        for value in (*args, *kwargs.values()):
            if _length(value) > MAX_REPLAY_ITEMS:
                raise Unsupported("a value too long to replay in the parent")
        order_sensitive = _ORDER_SENSITIVE_CALLABLES.get(id(function)) or (
            isinstance(node.func, ast.Attribute) and node.func.attr in _ORDER_SENSITIVE_METHODS)
        if function in (str, repr):
            hazard = next(filter(None, map(text_hazard, args)), None)
            if hazard is not None:
                raise Unsupported(hazard)
        elif order_sensitive and any(holds_a_set(value) for value in args):
            raise Unsupported("the order of a set the child returned")
        if function is sorted and any(type(value) in (set, frozenset) and not totally_ordered(value)
                                      for value in args):
            raise Unsupported("sorted() of a set whose items are not totally ordered (ties keep the set's order)")
        if function is sorted and "key" in kwargs:
            raise Unsupported("sorted(key=...)")
        if function in (min, max) and "key" in kwargs:
            raise Unsupported("min/max(key=...)")
        try:
            return constructor_for(function, bool(kwargs))(*args, **kwargs)
        except BudgetExceeded as exc:
            raise Unsupported(exc.reason) from exc

    def comprehension(self, generators: list[ast.comprehension], element: Callable[[dict[str, Any]], Any],
                      env: dict[str, Any]) -> Iterator[Any]:
        # The first iterable is evaluated eagerly, in the enclosing scope, as Python does.
        first_value = self.eval(generators[0].iter, env)
        if holds_a_set(first_value):
            raise Unsupported("the order of a set the child returned")
        first = iter(first_value)

        def produce(level: int, scope: dict[str, Any], iterable: Iterator[Any]) -> Iterator[Any]:
            generator = generators[level]
            for item in iterable:
                self.tick()
                inner = dict(scope)
                self.bind(generator.target, item, inner)
                if all(self.eval(condition, inner) for condition in generator.ifs):
                    if level + 1 == len(generators):
                        yield element(inner)
                    else:
                        inner_value = self.eval(generators[level + 1].iter, inner)
                        if holds_a_set(inner_value):
                            raise Unsupported("the order of a set the child returned")
                        yield from produce(level + 1, inner, iter(inner_value))

        return produce(0, env, first)  # a generator reads the names when it is iterated, as Python does


def _set_of(items: Iterator[Any]) -> set[Any]:
    try:
        return bounded_set(items)
    except BudgetExceeded as exc:
        raise Unsupported(exc.reason) from exc


class _MathModule:
    """Stands for the `math` module a snippet imported."""


_ALLOWED_CALLABLES = frozenset(id(function) for function in (*ALLOWED_BUILTINS.values(), *ALLOWED_MATH.values())
                               if callable(function))


def _is_allowed_callable(function: Any) -> bool:
    return id(function) in _ALLOWED_CALLABLES


_ORDER_SENSITIVE_CALLABLES = {id({**ALLOWED_BUILTINS, **ALLOWED_MATH}[name]): name for name in _ORDER_SENSITIVE}


_SIZED = (str, bytes, bytearray, list, tuple, set, frozenset, dict, range, *DICT_VIEWS)


def _length(value: Any) -> int:
    """How many items a builtin would go through (a dict view: its dict's; an iterator: what it has left)."""
    if type(value) in _SIZED or isinstance(value, dict):
        return len(value)
    try:
        return operator.length_hint(value)  # values are exact builtin types: this runs no code of the child's
    except (TypeError, ValueError, OverflowError):
        return 0
