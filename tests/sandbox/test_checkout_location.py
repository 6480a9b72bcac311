"""The sandbox starts from a checkout under /tmp whose interpreter (its `.venv`) lives there too."""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest

import audit_lib

PROBE = ("import audit_lib\nassert audit_lib.__file__.startswith('/tmp/'), audit_lib.__file__\n"
         "from audit_lib import sandbox\n"
         "result = sandbox.call_function('def f(x):\\n    return x + 1\\n', 'f', [[41]])\n"
         "print(result.status, result.outcomes[0].value if result.outcomes else None)\n"
         "print(result.load_error or '')\n")


def _venv_under(folder: Path) -> Path:
    """A venv in `folder` (as `make install` makes one in a checkout) that sees this interpreter's packages."""
    venv = folder / ".venv"
    subprocess.run([os.path.realpath(sys._base_executable), "-m", "venv", "--without-pip", str(venv)],  # noqa: SLF001
                   check=True, capture_output=True)
    purelib = sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)})
    Path(purelib, "shared_packages.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    return venv / "bin" / "python"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox's jail is Linux-only")
def test_call_function_from_a_checkout_and_venv_under_tmp() -> None:
    checkout = Path(tempfile.mkdtemp(prefix="benchaudit-checkout-", dir="/tmp"))
    try:
        shutil.copytree(Path(audit_lib.__file__).parent, checkout / "audit_lib",
                        ignore=shutil.ignore_patterns("__pycache__", "notebooks"))
        python = _venv_under(checkout)
        env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
        done = subprocess.run([str(python), "-c", PROBE], cwd=checkout, env=env, capture_output=True, text=True,
                              timeout=600)
    finally:
        shutil.rmtree(checkout, ignore_errors=True)
    assert done.returncode == 0, done.stderr[-2000:]
    status_line, load_error = (done.stdout.splitlines() + ["", ""])[:2]
    assert status_line == "pass 42", f"{done.stdout}\n{load_error}"
