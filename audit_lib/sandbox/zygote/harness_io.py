"""What the job harnesses share: their own references to builtins the code may rebind, and output helpers.

Used by scripts (`child`), call mode (`call_child`) and tests jobs (`serve_child`); stdlib only, runs in workers."""

from __future__ import annotations

import builtins
import os
import sys
import types

# The harness keeps its own references: the code under test may rebind builtins, os.write or json internals.
_type, _str, _issubclass, _memoryview, _os_write = type, str, issubclass, memoryview, os.write
_int, _getattr, _os_read = int, getattr, os.read
_BaseException, _SystemExit = BaseException, SystemExit


def _write_all_raw(fd: int, data: bytes) -> None:
    view = _memoryview(data)
    while view:
        view = view[_os_write(fd, view):]


def _safe_text(thunk, cap: int = 2000) -> str:
    try:
        text = thunk()
        return text[:cap] if _type(text) is _str else "?"
    except _BaseException:  # hostile __str__ / __name__
        return "?"


def _exception_fields(exc: BaseException) -> tuple[str, str]:
    exc_type = _safe_text(lambda: _type(exc).__name__, 200)
    return exc_type, _safe_text(lambda: _str(exc))


def _fresh_module(name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__builtins__ = builtins
    sys.modules[name] = module
    return module


def _flush_std_streams(streams: tuple) -> None:
    for stream in streams:
        try:
            stream.flush()
        except _BaseException:
            pass


def _python_exit_code(exc: BaseException) -> int:
    """The status `python -c` exits with for an uncaught SystemExit: None -> 0, an int -> itself, else 1."""
    value = _getattr(exc, "code", None)
    if value is None:
        return 0
    return value if _type(value) is _int else 1
