"""The entry-point calls in a snippet's expression, for the lifter (`sandbox_lifting`): which calls the child makes,
in Python's evaluation order, and what each reference to their outcomes and arguments becomes in the replay."""

from __future__ import annotations

import ast
import contextlib
import copy
from collections.abc import Iterator
from typing import Any, Protocol

from audit_lib.sandbox.lifted_eval import CALL_PREFIX
from audit_lib.sandbox.lifting_env import NO_LITERAL, Alias, Function, Literal, Refuse, immutable, literal_value


class CallSink(Protocol):
    """What the extractor needs of the lifter."""

    reads_arguments: bool

    def entry_of(self, name: str, env: dict[str, Any]) -> str | None: ...

    def add_call(self, entry: str, args: tuple[Any, ...], slot: int = -1, skippable: bool = False) -> int: ...


class CallExtractor(ast.NodeTransformer):
    """Rewrites one expression of a snippet: each entry-point call becomes `@i` (its outcome) and each read of a
    mutable literal a call received becomes `@i.argN`, registering the calls with the lifter in Python's order."""

    def __init__(self, lifter: CallSink, env: dict[str, Any], calls_allowed: bool) -> None:
        self.lifter, self.env, self.calls_allowed = lifter, env, calls_allowed
        self.scope_depth = 0
        # Inside an operand Python may not evaluate: the child would make the call anyway (refused).
        self.skippable_depth = 0
        self.read_names: set[str] = set()
        self.passed_names: set[str] = set()

    def visit_Call(self, node: ast.Call) -> ast.expr:
        entry = self.lifter.entry_of(node.func.id, self.env) if isinstance(node.func, ast.Name) else None
        if entry is None:
            return self.generic_visit(node)
        if not self.calls_allowed or self.scope_depth:
            raise Refuse("entry point called inside a comprehension, lambda or message")
        if node.keywords:
            raise Refuse("keyword arguments to the entry point")
        passed: list[tuple[int, Literal]] = []
        args = tuple(self.argument(arg, position, passed) for position, arg in enumerate(node.args))
        bound = self.env.get(node.func.id)
        index = self.lifter.add_call(entry, args, bound.slot if isinstance(bound, Alias) else -1,
                                     skippable=self.skippable_depth > 0)
        for position, bound in passed:
            bound.passed_to_call = (index, position)
            bound.changed_by_a_call()
        return ast.copy_location(ast.Name(f"{CALL_PREFIX}{index}", ast.Load()), node)

    def argument(self, node: ast.expr, position: int, passed: list[tuple[int, Literal]]) -> Any:
        value = literal_value(node)
        if value is not NO_LITERAL:
            return value
        if isinstance(node, ast.Name) and isinstance(self.env.get(node.id), Literal):
            bound = self.env[node.id]
            if not immutable(bound.value):
                if bound.reachable_elsewhere() or bound.stale:
                    raise Refuse(f"{node.id} shares objects with a value a call may change")
                # In Python a second call, or a read in the same expression, would see the very object the call
                # changed; the replay only knows each argument as the call that received it left it.
                if bound.passed_to_call is not None or node.id in self.read_names \
                        or any(other is bound for _position, other in passed):
                    raise Refuse(f"{node.id} is shared by several reads and calls in one expression")
                passed.append((position, bound))
                self.passed_names.add(node.id)
            return copy.deepcopy(bound.value)
        raise Refuse("an entry-point argument that is not a literal")

    def visit_Name(self, node: ast.Name) -> ast.expr:
        bound = self.env.get(node.id)
        if isinstance(bound, (Alias, Function)):
            raise Refuse(f"{node.id} used as a value")
        if isinstance(node.ctx, ast.Load):
            self.read_names.add(node.id)
        if isinstance(bound, Literal) and bound.stale:
            raise Refuse(f"{node.id} shares objects with a value a call changed")
        if isinstance(bound, Literal) and bound.passed_to_call is not None:
            if node.id in self.passed_names:
                raise Refuse(f"{node.id} is read in the expression that passes it to the entry point")
            index, position = bound.passed_to_call
            self.lifter.reads_arguments = True
            return ast.copy_location(ast.Name(f"{CALL_PREFIX}{index}.arg{position}", ast.Load()), node)
        return node

    @contextlib.contextmanager
    def _inside(self, depth: str) -> Iterator[None]:
        """One level deeper in `depth` (`scope_depth`, `skippable_depth`) while the body visits."""
        setattr(self, depth, getattr(self, depth) + 1)
        try:
            yield
        finally:
            setattr(self, depth, getattr(self, depth) - 1)

    def _skippable(self, node: ast.expr) -> ast.expr:
        with self._inside("skippable_depth"):
            return self.visit(node)

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.expr:
        node.values = [self.visit(node.values[0]), *(self._skippable(value) for value in node.values[1:])]
        return node

    def visit_IfExp(self, node: ast.IfExp) -> ast.expr:
        node.test = self.visit(node.test)
        node.body, node.orelse = self._skippable(node.body), self._skippable(node.orelse)
        return node

    def visit_Compare(self, node: ast.Compare) -> ast.expr:
        # `a < b < c` evaluates c only when a < b holds.
        node.left = self.visit(node.left)
        node.comparators = [self.visit(node.comparators[0]), *map(self._skippable, node.comparators[1:])]
        return node

    def visit_Dict(self, node: ast.Dict) -> ast.expr:
        # Python evaluates k1, v1, k2, v2; the calls are numbered in that order.
        pairs = [(None if key is None else self.visit(key), self.visit(value))
                 for key, value in zip(node.keys, node.values)]
        node.keys, node.values = [key for key, _value in pairs], [value for _key, value in pairs]
        return node

    def _scoped(self, node: ast.AST) -> ast.AST:
        with self._inside("scope_depth"):
            return self.generic_visit(node)

    def _comprehension(self, node: ast.AST) -> ast.AST:
        # The first iterable is evaluated in the enclosing scope, once: a call there is an ordinary call.
        first = node.generators[0]
        first.iter = self.visit(first.iter)
        with self._inside("scope_depth"):
            for name in ("elt", "key", "value"):
                if getattr(node, name, None) is not None:
                    setattr(node, name, self.visit(getattr(node, name)))
            first.target = self.visit(first.target)
            first.ifs = [self.visit(condition) for condition in first.ifs]
            for generator in node.generators[1:]:
                self.visit(generator)
        return node

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _comprehension
    visit_Lambda = _scoped
