"""A damaged unpinned copy never enters lock.json, so the fixed copy is accepted; every refusal says what to run."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from audit_lib.benchmarks.codeinsights import synthetic
from audit_lib.data import cli as data_cli
from audit_lib.data.fetch import fetch_source, read_lock
from audit_lib.data.sources import SourceFile, get_source
from audit_lib.errors import ChecksumMismatchError, CorruptFileError, DataUnavailableError

SUBMISSIONS = "codeinsights/Scenario5_data.csv"
ONEOFF_PARQUET = "impossible_lcb/data/oneoff-00000-of-00001.parquet"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture()
def codeinsights_mirror(tmp_path: Path) -> Path:
    """A temporary mirror with the (synthetic, real-schema) CodeInsights files; the real mirror is never touched."""
    synthetic.generate(0, tmp_path / "mirror" / "codeinsights")
    return tmp_path / "mirror"


def _fetch(key: str, mirror: Path, cache: Path, **options: bool):
    dataset, _, file = key.partition("/")
    return fetch_source(get_source(dataset, file), mirror=mirror, cache_dir=cache, offline=True, **options)


def _cut(path: Path, keep: int) -> bytes:
    good = path.read_bytes()
    path.write_bytes(good[:keep])
    return good


def test_a_truncated_unpinned_csv_is_refused_unrecorded_and_its_fixed_copy_then_accepted(
        codeinsights_mirror: Path, tmp_path: Path) -> None:
    mirrored = codeinsights_mirror / SUBMISSIONS
    good = _cut(mirrored, 20_000)  # inside a quoted, multi-line field
    cache = tmp_path / "cache"
    with pytest.raises(CorruptFileError) as refused:
        _fetch(SUBMISSIONS, codeinsights_mirror, cache)
    assert SUBMISSIONS not in read_lock(cache)
    assert not (cache / SUBMISSIONS).exists()
    message = str(refused.value)
    assert str(mirrored) in message and _sha(mirrored) in message and "nothing was recorded in lock.json" in message
    assert "python -m audit_lib fetch --refresh codeinsights" in message

    mirrored.write_bytes(good)  # the mirror is fixed: the same command now succeeds
    fetched = _fetch(SUBMISSIONS, codeinsights_mirror, cache)
    assert fetched.path.read_bytes() == good
    assert read_lock(cache)[SUBMISSIONS]["sha256"] == hashlib.sha256(good).hexdigest()


def test_a_csv_cut_inside_an_unquoted_record_is_refused_by_its_field_count(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    (mirror / "toyset").mkdir(parents=True)
    (mirror / "toyset" / "rows.csv").write_bytes(b"a,b,c\n1,2,3\n4,5")  # pandas reads 4,5,NaN
    source = SourceFile("toyset", "rows.csv", None, None, "MIT", "csv", "test fixture")
    with pytest.raises(CorruptFileError, match=r"record 3: 2 of 3 fields") as refused:
        fetch_source(source, mirror=mirror, cache_dir=tmp_path / "cache", offline=True)
    assert refused.value.fields["field"] == "c"
    assert read_lock(tmp_path / "cache") == {}


def test_a_truncated_unpinned_parquet_is_refused_unrecorded_and_its_fixed_copy_then_accepted(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    mirrored = tmp_path / "mirror" / ONEOFF_PARQUET
    mirrored.parent.mkdir(parents=True)
    pq.write_table(pa.table({"task_id": [f"lcbhard_{i}" for i in range(50)], "test": ["assert True"] * 50}), mirrored)
    good = _cut(mirrored, mirrored.stat().st_size // 2)
    cache = tmp_path / "cache"
    with pytest.raises(CorruptFileError, match="does not parse as parquet"):
        _fetch(ONEOFF_PARQUET, tmp_path / "mirror", cache)
    assert ONEOFF_PARQUET not in read_lock(cache)

    mirrored.write_bytes(good)
    assert _fetch(ONEOFF_PARQUET, tmp_path / "mirror", cache).path.read_bytes() == good
    assert read_lock(cache)[ONEOFF_PARQUET]["sha256"] == hashlib.sha256(good).hexdigest()


def test_a_pinned_checksum_refusal_names_both_hashes_and_the_next_command(tmp_path: Path) -> None:
    source = get_source("impossible_lcb", "known_issues.csv")
    mirrored = tmp_path / "mirror" / "impossible_lcb" / "known_issues.csv"
    mirrored.parent.mkdir(parents=True)
    mirrored.write_bytes(b"task_id,issue\nlcbhard_1,tampered\n")
    with pytest.raises(ChecksumMismatchError) as refused:
        fetch_source(source, mirror=tmp_path / "mirror", cache_dir=tmp_path / "cache", offline=True)
    message = str(refused.value)
    assert source.sha256 in message and _sha(mirrored) in message and str(mirrored) in message
    assert f"Replace {mirrored} with a good copy" in message
    assert "python -m audit_lib fetch --refresh impossible_lcb" in message


def test_a_missing_file_names_the_places_tried_and_how_to_supply_it(tmp_path: Path) -> None:
    (tmp_path / "mirror").mkdir()
    with pytest.raises(DataUnavailableError) as refused:
        _fetch(SUBMISSIONS, tmp_path / "mirror", tmp_path / "cache")
    message = str(refused.value)
    assert str(tmp_path / "mirror" / SUBMISSIONS) in message
    assert "AUDIT_MIRROR" in message and "python -m audit_lib fetch codeinsights" in message


def test_a_lock_mismatch_names_both_hashes_and_both_ways_on(codeinsights_mirror: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = _fetch(SUBMISSIONS, codeinsights_mirror, cache)
    recorded = first.provenance.sha256
    mirrored = codeinsights_mirror / SUBMISSIONS
    shutil.copyfile(synthetic.generate(1, tmp_path / "other").paths["Scenario5_data.csv"], mirrored)
    with pytest.raises(ChecksumMismatchError) as refused:
        _fetch(SUBMISSIONS, codeinsights_mirror, cache, refresh=True)
    message = str(refused.value)
    assert recorded in message and _sha(mirrored) in message
    assert f"python -m audit_lib fetch --accept {SUBMISSIONS}" in message
    assert f"put that copy back at {mirrored}" in message


def test_fetch_refresh_exits_non_zero_and_says_refused_when_a_file_stays_unusable(
        codeinsights_mirror: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("AUDIT_DATA_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("AUDIT_OFFLINE", "1")
    assert data_cli.fetch_datasets(["codeinsights"], str(codeinsights_mirror)) == 0
    capsys.readouterr()
    _cut(codeinsights_mirror / SUBMISSIONS, 20_000)
    assert data_cli.fetch_datasets(["codeinsights"], str(codeinsights_mirror), refresh=True) == 1
    printed = capsys.readouterr()
    assert f"REFUSED  {SUBMISSIONS}" in printed.err and "does not parse" in printed.err
    assert "2 of 3 files" in printed.out and "1 refused, 0 missing" in printed.out

    (codeinsights_mirror / SUBMISSIONS).unlink()
    assert data_cli.fetch_datasets(["codeinsights"], str(codeinsights_mirror), refresh=True) == 1
    printed = capsys.readouterr()
    assert f"MISSING  {SUBMISSIONS}" in printed.err and "0 refused, 1 missing" in printed.out
