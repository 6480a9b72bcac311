"""Load Impossible-LiveCodeBench inputs: the audit's defect list, its manifest, and full HF rows when available.

Full rows come from the pinned parquet files through `fetch` (downloaded with huggingface_hub when online). When
they are unavailable the row-level checks fall back to the two reconstructed `oneoff` rows, and say so.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from audit_lib.data import fetch, readers
from audit_lib.errors import DataError, SchemaError

DATASET = "impossible_lcb"
KNOWN_ISSUES_FILE = "known_issues.csv"
MANIFEST_FILE = "lcb_manifest.csv"
RECONSTRUCTED_FILE = "oneoff_examples_reconstructed.jsonl"
SPLITS: tuple[str, ...] = ("original", "oneoff", "conflicting")
ROW_FIELDS: tuple[str, ...] = ("task_id", "prompt", "entry_point", "test", "original_test", "impossible_type")
KNOWN_ISSUE_FIELDS: tuple[str, ...] = ("task_id", "split", "issue", "detail", "action")
MANIFEST_FIELDS: tuple[str, ...] = ("task_id", "split", "entry_point", "syntax_ok", "lines_removed", "lines_added",
                                    "n_asserts", "mutated_assert", "original_assert", "call", "extraction")
KNOWN_ISSUES_KEY = f"{DATASET}/{KNOWN_ISSUES_FILE}"
MANIFEST_KEY = f"{DATASET}/{MANIFEST_FILE}"
RECONSTRUCTED_KEY = f"{DATASET}/{RECONSTRUCTED_FILE}"
_TASK_ID = re.compile(r"^(?P<prefix>[A-Za-z_]+?)_?(?P<number>\d+)$")

RowSource = Literal["parquet", "reconstructed", "none"]


def parquet_file(split: str) -> str:
    if split not in SPLITS:
        raise ValueError(f"split {split!r} is not one of {SPLITS}")
    return f"data/{split}-00000-of-00001.parquet"


def parquet_key(split: str) -> str:
    return f"{DATASET}/{parquet_file(split)}"


@dataclass(frozen=True)
class KnownIssue:
    """One row of the audit's defect list."""

    row: int
    task_id: str
    split: str
    issue: str
    detail: str
    action: str


@dataclass(frozen=True)
class ManifestEntry:
    """One manifest row: the mutated and original assertion of one task in one impossible split."""

    row: int
    task_id: str
    split: str
    entry_point: str
    syntax_ok: bool
    lines_removed: int
    lines_added: int
    n_asserts: int | None
    mutated_assert: str
    original_assert: str
    call: str
    extraction: str


@dataclass(frozen=True)
class TaskRow:
    """One full dataset row in the HF schema."""

    task_id: str
    prompt: str
    entry_point: str
    test: str
    original_test: str
    impossible_type: str
    file: str
    row: int


@dataclass(frozen=True)
class RowSet:
    """The full rows available for one split, and where they came from."""

    split: str
    rows: tuple[TaskRow, ...]
    source: RowSource
    provenance: tuple[Any, ...]
    unavailable_reason: str = ""
    missing: Mapping[str, str] = field(default_factory=dict)  # "<dataset>/<file>" -> why it could not be fetched


def task_number(task_id: str) -> int:
    """The numeric part of `lcbhard_17`; a malformed id is an error."""
    match = _TASK_ID.match(task_id)
    if match is None:
        raise ValueError(f"task id {task_id!r} does not end in a number")
    return int(match.group("number"))


def load_known_issues() -> tuple[tuple[KnownIssue, ...], Any]:
    fetched = fetch.fetch(DATASET, KNOWN_ISSUES_FILE)
    frame = readers.read_csv_text(fetched.path, required=KNOWN_ISSUE_FIELDS)
    issues = []
    for line, record in enumerate(frame.iter_rows(named=True), start=2):
        values = {name: _required_text(record, name, fetched.path.name, line) for name in KNOWN_ISSUE_FIELDS}
        issues.append(KnownIssue(row=line, **values))
    return tuple(issues), fetched.provenance


def load_manifest() -> tuple[tuple[ManifestEntry, ...], Any]:
    fetched = fetch.fetch(DATASET, MANIFEST_FILE)
    frame = readers.read_csv_text(fetched.path, required=MANIFEST_FIELDS)
    entries = []
    name = fetched.path.name
    for line, record in enumerate(frame.iter_rows(named=True), start=2):
        entries.append(ManifestEntry(
            row=line,
            task_id=_required_text(record, "task_id", name, line),
            split=_required_text(record, "split", name, line),
            entry_point=_required_text(record, "entry_point", name, line),
            syntax_ok=_boolean(record, "syntax_ok", name, line),
            lines_removed=_integer(record, "lines_removed", name, line),
            lines_added=_integer(record, "lines_added", name, line),
            n_asserts=_optional_integer(record, "n_asserts", name, line),
            mutated_assert=record.get("mutated_assert") or "",
            original_assert=record.get("original_assert") or "",
            call=record.get("call") or "",
            extraction=record.get("extraction") or "",
        ))
    return tuple(entries), fetched.provenance


def load_rows(split: str) -> RowSet:
    """Full rows of one split: the pinned parquet file, else (for `oneoff`) the reconstructed rows, else none."""
    fetched = fetch.try_fetch(DATASET, parquet_file(split))
    if not isinstance(fetched, DataError):
        rows = rows_from_parquet(fetched.path, split)
        return RowSet(split, rows, "parquet", (fetched.provenance,))
    reason = f"{parquet_file(split)} unavailable ({fetched.message.splitlines()[0]})"
    missing = {parquet_key(split): fetched.message}
    if split != "oneoff":
        return RowSet(split, (), "none", (), reason, missing)
    reconstructed = fetch.try_fetch(DATASET, RECONSTRUCTED_FILE)
    if isinstance(reconstructed, DataError):
        return RowSet(split, (), "none", (), reason + f"; {RECONSTRUCTED_FILE} unavailable too",
                      {**missing, RECONSTRUCTED_KEY: reconstructed.message})
    records = readers.read_jsonl(reconstructed.path, required=ROW_FIELDS)
    rows = tuple(_task_row(record, reconstructed.path.name, line) for line, record in enumerate(records, start=1)
                 if record.get("impossible_type") == split)
    other_split = [f"line {line}: {record.get('task_id')} ({record.get('impossible_type')!r})"
                   for line, record in enumerate(records, start=1) if record.get("impossible_type") != split]
    excluded = (f"; {len(other_split)} rows of another impossible_type left out: {other_split}"
                if other_split else "")
    return RowSet(split, rows, "reconstructed", (reconstructed.provenance,),
                  reason + f"; using the {len(rows)} reconstructed rows of {RECONSTRUCTED_FILE}" + excluded, missing)


def rows_from_parquet(path: Any, split: str) -> tuple[TaskRow, ...]:
    """Read a split's parquet file (pyarrow) into rows, every field checked to be a string."""
    frame = readers.read_parquet(path, required=ROW_FIELDS)
    name = str(getattr(path, "name", path))
    return tuple(_task_row(record, name, index) for index, record in
                 enumerate(frame.to_dict(orient="records"), start=1))


def _task_row(record: dict[str, Any], file: str, row: int) -> TaskRow:
    values = {}
    for name in ROW_FIELDS:
        value = record.get(name)
        if not isinstance(value, str):
            raise SchemaError(f"{file}: row {row}: field {name!r} must be a string, got {type(value).__name__}",
                              file=file, row=row, field=name)
        values[name] = value
    return TaskRow(file=file, row=row, **values)


def _required_text(record: dict[str, Any], name: str, file: str, line: int) -> str:
    value = record.get(name)
    if value is None or not str(value).strip():
        raise SchemaError(f"{file}: row {line}: field {name!r} is empty", file=file, row=line, field=name)
    return str(value).strip()


def _boolean(record: dict[str, Any], name: str, file: str, line: int) -> bool:
    value = _required_text(record, name, file, line)
    if value not in ("True", "False"):
        raise SchemaError(f"{file}: row {line}: field {name!r} is {value!r}, not True/False",
                          file=file, row=line, field=name)
    return value == "True"


def _integer(record: dict[str, Any], name: str, file: str, line: int) -> int:
    value = _optional_integer(record, name, file, line)
    if value is None:
        raise SchemaError(f"{file}: row {line}: field {name!r} is empty", file=file, row=line, field=name)
    return value


def _optional_integer(record: dict[str, Any], name: str, file: str, line: int) -> int | None:
    raw = (record.get(name) or "").strip()
    if not raw:
        return None
    try:
        number = float(raw)
    except ValueError as exc:
        raise SchemaError(f"{file}: row {line}: field {name!r} is {raw!r}, not a number",
                          file=file, row=line, field=name) from exc
    if not number.is_integer():
        raise SchemaError(f"{file}: row {line}: field {name!r} is {raw!r}, not a whole number",
                          file=file, row=line, field=name)
    return int(number)


def ids_in(entries: Sequence[ManifestEntry], split: str) -> tuple[str, ...]:
    """Task ids of one split, in manifest order, each once."""
    return tuple(dict.fromkeys(entry.task_id for entry in entries if entry.split == split))
