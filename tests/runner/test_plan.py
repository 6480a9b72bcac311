"""Planning a batch: each job's name, parameters, environment and staging, and every refusal before a kernel."""

from __future__ import annotations

import dataclasses
import os
import re
from pathlib import Path

import pytest
from notebook_factory import plugin_for, write_notebook

from audit_lib import paths
from audit_lib.errors import ParameterError
from audit_lib.findings import Result
from audit_lib.plugin import ONLY_ENV, CheckSpec
from audit_lib.runner import plan
from audit_lib.runner.plan import absolute_paths, choose_kernel, new_run_id, plan_jobs, progress_file_for
from audit_lib.work_progress import PROGRESS_FILE_ENV


@pytest.fixture()
def plugins(tmp_path: Path) -> dict:
    """`one` with two checks (`b` needs nothing), `two` with none, `pinned` fixing `one`'s limit."""
    folder = tmp_path / "notebooks"
    one = plugin_for(write_notebook(folder, "one", "limit = 3\nexecutor = 'local'\nmirror = ''\n", ["x = 1"]),
                     name="one")
    checks = (CheckSpec("a", "a", lambda i, p: Result("pass")), CheckSpec("b", "b", lambda i, p: Result("pass")))
    one = dataclasses.replace(one, checks=checks)
    two = plugin_for(write_notebook(folder, "two", "limit = 3\n", ["x = 1"]))
    pinned = dataclasses.replace(one, name="pinned", fixed_params={"limit": 7})
    return {"one": one, "two": two, "pinned": pinned}


@pytest.fixture(autouse=True)
def a_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plan, "available_kernels", lambda: {"benchaudit", "python3", "other"})


def test_a_run_id_is_utc_time_and_pid() -> None:
    assert re.fullmatch(rf"\d{{8}}T\d{{6}}Z-{os.getpid()}", new_run_id())


def test_the_progress_file_sits_outside_every_audits_staging_folder(tmp_path: Path) -> None:
    assert progress_file_for(tmp_path, "one") == tmp_path / ".progress" / "one.json"


def test_the_kernel_is_the_projects_else_python3_and_a_named_one_must_exist(monkeypatch: pytest.MonkeyPatch) -> None:
    assert choose_kernel() == "benchaudit" and choose_kernel("other") == "other"
    monkeypatch.setattr(plan, "available_kernels", lambda: {"python3", "zeta", "alpha"})
    assert choose_kernel() == "python3" and choose_kernel("") == "python3"
    with pytest.raises(ParameterError) as refused:
        choose_kernel("missing")
    assert str(refused.value.message) == ("kernel 'missing' is not registered (available: alpha, python3, zeta); "
                                          "`make audit` registers the project's kernel")
    assert refused.value.fields["field"] == "kernel"


def test_a_home_relative_path_is_left_to_the_audit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    (tmp_path / "here").mkdir()
    (tmp_path / "here" / "x.jsonl").write_text("")
    assert absolute_paths({"p": "~/x.jsonl"}, ("p",), tmp_path / "here") == {"p": "~/x.jsonl"}  # absolute already
    assert absolute_paths({"p": "", "q": None}, ("p", "q"), tmp_path) == {"p": "", "q": None}
    monkeypatch.chdir(tmp_path / "here")
    assert absolute_paths({"p": "x.jsonl"}, ("p",)) == {"p": str(tmp_path / "here" / "x.jsonl")}


def test_each_job_carries_its_parameters_environment_and_private_staging(
        plugins: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AUDIT_MIRROR", raising=False)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(["/extra", str(paths.project_root()), "", "/extra"]))
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    reports = tmp_path / "r"
    jobs = plan_jobs(["one", "two", "pinned"], [("limit", "5")], mirror=mirror, executor="dask-local",
                     reports_dir=reports, with_code=True, cell_timeout_s=77, plugins=plugins, run_id="RUN")
    assert [job.audit for job in jobs] == ["one", "two", "pinned"]
    one, two, pinned = jobs
    assert dict(one.params) == {"limit": 5, "executor": "dask-local", "mirror": str(mirror)}
    assert dict(two.params) == {"limit": 5} and pinned.params["limit"] == 7
    assert (one.kernel_name, one.reports_dir, one.with_code, one.cell_timeout_s, one.run_id) == (
        "benchaudit", str(reports), True, 77, "RUN")
    assert one.notebook == str(plugins["one"].notebook) and one.title == plugins["one"].title
    staging = reports / ".staging" / "RUN"
    assert dict(one.env) == {
        "AUDIT_PROJECT_ROOT": str(paths.project_root()), "AUDIT_DATA_CACHE": str(paths.data_cache_dir()),
        "AUDIT_MIRROR": str(mirror), "AUDIT_EXECUTOR": "dask-local",
        "PYTHONPATH": os.pathsep.join([str(paths.project_root()), "/extra"]),
        "AUDIT_REPORTS_DIR": str(staging / "one"), "AUDIT_RUN_AS": "one", "AUDIT_RUN_ID": "RUN",
        PROGRESS_FILE_ENV: str(staging / ".progress" / "one.json")}
    assert one.staging_dir == staging / "one" and one.progress_file == staging / ".progress" / "one.json"
    assert one.staging_notebook == staging / "one" / "one.ipynb"


def test_without_mirror_executor_or_run_id_the_environment_says_nothing_of_them(
        plugins: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AUDIT_MIRROR", raising=False)
    monkeypatch.delenv("PYTHONPATH", raising=False)
    [job] = plan_jobs(["two"], reports_dir=tmp_path / "r", plugins=plugins)
    assert "AUDIT_MIRROR" not in job.env and "AUDIT_EXECUTOR" not in job.env and ONLY_ENV not in job.env
    assert job.env["PYTHONPATH"] == str(paths.project_root())
    assert re.fullmatch(r"\d{8}T\d{6}Z-\d+", job.run_id) and dict(job.params) == {}
    assert job.cell_timeout_s == plan.DEFAULT_CELL_TIMEOUT_S and not job.with_code


def test_only_names_checks_each_audit_declares(plugins: dict, tmp_path: Path) -> None:
    [job] = plan_jobs(["one"], reports_dir=tmp_path / "r", plugins=plugins, only=["b", "a"])
    assert job.env[ONLY_ENV] == "b,a"
    with pytest.raises(ParameterError) as refused:
        plan_jobs(["one"], reports_dir=tmp_path / "r", plugins=plugins, only=["a", "c", "d"])
    assert refused.value.message == "--only a,c,d: one has no check c, d; its checks: a, b"
    assert (refused.value.fields["audit"], refused.value.fields["field"]) == ("one", "only")


def test_a_mirror_that_is_a_file_or_absent_is_refused_naming_it(plugins: dict, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(ParameterError, match=r"^--mirror .*file: is a file, not a folder; give the folder laid out "
                                             r"as <dataset>/<file> \(e\.g\. the folder holding humaneval/\)$"):
        plan_jobs(["two"], mirror=tmp_path / "file", reports_dir=tmp_path / "r", plugins=plugins)
    with pytest.raises(ParameterError) as refused:
        plan_jobs(["two"], mirror=tmp_path / "file", reports_dir=tmp_path / "r", plugins=plugins)
    assert refused.value.fields["field"] == "mirror"
    with pytest.raises(ParameterError, match=r"^--mirror .*absent: no such folder \(expected <dataset>/<file> "
                                             r"inside\)$") as refused:
        plan_jobs(["two"], mirror=tmp_path / "absent", reports_dir=tmp_path / "r", plugins=plugins)
    assert refused.value.fields["field"] == "mirror"


def test_an_unknown_executor_is_refused_before_any_kernel(plugins: dict, tmp_path: Path) -> None:
    with pytest.raises(ParameterError, match="unknown executor 'nowhere'"):
        plan_jobs(["two"], executor="nowhere", reports_dir=tmp_path / "r", plugins=plugins)


def test_a_names_check_refusal_names_the_audit_it_serves(plugins: dict, tmp_path: Path) -> None:
    seen: list = []

    def check_names(params: object, mirror: Path | None) -> None:
        seen.append((params, mirror))
        raise ParameterError("parameter 'limit': unknown task id(s) 5", field="limit")

    strict = dataclasses.replace(plugins["one"], check_names=check_names)
    (tmp_path / "mirror").mkdir()
    with pytest.raises(ParameterError) as refused:
        plan_jobs(["one"], [("limit", "5")], mirror=tmp_path / "mirror", reports_dir=tmp_path / "r",
                  plugins={"one": strict})
    assert refused.value.message == "one: parameter 'limit': unknown task id(s) 5"
    assert refused.value.fields == {"field": "limit", "audit": "one"}
    assert seen[0][0].limit == 5 and seen[0][1] == tmp_path / "mirror"


def test_the_run_id_reads_the_utc_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    fixed = time.struct_time((2026, 1, 2, 3, 4, 5, 4, 2, 0))
    monkeypatch.setattr(plan.time, "gmtime", lambda *args: fixed)
    assert new_run_id() == f"20260102T030405Z-{os.getpid()}"


def test_the_mirror_from_the_environment_reaches_kernels_when_no_flag_names_one(
        plugins: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "env_mirror").mkdir()
    monkeypatch.setenv("AUDIT_MIRROR", str(tmp_path / "env_mirror"))
    [job] = plan_jobs(["one"], reports_dir=tmp_path / "r", plugins=plugins)
    assert job.env["AUDIT_MIRROR"] == str(tmp_path / "env_mirror")
    assert "mirror" not in job.params and "executor" not in job.params  # nothing injected without the flags


def test_the_requested_kernel_is_the_one_jobs_run_on(plugins: dict, tmp_path: Path) -> None:
    [job] = plan_jobs(["two"], reports_dir=tmp_path / "r", plugins=plugins, kernel_name="other")
    assert job.kernel_name == "other"
    with pytest.raises(ParameterError, match="kernel 'absent' is not registered"):
        plan_jobs(["two"], reports_dir=tmp_path / "r", plugins=plugins, kernel_name="absent")


def test_only_judges_the_checks_this_runs_parameters_include(plugins: dict, tmp_path: Path) -> None:
    conditional = CheckSpec("big", "big", lambda i, p: Result("pass"), when=lambda p: p.limit > 3)
    gated = {"one": dataclasses.replace(plugins["one"], checks=(*plugins["one"].checks, conditional))}
    [job] = plan_jobs(["one"], [("limit", "5")], reports_dir=tmp_path / "r", plugins=gated, only=["big"])
    assert job.env[ONLY_ENV] == "big"
    with pytest.raises(ParameterError, match="^--only big: one has no check big; its checks: a, b$"):
        plan_jobs(["one"], [("limit", "2")], reports_dir=tmp_path / "r", plugins=gated, only=["big"])
