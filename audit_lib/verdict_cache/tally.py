"""How many sandbox verdicts this process took from the cache (and from which runs) or computed, per span.

`note_served` / `note_computed` count as `run_many` hands out results; `CacheSpans` measures nested spans (a check
and the checks it needs, run inside it) each without the spans inside it, as `check_cost.CostMeter` does for time.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

CACHE_META_KEY = "verdict_cache"  # a check's `meta` key, and its load's (`load_cost`)
_lock = threading.Lock()
_served: Counter[str] = Counter()  # source run -> verdicts served from the cache
_computed = 0  # cacheable jobs run in the sandbox (a miss, a timing verdict, or --no-cache)
_stored = 0


def note_served(run: str) -> None:
    with _lock:
        _served[run] += 1


def note_computed(stored: bool) -> None:
    global _computed, _stored
    with _lock:
        _computed += 1
        _stored += int(stored)


@dataclass(frozen=True)
class CacheCounts:
    """Verdicts served from the cache by source run, and cacheable jobs computed (and stored) in the sandbox."""

    served_by_run: dict[str, int] = field(default_factory=dict)
    computed: int = 0
    stored: int = 0

    @property
    def served(self) -> int:
        return sum(self.served_by_run.values())

    @property
    def looked_up(self) -> int:
        """Cacheable jobs this span handed out: served plus computed."""
        return self.served + self.computed

    @classmethod
    def from_meta(cls, meta: Any) -> CacheCounts | None:
        """The counts a `meta` (or `load_cost`) records under `CACHE_META_KEY`, or None."""
        recorded = meta.get(CACHE_META_KEY) if isinstance(meta, Mapping) else None
        if not isinstance(recorded, Mapping):
            return None
        try:
            runs = {str(run): int(n) for run, n in dict(recorded.get("served_by_run") or {}).items()}
            return cls(runs, int(recorded.get("computed", 0)), int(recorded.get("stored", 0)))
        except (TypeError, ValueError):
            return None

    def __sub__(self, other: CacheCounts) -> CacheCounts:
        runs = Counter(self.served_by_run)
        runs.subtract(other.served_by_run)
        return CacheCounts({run: n for run, n in runs.items() if n > 0}, self.computed - other.computed,
                           self.stored - other.stored)

    def __add__(self, other: CacheCounts) -> CacheCounts:
        runs = Counter(self.served_by_run)
        runs.update(other.served_by_run)
        return CacheCounts(dict(runs), self.computed + other.computed, self.stored + other.stored)

    def to_meta(self) -> dict[str, Any]:
        """`meta["verdict_cache"]`: counts of this run (machine- and history-dependent, like `meta["cost"]`)."""
        return {"served": self.served, "computed": self.computed, "stored": self.stored,
                "served_by_run": dict(sorted(self.served_by_run.items()))}

    def text(self) -> str:
        """`12 of 40 sandbox verdicts from the cache (run R)`, or the computed count alone."""
        total = self.served + self.computed
        if not self.served:
            return f"0 of {total:,} sandbox verdicts from the cache"
        runs = ", ".join(f"{run}: {n:,}" for run, n in sorted(self.served_by_run.items()))
        return f"{self.served:,} of {total:,} sandbox verdicts from the cache (computed by run {runs})"


def counts_now() -> CacheCounts:
    with _lock:
        return CacheCounts(dict(_served), _computed, _stored)


class CacheSpans:
    """Nested spans of cache counts, each exclusive of the spans opened inside it."""

    def __init__(self) -> None:
        self._open: list[tuple[CacheCounts, CacheCounts]] = []

    def start(self) -> None:
        self._open.append((counts_now(), CacheCounts()))

    def stop(self) -> CacheCounts:
        started, nested = self._open.pop()
        spent = counts_now() - started
        if self._open:
            outer_start, outer_nested = self._open[-1]
            self._open[-1] = (outer_start, outer_nested + spent)
        return spent - nested


def cache_lines(checks_by_audit: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[str]:
    """Per audit that handed out cacheable jobs: how many verdicts came from the cache, and from which runs.

    Takes the checks as the index digests them or as findings hold them (`meta["verdict_cache"]`)."""
    lines = []
    for audit, checks in checks_by_audit.items():
        total = CacheCounts()
        for check in checks:
            total = total + (CacheCounts.from_meta(check.get("meta") or check) or CacheCounts())
        if total.looked_up:
            lines.append(f"verdict cache: {audit}: {total.text()}")
    return lines
