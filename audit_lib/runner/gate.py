"""The CI gate `--fail-on STATUS[,STATUS...]`: which checks of a batch fail it, synthetic findings apart.

A gate is a set of statuses, not a threshold: `--fail-on skipped` fails only when an input is missing, `error`
only when a check could not run, `defect` only on defects. A quirk or defect found on SYNTHETIC data (the check's
own `synthetic` flag, or an audit whose every input file is synthetic) does not fail a gate unless
`include_synthetic`; `error` and `skipped` gate whatever the data, since a broken check or a missing input is one
on any data.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

GATE_STATUSES: tuple[str, ...] = ("skipped", "quirk", "error", "defect")
# Statuses that report something about the benchmark's data: on generated data they say nothing about the real one.
FINDING_STATUSES = frozenset({"quirk", "defect"})


def parse_fail_on(text: str) -> frozenset[str]:
    """`skipped,error` -> {"skipped", "error"}; an unknown or empty status is an argparse error naming the choices."""
    statuses = [part.strip() for part in text.split(",")]
    unknown = [status for status in statuses if status not in GATE_STATUSES]
    if not text.strip() or unknown:
        shown = ", ".join(repr(status) for status in unknown) or "nothing"
        raise argparse.ArgumentTypeError(f"invalid choice: {shown} (choose from {', '.join(GATE_STATUSES)}, "
                                         "comma-separated)")
    return frozenset(statuses)


def is_synthetic(check: Mapping[str, Any]) -> bool:
    """Whether a check (as the index digested it) ran on generated data.

    `synthetic` folds in an all-synthetic audit."""
    return bool(check.get("synthetic"))


@dataclass(frozen=True)
class Gate:
    """The statuses that fail a run, and whether findings on synthetic data count."""

    statuses: frozenset[str]
    include_synthetic: bool = False

    @classmethod
    def of(cls, fail_on: Gate | str | frozenset[str] | None, *, include_synthetic: bool = False) -> Gate | None:
        """A gate from the CLI's value (a set, or a comma list as text); None is no gate."""
        if fail_on is None or isinstance(fail_on, Gate):
            return fail_on
        statuses = parse_fail_on(fail_on) if isinstance(fail_on, str) else frozenset(fail_on)
        return cls(statuses, include_synthetic)

    @property
    def label(self) -> str:
        return ",".join(status for status in GATE_STATUSES if status in self.statuses)

    def exempt(self, check: Mapping[str, Any]) -> bool:
        """A finding on synthetic data, which this gate leaves out."""
        return not self.include_synthetic and is_synthetic(check) and check.get("status") in FINDING_STATUSES

    def fails(self, check: Mapping[str, Any]) -> bool:
        return check.get("status") in self.statuses and not self.exempt(check)

    def hits(self, checks: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, int]:
        """Per audit, how many checks fail the gate (audits with none left out)."""
        counts = {audit: sum(1 for check in audit_checks if self.fails(check)) for audit, audit_checks in checks.items()}
        return {audit: count for audit, count in counts.items() if count}

    def exempted(self, checks: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, int]:
        """Per audit, how many checks have a gated status but were left out as synthetic findings."""
        counts = {audit: sum(1 for check in audit_checks if check.get("status") in self.statuses
                             and self.exempt(check)) for audit, audit_checks in checks.items()}
        return {audit: count for audit, count in counts.items() if count}
