"""`python -m audit_lib`: subcommands, `list`, and argument errors reported before any kernel starts."""

from __future__ import annotations

import subprocess
import sys

import pytest

from audit_lib import cli, runner
from audit_lib.runner.catalogue import discover_audits


@pytest.fixture()
def no_kernels(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a kernel was about to start")

    monkeypatch.setattr(runner.batch, "_execute_all", refuse)


def test_module_entry_point_lists_every_subcommand() -> None:
    completed = subprocess.run([sys.executable, "-m", "audit_lib", "--help"], capture_output=True, text=True,
                               check=True)
    for command in ("run", "list", "fetch", "sources", "sandbox"):
        assert f"    {command} " in completed.stdout, command


def test_list_shows_each_audit_with_its_parameters(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    audits = discover_audits()
    assert "data_inventory" in audits
    for audit in audits.values():
        assert audit.name in out
        for parameter in audit.parameters:
            if parameter.name not in audit.fixed_params:
                assert f"-p {parameter.name} ({parameter.type_name}, default {parameter.default!r})" in out
    assert "-p offline (bool, default False)  # True: never download" in out


def test_unknown_audit_exits_2_with_the_known_names(no_kernels: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["run", "no_such_audit"]) == runner.EXIT_BAD_ARGUMENTS
    err = capsys.readouterr().err
    assert "unknown audit 'no_such_audit'" in err and "data_inventory" in err


@pytest.mark.parametrize(("argv", "message"), [
    (["run", "data_inventory", "-p", "offline", "maybe"],
     "parameter 'offline' expects a bool (true/false), got 'maybe'"),
    (["run", "data_inventory", "-p", "datasets", "humaneval"], "parameter 'datasets' expects a list"),
    (["run", "data_inventory", "-p", "colour", "red"], "unknown parameter 'colour'"),
    (["run", "data_inventory", "--jobs", "0"], "--jobs must be at least 1"),
    (["run", "data_inventory", "--mirror", "/nonexistent/mirror"], "no such folder"),
])
def test_bad_arguments_exit_2_before_any_kernel(no_kernels: None, capsys: pytest.CaptureFixture[str],
                                                argv: list[str], message: str) -> None:
    assert cli.main(argv) == runner.EXIT_BAD_ARGUMENTS
    assert message in capsys.readouterr().err


def test_fail_on_accepts_only_a_status_worse_than_pass(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(["run", "--fail-on", "pass"])
    assert exited.value.code == 2
    assert "invalid choice: 'pass'" in capsys.readouterr().err
