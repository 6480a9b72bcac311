"""`pip install .` ships the audit notebooks, so `benchaudit list` and `run` work outside a checkout."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from audit_lib import benchmarks, paths

REPO_ROOT = Path(__file__).resolve().parent.parent


def test_every_audit_notebook_is_found_inside_the_package() -> None:
    assert paths.notebooks_dir().resolve() == (REPO_ROOT / "notebooks").resolve()
    for name in benchmarks.names():
        assert benchmarks.load(name).notebook_path().is_file(), name


@pytest.mark.notebook
def test_the_wheel_contains_the_notebooks(tmp_path: Path) -> None:
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir",
                            str(tmp_path), str(REPO_ROOT)], capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr[-2000:]
    [wheel] = tmp_path.glob("benchaudit-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for notebook in (REPO_ROOT / "notebooks").glob("*.ipynb"):
        assert f"audit_lib/notebooks/{notebook.name}" in names
