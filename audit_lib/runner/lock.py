"""One run at a time per reports folder: an `fcntl` lock on `reports/.lock`, naming who holds it.

The lock file stays in the folder (empty while no run holds it): removing it on release would let a waiting run
lock the removed file while a new one locks a fresh file, two runs at once again. The kernel releases the lock
when its holder dies, however it dies.
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
            if stream is not None:
                print(f"waiting: {reports_dir} is in use by another run ({holder}); this run starts when it ends "
                      "(--no-wait refuses instead)", file=stream, flush=True)
            fcntl.flock(handle, fcntl.LOCK_EX)
        record = {"pid": os.getpid(), "host": socket.gethostname(), "command": command,
                  "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        os.ftruncate(handle, 0)
        os.pwrite(handle, json.dumps(record).encode(), 0)
        try:
            yield lock_path
        finally:
            os.ftruncate(handle, 0)
            fcntl.flock(handle, fcntl.LOCK_UN)
    finally:
        os.close(handle)
