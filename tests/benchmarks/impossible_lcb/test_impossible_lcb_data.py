"""The real loader: pinned parquet rows through fetch (mirror or mocked hub download), and its errors."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_impossible_lcb_tasks import task_row

from audit_lib.benchmarks.impossible_lcb.data import load_rows, parquet_file, rows_from_parquet
from audit_lib.data import fetch
from audit_lib.errors import SchemaError

ONEOFF = parquet_file("oneoff")


def _write_parquet(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def test_rows_come_from_the_mirror_parquet(tmp_path, monkeypatch, isolated_cache):
    mirror = tmp_path / "mirror"
    _write_parquet(mirror / "impossible_lcb" / ONEOFF, [task_row(task_id="lcbhard_0"), task_row(task_id="lcbhard_1")])
    monkeypatch.setenv("AUDIT_MIRROR", str(mirror))
    rows = load_rows("oneoff")
    assert rows.source == "parquet" and [r.task_id for r in rows.rows] == ["lcbhard_0", "lcbhard_1"]
    assert rows.provenance[0].source == "mirror" and rows.rows[1].row == 2


def test_rows_download_through_huggingface_hub(tmp_path, monkeypatch, isolated_cache):
    fixture = _write_parquet(tmp_path / "upstream" / ONEOFF, [task_row(task_id="lcbhard_7")])
    calls = []

    def fake_hf_hub_download(*, repo_id, filename, revision, repo_type, local_dir, **_):
        calls.append((repo_id, filename, revision, repo_type))
        target = Path(local_dir) / filename
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(fixture.read_bytes())
        return str(target)

    monkeypatch.delenv("AUDIT_MIRROR", raising=False)
    for name in ("AUDIT_OFFLINE", "HF_HUB_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr("huggingface_hub.hf_hub_download", fake_hf_hub_download)
    monkeypatch.setattr(fetch, "_unreachable_reason", lambda url: None, raising=False)
    rows = load_rows("oneoff")
    assert calls == [("fjzzq2002/impossible_livecodebench", ONEOFF, "98650ffc3f28a01b261669b6d19fcd7773823710",
                      "dataset")]
    assert rows.source == "parquet" and rows.rows[0].task_id == "lcbhard_7"
    assert rows.provenance[0].source == "download"


def test_offline_without_parquet_falls_back_to_reconstructed_rows_and_says_so(tmp_path, monkeypatch, isolated_cache):
    mirror = tmp_path / "mirror"
    (mirror / "impossible_lcb").mkdir(parents=True)
    monkeypatch.setenv("AUDIT_MIRROR", str(mirror))
    monkeypatch.setenv("AUDIT_OFFLINE", "1")
    rows = load_rows("conflicting")
    assert rows.source == "none" and rows.rows == () and "unavailable" in rows.unavailable_reason


def test_a_non_string_field_names_file_row_and_field(tmp_path):
    bad = task_row()
    bad["entry_point"] = None
    path = _write_parquet(tmp_path / "oneoff.parquet", [task_row(), bad])
    with pytest.raises(SchemaError) as caught:
        rows_from_parquet(path, "oneoff")
    assert caught.value.fields == {"file": "oneoff.parquet", "row": 2, "field": "entry_point"}


def test_a_missing_column_is_a_schema_error(tmp_path):
    row = task_row()
    del row["original_test"]
    with pytest.raises(SchemaError, match="original_test"):
        rows_from_parquet(_write_parquet(tmp_path / "x.parquet", [row]), "oneoff")
