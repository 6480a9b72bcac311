"""tools/mutation.toml names modules and tests that exist, and the driver selects and scores mutants correctly."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("mutation_driver", REPO_ROOT / "tools" / "mutation.py")
assert _spec is not None and _spec.loader is not None
mutation = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = mutation  # dataclasses look their module up there
_spec.loader.exec_module(mutation)


def test_every_configured_module_and_test_file_exists() -> None:
    targets = mutation.load_targets()  # exits naming the first path that moved
    assert {t.path for t in targets} >= {"audit_lib/benchmarks/humaneval_plus/compare.py",
                                         "audit_lib/benchmarks/humaneval_plus/passk.py", "audit_lib/findings.py",
                                         "audit_lib/data/fetch.py", "audit_lib/sandbox/codec.py",
                                         "audit_lib/sandbox/api.py"}
    assert all(t.tests for t in targets)


def test_a_moved_module_is_reported(tmp_path: Path) -> None:
    config = tmp_path / "mutation.toml"
    config.write_text('[modules."audit_lib/moved_away.py"]\ntests = ["tests/test_compare.py"]\n', encoding="utf-8")
    try:
        mutation.load_targets(config)
    except SystemExit as exc:
        assert "audit_lib/moved_away.py does not exist" in str(exc)
    else:
        raise AssertionError("a missing module was accepted")


def test_a_listed_function_the_module_no_longer_defines_is_reported(tmp_path: Path) -> None:
    (tmp_path / "audit_lib").mkdir()
    (tmp_path / "audit_lib" / "m.py").write_text("def kept():\n    pass\nclass C:\n    def method(self):\n"
                                                 "        pass\n", encoding="utf-8")
    (tmp_path / "t.py").write_text("", encoding="utf-8")
    config = tmp_path / "mutation.toml"
    config.write_text('[modules."audit_lib/m.py"]\ntests = ["t.py"]\nfunctions = ["kept", "C.method"]\n',
                      encoding="utf-8")
    assert mutation.load_targets(config, tmp_path)[0].functions == ("kept", "C.method")
    config.write_text('[modules."audit_lib/m.py"]\ntests = ["t.py"]\nfunctions = ["kept", "gone", "C.other"]\n',
                      encoding="utf-8")
    try:
        mutation.load_targets(config, tmp_path)
    except SystemExit as exc:
        assert "audit_lib/m.py defines no C.other, gone" in str(exc)
    else:
        raise AssertionError("a function the module no longer defines was accepted")


def test_mutant_selection_by_module_and_by_function() -> None:
    whole = mutation.Target("audit_lib/benchmarks/humaneval_plus/compare.py", ("tests/test_compare.py",))
    assert whole.owns("audit_lib.benchmarks.humaneval_plus.compare.x_is_floats__mutmut_3")
    assert not whole.owns("audit_lib.benchmarks.humaneval_plus.compare_extra.x_f__mutmut_1")  # the dot after the module name is required
    some = mutation.Target("audit_lib/sandbox.py", ("t.py",), ("call_function", "Limits.__post_init__"))
    assert some.owns("audit_lib.sandbox.x_call_function__mutmut_12")
    assert some.owns("audit_lib.sandbox.xǁLimitsǁ__post_init____mutmut_1")
    assert not some.owns("audit_lib.sandbox.x_shutdown__mutmut_1")
    assert not some.owns("audit_lib.sandbox.x_call_function_extra__mutmut_1")


def test_a_package_init_owns_its_own_mutants_not_its_submodules() -> None:
    """mutmut names `audit_lib/timing/__init__.py`'s mutants `audit_lib.timing.x_...`."""
    package = mutation.Target("audit_lib/timing/__init__.py", ("tests/test_timing.py",))
    assert package.module == "audit_lib.timing"
    assert package.owns("audit_lib.timing.x_flip_factor__mutmut_1")
    assert package.owns("audit_lib.timing.xǁFailureSplitǁheadline__mutmut_3")
    assert not package.owns("audit_lib.timing.reruns.x_doubled__mutmut_1")
    assert not package.owns("audit_lib.timing.figure.x_flat_note__mutmut_1")
    assert mutation.Target("audit_lib/timing/reruns.py", ("t.py",)).owns("audit_lib.timing.reruns.x_doubled__mutmut_1")


def test_outcomes_and_score() -> None:
    assert [mutation.outcome(code) for code in (1, 3, 0, 33, 36, None)] == [
        "killed", "killed", "survived", "no_tests", "timeout", "not_checked"]
    assert mutation.score({"killed": 8, "timeout": 1, "survived": 1}) == (9, 10, 90.0)
    assert mutation.score({"killed": 1, "no_tests": 1}) == (1, 2, 50.0)  # a mutant no test runs counts against


def test_the_scratch_copy_keeps_the_package_s_links_and_has_mutmut_copy_them(tmp_path: Path) -> None:
    """The notebooks link inside the package reaches the mutants' copy, so tests that discover audits can run."""
    work_dir = tmp_path / "work"
    mutation.prepare(work_dir, [mutation.Target("audit_lib/runner/gate.py", ("tests/runner/test_gate.py",))],
                     ref=None, shadowed=[])
    assert (work_dir / "audit_lib" / "notebooks").is_symlink()
    assert (work_dir / "audit_lib" / "notebooks" / "data_inventory.ipynb").is_file()
    assert mutation.linked_folders(work_dir) == ["audit_lib/notebooks"]
    also_copy = (work_dir / "setup.cfg").read_text(encoding="utf-8").split("also_copy =\n", 1)[1]
    assert also_copy.startswith("    audit_lib/notebooks\n")


def test_a_before_run_leaves_out_test_files_the_revision_did_not_have(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """`--ref` of the branch point: the tests a branch adds are not there, and are not asked of pytest."""
    work_dir = tmp_path / "work"
    target = mutation.Target("audit_lib/runner/gate.py", ("tests/runner/test_gate.py", "tests/runner/not_yet.py"))
    mutation.prepare(work_dir, [target], ref=None, shadowed=[])
    selection = (work_dir / "setup.cfg").read_text(encoding="utf-8").split("pytest_add_cli_args_test_selection =\n",
                                                                          1)[1].split("also_copy", 1)[0]
    assert selection == "    tests/runner/test_gate.py\n"
    assert "not in the copied revision, so not run: tests/runner/not_yet.py" in capsys.readouterr().out
