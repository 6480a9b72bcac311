"""A check's declaration: its id, title, needs (files, other checks, `Need`s decided on the inputs) and function."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from audit_lib.findings import Result

CHECK_NEED_PREFIX = "check:"
P = TypeVar("P")
I = TypeVar("I")  # noqa: E741


class CheckCycleError(RuntimeError):
    """Two declared checks need each other (a mistake in the declarations, not a finding)."""


@dataclass(frozen=True)
class Unmet:
    """Why a derived need is not met: what `meta.missing` names, and the reason the skipped check gives."""

    missing: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class Need:
    """A need decided on the loaded inputs (e.g. "the file has rows"): `unmet(inputs)` is None when it is met."""

    name: str
    unmet: Callable[[Any], Unmet | None]


@dataclass(frozen=True)
class ChecksNamedBy:
    """`check:` needs that the run's parameters name (e.g. which checks mark a task flawed).

    `checks(params)` gives their ids, each then a need like `"check:<id>"`.
    """

    name: str
    checks: Callable[[Any], Sequence[str]]


@dataclass(frozen=True)
class CheckSpec(Generic[I, P]):
    """One check, declared once: its id, neutral title, needs, and the function `(inputs, params) -> Result`.

    `run` is `"module:function"` (a module starting with "." is relative to the audit's package), imported when
    the check first runs, so declaring it stays light; `when(params)` leaves a check out of some runs.
    """

    id: str
    title: str
    run: str | Callable[[I, P], Result]
    needs: tuple[str | Need | ChecksNamedBy, ...] = ()
    when: Callable[[P], bool] | None = None

    def function(self, package: str = "") -> Callable[[I, P], Result]:
        """The check function (`run` imported when it is a name)."""
        if callable(self.run):
            return self.run
        module, _, name = self.run.partition(":")
        return getattr(importlib.import_module(module, package or None), name)


__all__ = ["CHECK_NEED_PREFIX", "CheckCycleError", "CheckSpec", "ChecksNamedBy", "Need", "Unmet"]
