"""Read data files with errors that name the file, the row (1-based line) and the field."""

from __future__ import annotations

import gzip
import io
import json
import os
import zlib
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from audit_lib.errors import CorruptFileError, SchemaError

GZIP_MAGIC = b"\x1f\x8b"


def open_text(path: str | os.PathLike[str]) -> io.TextIOBase:
    """Open a text file, transparently gunzipping when the file starts with the gzip magic bytes."""
    with open(path, "rb") as probe:
        magic = probe.read(2)
    if magic == GZIP_MAGIC:
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8")  # type: ignore[return-value]
    return open(path, encoding="utf-8")  # type: ignore[return-value]


def iter_jsonl(path: str | os.PathLike[str], *, required: Sequence[str] = ()) -> Iterator[dict[str, Any]]:
    """Yield the objects of a JSON-lines file (plain or gzip); blank lines are skipped."""
    name = os.fspath(path)
    line_number = 0
    try:
        with open_text(path) as handle:
            for line_number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise CorruptFileError(
                        f"{name}, line {line_number}: malformed JSON ({exc.msg} at column {exc.colno})",
                        file=name, row=line_number, field=None) from exc
                if not isinstance(row, dict):
                    raise SchemaError(f"{name}, line {line_number}: expected a JSON object, got "
                                      f"{type(row).__name__}", file=name, row=line_number, field=None)
                require_fields(row, required, file=name, row_number=line_number)
                yield row
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise CorruptFileError(f"{name}: truncated or corrupt gzip stream after line {line_number} ({exc})",
                               file=name, row=line_number, field=None) from exc
    except UnicodeDecodeError as exc:
        raise CorruptFileError(f"{name}, line {line_number + 1}: not UTF-8 text ({exc.reason})",
                               file=name, row=line_number + 1, field=None) from exc


def read_jsonl(path: str | os.PathLike[str], *, required: Sequence[str] = ()) -> list[dict[str, Any]]:
    return list(iter_jsonl(path, required=required))


def require_fields(row: dict[str, Any], required: Iterable[str], *, file: str, row_number: int) -> None:
    for field_name in required:
        if field_name not in row:
            raise SchemaError(f"{file}, row {row_number}: missing required field {field_name!r}",
                              file=file, row=row_number, field=field_name)


def read_json(path: str | os.PathLike[str]) -> Any:
    name = os.fspath(path)
    try:
        with open_text(path) as handle:
            return json.load(handle)
    except json.JSONDecodeError as exc:
        raise CorruptFileError(f"{name}, line {exc.lineno}: malformed JSON ({exc.msg} at column {exc.colno})",
                               file=name, row=exc.lineno, field=None) from exc
    except (EOFError, gzip.BadGzipFile, zlib.error, UnicodeDecodeError) as exc:
        raise CorruptFileError(f"{name}: truncated or corrupt file ({exc})", file=name, row=None, field=None) from exc


def read_csv_pandas(path: str | os.PathLike[str], *, required: Sequence[str] = (), **kwargs: Any):
    """Read a CSV with pandas' default dtype inference (how upstream pipelines read it)."""
    import pandas as pd

    name = os.fspath(path)
    try:
        frame = pd.read_csv(path, **kwargs)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, EOFError, zlib.error) as exc:
        raise CorruptFileError(f"{name}: not a readable CSV ({exc})", file=name, row=None, field=None) from exc
    _require_columns(name, list(frame.columns), required)
    return frame


def read_csv_text(path: str | os.PathLike[str], *, required: Sequence[str] = ()):
    """Read a CSV with every column as a string (polars), so nothing is reinterpreted."""
    import polars as pl

    name = os.fspath(path)
    try:
        frame = pl.read_csv(path, infer_schema=False)
    except (pl.exceptions.ComputeError, pl.exceptions.NoDataError, UnicodeDecodeError) as exc:
        raise CorruptFileError(f"{name}: not a readable CSV ({exc})", file=name, row=None, field=None) from exc
    _require_columns(name, list(frame.columns), required)
    return frame


def read_parquet(path: str | os.PathLike[str], *, required: Sequence[str] = ()):
    """Read a parquet file into pandas; a truncated or corrupt file is a `CorruptFileError`."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    name = os.fspath(path)
    try:
        table = pq.read_table(path)
    except (pa.ArrowInvalid, pa.ArrowIOError, OSError) as exc:
        raise CorruptFileError(f"{name}: not a readable parquet file ({exc})", file=name, row=None,
                               field=None) from exc
    _require_columns(name, table.column_names, required)
    return table.to_pandas()


def read_table(path: str | os.PathLike[str], file_format: str):
    """Any registered tabular format as a pandas DataFrame (the data inventory uses this); `None` for non-tables."""
    import pandas as pd

    if file_format in ("jsonl", "jsonl.gz"):
        return pd.DataFrame(read_jsonl(path))
    if file_format == "csv":
        return read_csv_pandas(path)
    if file_format == "parquet":
        return read_parquet(path)
    if file_format == "json":
        content = read_json(path)
        if isinstance(content, list) and all(isinstance(item, dict) for item in content):
            return pd.DataFrame(content)
        if isinstance(content, dict):
            return pd.DataFrame({"key": list(content.keys()),
                                 "value_type": [type(v).__name__ for v in content.values()]})
        return None
    if file_format == "zip":
        _verify_zip(Path(path))
    return None


def verify_parses(path: str | os.PathLike[str], file_format: str) -> None:
    """Parse a whole file with its format's reader; a CSV record with fewer fields than its header is refused too.

    pandas and polars both read a CSV cut inside an unquoted record as a short last row filled with nulls.
    """
    read_table(path, file_format)
    if file_format == "csv":
        _require_full_records(Path(path))


def _require_full_records(path: Path) -> None:
    import csv

    csv.field_size_limit(1 << 30)  # submissions hold whole programs in one field (the default limit is 128 KiB)
    with open_text(path) as handle:
        records = csv.reader(handle, strict=True)
        try:
            header = next(records, None)
            for record in records:
                if record and len(record) < len(header or ()):
                    raise CorruptFileError(
                        f"{path}, record {records.line_num}: {len(record)} of {len(header or ())} fields "
                        f"(truncated?)", file=str(path), row=records.line_num,
                        field=(header or [""])[len(record)])
        except csv.Error as exc:
            raise CorruptFileError(f"{path}, line {records.line_num}: not a readable CSV ({exc})", file=str(path),
                                   row=records.line_num, field=None) from exc


def _verify_zip(path: Path) -> None:
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            broken = archive.testzip()
    except zipfile.BadZipFile as exc:
        raise CorruptFileError(f"{path}: not a readable zip archive ({exc})", file=str(path), row=None,
                               field=None) from exc
    if broken is not None:
        raise CorruptFileError(f"{path}: member {broken!r} fails its CRC check", file=str(path), row=None,
                               field=broken)


def _require_columns(name: str, columns: Sequence[str], required: Sequence[str]) -> None:
    missing = [column for column in required if column not in columns]
    if missing:
        raise SchemaError(f"{name}: missing required column(s) {', '.join(map(repr, missing))}; "
                          f"found {', '.join(map(repr, columns))}", file=name, row=None, field=missing[0])
