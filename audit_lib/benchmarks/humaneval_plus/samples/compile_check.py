"""A program that does not compile fails at load in every harness: said once, in the parent, without running it.

`compile()` (the real CPython compiler, the same one the sandbox's interpreter uses) turns source into code and
runs nothing. A SyntaxError (IndentationError, TabError) or a ValueError (a NUL byte) there is what `exec` raises
first in both harnesses, so such a sample fails without a sandbox job. Anything else (a source too deep for the
compiler, out of memory) goes to the sandbox like any other sample.
"""

from __future__ import annotations

import warnings

HARNESS_FILENAME = "<string>"  # what both harnesses' `exec` names the code in its messages


def compile_error(source: str) -> str | None:
    """`"<Type>: <message>"` of the error compiling `source` raises, or None when it compiles.

    (or the compiler gives up for a reason the sandbox should meet instead).
    """
    try:
        with warnings.catch_warnings():  # the code's own warnings (invalid escapes...) are not ours to show
            warnings.simplefilter("ignore")
            compile(source, HARNESS_FILENAME, "exec", dont_inherit=True)
    except SyntaxError as exc:  # IndentationError and TabError are SyntaxErrors
        return f"{type(exc).__name__}: {exc}"
    except ValueError as exc:
        return f"ValueError: {exc}"
    except (RecursionError, MemoryError, OverflowError):
        return None
    return None


__all__ = ["compile_error"]
