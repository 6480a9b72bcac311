"""An audit's parameters: `param()` declares a `Params` field with its value rules; `validated_value` applies them."""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Callable, Sequence
from dataclasses import field
from typing import Any

from audit_lib.errors import ParameterError


def param(default: Any, help: str = "", *, choices: Sequence[Any] = (), minimum: float | None = None,
          maximum: float | None = None, rule: Callable[[Any], str | None] | None = None, path: bool = False) -> Any:
    """A field of an audit's `Params` dataclass, with the value rules `AuditPlugin.validate` applies.

    `path=True` marks a file or folder name: the runner makes a relative one absolute against the caller's
    directory before validating it, since kernels run in `notebooks/`.
    """
    metadata = {"help": help, "choices": tuple(choices), "minimum": minimum, "maximum": maximum, "rule": rule,
                "path": path}
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata=metadata)
    return field(default=default, metadata=metadata)



def validated_value(audit: str, spec: dataclasses.Field, kind: Any, value: Any) -> Any:
    def refuse(rule: str) -> ParameterError:
        return ParameterError(f"{audit}: parameter {spec.name!r} {rule}, got {value!r}", audit=audit,
                              field=spec.name, value=repr(value)[:200])

    origin = typing.get_origin(kind) or kind
    if origin is bool:
        if not isinstance(value, bool):
            raise refuse("must be true or false")
    elif origin is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise refuse("must be an integer")
    elif origin is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise refuse("must be a number")
        value = float(value)
    elif origin is str:
        if not isinstance(value, str):
            raise refuse("must be a string")
    elif origin in (list, tuple):
        if not isinstance(value, (list, tuple)) or not all(isinstance(item, str) for item in value):
            raise refuse("must be a list of strings")
        value = list(value) if origin is list else tuple(value)
    meta = spec.metadata
    if meta.get("choices") and value not in meta["choices"]:
        raise refuse("must be one of " + ", ".join(repr(c) for c in meta["choices"]))
    if meta.get("minimum") is not None and value < meta["minimum"]:
        raise refuse(f"must be at least {meta['minimum']}")
    if meta.get("maximum") is not None and value > meta["maximum"]:
        raise refuse(f"must be at most {meta['maximum']}")
    if spec.name == "executor":
        from audit_lib.sandbox import resolve_executor_name

        try:
            resolve_executor_name(value)
        except ParameterError:
            raise refuse("must be 'local', 'dask-local' or 'dask://HOST:PORT'") from None
    rule = meta.get("rule")
    problem = rule(value) if rule is not None else None
    if problem:
        raise refuse(problem)
    return value


__all__ = ["param", "validated_value"]
