"""One registered file: fetch it, profile it, check its sha256 against the pin, and report it as one check."""

from __future__ import annotations

import os
import re
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from audit_lib.data import fetch, readers
from audit_lib.data.sources import DATASETS, REGISTRY, SourceFile
from audit_lib.errors import ChecksumMismatchError, DataError
from audit_lib.findings import Result

CHECK_PREFIX = "file"
InventoryState = Literal["ok", "unavailable", "checksum_mismatch", "unreadable"]


@dataclass(frozen=True)
class ColumnProfile:
    """One column: the Python/pandas types of its non-null values and how many values are null."""

    column: str
    types: str
    nulls: int
    non_null: int


@dataclass(frozen=True)
class FileInventory:
    """What fetching and reading one registered file found."""

    source: SourceFile
    state: InventoryState
    provenance: fetch.Provenance | None = None
    size_bytes: int | None = None
    rows: int | None = None
    row_kind: str = "rows"  # rows, members (zip), lines (text), keys (json object)
    columns: tuple[ColumnProfile, ...] = ()
    reason: str = ""
    expected_sha256: str | None = None
    actual_sha256: str | None = None


def selected_sources(datasets: Sequence[str]) -> list[SourceFile]:
    """The registered files of `datasets` (every dataset when empty), in registry order."""
    chosen = set(datasets or DATASETS)
    return [source for source in REGISTRY.values() if source.dataset in chosen]


def check_id_for(source: SourceFile) -> str:
    """`file.<dataset>.<path segments>`, each segment's non-alphanumerics as `_` (stable across runs)."""
    segments = [source.dataset, *source.file.split("/")]
    return ".".join([CHECK_PREFIX] + [re.sub(r"[^A-Za-z0-9_]", "_", segment) for segment in segments])


def check_ids(sources: Sequence[SourceFile]) -> dict[str, str]:
    """Check id per file key; two files mapping to one id would make ids unstable, so that raises."""
    ids: dict[str, str] = {}
    seen: dict[str, str] = {}
    for source in sources:
        check_id = check_id_for(source)
        if check_id in seen:
            raise ValueError(f"files {seen[check_id]!r} and {source.key!r} both map to check id {check_id!r}")
        seen[check_id] = source.key
        ids[source.key] = check_id
    return ids


def inventory_file(source: SourceFile, *, mirror: str | os.PathLike[str] | None = None,
                   offline: bool | None = None) -> FileInventory:
    """Fetch (verifying the pin or lock) and profile one file; data problems become states, not exceptions."""
    try:
        fetched = fetch.fetch_source(source, mirror=mirror, offline=offline)
    except ChecksumMismatchError as exc:
        return FileInventory(source, "checksum_mismatch", reason=exc.message,
                             expected_sha256=_text_or_none(exc.fields.get("expected")),
                             actual_sha256=_text_or_none(exc.fields.get("actual")))
    except DataError as exc:
        return FileInventory(source, "unavailable", reason=str(exc), expected_sha256=source.sha256)
    provenance = fetched.provenance
    base = {"provenance": provenance, "size_bytes": fetched.path.stat().st_size,
            "expected_sha256": source.sha256 or _locked_hash(source), "actual_sha256": provenance.sha256}
    try:
        rows, row_kind, columns = profile_file(fetched.path, source.format)
    except DataError as exc:
        return FileInventory(source, "unreadable", reason=str(exc), **base)
    return FileInventory(source, "ok", rows=rows, row_kind=row_kind, columns=columns, **base)


def profile_file(path: Path, file_format: str) -> tuple[int | None, str, tuple[ColumnProfile, ...]]:
    """Row count, what a row is, and per-column types and null counts, read through `audit_lib.data.readers`."""
    if file_format == "zip":
        readers.read_table(path, file_format)  # verifies every member's CRC
        with zipfile.ZipFile(path) as archive:
            return len(archive.infolist()), "members", ()
    if file_format == "text":
        with readers.open_text(path) as handle:
            return sum(1 for _ in handle), "lines", ()
    frame = readers.read_table(path, file_format)
    if frame is None:
        return None, "rows", ()
    row_kind = "keys" if file_format == "json" and list(frame.columns) == ["key", "value_type"] else "rows"
    return len(frame), row_kind, tuple(column_profiles(frame))


def column_profiles(frame: Any) -> list[ColumnProfile]:
    """Types seen among each column's non-null values (`str`, `int`, `list`, ...) and its null count."""
    profiles = []
    for column in frame.columns:
        series = frame[column]
        null_mask = series.isna()
        nulls = int(null_mask.sum())
        present = series[~null_mask]
        if series.dtype == object or str(series.dtype) in ("str", "string"):
            type_names = sorted({type(value).__name__ for value in present})
            types = "|".join(type_names) if type_names else "(all null)"
        else:
            types = str(series.dtype)
        profiles.append(ColumnProfile(str(column), types, nulls, int(len(present))))
    return profiles


def check_title(source: SourceFile) -> str:
    return f"{source.key}: present, verified against its pin, readable"


def file_check(inventory: FileInventory) -> Result:
    """One check per file: pass when fetched, verified and readable; skipped when absent; defect otherwise."""
    source = inventory.source
    expected = inventory.expected_sha256 or "unpinned (no hash recorded yet)"
    meta: dict[str, Any] = {"dataset": source.dataset, "file": source.file, "format": source.format,
                            "pinned": source.pinned, "licence": source.licence}
    if inventory.state == "unavailable":
        return Result.skipped(f"not available: {inventory.reason}", expected=expected,
                              meta={"missing": [source.key], **meta})
    if inventory.state == "checksum_mismatch":
        return Result("defect", observed=inventory.actual_sha256, expected=expected,
                      summary=inventory.reason, meta=meta)
    provenance = inventory.provenance
    assert provenance is not None
    meta.update({"source": provenance.source, "bytes": inventory.size_bytes, "synthetic": provenance.synthetic})
    if inventory.state == "unreadable":
        return Result("defect", observed=inventory.actual_sha256, expected=expected,
                      summary=f"sha256 verified but the file does not read as {source.format}: {inventory.reason}",
                      meta=meta, synthetic=provenance.synthetic)
    if inventory.expected_sha256 and inventory.expected_sha256 != inventory.actual_sha256:
        return Result("defect", observed=inventory.actual_sha256, expected=expected,
                      summary=f"sha256 {inventory.actual_sha256} differs from the expected {inventory.expected_sha256}",
                      meta=meta, synthetic=provenance.synthetic)
    meta.update({inventory.row_kind: inventory.rows, "columns": len(inventory.columns)})
    if source.pinned:
        pin_text = "matches its registry pin"
    elif inventory.expected_sha256:
        pin_text = "unpinned upstream: hash matches the one recorded in data_cache/lock.json"
    else:
        pin_text = "unpinned upstream and no hash recorded in data_cache/lock.json yet, so nothing to verify against"
    shape = f"{inventory.rows} {inventory.row_kind}" if inventory.rows is not None else "not tabular"
    if inventory.columns:
        shape += f" × {len(inventory.columns)} columns"
        nulls = sum(c.nulls for c in inventory.columns)
        shape += f", {nulls} null cells"
    details = [{"column": c.column, "types": c.types, "nulls": c.nulls, "non_null": c.non_null}
               for c in inventory.columns]
    return Result("pass", observed=provenance.sha256, expected=expected,
                  summary=f"{shape}; from {provenance.source}; sha256 {pin_text}.", details=details, meta=meta,
                  synthetic=provenance.synthetic)


def _locked_hash(source: SourceFile) -> str | None:
    try:
        entry = fetch.read_lock().get(source.key)
    except DataError:
        return None
    return entry.get("sha256") if entry else None


def _text_or_none(value: object) -> str | None:
    return None if value is None else str(value)
