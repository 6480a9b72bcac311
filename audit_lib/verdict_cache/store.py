"""The verdict cache's folder: one gzipped JSON file per key, written atomically, bounded in size.

`<folder>/<key[:2]>/<key>.json.gz` holds `{"format", "key", "engine", "stamp", "entry"}`. Two processes writing
the same key each rename a whole file into place (`atomic_files`), so a reader sees one complete entry or the other.
An entry that does not read, is of another format or names another key is ignored (a miss) and replaced when the
job's fresh result is stored. A read marks the entry used (its mtime); past `max_bytes`, the least recently used
entries are removed until the folder holds `EVICT_TO` of the cap.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from audit_lib.atomic_files import atomic_write_bytes

FORMAT = 1
SUFFIX = ".json.gz"
EVICT_TO = 0.8  # after an eviction the folder holds at most this share of the cap


@dataclass(frozen=True)
class StoredEntry:
    """One entry as read back: the result's JSON and the stamp of the run that computed it."""

    key: str
    engine: str
    stamp: dict[str, Any]
    entry: dict[str, Any]


class VerdictStore:
    """Entries under one folder (created on the first write)."""

    def __init__(self, folder: Path, max_bytes: int) -> None:
        self.folder = folder
        self.max_bytes = max_bytes

    def path_for(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}{SUFFIX}"

    def read(self, key: str) -> StoredEntry | None:
        """The entry stored under `key`, or None (absent, damaged, another format or another key's)."""
        path = self.path_for(key)
        try:
            payload = json.loads(gzip.decompress(path.read_bytes()))
        except (OSError, EOFError, ValueError, zlib.error, UnicodeDecodeError):
            return None
        if not isinstance(payload, dict) or payload.get("format") != FORMAT or payload.get("key") != key \
                or not isinstance(payload.get("entry"), dict) or not isinstance(payload.get("stamp"), dict):
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # recently used: evicted last
        return StoredEntry(key, str(payload.get("engine")), payload["stamp"], payload["entry"])

    def write(self, key: str, engine: str, stamp: dict[str, Any], entry: dict[str, Any]) -> int:
        """Store the entry (replacing any); returns the bytes written."""
        text = json.dumps({"format": FORMAT, "key": key, "engine": engine, "stamp": stamp, "entry": entry},
                          separators=(",", ":"), allow_nan=False)
        blob = gzip.compress(text.encode("utf-8", "surrogatepass"), compresslevel=1, mtime=0)
        atomic_write_bytes(self.path_for(key), blob, durable=False)  # a damaged entry is only a miss
        return len(blob)

    def size(self) -> int:
        return sum(size for _path, size, _used in self._entries())

    def evict(self) -> int:
        """Remove the least recently used entries while the folder is over its cap; returns how many."""
        entries = list(self._entries())
        total = sum(size for _path, size, _used in entries)
        if total <= self.max_bytes:
            return 0
        removed = 0
        for path, size, _used in sorted(entries, key=lambda item: item[2]):
            if total <= EVICT_TO * self.max_bytes:
                break
            with contextlib.suppress(FileNotFoundError):  # another run evicted it first
                path.unlink()
                removed += 1
            total -= size
        return removed

    def _entries(self) -> Any:
        if not self.folder.is_dir():
            return
        for shard in os.scandir(self.folder):
            if not shard.is_dir():
                continue
            for item in os.scandir(shard.path):
                if item.name.endswith(SUFFIX):
                    with contextlib.suppress(FileNotFoundError):
                        info = item.stat()
                        yield Path(item.path), info.st_size, info.st_mtime_ns
