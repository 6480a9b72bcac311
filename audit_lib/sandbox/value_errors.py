"""The codec's errors, and the type name it reports for a value (stdlib only: the sandboxed child imports it)."""

from __future__ import annotations

# Bound here, not looked up in builtins at each use: the code under test may rebind builtins in the job.
from builtins import Exception, ValueError, getattr, isinstance, str, type  # noqa: A004


class Unserializable(Exception):
    """A value that is not plain data (or is too deep / recursive to send)."""

    def __init__(self, type_name: str, reason: str = "not plain data") -> None:
        super().__init__(f"{type_name}: {reason}")
        self.type_name = type_name
        self.reason = reason


class MalformedTaggedValue(ValueError):
    """Tagged JSON that does not follow the format (sent by a broken or hostile child)."""


def type_name(value: object) -> str:
    cls = type(value)
    module = getattr(cls, "__module__", "") or ""
    name = getattr(cls, "__qualname__", None) or getattr(cls, "__name__", "?")
    if not isinstance(name, str) or not isinstance(module, str):
        return "?"
    return name if module == "builtins" else f"{module}.{name}"
