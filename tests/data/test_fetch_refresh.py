"""`fetch --refresh` re-resolves a cached file; an unpinned file that changed upstream is shown with both hashes
and the one command that accepts it (`fetch --accept`)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from audit_lib.data import cli as data_cli
from audit_lib.data.fetch import fetch_source, read_lock
from audit_lib.data.sources import SourceFile
from audit_lib.errors import ChecksumMismatchError

OLD = b"v1\n"
NEW = b"v2, changed upstream\n"


def unpinned() -> SourceFile:
    return SourceFile("toyset", "data.txt", None, None, "MIT", "text", "test fixture")


def mirror_with(root: Path, payload: bytes) -> Path:
    (root / "toyset").mkdir(parents=True, exist_ok=True)
    (root / "toyset" / "data.txt").write_bytes(payload)
    return root


def test_refresh_ignores_the_cache_and_a_changed_unpinned_copy_names_both_hashes(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    fetch_source(unpinned(), mirror=mirror_with(tmp_path / "m1", OLD), cache_dir=cache, offline=True)
    newer = mirror_with(tmp_path / "m2", NEW)
    assert fetch_source(unpinned(), mirror=newer, cache_dir=cache, offline=True).provenance.source == "cache"
    with pytest.raises(ChecksumMismatchError) as refused:
        fetch_source(unpinned(), mirror=newer, cache_dir=cache, offline=True, refresh=True)
    message = str(refused.value)
    assert hashlib.sha256(OLD).hexdigest() in message and hashlib.sha256(NEW).hexdigest() in message
    assert "python -m audit_lib fetch --accept toyset/data.txt" in message
    assert (cache / "toyset" / "data.txt").read_bytes() == OLD  # the good copy stays


def test_accept_replaces_the_lock_entry_and_the_cached_copy(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    fetch_source(unpinned(), mirror=mirror_with(tmp_path / "m1", OLD), cache_dir=cache, offline=True)
    fetched = fetch_source(unpinned(), mirror=mirror_with(tmp_path / "m2", NEW), cache_dir=cache, offline=True,
                           accept_new=True)
    assert fetched.path.read_bytes() == NEW
    entry = read_lock(cache)["toyset/data.txt"]
    assert entry["sha256"] == hashlib.sha256(NEW).hexdigest() and entry["replaced"] == hashlib.sha256(OLD).hexdigest()


def test_cli_accept_refuses_an_unregistered_file(capsys: pytest.CaptureFixture[str]) -> None:
    from audit_lib import cli

    assert cli.main(["fetch", "--accept", "toyset/nope.txt"]) == 2
    assert "not registered files" in capsys.readouterr().err
    assert callable(data_cli.fetch_datasets)
