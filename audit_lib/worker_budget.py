"""One budget of sandbox workers for a whole batch, however many notebooks run at once.

The runner creates a folder of slot files and passes it to every kernel (`AUDIT_WORKER_BUDGET_DIR`, size
`AUDIT_WORKERS`, default the number of cores). A sandbox job holds an exclusive `flock` on one slot while it
runs, so across all notebooks at most that many jobs run at a time. Without the folder (a notebook run by hand)
there is no cross-process budget and the local pool's own size applies.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import random
import time
from collections.abc import Iterator
from pathlib import Path

from audit_lib.check_cost import note_sandbox_job

BUDGET_DIR_ENV = "AUDIT_WORKER_BUDGET_DIR"
WORKERS_ENV = "AUDIT_WORKERS"
POLL_S = 0.005


def budget_size() -> int:
    """Workers for the whole run: `AUDIT_WORKERS`, else the cores this process may use."""
    configured = os.environ.get(WORKERS_ENV, "").strip()
    if configured.isdigit() and int(configured) > 0:
        return int(configured)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def create_budget(folder: Path, size: int) -> dict[str, str]:
    """Slot files for `size` workers in `folder`; returns the environment that makes kernels share them."""
    folder.mkdir(parents=True, exist_ok=True)
    for index in range(size):
        (folder / f"slot-{index}").touch()
    return {BUDGET_DIR_ENV: str(folder), WORKERS_ENV: str(size)}


@contextlib.contextmanager
def worker_slot() -> Iterator[int | None]:
    """Hold one slot of the shared budget while the body runs (a no-op without a budget folder).

    Every `run_many` job runs inside one, so this is also where it is counted (`check_cost.note_sandbox_job`)."""
    note_sandbox_job()
    folder = os.environ.get(BUDGET_DIR_ENV)
    if not folder:
        yield None
        return
    slots = sorted(Path(folder).glob("slot-*"))
    if not slots:
        yield None
        return
    while True:
        for path in random.sample(slots, len(slots)):
            handle = os.open(path, os.O_RDWR)
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(handle)
                continue
            try:
                yield int(path.name.rsplit("-", 1)[1])
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)
                os.close(handle)
            return
        time.sleep(POLL_S)
