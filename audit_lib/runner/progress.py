"""Progress lines while a batch runs."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from audit_lib.runner.execute import AuditOutcome
from audit_lib.runner.plan import AuditJob


class ProgressDisplay:
    """Progress lines: each audit's start and end, and every few seconds the cells done by the running ones."""

    poll_interval_s = 1.0
    heartbeat_s = 10.0  # at most one "running" line this often, when a cell finished
    quiet_limit_s = 60.0  # and at least one this often while anything runs

    def __init__(self, stream: TextIO | None, planned: Sequence[AuditJob]) -> None:
        self.stream = stream
        self.total = len(planned)
        self.done = 0
        self.started_at = time.monotonic()
        self._last_line = self.started_at
        self._cells: dict[str, tuple[int, int]] = {}
        self._audit_started: dict[str, float] = {}
        if stream and planned:
            self._write(f"running {self.total} audit(s) on kernel {planned[0].kernel_name!r}: "
                        + ", ".join(job.audit for job in planned))

    def _write(self, line: str) -> None:
        if self.stream:
            elapsed = time.monotonic() - self.started_at
            print(f"[{elapsed:6.1f}s] {line}", file=self.stream, flush=True)
            self._last_line = time.monotonic()

    def tick(self, running: Sequence[AuditJob]) -> None:
        now = time.monotonic()
        changed = False
        states = []
        for job in running:
            cells = _cell_progress(job.staging_notebook)
            if cells is None:
                continue
            if job.audit not in self._audit_started:
                self._audit_started[job.audit] = now
                self._write(f"{job.audit}: started ({cells[1]} code cells)")
            changed |= self._cells.get(job.audit) != cells
            self._cells[job.audit] = cells
            states.append(f"{job.audit} {cells[0]}/{cells[1]} cells ({now - self._audit_started[job.audit]:.0f}s)")
        quiet_for = now - self._last_line
        if states and ((changed and quiet_for >= self.heartbeat_s) or quiet_for >= self.quiet_limit_s):
            self._write("running: " + ", ".join(states))

    def finished(self, outcome: AuditOutcome) -> None:
        self.done += 1
        prefix = f"({self.done}/{self.total}) {outcome.audit}"
        if outcome.ok:
            self._write(f"{prefix}: ok in {outcome.duration_s:.1f}s")
        else:
            assert outcome.failure is not None
            self._write(f"{prefix}: FAILED after {outcome.duration_s:.1f}s at {outcome.failure.describe()}")


def _cell_progress(notebook_path: Path) -> tuple[int, int] | None:
    """(completed, total) code cells of a notebook papermill is writing, or None before it exists."""
    try:
        payload = json.loads(notebook_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    code_cells = [c for c in payload.get("cells", []) if c.get("cell_type") == "code"]
    completed = sum(1 for c in code_cells if c.get("metadata", {}).get("papermill", {}).get("status") == "completed")
    return completed, len(code_cells)
