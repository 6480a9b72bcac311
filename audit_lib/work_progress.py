"""Progress of long work inside a cell (sandbox jobs, inputs), shown where its reader is.

Under the batch runner the kernel replaces a small JSON file named by `AUDIT_PROGRESS_FILE` (atomically, at most
twice a second) and the runner's progress line reads it; in Jupyter a `tqdm.auto` bar; on a terminal a tqdm bar
on stderr; elsewhere (tests, pipes) nothing. Under the runner no bar is drawn, so no bar residue reaches a report.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
import warnings
from collections.abc import Iterable, Iterator, Sized
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

from audit_lib.atomic_files import atomic_write_text

PROGRESS_FILE_ENV = "AUDIT_PROGRESS_FILE"
WRITE_INTERVAL_S = 0.5
PROGRESS_FILE_MAX_BYTES = 4096  # the runner never reads more than this of a file it did not write itself

ProgressMode = Literal["file", "notebook", "terminal", "off"]
T = TypeVar("T")


@dataclass(frozen=True)
class WorkProgress:
    """What a progress file holds: `done` of `total` `unit`s of the work named `desc`."""

    desc: str
    done: int
    total: int | None
    unit: str
    finished: bool = False

    def text(self) -> str:
        """`41,220/124,253 inputs`, or `41,220 inputs` when the total is unknown."""
        of = f"/{self.total:,}" if self.total is not None else ""
        return f"{self.done:,}{of} {self.unit}"


def read_progress(path: Path) -> WorkProgress | None:
    """The progress a kernel last wrote, or None when the file is absent, truncated or not of this shape."""
    try:
        with open(path, "rb") as handle:
            payload = json.loads(handle.read(PROGRESS_FILE_MAX_BYTES + 1)[:PROGRESS_FILE_MAX_BYTES])
        total = payload.get("total")
        fields = (payload["desc"], payload["done"], payload["unit"], payload.get("finished", False))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    desc, done, unit, finished = fields
    counts_ok = _is_count(done) and (total is None or _is_count(total))
    if not (counts_ok and isinstance(desc, str) and isinstance(unit, str) and isinstance(finished, bool)):
        return None
    return WorkProgress(desc[:80], done, total, unit[:40], finished)


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def progress_mode() -> ProgressMode:
    """Where progress goes in this process: the runner's file, a Jupyter bar, a terminal bar, or nowhere."""
    if os.environ.get(PROGRESS_FILE_ENV):
        return "file"
    if _in_jupyter_kernel():
        return "notebook"
    try:
        return "terminal" if sys.stderr.isatty() else "off"
    except (AttributeError, ValueError):  # a closed or replaced stderr
        return "off"


def _in_jupyter_kernel() -> bool:
    ipython = sys.modules.get("IPython")  # never imported here: a plain script is no kernel
    shell = ipython.get_ipython() if ipython is not None else None
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


class ProgressSink(Protocol):
    def update(self, n: int = 1) -> Any: ...


class _NoProgress:
    def update(self, n: int = 1) -> None:
        pass


class _ProgressFile:
    """Replaces the runner's progress file with the latest counts, at most every `WRITE_INTERVAL_S`."""

    def __init__(self, path: Path, desc: str, total: int | None, unit: str) -> None:
        self.path = path
        self.state = WorkProgress(desc, 0, total, unit)
        self._written_at = 0.0
        self._write()

    def update(self, n: int = 1) -> None:
        self.state = WorkProgress(self.state.desc, self.state.done + n, self.state.total, self.state.unit)
        if time.monotonic() - self._written_at >= WRITE_INTERVAL_S or self.state.done == self.state.total:
            self._write()

    def close(self) -> None:
        self.state = WorkProgress(self.state.desc, self.state.done, self.state.total, self.state.unit, True)
        self._write()

    def _write(self) -> None:
        try:
            atomic_write_text(self.path, json.dumps(asdict(self.state)))
        except OSError:  # progress is a courtesy: a full or vanished staging folder must not fail the audit
            pass
        self._written_at = time.monotonic()


@contextlib.contextmanager
def track_progress(total: int | None, *, desc: str, unit: str, enabled: bool = True) -> Iterator[ProgressSink]:
    """A sink to `update(n)` as work finishes, shown according to `progress_mode()`."""
    mode = progress_mode() if enabled else "off"
    if mode == "file":
        sink = _ProgressFile(Path(os.environ[PROGRESS_FILE_ENV]), desc, total, unit)
        try:
            yield sink
        finally:
            sink.close()
        return
    if mode == "off":
        yield _NoProgress()
        return
    with _tqdm_class(mode)(total=total, desc=desc, unit=f" {unit}", file=sys.stderr) as bar:
        yield bar


def tracked(items: Iterable[T], *, desc: str, unit: str, total: int | None = None) -> Iterator[T]:
    """`items` one by one, each counted as done when the next is asked for (or the loop ends)."""
    if total is None and isinstance(items, Sized):
        total = len(items)
    with track_progress(total, desc=desc, unit=unit) as sink:
        for item in items:
            yield item
            sink.update(1)


def _tqdm_class(mode: ProgressMode) -> Any:
    if mode == "notebook":
        from tqdm import TqdmWarning  # noqa: PLC0415

        with warnings.catch_warnings():  # without ipywidgets tqdm.auto falls back to a text bar, and says so
            warnings.simplefilter("ignore", TqdmWarning)
            from tqdm.auto import tqdm  # noqa: PLC0415
        return tqdm
    from tqdm import tqdm  # noqa: PLC0415

    return tqdm


__all__ = ["PROGRESS_FILE_ENV", "ProgressMode", "ProgressSink", "WorkProgress", "progress_mode", "read_progress",
           "track_progress", "tracked"]
