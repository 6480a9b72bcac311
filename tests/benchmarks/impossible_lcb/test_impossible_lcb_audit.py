"""The impossible_lcb plugin: parameters, the notebook's shape, and a rejected defect list end to end."""

from __future__ import annotations

import ast
import dataclasses
import shutil
from pathlib import Path

import nbformat
import pytest

from audit_lib.benchmarks.impossible_lcb import audit
from audit_lib.benchmarks.impossible_lcb.data import (
    DATASET,
    KNOWN_ISSUES_FILE,
    KNOWN_ISSUES_KEY,
    MANIFEST_FIELDS,
    MANIFEST_FILE,
    RECONSTRUCTED_FILE,
)
from audit_lib.data import fetch
from audit_lib.errors import ChecksumMismatchError, DataUnavailableError, ParameterError
from audit_lib.runner.catalogue import read_parameters

NOTEBOOK = Path(__file__).resolve().parents[3] / "notebooks" / "impossible_lcb.ipynb"
DROP_LIST_CHECKS = ("dropped_tasks", "single_assertion_mutation", "broken_mutations", "task_order", "split")


@pytest.mark.parametrize(("name", "value", "rule"), [
    ("assertion_numbering", "two_based", "must be one of 'zero_based', 'one_based'"),
    ("executor", "cloud", "must be 'local', 'dask-local' or 'dask://HOST:PORT'"),
    ("heldout_ids", "a,b", "must be comma-separated task ids like lcbhard_17"),
    ("dropped_tasks_path", "/no/such/file.csv", "must name an existing file (or be empty)"),
    ("heldout_path", "/no/such/heldout.txt", "must name an existing file (or be empty)"),
    ("heldout_path", 3, "must be a string"),
])
def test_a_bad_value_is_refused_naming_the_parameter_and_what_is_allowed(name, value, rule):
    with pytest.raises(ParameterError) as caught:
        audit.AUDIT.validate({name: value})
    assert caught.value.fields["field"] == name
    assert f"parameter {name!r} {rule}" in caught.value.message


def test_held_out_ids_and_file_together_are_refused(tmp_path):
    heldout = tmp_path / "heldout.txt"
    heldout.write_text("lcbhard_0\n", encoding="utf-8")
    with pytest.raises(ParameterError, match="either parameter 'heldout_ids' or 'heldout_path'"):
        audit.AUDIT.validate({"heldout_ids": "lcbhard_1", "heldout_path": str(heldout)})
    assert audit.AUDIT.validate({"heldout_ids": "lcbhard_1, lcbhard_2"}).heldout_id_list == ("lcbhard_1",
                                                                                           "lcbhard_2")


def test_params_are_the_notebooks_parameters_cell():
    fields = {f.name: f.default for f in dataclasses.fields(audit.Params)}
    assert {p.name: p.default for p in read_parameters(NOTEBOOK)} == fields
    assert [p.name for p in read_parameters(NOTEBOOK)] == list(fields)


def test_the_notebook_runs_every_check_once_through_the_session():
    notebook = nbformat.read(str(NOTEBOOK), as_version=4)
    assert notebook.metadata["kernelspec"] == {"name": "benchaudit", "display_name": "benchaudit",
                                               "language": "python"}
    runs = [node.args[1].value for cell in notebook.cells if cell.cell_type == "code"
            for node in ast.walk(ast.parse(cell.source)) if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute) and node.func.attr == "check"]
    assert sorted(runs) == sorted(spec.id for spec in audit.AUDIT.checks)
    assert len(runs) == len(set(runs))


def test_the_audit_module_imports_no_heavy_library():
    import subprocess
    import sys

    probe = ("import sys, audit_lib.benchmarks.impossible_lcb.audit; "
             "print([m for m in ('numpy', 'pandas', 'polars', 'matplotlib', 'scipy', 'papermill') "
             "if m in sys.modules])")
    assert subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True).stdout.strip() == "[]"


def _toy_manifest(path: Path) -> Path:
    rows = [",".join(MANIFEST_FIELDS)]
    rows += [f"lcbhard_{n},oneoff,f,True,1,1,10,assert candidate({n}) == 1,assert candidate({n}) == 0,"
             f"candidate({n}),clean" for n in range(103)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_a_rejected_defect_list_skips_every_check_that_needs_the_drop_list(tmp_path, monkeypatch, isolated_cache):
    """`fetch` refuses known_issues.csv (checksum mismatch): nothing is counted on an empty drop list."""
    manifest = _toy_manifest(tmp_path / MANIFEST_FILE)
    real_fetch = fetch.fetch

    def fake_fetch(dataset: str, file: str, **kwargs: object) -> fetch.FetchedFile:
        key = f"{dataset}/{file}"
        if file == KNOWN_ISSUES_FILE:
            raise ChecksumMismatchError(f"{key}: sha256 mismatch for the copy from mirror: expected a, got b. "
                                        "The copy was not used.", file=key, expected="a", actual="b")
        if file == MANIFEST_FILE:
            return fetch.FetchedFile(manifest, fetch.Provenance(dataset, file, "mirror", str(manifest), "x",
                                                                True, False, "test", "MIT"))
        if dataset == DATASET:
            raise DataUnavailableError(f"{key} is not available.", file=key)
        return real_fetch(dataset, file, **kwargs)

    monkeypatch.setattr(fetch, "fetch", fake_fetch)
    session = audit.AUDIT.session({"heldout_ids": "lcbhard_0"})
    assert KNOWN_ISSUES_KEY in session.inputs.missing and session.inputs.manifest is not None
    for check_id in DROP_LIST_CHECKS:
        check = session.run(check_id)
        assert check.status == "skipped", (check_id, check.status, check.summary)
        assert check.meta["missing"] == [KNOWN_ISSUES_KEY] and "sha256 mismatch" in check.summary
    rows_check = session.run("visibility_rule")
    assert rows_check.status == "skipped" and f"{DATASET}/{RECONSTRUCTED_FILE}" in rows_check.meta["missing"]


@pytest.mark.mirror
def test_a_tampered_mirror_copy_of_the_defect_list_skips_its_dependents(mirror_dir, tmp_path, monkeypatch,
                                                                        isolated_cache):
    mirror = tmp_path / "mirror"
    (mirror / DATASET).mkdir(parents=True)
    for name in (KNOWN_ISSUES_FILE, MANIFEST_FILE, RECONSTRUCTED_FILE):
        shutil.copyfile(mirror_dir / DATASET / name, mirror / DATASET / name)
    with open(mirror / DATASET / KNOWN_ISSUES_FILE, "a", encoding="utf-8") as handle:
        handle.write("lcbhard_1,original,original_test_wrong,,drop\n")
    monkeypatch.setenv("AUDIT_MIRROR", str(mirror))
    monkeypatch.setenv("AUDIT_OFFLINE", "1")
    session = audit.AUDIT.session({})
    checks = {check.id: check for check in session.run_all()}
    for check_id in DROP_LIST_CHECKS:
        assert checks[check_id].status == "skipped", (check_id, checks[check_id].summary)
        assert checks[check_id].meta["missing"] == [KNOWN_ISSUES_KEY]
    assert "sha256 mismatch" in checks["task_order"].summary
    assert checks["visibility_rule"].meta["row_source"] == "reconstructed"
    assert checks["metrics_replay"].status == "pass"
