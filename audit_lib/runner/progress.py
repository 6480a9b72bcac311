"""Progress lines while a batch runs: each audit's cell, and the work done inside it.

The work inside a cell is what its kernel reports (`audit_lib.work_progress`: sandbox jobs, inputs).
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from audit_lib.runner.execute import AuditOutcome
from audit_lib.runner.plan import AuditJob
from audit_lib.work_progress import read_progress


class ProgressDisplay:
    """Progress lines: each audit's start and end, and every few seconds where each running one is.

    Where: the cell, with the work done inside it (`humaneval_plus: cell 5/12, ground truth 41,220/124,253 inputs
    (165s)`)."""

    poll_interval_s = 1.0
    heartbeat_s = 10.0  # at most one "running" line this often, when a cell finished
    quiet_limit_s = 60.0  # and at least one this often while anything runs

    def __init__(self, stream: TextIO | None, planned: Sequence[AuditJob]) -> None:
        self.stream = stream
        self.total = len(planned)
        self.done = 0
        self.started_at = time.monotonic()
        self._last_line = self.started_at
        self._states: dict[str, str] = {}
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
            state = f"{job.audit}: cell {cells[0]}/{cells[1]}"
            work = read_progress(job.progress_file)
            if work is not None and not work.finished:
                state += f", {work.desc} {work.text()}"
            changed |= self._states.get(job.audit) != state
            self._states[job.audit] = state
            states.append(f"{state} ({now - self._audit_started[job.audit]:.0f}s)")
        quiet_for = now - self._last_line
        if states and ((changed and quiet_for >= self.heartbeat_s) or quiet_for >= self.quiet_limit_s):
            self._write("running: " + "; ".join(states))

    def finished(self, outcome: AuditOutcome) -> None:
        self.done += 1
        prefix = f"({self.done}/{self.total}) {outcome.audit}"
        if outcome.ok:
            self._write(f"{prefix}: ok in {outcome.duration_s:.1f}s")
        else:
            assert outcome.failure is not None
            self._write(f"{prefix}: FAILED after {outcome.duration_s:.1f}s at {outcome.failure.describe()}")


def _cell_progress(notebook_path: Path) -> tuple[int, int] | None:
    """(the code cell running or last done, total code cells) of a notebook papermill is writing.

    None before it exists."""
    try:
        payload = json.loads(notebook_path.read_text(encoding="utf-8"))
        code_cells = [c for c in payload.get("cells", []) if c.get("cell_type") == "code"]
        statuses = [c.get("metadata", {}).get("papermill", {}).get("status") for c in code_cells]
    except (OSError, ValueError, AttributeError, TypeError):
        return None
    completed = statuses.count("completed")
    current = completed + 1 if "running" in statuses else completed
    return min(current, len(code_cells)), len(code_cells)
