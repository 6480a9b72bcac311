"""Assert mode compares only exact builtin types: a rigged `__eq__`, `__ne__`, `__bool__`... fails the snippet.

Parent side, `rewrite_snippet` turns every comparison written in the snippet (the test code: in asserts, helper
functions, lambdas, comprehensions, `if` conditions) into a call to a guard, and every truth test that decides an
assert or an `if ...: raise ...`: `assert f(2) == [2, 4]` becomes `assert G.cmp('==', f(2), [2, 4])`, `assert f(x)`
becomes `assert G.truth(f(x))`, `if f(2) != 4: raise AssertionError` becomes `if G.cmp('!=', f(2), 4): raise ...`,
`not`/`and`/`or` test each operand through `G.truth`. The program under test is never rewritten. Child side, `install_guard` puts the
guard into the snippet's module before any code under test runs, holding its own references to `type`, the
comparison functions and the exception it raises. The guard checks that both operands are exact builtin types
(recursively through containers) before comparing; anything else raises `ComparisonOverload`, an
`AssertionError`, so the snippet is a `fail` with reason `comparison_overload`. From its check to its comparison no
code of the program's runs (collections off, signals held, tracing off). Calls to `math.isclose` (or the snippet's
own `from math import isclose`) and to `abs` go through the guard, which calls them only when they are the real
ones (bound before the program ran) and with exact builtin arguments: a program can rebind `math.isclose`,
`builtins.abs` or a module-level `abs`.

What it does not cover: truth tests outside asserts and raising `if`s (`while x:`, `y if x else z`, `if x: ok = 1`),
truth tests and comparisons made inside builtins (`all(objects)`, `sorted(objects)`, `list.index`), comparisons in
code the snippet imports, other helpers the program can rebind (`round`, `sorted`, a module's functions), another
thread of the program's running between the check and the comparison, and code that inspects its own interpreter
to find and replace the guard
(its name is random per run, but nothing in-process is out of reach; lifted tests are decided in the parent).
Stdlib only: the sandbox zygote imports this module.
"""

from __future__ import annotations

import ast
import collections
import datetime
import decimal
import functools
import gc
import math
import operator
import re
import secrets
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
_AST_OPERATORS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
                  ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}


class ComparisonOverload(AssertionError):
    """An assert compared or tested a value that is not an exact builtin type."""


ComparisonOverload.__name__ = ComparisonOverload.__qualname__ = OVERLOAD_ERROR


def guard_name() -> str:
    """A fresh name for one run's guard, with no fixed part a program could look for."""
    return "_" + secrets.token_hex(12)


# ---------------------------------------------------------------------------------------------------- parent side

def rewrite_snippet(snippet: str, name: str) -> str | None:
    """The snippet with its asserts' comparisons and truth tests routed through the guard `name`.

    None when the snippet has no assert, comparison or raising `if`, or does not parse on its own (it then runs
    unchanged and the child reports its syntax error as before)."""
    template = _rewrite_template(snippet)
    return None if template is None else template.replace(_PLACEHOLDER, name)


# Benchmarks run the same snippets against many programs: the rewrite is done once per snippet, with a
# placeholder (random per process, so no snippet contains it) in place of each run's guard name.
_PLACEHOLDER = "_" + secrets.token_hex(16)


@functools.lru_cache(maxsize=8192)
def _rewrite_template(snippet: str) -> str | None:
    try:
        tree = ast.parse(snippet)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    rewriter = _AssertRewriter(_PLACEHOLDER, tree)
    try:
        tree = rewriter.visit(tree)
        text = ast.unparse(ast.fix_missing_locations(tree))
    except RecursionError:
        return None
    return text + "\n" if rewriter.rewritten else None


class _AssertRewriter(ast.NodeTransformer):
    def __init__(self, name: str, tree: ast.AST) -> None:
        self.name = name
        self.rewritten = 0
        # Names the snippet itself gives math.isclose (`from math import isclose [as x]`); `abs` unless it binds it.
        self.isclose_names = {alias.asname or alias.name for node in ast.walk(tree)
                              if isinstance(node, ast.ImportFrom) and node.module == "math" and not node.level
                              for alias in node.names if alias.name == "isclose"}
        self.abs_is_builtin = "abs" not in _bound_names(tree)

    def visit_Assert(self, node: ast.Assert) -> ast.Assert:
        self.rewritten += 1
        # the message is evaluated only once the assert has failed: it does not decide the verdict
        return ast.copy_location(ast.Assert(test=self._truth(node.test), msg=node.msg), node)

    def visit_If(self, node: ast.If) -> ast.If:
        """`if <test>: raise ...` is an assert written by hand: its truth test is guarded too."""
        self._visit_branches(node)
        if _raises(node.body) or _raises(node.orelse):
            self.rewritten += 1
            node.test = self._truth(node.test)
        else:
            node.test = self._value(node.test)
        return node

    def _visit_branches(self, node: ast.If) -> None:
        node.body = [self.visit(statement) for statement in node.body]
        node.orelse = [self.visit(statement) for statement in node.orelse]

    def visit_Compare(self, node: ast.Compare) -> ast.expr:
        """A comparison anywhere else in the test code (helpers, loops, lambdas, comprehensions)."""
        self.rewritten += 1
        return ast.copy_location(self._compare(node), node)

    def _guard(self, method: str, *args: ast.expr) -> ast.expr:
        return ast.Call(func=ast.Attribute(value=ast.Name(self.name, ast.Load()), attr=method, ctx=ast.Load()),
                        args=list(args), keywords=[])

    def _truth(self, node: ast.expr) -> ast.expr:
        """An expression whose value is a bool decided by the guard."""
        if isinstance(node, ast.BoolOp):
            return ast.BoolOp(op=node.op, values=[self._truth(value) for value in node.values])
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return ast.UnaryOp(op=ast.Not(), operand=self._truth(node.operand))
        if isinstance(node, ast.Compare):
            return self._compare(node)
        return self._guard("truth", self._value(node))

    def _value(self, node: ast.expr) -> ast.expr:
        """The same value, with every comparison inside it routed through the guard."""
        return _CompareRewriter(self).visit(node)

    def _compare(self, node: ast.Compare) -> ast.expr:
        left = self._value(node.left)
        ops = [_AST_OPERATORS[type(op)] for op in node.ops]
        rights = [self._value(right) for right in node.comparators]
        if len(ops) == 1:
            return self._guard("cmp", ast.Constant(ops[0]), left, rights[0])
        # a < b < c: later operands are evaluated only when the earlier comparisons hold, as in Python.
        thunks = [ast.Tuple(elts=[ast.Constant(op), ast.Lambda(args=_no_arguments(), body=right)], ctx=ast.Load())
                  for op, right in zip(ops, rights)]
        return self._guard("chain", left, *thunks)


class _CompareRewriter(ast.NodeTransformer):
    def __init__(self, owner: _AssertRewriter) -> None:
        self.owner = owner

    def visit_Compare(self, node: ast.Compare) -> ast.expr:
        return self.owner._compare(node)

    def visit_Call(self, node: ast.Call) -> ast.expr:
        """`math.isclose(...)`, the snippet's own `isclose` from math and `abs(...)` go to the guard's copies, bound
        before the program ran: the program can rebind `math.isclose`, `builtins.abs` or a module-level `abs`."""
        node = self.generic_visit(node)
        func = node.func
        method = None
        if isinstance(func, ast.Attribute) and func.attr == "isclose" and isinstance(func.value, ast.Name) \
                and func.value.id == "math":
            method = "isclose"
        elif isinstance(func, ast.Name) and func.id in self.owner.isclose_names:
            method = "isclose"
        elif isinstance(func, ast.Name) and func.id == "abs" and self.owner.abs_is_builtin:
            method = "abs"
        if method is None:
            return node
        # The function itself is evaluated where the snippet names it (a NameError stays one); the guard calls it
        # only when it is the real one.
        call = self.owner._guard(method, func, *node.args)
        call.keywords = node.keywords
        return ast.copy_location(call, node)


def _bound_names(tree: ast.AST) -> set[str]:
    """Names the snippet assigns, defines or imports anywhere."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return names


def _raises(statements: list[ast.stmt]) -> bool:
    return any(isinstance(statement, ast.Raise) for statement in statements)


def _no_arguments() -> ast.arguments:
    return ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
                         defaults=[])


# ---------------------------------------------------------------------------------------------------- child side

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
            _require_exact(op, left)
            _require_exact(op, right)
            if _type(left) is _Counter or _type(right) is _Counter:
                return _compare_counter(op, left, right)
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
            _require_exact("truth test", value, recursive=False)
            return _bool(value)
        finally:
            _quiet_leave(quiet)

    def isclose(self, function: Any, *args: Any, **kwargs: Any) -> bool:
        if function is not _isclose:
            raise _Overload(f"{REASON}: math.isclose is not the real one (the program rebound it)")
        for value in (*args, *kwargs.values()):
            _require_exact("math.isclose", value, recursive=False)
        return _isclose(*args, **kwargs)

    def abs(self, function: Any, value: Any) -> Any:
        if function is not _abs:
            raise _Overload(f"{REASON}: abs is not the builtin (the program rebound it)")
        _require_exact("abs", value, recursive=False)
        return _abs(value)

    def chain(self, left: Any, *steps: tuple[str, Any]) -> bool:
        for op, thunk in steps:
            right = thunk()
            if not self.cmp(op, left, right):
                return False
            left = right
        return True


# Captured when the zygote imports this module, before any code under test: later patches to builtins do not reach
# the guard (only the names below are used at call time).
_type, _bool, _id, _contains, _set, _all, _str = type, bool, id, operator.contains, set, all, str
_BaseException = BaseException
_operators = dict(_OPERATORS)
_list_extend = list.extend
_dict_keys, _dict_values = dict.keys, dict.values
_leaf_types, _sequence_types, _mapping_types = _LEAF_TYPES, _SEQUENCE_TYPES, _MAPPING_TYPES
_Overload = ComparisonOverload
_isclose, _abs = math.isclose, abs
_gc_isenabled, _gc_enable, _gc_disable = gc.isenabled, gc.enable, gc.disable
_sigmask, _SIG_BLOCK, _SIG_SETMASK, _all_signals = (signal.pthread_sigmask, signal.SIG_BLOCK, signal.SIG_SETMASK,
                                                     signal.valid_signals())
_gettrace, _settrace, _getprofile, _setprofile = sys.gettrace, sys.settrace, sys.getprofile, sys.setprofile


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


def _compare_counter(op: str, left: Any, right: Any) -> bool:
    """`==`/`!=`/`in`/`not in` with a Counter operand, as Python 3.10+ decides them, without Counter's methods."""
    if op in ("in", "not in"):
        if _type(left) is _Counter:  # the container would compare it with Counter.__eq__, which is Python code
            raise _Overload(f"{REASON}: {op} with a collections.Counter as the element")
        return _contains(right, left) == (op == "in")  # dict.__contains__: Counter does not override it
    if op not in ("==", "!="):
        raise _Overload(f"{REASON}: {op} on a collections.Counter (its ordering is Python code)")
    if left is right:
        equal = True
    elif _type(left) is _Counter and _type(right) is _Counter:  # missing elements count as zero
        equal = _all(_operators["=="](_dict_get(left, key, 0), _dict_get(right, key, 0))
                    for mapping in (left, right) for key in mapping)
    elif _type(left) in _mappings and _type(right) in _mappings:
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


def _require_exact(op: str, value: Any, recursive: bool = True) -> None:
    """Raise ComparisonOverload unless `value` (and, recursively, everything it holds) is an exact builtin type."""
    stack = [value]
    seen: set[int] = _set()
    while stack:
        item = stack.pop()
        cls = _type(item)
        if cls in _leaf_types:
            continue
        if cls is _Counter and item is not value:
            raise _Overload(f"{REASON}: {op} on a collections.Counter inside a container (compared by Python code)")
        if cls in _sequence_types or cls in _mapping_types:
            if not recursive or _id(item) in seen:
                continue
            seen.add(_id(item))
            if cls in _mapping_types:
                _list_extend(stack, _dict_keys(item))
                _list_extend(stack, _dict_values(item))
            else:
                _list_extend(stack, item)
            continue
        raise _Overload(f"{REASON}: {op} on a {_type_label(cls)}, which is not an exact builtin type")


def install_guard(namespace: dict, name: str) -> None:
    """Bind a guard under `name` in the module namespace the snippet runs in (child side, before user code)."""
    namespace[name] = _Guard()
