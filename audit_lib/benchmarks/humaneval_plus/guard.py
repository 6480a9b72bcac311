"""EvalPlus's `reliability_guard`, replayed in the candidate's own sandboxed job (a faithful replay, not a defence).

`evalplus/eval/__init__.py::unsafe_execute` calls `evalplus/eval/utils.py::reliability_guard` before it loads a
sample (evalplus 0.3.1): `exit`, `quit`, `help` and `open`, many `os`, `shutil` and `subprocess` functions become
None and some modules are made unimportable, so a sample that calls one of them fails where it would pass without
the guard. The sandbox does the isolating; this only reproduces the guard's effect on verdicts. It runs first in the
program (after a docstring and `from __future__` imports, which must stay first), inside a function it then deletes,
so it binds no name in the program's globals. The ground truth runs without it, as EvalPlus's `get_groundtruth` does.
The memory limit is the job's own (`runs.EVALPLUS_MEMORY_MB`, EvalPlus's 4 GiB), the cwd a fresh directory.
"""

from __future__ import annotations

import ast

GUARD_FUNCTION = "_benchaudit_evalplus_reliability_guard"
DISABLED_OS = ("kill", "system", "putenv", "remove", "removedirs", "rmdir", "fchdir", "setuid", "fork", "forkpty",
               "killpg", "rename", "renames", "truncate", "replace", "unlink", "fchmod", "fchown", "chmod", "chown",
               "chroot", "lchflags", "lchmod", "lchown", "getcwd", "chdir")
DISABLED_MODULES = ("ipdb", "joblib", "resource", "psutil", "tkinter")

RELIABILITY_GUARD_SOURCE = (
    f"def {GUARD_FUNCTION}():\n"
    "    import builtins, faulthandler, os, shutil, subprocess, sys\n"
    "    faulthandler.disable()\n"
    "    builtins.exit = None\n"
    "    builtins.quit = None\n"
    "    os.environ['OMP_NUM_THREADS'] = '1'\n"
    + "".join(f"    os.{name} = None\n" for name in DISABLED_OS)
    + "    builtins.open = None\n"
    "    shutil.rmtree = None\n"
    "    shutil.move = None\n"
    "    shutil.chown = None\n"
    "    subprocess.Popen = None\n"
    "    builtins.help = None\n"
    + "".join(f"    sys.modules[{name!r}] = None\n" for name in DISABLED_MODULES)
    + f"{GUARD_FUNCTION}()\n"
    f"del {GUARD_FUNCTION}\n"
)


# EvalPlus's process has imported numpy (`evalplus/eval/__init__.py`, for its float comparison) before the guard,
# so a sample's own `import numpy` finds it loaded; imported under the guard it fails (`open`, `os.getcwd` are None).
# Replayed for the samples that may need it, so the others do not pay numpy's import.
NUMPY_FIRST = "try:\n    import numpy as _benchaudit_numpy\n    del _benchaudit_numpy\nexcept ImportError:\n    pass\n"
NEEDS_NUMPY = ("numpy", "scipy", "pandas")


def with_reliability_guard(source: str) -> str:
    """`source` with EvalPlus's guard run before its first statement.

    The first statement that is not a docstring or a `__future__` import; numpy is imported before the guard, as in
    EvalPlus's process, when the source names a package that needs it."""
    try:
        body = ast.parse(source).body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return source  # its load fails the same way with or without the guard
    after_line = 0
    for index, node in enumerate(body):
        docstring = index == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) \
            and isinstance(node.value.value, str)
        if not (docstring or (isinstance(node, ast.ImportFrom) and node.module == "__future__")):
            break
        after_line = node.end_lineno or node.lineno
    lines = source.splitlines(keepends=True)
    head = "".join(lines[:after_line])
    if head and not head.endswith("\n"):
        head += "\n"
    numpy_first = NUMPY_FIRST if any(name in source for name in NEEDS_NUMPY) else ""
    return head + numpy_first + RELIABILITY_GUARD_SOURCE + "".join(lines[after_line:])


__all__ = ["DISABLED_MODULES", "DISABLED_OS", "RELIABILITY_GUARD_SOURCE", "with_reliability_guard"]
