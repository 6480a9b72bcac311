"""Room on the stack for values nested up to `MAX_DEPTH` (stdlib only: the sandbox's children import it).

CPython's default recursion limit (1,000) lets a program build, compare and print a list nested ~990 deep, while
encoding, parsing and decoding one level of a tagged value takes up to `FRAMES_PER_LEVEL` frames here (a `$dict`
pair: decode, its tag, its pairs, a comprehension; the C JSON parser and printer count one per JSON level, two per
tagged one). `depth_room()` raises the limit by `DEPTH_ROOM` around that work and puts it back when the last user
leaves: the code under test and the benchmark's own comparisons run at the limit they were given, as upstream's do.
"""

from __future__ import annotations

import sys
from _thread import allocate_lock
from types import TracebackType

# The deepest value that crosses the sandbox (a value nested deeper is `Unserializable`): CPython's own default
# recursion limit, past which upstream's `==` and `repr` of such a value raise RecursionError anyway.
MAX_DEPTH = 1000
FRAMES_PER_LEVEL = 5
DEPTH_ROOM = FRAMES_PER_LEVEL * MAX_DEPTH + 500

# Bound here: the code under test may rebind `sys` attributes in its job, where this module encodes its values.
_get_limit, _set_limit = sys.getrecursionlimit, sys.setrecursionlimit
_lock = allocate_lock()
_state = {"users": 0, "restore": 0}


class depth_room:  # noqa: N801 - used as a function: `with depth_room():`
    """Raise the recursion limit by `DEPTH_ROOM` while any thread is inside; restore it when the last one leaves."""

    __slots__ = ()

    def __enter__(self) -> None:
        with _lock:
            if not _state["users"]:
                _state["restore"] = _get_limit()
                _set_limit(_state["restore"] + DEPTH_ROOM)
            _state["users"] += 1

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        with _lock:
            _state["users"] -= 1
            if not _state["users"]:
                _set_limit(_state["restore"])
