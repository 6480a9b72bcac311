"""What the lifter (`sandbox_lifting`) knows a snippet's name is bound to while it reads the snippet."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

IMMUTABLE_LITERALS = (int, float, complex, str, bytes, bool, type(None))


class Refuse(Exception):
    """A shape the lifter cannot replay exactly; its message becomes the `NotLiftable` reason."""


@dataclass(eq=False)
class Literal:
    value: Any
    passed_to_call: tuple[int, int] | None = None  # (call index, argument position) of a mutable literal
    # A value the lifter does not follow may hold this object (`b = [a]`): the replay would not show it what a call
    # did, so the literal is never passed to a call.
    aliased: bool = False
    # A loop table and its rows share objects: once a call changed one, the replay's copy of the other is stale.
    table: Literal | None = None
    rows: list[Literal] = field(default_factory=list)
    stale: bool = False

    def reachable_elsewhere(self) -> bool:
        """Whether a value the lifter does not follow may hold this object: it, or a table holding it, is aliased
        (`u = t` then a row of `t` passed to a call: `u` shows the change in Python, not in the replay)."""
        literal: Literal | None = self
        while literal is not None:
            if literal.aliased:
                return True
            literal = literal.table
        return False

    def changed_by_a_call(self) -> None:
        """Mark the tables holding this literal and the rows it holds: their replay values miss the change."""
        table = self.table
        while table is not None:
            table.stale, table = True, table.table
        pending = list(self.rows)
        while pending:
            row = pending.pop()
            row.stale = True
            pending.extend(row.rows)


@dataclass(eq=False)
class Opaque:
    """A name the parent binds at replay time (a call result, a computed constant, a loop value)."""

    calls: frozenset[int] = frozenset()  # the calls whose objects its value may hold (`sandbox_lift_order`)


@dataclass
class Alias:
    """A name bound to the entry point's function object (`candidate = f`, `check(f)`): Python calls that object
    even after the program rebinds its global `f`, so the child captures it into `slot` before its next call."""

    entry_point: str
    slot: int


@dataclass
class Function:
    node: ast.FunctionDef


NO_LITERAL = object()


def literal_value(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return NO_LITERAL


def immutable(value: Any) -> bool:
    if isinstance(value, (tuple, frozenset)):
        return all(immutable(item) for item in value)
    return isinstance(value, IMMUTABLE_LITERALS)
