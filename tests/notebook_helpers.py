"""Run an audit notebook end to end with papermill, the way the batch runner does."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent


def execute_notebook(name: str, params: dict[str, Any], out_dir: Path, *, timeout_s: int = 600) -> dict[str, Any]:
    """Execute `notebooks/<name>.ipynb` into `out_dir` and return its findings JSON."""
    import papermill
    from jupyter_client.kernelspec import KernelSpecManager

    out_dir.mkdir(parents=True, exist_ok=True)
    env_overrides = {"AUDIT_REPORTS_DIR": str(out_dir), "AUDIT_PROJECT_ROOT": str(REPO_ROOT)}
    saved = {key: os.environ.get(key) for key in env_overrides}
    os.environ.update(env_overrides)
    kernel_name = "benchaudit" if "benchaudit" in KernelSpecManager().find_kernel_specs() else "python3"
    try:
        papermill.execute_notebook(
            str(REPO_ROOT / "notebooks" / f"{name}.ipynb"),
            str(out_dir / f"{name}.ipynb"),
            parameters=params,
            kernel_name=kernel_name,
            cwd=str(REPO_ROOT / "notebooks"),
            progress_bar=False,
            execution_timeout=timeout_s,
        )
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    audit = params.get("_findings_name", name)
    with open(out_dir / f"{audit}.findings.json", encoding="utf-8") as handle:
        return json.load(handle)


__all__ = ["execute_notebook"]
