"""The audit contract: parameter rules, needs, the notebook session, and a toy audit end to end through the runner."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from audit_lib import benchmarks, runner
from audit_lib.errors import ParameterError
from audit_lib.findings import Result
from audit_lib.plugin import AuditPlugin, CheckSpec
from tests.toy_audit.audit import AUDIT as TOY


@pytest.fixture()
def toy_registered() -> None:
    benchmarks.register("toy_audit", "tests.toy_audit.audit")
    yield
    benchmarks.unregister("toy_audit")


@pytest.mark.parametrize(("raw", "message"), [
    ({"max_repeats": 0}, "'max_repeats' must be at least 1, got 0"),
    ({"max_repeats": "2"}, "'max_repeats' must be an integer"),
    ({"max_repeats": True}, "'max_repeats' must be an integer"),
    ({"text": 3}, "'text' must be a string"),
    ({"colour": "red"}, "unknown parameter"),
])
def test_validate_refuses_each_bad_value_naming_the_parameter(raw: dict, message: str) -> None:
    with pytest.raises(ParameterError, match=message) as refused:
        TOY.validate(raw)
    assert refused.value.fields["audit"] == "toy_audit"


def test_validate_fills_defaults_and_applies_the_shared_executor_rule() -> None:
    assert TOY.validate({"max_repeats": 3}) == TOY.params(text="to be or not to be", max_repeats=3)
    from dataclasses import dataclass

    from audit_lib.plugin import param

    @dataclass(frozen=True)
    class WithExecutor:
        executor: str = param("local")
        mode: str = param("a", choices=("a", "b"))
        rounds: int = param(5, minimum=2, maximum=9)
        share: float = param(0.5, minimum=0.25, maximum=0.75)

    plugin = AuditPlugin("x", "x", WithExecutor, lambda p: None, ())
    for bound in (2, 9):  # the bounds themselves are allowed, one step past them is not
        assert plugin.validate({"rounds": bound}).rounds == bound
    for bound in (0.25, 0.75):
        assert plugin.validate({"share": bound}).share == bound
    with pytest.raises(ParameterError, match="'rounds' must be at least 2, got 1"):
        plugin.validate({"rounds": 1})
    with pytest.raises(ParameterError, match="'rounds' must be at most 9, got 10"):
        plugin.validate({"rounds": 10})
    with pytest.raises(ParameterError, match="'share' must be at most 0.75, got 0.76"):
        plugin.validate({"share": 0.76})
    fixed = AuditPlugin("y", "y", WithExecutor, lambda p: None, (), fixed_params={"mode": "b"})
    assert fixed.validate({"mode": "a"}).mode == "b"  # an audit's fixed parameter wins over the caller's value
    assert plugin.validate({"executor": "dask://host:8786"}).executor == "dask://host:8786"
    with pytest.raises(ParameterError, match="'executor' must be 'local', 'dask-local' or 'dask://HOST:PORT'"):
        plugin.validate({"executor": "gpu"})
    with pytest.raises(ParameterError, match=r"'mode' must be one of 'a', 'b', got 'c'"):
        plugin.validate({"mode": "c"})


def test_session_skips_on_a_missing_need_errors_on_a_raise_and_goes_on(tmp_path: Path) -> None:
    audit = TOY.session({"text": "a a a b", "max_repeats": 2}, out_dir=tmp_path)
    skipped = audit.run("glossary")
    assert skipped.status == "skipped" and skipped.meta["missing"] == ["toy/glossary.txt"]
    errored = audit.run("broken")
    assert errored.status == "error" and errored.summary.startswith("ValueError: this check always fails")
    assert audit.run("repeats").observed == {"words_over_limit": ["a"]}
    assert audit.run("repeats") is audit.run("repeats")
    findings = json.loads(audit.write().read_text())
    assert [c["id"] for c in findings["checks"]] == ["glossary", "broken", "repeats"]


def test_a_check_need_runs_first_and_a_failed_one_skips_the_dependent(tmp_path: Path) -> None:
    calls: list[str] = []

    def first(inputs: object, params: object) -> Result:
        calls.append("first")
        raise RuntimeError("boom")

    def second(inputs: object, params: object) -> Result:
        raise AssertionError("must not run: its need errored")

    plugin = AuditPlugin("dep", "dep", TOY.params, lambda p: None,
                         (CheckSpec("first", "first", first), CheckSpec("second", "second", second, ("check:first",))))
    audit = plugin.session({}, out_dir=tmp_path)
    second_check = audit.run("second")
    assert second_check.status == "skipped" and second_check.meta["missing"] == ["check:first"]
    assert audit.run("first").status == "error" and calls == ["first"]


@pytest.mark.parametrize("meta", [{}, {"missing": []}, {"missing": ()}])
def test_a_skip_that_names_nothing_is_an_error(meta: dict, tmp_path: Path) -> None:
    plugin = AuditPlugin("vague", "vague", TOY.params, lambda p: None,
                         (CheckSpec("c", "c", lambda i, p: Result.skipped("something is missing", meta=meta)),))
    check = plugin.session({}, out_dir=tmp_path).run("c")
    assert check.status == "error" and "meta.missing" in check.summary


def test_a_failed_load_errors_every_check_and_still_writes(tmp_path: Path) -> None:
    def load(params: object) -> None:
        raise OSError("disk on fire")

    plugin = AuditPlugin("fragile", "fragile", TOY.params, load, (CheckSpec("c", "c", lambda i, p: None),))
    audit = plugin.session({}, out_dir=tmp_path)
    assert "OSError: disk on fire" in audit.run("c").summary
    assert audit.write().is_file()


@pytest.mark.notebook
def test_toy_audit_runs_end_to_end_through_the_runner(toy_registered: None, tmp_path: Path) -> None:
    summary = runner.run_audits(["toy_audit"], [("max_repeats", "1")], reports_dir=tmp_path, progress=None)
    assert not summary.failed, summary.failed
    findings = json.loads((tmp_path / "toy_audit.findings.json").read_text())
    statuses = {c["id"]: c["status"] for c in findings["checks"]}
    assert statuses == {"repeats": "defect", "glossary": "skipped", "broken": "error"}
    assert findings["checks"][1]["meta"]["missing"] == ["toy/glossary.txt"]
    assert (tmp_path / "toy_audit.html").is_file()
    # each check's cost reaches the summary the runner ranks (slowest first) and the report, marked as this machine's
    assert all(c["cost"]["machine_dependent"] and c["cost"]["sandbox_jobs"] == 0 for c in summary.checks["toy_audit"])
    assert "measured on this machine in this run" in (tmp_path / "toy_audit.html").read_text()
    assert runner.missing_inputs(summary.checks) == {"toy/glossary.txt": ["toy_audit"]}
    assert summary.exit_code("skipped") == runner.EXIT_GATE and summary.exit_code() == runner.EXIT_OK


def test_a_refused_run_changes_nothing_in_the_reports(toy_registered: None, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "toy_audit.html").write_text("the last good report")
    before = sorted((p.name, p.read_bytes()) for p in tmp_path.iterdir())
    monkeypatch.setattr(runner.batch, "_execute_all", lambda *a, **k: pytest.fail("a kernel was about to start"))
    with pytest.raises(ParameterError, match="'max_repeats' must be at least 1, got 0"):
        runner.run_audits(["toy_audit"], [("max_repeats", "0")], reports_dir=tmp_path, progress=None)
    assert sorted((p.name, p.read_bytes()) for p in tmp_path.iterdir()) == before


def test_the_toy_audit_is_small() -> None:
    source = Path(TOY.notebook_path()).with_name("audit.py").read_text().splitlines()
    code = [line for line in source if line.strip() and not line.strip().startswith(("#", '"""'))]
    assert len(code) < 80


def test_list_does_not_import_the_heavy_libraries() -> None:
    probe = ("import sys\nfrom audit_lib import cli\ncli.main(['list'])\n"
             "print('HEAVY', sorted(m for m in ('numpy', 'pandas', 'polars', 'matplotlib', 'scipy') "
             "if m in sys.modules))")
    completed = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                               cwd=Path(__file__).resolve().parent.parent)
    assert completed.stdout.strip().splitlines()[-1] == "HEAVY []"


def test_findings_carry_the_run_stamp(tmp_path: Path) -> None:
    findings = json.loads(TOY.session({}, out_dir=tmp_path).write().read_text())
    assert findings["stamp"]["cpus"] >= 1 and findings["stamp"]["python"].count(".") == 2
    assert isinstance(findings["stamp"]["load_start"], float)


def test_a_notebook_run_by_hand_writes_to_scratch_unless_published(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUDIT_PROJECT_ROOT", str(tmp_path))
    monkeypatch.delenv("AUDIT_REPORTS_DIR", raising=False)
    monkeypatch.delenv("AUDIT_PUBLISH", raising=False)
    assert TOY.session({}).write() == tmp_path / "reports" / "scratch" / "toy_audit.findings.json"
    monkeypatch.setenv("AUDIT_PUBLISH", "1")
    assert TOY.session({}).write() == tmp_path / "reports" / "toy_audit.findings.json"


def test_a_need_on_a_skipped_check_skips_the_dependent_without_running_it(tmp_path: Path) -> None:
    def second(inputs: object, params: object) -> Result:
        raise AssertionError("must not run: its need was skipped")

    plugin = AuditPlugin("dep", "dep", TOY.params, lambda p: None,
                         (CheckSpec("first", "first", lambda i, p: Result.skipped("x is absent", missing=["x/y.csv"])),
                          CheckSpec("second", "second", second, ("check:first",))))
    second_check = plugin.session({}, out_dir=tmp_path).run("second")
    assert second_check.status == "skipped" and second_check.meta["missing"] == ["check:first"]


def test_a_shared_notebook_runs_as_the_audit_the_runner_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import dataclasses
    import types

    module = types.ModuleType("twin_audits")
    params = dataclasses.make_dataclass("Params", [], frozen=True, namespace={"__module__": "twin_audits"})
    first = AuditPlugin("first", "First", params, lambda p: None, (), notebook=tmp_path / "shared.ipynb")
    module.FIRST, module.SECOND = first, dataclasses.replace(first, name="second")
    module.OTHER = dataclasses.replace(first, name="other", notebook=tmp_path / "other.ipynb")
    monkeypatch.setitem(sys.modules, "twin_audits", module)
    monkeypatch.setenv("AUDIT_RUN_AS", "second")
    assert first.session({}, out_dir=tmp_path).plugin is module.SECOND
    monkeypatch.setenv("AUDIT_RUN_AS", "other")  # another notebook: never run as it
    assert first.session({}, out_dir=tmp_path).plugin is first


def test_a_check_that_takes_needed_gets_the_results_of_its_check_needs(tmp_path: Path) -> None:
    seen: dict[str, object] = {}

    def first(inputs: object, params: object) -> Result:
        return Result("quirk", observed={"tasks": ["T/1"]})

    def second(inputs: object, params: object, *, needed: dict[str, object]) -> Result:
        seen.update(needed)
        return Result("pass", observed=needed["first"].observed)  # type: ignore[attr-defined]

    plugin = AuditPlugin("dep", "dep", TOY.params, lambda p: None,
                         (CheckSpec("first", "first", first), CheckSpec("second", "second", second, ("check:first",))))
    audit = plugin.session({}, out_dir=tmp_path)
    assert audit.run("second").observed == {"tasks": ["T/1"]}
    assert list(seen) == ["first"] and seen["first"] is audit.run("first")
