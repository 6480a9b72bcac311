"""A check's failures split by cause (`meta["failure_split"]`), read, validated and phrased.

Deterministic failures are properties of the benchmark; timing ones depend on the machine's speed and load.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from audit_lib.errors import SchemaError
from audit_lib.report.values import esc, number_text

SPLIT_META_KEY = "failure_split"
SPLIT_UNITS = ("tasks", "inputs", "runs")
SPLIT_COUNTS = ("deterministic", "timing_confirmed", "timing_borderline", "timing_not_failing")


@dataclass(frozen=True)
class FailureSplit:
    """How many failing units (tasks, inputs or runs) fail, and why.

    Deterministically, by confirmed timing, at the limit (borderline), and how many timed out in the parallel pass but
    pass when rerun alone (not failures)."""

    unit: str
    deterministic: int
    timing_confirmed: int
    timing_borderline: int
    timing_not_failing: int

    @classmethod
    def from_json(cls, payload: Any) -> FailureSplit:
        """Validate a `meta["failure_split"]`; a wrong shape raises `SchemaError` naming the field."""
        if not isinstance(payload, Mapping):
            raise SchemaError(f"{SPLIT_META_KEY} must be an object, got {type(payload).__name__}",
                                    field=SPLIT_META_KEY)
        unit = payload.get("unit")
        if unit not in SPLIT_UNITS:
            raise SchemaError(f"{SPLIT_META_KEY}.unit must be one of {', '.join(SPLIT_UNITS)}, got {unit!r}",
                                    field="unit")
        counts = {}
        for key in SPLIT_COUNTS:
            value = payload.get(key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise SchemaError(f"{SPLIT_META_KEY}.{key} must be a non-negative int, got {value!r}",
                                        field=key)
            counts[key] = value
        return cls(unit=str(unit), **counts)

    def text(self) -> str:
        """The split in one sentence.

        E.g. `failing tasks: 17 deterministic + 5 timing (confirmed), 1 borderline; 3 timed out only in the parallel run
        (pass alone)`."""
        line = (f"failing {self.unit}: {number_text(self.deterministic)} deterministic + "
                f"{number_text(self.timing_confirmed)} timing (confirmed)")
        if self.timing_borderline:
            line += f", {number_text(self.timing_borderline)} borderline"
        if self.timing_not_failing:
            line += f"; {number_text(self.timing_not_failing)} timed out only in the parallel run (pass alone)"
        return line


def failure_split_of(check: Mapping[str, Any]) -> Any:
    """The raw `failure_split` of a check (findings JSON or the index's digest), or None."""
    if SPLIT_META_KEY in check:
        return check[SPLIT_META_KEY]
    return (check.get("meta") or {}).get(SPLIT_META_KEY)


def overload_of(stamp: Mapping[str, Any] | None) -> tuple[float, int] | None:
    """(highest 1-minute load, CPUs) when a run stamp says the load exceeded the core count, else None."""
    if not stamp:
        return None
    cpus = stamp.get("cpus")
    loads = [x for x in (stamp.get("load_start"), stamp.get("load_end"))
             if isinstance(x, (int, float)) and not isinstance(x, bool)]
    if not isinstance(cpus, int) or isinstance(cpus, bool) or cpus <= 0 or not loads or max(loads) <= cpus:
        return None
    return float(max(loads)), cpus


def split_markup(raw: Any, *, overload: tuple[float, int] | None = None, where: str = "") -> str:
    """The split as one line beside a check, the load warning next to it.

    A malformed split is shown as such, naming `where` it came from (e.g. `humaneval_plus.findings.json, check
    original_canonical_vs_plus`)."""
    if raw is None:
        return ""
    try:
        split = FailureSplit.from_json(raw)
    except SchemaError as exc:
        origin = f"{where}: " if where else ""
        return f'<div class="split split-bad">⚠ {esc(origin)}unreadable {esc(exc)}</div>'
    warning = ""
    if overload is not None:
        load, cpus = overload
        warning = (f' <span class="split-load">⚠ load {esc(number_text(load))} on {cpus} CPUs during this run: the '
                   "timing counts may differ on a quiet machine</span>")
    return f'<div class="split">{esc(split.text())}{warning}</div>'


SPLIT_STYLE = """<style>
.ba .split{margin-top:3px;font-size:12px;color:#424a53}
.ba .split-load,.ba .split-bad{color:#7d4e00;font-weight:600}
</style>"""


__all__ = ["SPLIT_COUNTS", "SPLIT_META_KEY", "SPLIT_STYLE", "SPLIT_UNITS", "FailureSplit",
           "failure_split_of", "overload_of", "split_markup"]
