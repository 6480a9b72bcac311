"""A content-addressed cache of sandbox verdicts in `data_cache/verdicts/`, consulted where every batch of jobs goes.

`executors.run_many` answers a `CallJob`, `TestsJob` or `AssertJob` whose key (`keys`: its content and the engine
version) holds a stored result without a sandbox run; every other job runs, and its result is stored when it is
`deterministic` (`entries.classify`): a `timing` one (a timeout, a kill, an input near its limit or unrun) never is.
Entries carry the stamp of the run that computed them; checks record what they took in `meta["verdict_cache"]`.
`AUDIT_NO_CACHE=1` (`run --no-cache`) serves nothing and stores fresh results over old ones; `AUDIT_CACHE=off`
neither reads nor writes; `AUDIT_VERDICT_CACHE_MB` caps the folder (default 1024 MB, least recently used evicted).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from audit_lib import paths
from audit_lib.verdict_cache import entries, keys
from audit_lib.verdict_cache.store import VerdictStore
from audit_lib.verdict_cache.tally import CacheCounts, CacheSpans, counts_now, note_computed, note_served

NO_CACHE_ENV = "AUDIT_NO_CACHE"
# "off": no verdict cache and no report reuse at all, neither read nor written (the test suite's default).
CACHE_SWITCH_ENV = "AUDIT_CACHE"
CAP_ENV = "AUDIT_VERDICT_CACHE_MB"
RUN_ID_ENV = "AUDIT_RUN_ID"
DEFAULT_CAP_MB = 1024
FOLDER_NAME = "verdicts"
_PROCESS_RUN = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + f"-{os.getpid()}"


@dataclass(frozen=True)
class Served:
    """A result taken from the cache and the run that computed it."""

    result: Any
    run: str


class VerdictCache:
    """Look jobs up and store their deterministic results under one folder."""

    def __init__(self, folder: Path, *, read: bool = True, write: bool = True, max_bytes: int = DEFAULT_CAP_MB << 20,
                 engine: str | None = None) -> None:
        self.store = VerdictStore(folder, max_bytes)
        self.read = read
        self.write = write
        self.engine = engine or (keys.current_engine_version() if read or write else "")
        self._stored_since_evict = 0

    def key_of(self, job: Any) -> str | None:
        """The job's key, or None for a job the cache does not hold."""
        try:
            return keys.job_key(job, self.engine)
        except keys.NotCacheable:
            return None

    def lookup(self, job: Any) -> tuple[str | None, Served | None]:
        """The job's key and, when reading is on and a sound entry exists, its stored result (counted as served)."""
        if not (self.read or self.write):
            return None, None
        key = self.key_of(job)
        if key is None or not self.read:
            return key, None
        stored = self.store.read(key)
        if stored is None or stored.engine != self.engine:
            return key, None
        try:
            result = entries.result_from_json(stored.entry)
        except Exception:  # noqa: BLE001 - a damaged entry is a miss, replaced when the job's result is stored
            return key, None
        if entries.classify(job, result) != "deterministic":
            return key, None
        run = str(stored.stamp.get("run") or "unknown run")
        note_served(run)
        return key, Served(result, run)

    def record(self, job: Any, key: str | None, result: Any) -> bool:
        """Store the job's fresh result under `key` when it is deterministic; returns whether it was stored."""
        if key is None:
            return False
        stored = False
        if self.write and entries.classify(job, result) == "deterministic":
            try:
                self.store.write(key, self.engine, run_stamp(), entries.result_to_json(result))
                stored = True
                self._stored_since_evict += 1
            except (ValueError, OSError):
                stored = False
        note_computed(stored)
        return stored

    def finish_batch(self) -> None:
        """After a batch that stored entries: evict beyond the cap."""
        if self._stored_since_evict:
            self._stored_since_evict = 0
            self.store.evict()


def run_stamp() -> dict[str, Any]:
    """The stamp stored with each entry: the run (the batch runner's id, else this process's), audit and time."""
    return {"run": os.environ.get(RUN_ID_ENV) or _PROCESS_RUN, "audit": os.environ.get("AUDIT_RUN_AS"),
            "stored_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def cache_folder() -> Path:
    return paths.data_cache_dir() / FOLDER_NAME


_fresh_depth = 0  # inside `fresh_runs()`: nothing served


@contextlib.contextmanager
def fresh_runs() -> Iterator[None]:
    """Serve no verdict from the cache inside the block (fresh results are still stored).

    For a run whose point is to be another execution, as the ground truth's second run for nondeterminism."""
    global _fresh_depth
    _fresh_depth += 1
    try:
        yield
    finally:
        _fresh_depth -= 1


def caching_enabled() -> bool:
    """False when `AUDIT_CACHE=off`: no verdict cache, no report reuse."""
    return os.environ.get(CACHE_SWITCH_ENV, "").strip().lower() != "off"


def active_cache() -> VerdictCache:
    """The cache as this process's environment sets it (`AUDIT_NO_CACHE`, `AUDIT_CACHE`, `AUDIT_VERDICT_CACHE_MB`)."""
    enabled = caching_enabled()
    reading = enabled and not _fresh_depth \
        and os.environ.get(NO_CACHE_ENV, "").strip().lower() in ("", "0", "false", "no")
    raw_cap = os.environ.get(CAP_ENV, "").strip()
    cap_mb = int(raw_cap) if raw_cap.isdigit() and int(raw_cap) > 0 else DEFAULT_CAP_MB
    return VerdictCache(cache_folder(), read=reading, write=enabled, max_bytes=cap_mb << 20)


__all__ = ["CACHE_SWITCH_ENV", "CAP_ENV", "CacheCounts", "CacheSpans", "NO_CACHE_ENV", "RUN_ID_ENV", "Served",
           "VerdictCache", "active_cache", "cache_folder", "caching_enabled", "counts_now", "fresh_runs", "run_stamp"]
