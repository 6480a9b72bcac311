"""sources: the registry is complete for the mirror and every entry is well-formed."""

from __future__ import annotations

import re

import pytest

from audit_lib.data.sources import DATASETS, REGISTRY, USER_FILE_FOLDERS, HubFile, files_of, get_source
from audit_lib.errors import UnknownSourceError

SHA256 = re.compile(r"^[0-9a-f]{64}$")


def test_every_entry_is_well_formed():
    for key, source in REGISTRY.items():
        assert key == f"{source.dataset}/{source.file}"
        assert source.sha256 is None or SHA256.match(source.sha256), key
        assert source.licence, key
        if source.upstream is not None:
            assert source.upstream.url().startswith("https://"), key


def test_unpinned_files_are_exactly_the_upstream_ones_without_published_hashes():
    unpinned = sorted(key for key, source in REGISTRY.items() if not source.pinned)
    assert unpinned == sorted([
        "codeinsights/Scenario5_data.csv", "codeinsights/student_performace_by_topic.csv",
        "codeinsights/test_cases_by_qid.json", "impossible_lcb/data/conflicting-00000-of-00001.parquet",
        "impossible_lcb/data/oneoff-00000-of-00001.parquet", "impossible_lcb/data/original-00000-of-00001.parquet",
    ])
    parquet = get_source("impossible_lcb", "data/oneoff-00000-of-00001.parquet")
    assert isinstance(parquet.upstream, HubFile)
    assert parquet.upstream.revision == "98650ffc3f28a01b261669b6d19fcd7773823710"


def test_unknown_files_and_datasets_get_a_helpful_error():
    with pytest.raises(UnknownSourceError, match="known files of 'humaneval'"):
        get_source("humaneval", "nope.jsonl")
    with pytest.raises(UnknownSourceError, match="known datasets"):
        files_of("nope")
    assert len(files_of("intentspec", "generations/")) == 98
    assert set(DATASETS) == {"humaneval", "humaneval_plus", "impossible_lcb", "intentspec", "codeinsights",
                             "model_results"}


def _mirrored_files(mirror_dir):
    return {str(path.relative_to(mirror_dir)) for path in mirror_dir.rglob("*")
            if path.is_file() and path.name != "PROVENANCE.md"}


def test_every_mirrored_data_file_is_registered(mirror_dir):
    user_files = {key for key in _mirrored_files(mirror_dir) if key.split("/", 1)[0] in USER_FILE_FOLDERS}
    assert _mirrored_files(mirror_dir) - user_files - set(REGISTRY) == set()


def test_user_file_folders_are_no_dataset_and_hold_files(mirror_dir):
    """`samples/` is what a user brings: never registered, and the allowance above is not vacuous."""
    assert not set(USER_FILE_FOLDERS) & set(DATASETS)
    assert any(key.startswith("samples/") for key in _mirrored_files(mirror_dir))


def test_every_registered_file_of_the_mirror_hashes_to_its_pin(mirror_dir):
    import hashlib

    for key in sorted(_mirrored_files(mirror_dir) & set(REGISTRY)):
        source = REGISTRY[key]
        if source.dataset == "model_results":
            assert hashlib.sha256((mirror_dir / key).read_bytes()).hexdigest() == source.sha256, key
