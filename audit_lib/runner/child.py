"""Each audit in a fresh worker interpreter (`python -m audit_lib.runner.worker`), stoppable on interrupt."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import asdict
from typing import Any

from audit_lib.runner.execute import AuditOutcome, NotebookFailure, execute_job, outcome_from_json, outcome_to_json
from audit_lib.runner.plan import AuditJob

RESULT_MARKER = "BENCHAUDIT-OUTCOME "
_running: set[subprocess.Popen[str]] = set()
_running_lock = threading.Lock()


def run_job_in_child(job: AuditJob) -> AuditOutcome:
    """Execute one job in a fresh interpreter.

    papermill changes the working directory and each kernel needs its own environment, so notebooks never share a
    process (and a crash stays local)."""
    started = time.monotonic()
    command = [sys.executable, "-m", "audit_lib.runner.worker"]
    # Its own process group, so that stopping the batch stops the worker and what it started, and only those.
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env={**os.environ, **job.env}, start_new_session=True)
    with _running_lock:
        _running.add(process)
    try:
        stdout, stderr = process.communicate(json.dumps(job_to_json(job)))
    finally:
        with _running_lock:
            _running.discard(process)
    for line in reversed(stdout.splitlines()):
        if line.startswith(RESULT_MARKER):
            return outcome_from_json(json.loads(line[len(RESULT_MARKER):]))
    tail = "\n".join((stderr or stdout).strip().splitlines()[-15:])
    failure = NotebookFailure(None, None, "WorkerCrashed",
                              f"the runner's worker process exited with code {process.returncode}: {tail}")
    return AuditOutcome(job.audit, os.path.splitext(os.path.basename(job.notebook))[0], dict(job.params), False,
                        round(time.monotonic() - started, 2), failure)


def stop_running_children() -> int:
    """SIGTERM every worker still running (and its process group); returns how many were signalled."""
    with _running_lock:
        running = list(_running)
    for process in running:
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    return len(running)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def job_to_json(job: AuditJob) -> dict[str, Any]:
    payload = asdict(job)
    payload["params"] = dict(job.params)
    payload["env"] = dict(job.env)
    return payload


def worker_main() -> None:
    """`python -m audit_lib.runner.worker`: read one job as JSON on stdin, print its outcome as the last line."""
    job = AuditJob(**json.loads(sys.stdin.read()))
    signal.signal(signal.SIGTERM, _interrupt)  # papermill shuts its kernel down on the way out
    outcome = execute_job(job)
    print(RESULT_MARKER + json.dumps(outcome_to_json(outcome)), flush=True)
