"""When the lifter's snapshots of a call are still what Python would read (`sandbox_lifting`).

The child encodes a call's return value, and with `reads_arguments` its arguments, as soon as the call returns. In
Python the snippet holds the objects themselves and reads them later, when a later call of the program may have
changed them (a buffer it clears and refills, a mutable default, an argument it kept a reference to). So a snapshot
of call i is exact only for reads made before call i + 1 starts.

`Reads` walks a lifted expression (entry-point calls already replaced by `@i`, `@i.argN`) in Python's evaluation
order: it follows which calls' objects each value may hold, and raises `StaleRead` where a value holding call i's
objects is read (compared, tested, indexed, formatted, passed to a builtin) after a later call was made. A value
only held (in a list display, bound to a name) is read where it is used. Scalars computed from a read (`len(a)`,
`a == b`) hold nothing.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

CALL_PREFIX = "@"
# Builtins (and math functions) whose result holds no object of their arguments: numbers, bools and new strings.
_SCALAR_FUNCTIONS = frozenset({
    "len", "abs", "all", "any", "round", "isinstance", "str", "repr", "int", "float", "bool", "complex", "ord", "chr",
    "type", "isclose", "sqrt", "fabs", "floor", "ceil", "isnan", "isinf", "isfinite", "log", "log2", "log10", "exp",
    "sin", "cos", "tan", "atan2", "hypot", "gcd", "trunc",
})
NO_CALLS: frozenset[int] = frozenset()


class StaleRead(Exception):
    """A value is read after a later call that may have changed it: the replay would read an older snapshot."""


def call_of(name: str) -> int | None:
    """The call index `@i` or `@i.argN` refers to, or None for another name."""
    if not name.startswith(CALL_PREFIX):
        return None
    index = name[len(CALL_PREFIX):].partition(".arg")[0]
    return int(index) if index.isdigit() else None


class Reads:
    """One statement's expressions, read in order; `made` is how many calls ran before the read being checked."""

    def __init__(self, held: Mapping[str, frozenset[int]], made: int, *, rebound: frozenset[str] = frozenset(),
                 modules: frozenset[str] = frozenset()) -> None:
        self.held = held
        self.made = made
        self.rebound = rebound  # names the snippet binds: a builtin's name there may be anything
        self.modules = modules  # names the snippet bound by `import`

    def consume(self, calls: frozenset[int]) -> None:
        stale = sorted(index for index in calls if index < self.made - 1)
        if stale:
            raise StaleRead(f"the value of call {stale[0]} is read after a later call that may have changed it")

    def read(self, node: ast.expr) -> frozenset[int]:
        """`value(node)`, read where it is evaluated (the assert's truth test, a message)."""
        calls = self.value(node)
        self.consume(calls)
        return calls

    def value(self, node: ast.AST) -> frozenset[int]:  # noqa: C901 - one branch per node type
        """The calls whose objects `node`'s value may hold; checks the reads made while evaluating it."""
        if isinstance(node, ast.Name):
            index = call_of(node.id)
            if index is not None and ".arg" not in node.id:
                self.made = max(self.made, index + 1)  # the call runs here
            return frozenset({index}) if index is not None else self.held.get(node.id, NO_CALLS)
        if isinstance(node, ast.Constant):
            return NO_CALLS
        if isinstance(node, ast.Compare):
            left = self.value(node.left)
            for right_node in node.comparators:
                right = self.value(right_node)
                self.consume(left | right)
                left = right
            return NO_CALLS
        if isinstance(node, ast.BoolOp):
            held = NO_CALLS
            for operand in node.values:
                held |= self.read(operand)  # its truth is tested; the result is one of the operands
            return held
        if isinstance(node, ast.UnaryOp):
            operand = self.read(node.operand)
            return NO_CALLS if isinstance(node.op, ast.Not) else operand
        if isinstance(node, ast.IfExp):
            self.read(node.test)
            return self.value(node.body) | self.value(node.orelse)
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            return self.union(node.elts)
        if isinstance(node, ast.Dict):
            return self.union([part for pair in zip(node.keys, node.values) for part in pair if part is not None])
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return self.comprehension(node)
        if isinstance(node, ast.Lambda):
            return self.names_in(node)
        if isinstance(node, ast.FormattedValue):
            self.read(node.value)
            if node.format_spec is not None:
                self.read(node.format_spec)
            return NO_CALLS
        # Subscript, Attribute, BinOp, Slice, JoinedStr, Starred...: the parts are read, the result may hold them.
        held = self.union(list(ast.iter_child_nodes(node)))
        self.consume(held)
        return NO_CALLS if isinstance(node, ast.JoinedStr) else held

    def union(self, nodes: list[ast.AST]) -> frozenset[int]:
        held = NO_CALLS
        for child in nodes:
            if isinstance(child, (ast.expr, ast.keyword, ast.comprehension)):
                held |= self.value(child.value if isinstance(child, ast.keyword) else child)
        return held

    def call(self, node: ast.Call) -> frozenset[int]:
        owner = self.value(node.func.value) if isinstance(node.func, ast.Attribute) else NO_CALLS
        held = owner | self.union([*node.args, *node.keywords])
        self.consume(held)
        return NO_CALLS if self._scalar_function(node.func) else held

    def _scalar_function(self, func: ast.expr) -> bool:
        """A builtin or `math` function whose result holds none of its arguments' objects."""
        if isinstance(func, ast.Name):
            return func.id in _SCALAR_FUNCTIONS and func.id not in self.rebound
        return isinstance(func, ast.Attribute) and func.attr in _SCALAR_FUNCTIONS \
            and isinstance(func.value, ast.Name) and func.value.id in self.modules

    def comprehension(self, node: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp) -> frozenset[int]:
        # The first iterable is evaluated here (it may make a call); the rest holds no call (the lifter refuses one).
        first = node.generators[0]
        held = self.value(first.iter) | self.names_in(node, skip=first.iter)
        if not isinstance(node, ast.GeneratorExp):  # a generator reads them only when it is iterated
            self.consume(held)
        return held

    def names_in(self, node: ast.AST, skip: ast.AST | None = None) -> frozenset[int]:
        """What the names under `node` (but not under `skip`) may hold."""
        held, pending = NO_CALLS, [node]
        while pending:
            child = pending.pop()
            if child is skip:
                continue
            if isinstance(child, ast.Name):
                index = call_of(child.id)
                held |= frozenset({index}) if index is not None else self.held.get(child.id, NO_CALLS)
            pending.extend(ast.iter_child_nodes(child))
        return held
