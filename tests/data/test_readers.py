"""readers: corrupt, truncated and schema-violating files raise errors naming file, row and field."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from audit_lib.data.readers import read_csv_pandas, read_csv_text, read_json, read_jsonl, read_parquet, read_table
from audit_lib.errors import CorruptFileError, SchemaError


def test_jsonl_plain_and_gzip_read_the_same_rows(tmp_path: Path):
    text = '{"a": 1}\n\n{"a": 2}\n'
    (tmp_path / "rows.jsonl").write_text(text, encoding="utf-8")
    with gzip.open(tmp_path / "rows.jsonl.gz", "wt", encoding="utf-8") as handle:
        handle.write(text)
    assert read_jsonl(tmp_path / "rows.jsonl") == read_jsonl(tmp_path / "rows.jsonl.gz") == [{"a": 1}, {"a": 2}]


def test_malformed_json_line_names_the_file_and_line(tmp_path: Path):
    path = tmp_path / "rows.jsonl"
    path.write_text('{"a": 1}\n{"a": 2,,}\n', encoding="utf-8")
    with pytest.raises(CorruptFileError) as info:
        read_jsonl(path)
    assert f"{path}, line 2: malformed JSON" in str(info.value)
    assert info.value.fields["row"] == 2


def test_missing_required_field_names_file_row_and_field(tmp_path: Path):
    path = tmp_path / "rows.jsonl"
    path.write_text('{"task_id": "a", "x": 1}\n{"task_id": "b"}\n', encoding="utf-8")
    with pytest.raises(SchemaError) as info:
        read_jsonl(path, required=("task_id", "x"))
    assert "row 2: missing required field 'x'" in str(info.value)
    assert info.value.fields == {"file": str(path), "row": 2, "field": "x"}


def test_non_object_line_is_a_schema_error(tmp_path: Path):
    path = tmp_path / "rows.jsonl"
    path.write_text("[1, 2]\n", encoding="utf-8")
    with pytest.raises(SchemaError, match="line 1: expected a JSON object"):
        read_jsonl(path)


def test_truncated_gzip_is_reported_as_corrupt(tmp_path: Path):
    full = gzip.compress(b"".join(b'{"i": %d}\n' % i for i in range(2000)))
    path = tmp_path / "rows.jsonl.gz"
    path.write_bytes(full[: len(full) // 2])
    with pytest.raises(CorruptFileError, match="truncated or corrupt gzip"):
        read_jsonl(path)


def test_truncated_json_document_names_the_line(tmp_path: Path):
    path = tmp_path / "doc.json"
    path.write_text('{"a": [1, 2,\n', encoding="utf-8")
    with pytest.raises(CorruptFileError, match="malformed JSON"):
        read_json(path)


def test_csv_missing_columns_are_named(tmp_path: Path):
    path = tmp_path / "t.csv"
    path.write_text("student_id,pass\n1,0111\n", encoding="utf-8")
    with pytest.raises(SchemaError, match="missing required column\\(s\\) 'timestamp'"):
        read_csv_pandas(path, required=("student_id", "timestamp"))
    frame = read_csv_text(path, required=("pass",))
    assert frame["pass"].to_list() == ["0111"]


def test_corrupt_csv_is_reported(tmp_path: Path):
    path = tmp_path / "t.csv"
    path.write_bytes(b"a,b\n1,2\n\xff\xfe\x00garbage,\"unterminated\n")
    with pytest.raises(CorruptFileError, match="not a readable CSV"):
        read_csv_pandas(path)


def test_truncated_parquet_is_reported(tmp_path: Path):
    import pandas as pd

    path = tmp_path / "t.parquet"
    pd.DataFrame({"task_id": ["a", "b"], "test": ["x", "y"]}).to_parquet(path)
    assert list(read_parquet(path, required=("task_id",))["task_id"]) == ["a", "b"]
    path.write_bytes(path.read_bytes()[:40])
    with pytest.raises(CorruptFileError, match="not a readable parquet"):
        read_parquet(path)


def test_read_table_handles_json_objects_and_broken_zip(tmp_path: Path):
    doc = tmp_path / "doc.json"
    doc.write_text('{"175": [1], "176": [2]}', encoding="utf-8")
    assert list(read_table(doc, "json")["key"]) == ["175", "176"]
    archive = tmp_path / "a.zip"
    archive.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(CorruptFileError, match="zip"):
        read_table(archive, "zip")
