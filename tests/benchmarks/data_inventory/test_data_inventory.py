"""Data inventory: ids, profiling, and one check per registered file (pass, skipped, defect)."""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import json
import zipfile
from pathlib import Path

import nbformat
import pytest

from audit_lib.benchmarks.data_inventory import inventory as inv
from audit_lib.benchmarks.data_inventory.audit import AUDIT, Params
from audit_lib.data.sources import DATASETS, REGISTRY, SourceFile, get_source
from audit_lib.errors import ParameterError
from audit_lib.findings import Check
from audit_lib.runner.catalogue import read_parameters

ROWS = [{"task_id": "T/0", "score": 1, "tags": ["a"]}, {"task_id": "T/1", "score": None, "tags": []},
        {"task_id": "T/2", "score": 3.5}]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def toy_source(mirror: Path, file: str, content: bytes, file_format: str, *, pin: str | None = "actual") -> SourceFile:
    target = mirror / "toy" / file
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(content)
    sha = sha256(target) if pin == "actual" else pin
    return SourceFile("toy", file, None, sha, "test", file_format)  # type: ignore[arg-type]


def jsonl_bytes(rows: list[dict]) -> bytes:
    return "".join(json.dumps(row) + "\n" for row in rows).encode()


def test_check_id_example_from_the_issue() -> None:
    source = get_source("humaneval_plus", "v0.1.9/HumanEvalPlus.jsonl.gz")
    assert inv.check_id_for(source) == "file.humaneval_plus.v0_1_9.HumanEvalPlus_jsonl_gz"


def test_every_registered_file_gets_a_unique_valid_check_id() -> None:
    ids = inv.check_ids(list(REGISTRY.values()))
    assert len(set(ids.values())) == len(REGISTRY)
    for check_id in ids.values():
        Check(check_id, "t", "pass")  # raises on an id the findings model refuses


def test_colliding_ids_are_refused() -> None:
    first = SourceFile("toy", "a-b.csv", None, None, "x", "csv")
    second = SourceFile("toy", "a_b.csv", None, None, "x", "csv")
    with pytest.raises(ValueError, match="both map to check id 'file.toy.a_b_csv'"):
        inv.check_ids([first, second])


def test_verified_jsonl_is_profiled(tmp_path: Path, isolated_cache: Path) -> None:
    source = toy_source(tmp_path / "mirror", "rows.jsonl.gz", gzip.compress(jsonl_bytes(ROWS)), "jsonl.gz")
    item = inv.inventory_file(source, mirror=tmp_path / "mirror", offline=True)
    assert item.state == "ok" and item.rows == 3
    profiles = {c.column: c for c in item.columns}
    assert profiles["task_id"] == inv.ColumnProfile("task_id", "str", 0, 3)
    assert profiles["score"].nulls == 1 and profiles["score"].types == "float64"
    assert profiles["tags"].nulls == 1 and profiles["tags"].types == "list"
    check = inv.file_check(item)
    assert check.status == "pass"
    assert check.observed == check.expected == source.sha256
    assert check.summary.startswith("3 rows × 3 columns, 2 null cells; from mirror")
    assert [row["column"] for row in check.details] == ["task_id", "score", "tags"]


def test_csv_parquet_zip_and_text_are_profiled(tmp_path: Path, isolated_cache: Path) -> None:
    import pandas as pd

    mirror = tmp_path / "mirror"
    csv_source = toy_source(mirror, "t.csv", b"a,b\n1,\n2,x\n", "csv")
    buffer = tmp_path / "p.parquet"
    pd.DataFrame({"n": [1, 2, 3, 4]}).to_parquet(buffer)
    parquet_source = toy_source(mirror, "t.parquet", buffer.read_bytes(), "parquet")
    archive = tmp_path / "z.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        handle.writestr("one.txt", "1")
        handle.writestr("two.txt", "2")
    zip_source = toy_source(mirror, "t.zip", archive.read_bytes(), "zip")
    text_source = toy_source(mirror, "README.md", b"# a\nb\nc\n", "text")
    found = {s.file: inv.inventory_file(s, mirror=mirror, offline=True)
             for s in (csv_source, parquet_source, zip_source, text_source)}
    assert (found["t.csv"].rows, [c.nulls for c in found["t.csv"].columns]) == (2, [0, 1])
    assert found["t.parquet"].rows == 4 and found["t.parquet"].columns[0].types == "int64"
    assert (found["t.zip"].rows, found["t.zip"].row_kind) == (2, "members")
    assert (found["README.md"].rows, found["README.md"].row_kind) == (3, "lines")


def test_missing_file_is_skipped_with_the_places_tried(tmp_path: Path, isolated_cache: Path) -> None:
    (tmp_path / "mirror").mkdir()
    source = SourceFile("toy", "absent.jsonl", None, "0" * 64, "test", "jsonl")
    item = inv.inventory_file(source, mirror=tmp_path / "mirror", offline=True)
    check = inv.file_check(item)
    assert item.state == "unavailable" and check.status == "skipped"
    assert "mirror" in check.summary and "absent.jsonl" in check.summary
    assert check.meta["missing"] == ["toy/absent.jsonl"] and check.meta["file"] == "absent.jsonl"


def test_checksum_mismatch_is_a_defect_with_both_hashes(tmp_path: Path, isolated_cache: Path) -> None:
    source = toy_source(tmp_path / "mirror", "rows.jsonl", jsonl_bytes(ROWS), "jsonl", pin="f" * 64)
    actual = sha256(tmp_path / "mirror" / "toy" / "rows.jsonl")
    check = inv.file_check(inv.inventory_file(source, mirror=tmp_path / "mirror", offline=True))
    assert check.status == "defect"
    assert (check.observed, check.expected) == (actual, "f" * 64)
    assert "f" * 64 in check.summary and actual in check.summary


def test_verified_but_corrupt_file_is_a_defect(tmp_path: Path, isolated_cache: Path) -> None:
    truncated = gzip.compress(jsonl_bytes(ROWS * 50))[:-20]
    source = toy_source(tmp_path / "mirror", "rows.jsonl.gz", truncated, "jsonl.gz")
    check = inv.file_check(inv.inventory_file(source, mirror=tmp_path / "mirror", offline=True))
    assert check.status == "defect"
    assert "does not read as jsonl.gz" in check.summary and "rows.jsonl.gz" in check.summary


def test_unpinned_file_is_checked_against_the_lock(tmp_path: Path, isolated_cache: Path) -> None:
    source = toy_source(tmp_path / "mirror", "free.jsonl", jsonl_bytes(ROWS), "jsonl", pin=None)
    first = inv.file_check(inv.inventory_file(source, mirror=tmp_path / "mirror", offline=True))
    assert first.status == "pass" and "unpinned upstream" in first.summary
    assert first.expected == first.observed  # the hash recorded on first sight
    (isolated_cache / "toy" / "free.jsonl").unlink()
    (tmp_path / "mirror" / "toy" / "free.jsonl").write_bytes(jsonl_bytes(ROWS[:1]))
    changed = inv.file_check(inv.inventory_file(source, mirror=tmp_path / "mirror", offline=True))
    assert changed.status == "defect" and "upstream changed" in changed.summary


def test_unpinned_without_a_recorded_hash_and_a_hash_disagreement_are_reported() -> None:
    from audit_lib.data.fetch import Provenance

    source = SourceFile("toy", "free.jsonl", None, None, "test", "jsonl")  # type: ignore[arg-type]
    provenance = Provenance("toy", "free.jsonl", "mirror", "/m/toy/free.jsonl", "a" * 64, False, False, "", "test")
    unrecorded = inv.FileInventory(source, "ok", provenance, 10, 1, actual_sha256="a" * 64)
    check = inv.file_check(unrecorded)
    assert check.status == "pass" and "no hash recorded" in check.summary and "matches" not in check.summary
    differing = inv.FileInventory(source, "ok", provenance, 10, 1, expected_sha256="b" * 64, actual_sha256="a" * 64)
    assert inv.file_check(differing).status == "defect"


def test_parameters_are_validated(tmp_path: Path) -> None:
    assert AUDIT.validate({}) == Params(datasets=[], mirror="", offline=False)
    assert AUDIT.validate({"datasets": ["humaneval"], "mirror": str(tmp_path), "offline": True}).mirror == str(tmp_path)


@pytest.mark.parametrize(("name", "value", "allowed"), [
    ("datasets", ["nope"], "unknown dataset(s) 'nope'; allowed: " + ", ".join(DATASETS)),
    ("datasets", "humaneval", "must be a list of strings"),
    ("mirror", "/nonexistent/mirror", "must be an existing folder or \"\""),
    ("offline", "yes", "must be true or false"),
])
def test_bad_parameters_name_the_parameter_and_the_allowed_values(name: str, value: object, allowed: str) -> None:
    with pytest.raises(ParameterError) as caught:
        AUDIT.validate({name: value})
    assert caught.value.fields["field"] == name and repr(name) in str(caught.value) and allowed in str(caught.value)


def test_checks_follow_the_datasets_parameter() -> None:
    every = AUDIT.check_specs(AUDIT.validate({}))
    assert [spec.id for spec in every] == list(inv.check_ids(list(REGISTRY.values())).values())
    chosen = AUDIT.check_specs(AUDIT.validate({"datasets": ["humaneval"]}))
    assert [spec.id for spec in chosen] == ["file.humaneval.HumanEval_jsonl_gz",
                                            "file.humaneval.community_errata.human_eval_enhanced_202307_jsonl_gz"]
    assert all(spec.title.startswith("humaneval/") and not spec.needs for spec in chosen)


def test_a_file_not_fetched_is_skipped_naming_it(tmp_path: Path, isolated_cache: Path) -> None:
    (tmp_path / "mirror").mkdir()  # codeinsights: no package copy, so nothing but the mirror could supply it
    session = AUDIT.session({"datasets": ["codeinsights"], "mirror": str(tmp_path / "mirror"), "offline": True})
    checks = session.run_all()
    assert [c.status for c in checks] == ["skipped"] * 3
    for check, source in zip(checks, (s for s in REGISTRY.values() if s.dataset == "codeinsights")):
        assert check.meta["missing"] == [source.key]
        assert (check.meta["dataset"], check.meta["file"]) == (source.dataset, source.file)
    assert set(session.inputs.missing) == {s.key for s in REGISTRY.values() if s.dataset == "codeinsights"}
    assert session.builder.provenance == ()


def test_session_runs_one_check_and_records_provenance_per_file(mirror_dir: Path, isolated_cache: Path) -> None:
    session = AUDIT.session({"datasets": ["humaneval"], "mirror": str(mirror_dir), "offline": True})
    checks = session.run_all()
    assert [c.id for c in checks] == ["file.humaneval.HumanEval_jsonl_gz",
                                      "file.humaneval.community_errata.human_eval_enhanced_202307_jsonl_gz"]
    assert all(c.status == "pass" for c in checks)
    assert len(session.builder.provenance) == 2 and session.inputs.missing == {}
    humaneval = session.inputs.inventories["humaneval/HumanEval.jsonl.gz"]
    assert humaneval.rows == 164
    assert {"task_id", "prompt", "canonical_solution", "test", "entry_point"} <= {c.column for c in humaneval.columns}


def test_notebook_runs_every_declared_check_through_the_session() -> None:
    notebook = nbformat.read(AUDIT.notebook_path(), as_version=4)
    source = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code")
    # The checks depend on `datasets`, so the notebook runs them by id from the session, not by literal ids.
    assert source.count("report.check(audit, check_id") == 1 and "for check_id in audit.check_ids:" in source


def test_parameters_cell_is_the_params_dataclass() -> None:
    declared = [(p.name, p.default) for p in read_parameters(AUDIT.notebook_path())]
    assert declared == [(f.name, f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default)
                        for f in dataclasses.fields(Params)]


@pytest.mark.notebook
def test_notebook_end_to_end(tmp_path: Path, isolated_cache: Path, mirror_dir: Path) -> None:
    from notebook_helpers import execute_notebook

    findings = execute_notebook("data_inventory", {"datasets": ["humaneval", "impossible_lcb"], "offline": True,
                                                   "mirror": str(mirror_dir)}, tmp_path)
    expected_ids = {inv.check_id_for(s) for s in REGISTRY.values() if s.dataset in ("humaneval", "impossible_lcb")}
    assert {c["id"] for c in findings["checks"]} == expected_ids
    statuses = {c["id"]: c["status"] for c in findings["checks"]}
    assert set(statuses.values()) <= {"pass", "skipped"}
    mirrored = {inv.check_id_for(s) for s in REGISTRY.values()
                if s.dataset in ("humaneval", "impossible_lcb") and (mirror_dir / s.dataset / s.file).is_file()}
    assert mirrored and {check_id for check_id, status in statuses.items() if status == "pass"} == mirrored
    parquet = "file.impossible_lcb.data.oneoff_00000_of_00001_parquet"
    assert statuses[parquet] == "skipped"  # not mirrored, and offline: reported, not failed
    assert len(findings["provenance"]) == sum(s == "pass" for s in statuses.values())
