"""One run at a time per reports folder: an `fcntl` lock on `reports/.lock`, naming who holds it.

The holder removes the file before it lets go, so a finished run leaves nothing behind. A run that was waiting on
the removed file finds, once it gets the lock, that the path no longer names the file it locked, and starts over on
the current one: at any moment only the lock on the file the path names counts. The kernel releases the lock when
its holder dies, however it dies (the file then stays, empty or naming the dead run, and is taken over).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from audit_lib.errors import AuditError

LOCK_NAME = ".lock"


class ReportsFolderBusyError(AuditError):
    """Another run holds the reports folder and the caller asked not to wait (`--no-wait`).

    `fields["holder"]` names it."""

    reason_code = "reports_folder_busy"


def describe_holder(lock_path: Path) -> str:
    """`pid 4242 on host, started 2026-12-02T07:50:01Z (python -m audit_lib run ...)`, or why it is not known."""
    try:
        holder = json.loads(lock_path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        holder = {}
    if not isinstance(holder, dict) or "pid" not in holder:
        return "a run that has not yet said who it is"
    return (f"pid {holder.get('pid')} on {holder.get('host', '?')}, started {holder.get('started_at', '?')}"
            + (f" ({holder['command']})" if holder.get("command") else ""))


@contextlib.contextmanager
def reports_lock(reports_dir: Path, *, wait: bool = True, stream: TextIO | None = None,
                 command: str = "") -> Iterator[Path]:
    """Hold the reports folder's lock for the body.

    Waits for it (saying who holds it) or, without `wait`, raises `ReportsFolderBusyError` at once."""
    reports_dir.mkdir(parents=True, exist_ok=True)
    lock_path = reports_dir / LOCK_NAME
    told_to_wait = False
    while True:
        handle = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = describe_holder(lock_path)
                if not wait:
                    raise ReportsFolderBusyError(
                        f"{reports_dir} is in use by another run: {holder}. Wait for it, drop --no-wait to queue "
                        "behind it, or give this run its own --reports-dir", holder=holder) from None
                if stream is not None and not told_to_wait:
                    print(f"waiting: {reports_dir} is in use by another run ({holder}); this run starts when it "
                          "ends (--no-wait refuses instead)", file=stream, flush=True)
                    told_to_wait = True
                fcntl.flock(handle, fcntl.LOCK_EX)
            if not _names_the_same_file(lock_path, handle):  # its holder removed it on release: lock the new one
                continue
            record = {"pid": os.getpid(), "host": socket.gethostname(), "command": command,
                      "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
            os.ftruncate(handle, 0)
            os.pwrite(handle, json.dumps(record).encode(), 0)
            try:
                yield lock_path
            finally:
                with contextlib.suppress(FileNotFoundError):
                    lock_path.unlink()  # still holding the lock: nobody can have locked the path's file since
                fcntl.flock(handle, fcntl.LOCK_UN)
            return
        finally:
            os.close(handle)


def _names_the_same_file(lock_path: Path, handle: int) -> bool:
    """Whether `lock_path` still names the file open as `handle`."""
    try:
        current = os.stat(lock_path)
    except FileNotFoundError:
        return False
    opened = os.fstat(handle)
    return (current.st_dev, current.st_ino) == (opened.st_dev, opened.st_ino)
