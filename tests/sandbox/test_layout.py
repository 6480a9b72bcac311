"""The sandbox package's shape: the zygote loads only its own modules and the codec."""

from __future__ import annotations

import subprocess
import sys

from audit_lib.sandbox import pool


def test_zygote_imports_neither_the_pool_nor_the_public_face() -> None:
    # The zygote's own bootstrap, stopped just before its main loop, reports what it imported.
    probe = pool.BOOTSTRAP.replace("main()\n", "") + (
        "print(sorted(name for name in sys.modules if name.startswith('audit_lib')))\n")
    out = subprocess.run([sys.executable, "-I", "-c", probe, pool.PACKAGE_PARENT], capture_output=True, text=True,
                         check=True).stdout
    loaded = eval(out)  # noqa: S307 - a list literal printed by our own probe
    assert "audit_lib.sandbox.zygote.main" in loaded
    assert "audit_lib.sandbox.pool" not in loaded
    assert "audit_lib.sandbox.api" not in loaded
    assert "audit_lib.sandbox.executors" not in loaded


def test_no_sandbox_module_over_500_lines() -> None:
    from pathlib import Path  # noqa: PLC0415

    root = Path(pool.__file__).parent
    sizes = {str(path.relative_to(root)): len(path.read_text().splitlines()) for path in root.rglob("*.py")}
    assert sizes and max(sizes.values()) <= 500, sizes
