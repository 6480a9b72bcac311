"""How a defaultdict's `default_factory` crosses the sandbox boundary (stdlib only: the sandboxed child imports it).

A builtin type (`DEFAULT_FACTORIES`) crosses by name and makes the same default on the other side; any other factory
stays in the program and crosses as an `UncarriedFactory`, which raises when a missing key asks it for a default.
"""

from __future__ import annotations

from typing import Any

from audit_lib.sandbox.value_errors import MalformedTaggedValue, type_name
# Bound here, not looked up in builtins at each use: the code under test may rebind builtins in the job.
from builtins import (  # noqa: A004
    TypeError, bool, bytearray, bytes, complex, dict, float, frozenset, hash, int, isinstance, len, list, set, str,
    tuple, type,
)

# The default factories a defaultdict carries across: builtin types, which make the same default in the judge.
DEFAULT_FACTORIES = {factory.__name__: factory for factory in (
    int, float, complex, bool, str, bytes, bytearray, list, tuple, dict, set, frozenset)}
_FUNCTION = type(type_name)


def encode_factory(factory: Any) -> Any:
    if factory is None:
        return None
    if type(factory) is type and DEFAULT_FACTORIES.get(factory.__name__) is factory:
        return factory.__name__
    what = type_name(factory)
    if type(factory) is _FUNCTION:  # a function's __qualname__ is always a str
        what += " " + factory.__qualname__
    return ["program", what[:200]]


class UncarriedFactory:
    """Stands for a defaultdict's `default_factory` that stayed in the program: asked for a default, it raises.

    The defaultdict compares, iterates and reads its keys as the program's does; only a missing key, which upstream
    would fill by calling the program's factory, is refused with this error naming the factory."""

    __slots__ = ("what",)

    def __init__(self, what: str) -> None:
        self.what = what

    def __call__(self) -> Any:
        raise TypeError(f"this defaultdict's default_factory ({self.what}) stayed in the program, which is not "
                        "asked for a missing key's default: only a builtin type's default crosses")

    def __eq__(self, other: object) -> bool:
        return type(other) is UncarriedFactory and other.what == self.what

    def __hash__(self) -> int:
        return hash(self.what)

    def __reduce__(self) -> tuple[type, tuple[str]]:
        return (UncarriedFactory, (self.what,))

    def __repr__(self) -> str:
        return f"<default_factory {self.what} of the program>"


def decode_factory(payload: Any) -> Any:
    """The `default_factory` `encode_factory` described."""
    if payload is None:
        return None
    if isinstance(payload, str) and payload in DEFAULT_FACTORIES:
        return DEFAULT_FACTORIES[payload]
    if isinstance(payload, list) and len(payload) == 2 and payload[0] == "program" and isinstance(payload[1], str):
        return UncarriedFactory(payload[1][:200])
    raise MalformedTaggedValue(f"bad default_factory {payload!r:.80}")


def defaultdict_parts(payload: Any) -> tuple[Any, Any]:
    """A `$defaultdict` payload's factory (decoded) and its pairs (still tagged)."""
    if not isinstance(payload, list) or len(payload) != 2:
        raise MalformedTaggedValue("$defaultdict needs [factory, [[key, value], ...]]")
    return decode_factory(payload[0]), payload[1]
