"""What the job harnesses share: their own references to builtins the code may rebind, and output helpers.

Used by scripts (`child`), call mode (`call_child`) and tests jobs (`serve_child`); stdlib only, runs in workers."""

from __future__ import annotations

import builtins
import os
import sys
import types

# The harness keeps its own references: the code under test may rebind builtins, os.write or json internals.
pristine_type, pristine_str, pristine_issubclass, pristine_memoryview, pristine_os_write = type, str, issubclass, memoryview, os.write
pristine_int, pristine_getattr, pristine_os_read = int, getattr, os.read
PristineBaseException, PristineSystemExit = BaseException, SystemExit


def write_all_raw(fd: int, data: bytes) -> None:
    view = pristine_memoryview(data)
    while view:
        view = view[pristine_os_write(fd, view):]


def safe_text(thunk, cap: int = 2000) -> str:
    try:
        text = thunk()
        return text[:cap] if pristine_type(text) is pristine_str else "?"
    except PristineBaseException:  # hostile __str__ / __name__
        return "?"


def exception_fields(exc: BaseException) -> tuple[str, str]:
    exc_type = safe_text(lambda: pristine_type(exc).__name__, 200)
    return exc_type, safe_text(lambda: pristine_str(exc))


def fresh_module(name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__builtins__ = builtins
    sys.modules[name] = module
    return module


def flush_std_streams(streams: tuple) -> None:
    for stream in streams:
        try:
            stream.flush()
        except PristineBaseException:
            pass


def python_exit_code(exc: BaseException) -> int:
    """The status `python -c` exits with for an uncaught SystemExit: None -> 0, an int -> itself, else 1."""
    value = pristine_getattr(exc, "code", None)
    if value is None:
        return 0
    return value if pristine_type(value) is pristine_int else 1
