"""Assert mode compares only exact builtin types: a rigged `__eq__`, `__ne__`, `__bool__`... fails the snippet.

Parent side (this module), `rewrite_snippet` turns every comparison written in the snippet (the test code: in
asserts, helper functions, lambdas, comprehensions, `if` conditions) into a call to a guard, and every truth test
that decides an assert or an `if ...: raise ...`: `assert f(2) == [2, 4]` becomes `assert G.cmp('==', f(2), [2, 4])`,
`assert f(x)` becomes `assert G.truth(f(x))`, `if f(2) != 4: raise AssertionError` becomes
`if G.cmp('!=', f(2), 4): raise ...`, `not`/`and`/`or` test each operand through `G.truth`. Inside those, arithmetic
(`f(x) - y`), indexing and slicing (`f(x)[0]`) and calls to `abs`, `len`, `round` and `math.isclose` (or the
snippet's own `from math import isclose`) go through the guard too. The program under test is never rewritten.

Child side (`strict_guard`), `install_guard` puts the guard into the snippet's module before any code under test
runs, holding its own references to everything it uses. The guard copies both operands into exact builtin objects,
checking each item as it copies it, and compares the copies (a thread or an audit hook of the program's that changes
the values meanwhile changes only the originals; collections are off, signals held and tracing off meanwhile);
anything that is not an exact builtin type raises `ComparisonOverload`, an `AssertionError`, so the snippet is a
`fail` with reason `comparison_overload`. Arithmetic, indexing and the helpers take exact builtin values only (not
their own `__sub__`, `__getitem__`, `__len__`, `__round__`), and a helper the program rebound (`math.isclose`,
`builtins.abs`, a module-level `len`) is refused rather than called.

What it does not cover: truth tests outside asserts and raising `if`s (`while x:`, `y if x else z`, `if x: ok = 1`),
truth tests and comparisons made inside builtins (`all(objects)`, `sorted(objects)`, `list.index`), comparisons in
code the snippet imports, helpers other than the ones above and module aliases (`import math as m`), and code that
inspects its own interpreter to find and replace the guard or its copies (its name is random per run, but nothing
in-process is out of reach; lifted tests are decided in the parent). Stdlib only: the sandbox zygote imports it.
"""

from __future__ import annotations

import ast
import functools
import secrets

from audit_lib.sandbox.strict_guard import OVERLOAD_ERROR, REASON, ComparisonOverload, install_guard

__all__ = ["OVERLOAD_ERROR", "REASON", "ComparisonOverload", "guard_name", "install_guard", "rewrite_snippet"]

_BINARY_OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
                     ast.Pow: "**"}
_BUILTIN_HELPERS = frozenset({"abs", "len", "round"})
_AST_OPERATORS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
                  ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}


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
    # Chained comparisons keep their middle operands in assignment expressions, which bind where the snippet's own
    # names live (a walrus in the chain, a class body); where Python allows none there, thunks instead.
    for walrus_chains in (True, False):
        rewriter = _AssertRewriter(_PLACEHOLDER, tree, walrus_chains)
        try:
            text = ast.unparse(ast.fix_missing_locations(rewriter.visit(ast.parse(snippet))))
        except RecursionError:
            return None
        if walrus_chains:
            try:
                compile(text, "<snippet>", "exec")
            except (SyntaxError, ValueError):
                continue
        return text + "\n" if rewriter.rewritten else None
    return None


class _AssertRewriter(ast.NodeTransformer):
    def __init__(self, name: str, tree: ast.AST, walrus_chains: bool = True) -> None:
        self.name = name
        self.walrus_chains = walrus_chains
        self.temporaries = 0
        self.rewritten = 0
        # Names the snippet itself gives math.isclose (`from math import isclose [as x]`); `abs` unless it binds it.
        self.isclose_names = {alias.asname or alias.name for node in ast.walk(tree)
                              if isinstance(node, ast.ImportFrom) and node.module == "math" and not node.level
                              for alias in node.names if alias.name == "isclose"}
        self.bound = _bound_names(tree)

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
        # a < b < c: later operands are evaluated only when the earlier comparisons hold, each once, as in Python.
        if self.walrus_chains:
            steps = []
            for position, (op, right) in enumerate(zip(ops, rights)):
                if position < len(ops) - 1:
                    self.temporaries += 1
                    name = f"{self.name}_{self.temporaries}"
                    steps.append(self._guard("cmp", ast.Constant(op), left,
                                             ast.NamedExpr(target=ast.Name(name, ast.Store()), value=right)))
                    left = ast.Name(name, ast.Load())
                else:
                    steps.append(self._guard("cmp", ast.Constant(op), left, right))
            return ast.BoolOp(op=ast.And(), values=steps)
        thunks = [ast.Tuple(elts=[ast.Constant(op), ast.Lambda(args=_no_arguments(), body=right)], ctx=ast.Load())
                  for op, right in zip(ops, rights)]
        return self._guard("chain", left, *thunks)


class _CompareRewriter(ast.NodeTransformer):
    def __init__(self, owner: _AssertRewriter) -> None:
        self.owner = owner

    def visit_Compare(self, node: ast.Compare) -> ast.expr:
        return self.owner._compare(node)

    def visit_BinOp(self, node: ast.BinOp) -> ast.expr:
        """Arithmetic on the values (`abs(f(x) - y) < eps`): exact builtin operands only, or their own `__sub__`..."""
        node = self.generic_visit(node)
        symbol = _BINARY_OPERATORS.get(type(node.op))
        if symbol is None:
            return node
        return ast.copy_location(self.owner._guard("binop", ast.Constant(symbol), node.left, node.right), node)

    def visit_Subscript(self, node: ast.Subscript) -> ast.expr:
        """`f(x)[0] == y`: an exact builtin container and key, or the value's own `__getitem__` decides."""
        node = self.generic_visit(node)
        if not isinstance(node.ctx, ast.Load):
            return node
        key = node.slice
        if isinstance(key, ast.Slice):  # the guard's own `slice` (the program can rebind the name)
            key = self.owner._guard("slice", key.lower or ast.Constant(None), key.upper or ast.Constant(None),
                                    key.step or ast.Constant(None))
        return ast.copy_location(self.owner._guard("item", node.value, key), node)

    def visit_Call(self, node: ast.Call) -> ast.expr:
        """`math.isclose(...)`, the snippet's own `isclose` from math, `abs`, `len` and `round` go through the guard:
        the real function (the program can rebind them) on exact builtin values (not their own `__len__`...)."""
        node = self.generic_visit(node)
        func = node.func
        method = None
        if isinstance(func, ast.Attribute) and func.attr == "isclose" and isinstance(func.value, ast.Name) \
                and func.value.id == "math":
            method = "isclose"
        elif isinstance(func, ast.Name) and func.id in self.owner.isclose_names:
            method = "isclose"
        elif isinstance(func, ast.Name) and func.id in _BUILTIN_HELPERS and func.id not in self.owner.bound:
            method = func.id
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
