"""One assert-mode request: a fresh child per snippet, passed only on a completion record with the secret."""

from __future__ import annotations

import json
import os

from audit_lib.sandbox.zygote.harness_io import ASSERT_STATUSES
from audit_lib.sandbox.zygote.state import ZygoteState
from audit_lib.sandbox.zygote.supervise import Capture, ChildRun, _status_from_exit

MAX_RESULT_CHANNEL_BYTES = 1 << 20  # the completion record is one short line; more is the code writing to fd 3


def run_assert(state: ZygoteState, request: dict) -> dict:
    limits, timeout = request["limits"], float(request["timeout"])
    secret = os.urandom(16).hex()
    result_buffer = bytearray()

    def on_result(chunk: bytes) -> bool:
        result_buffer.extend(chunk)
        return len(result_buffer) <= MAX_RESULT_CHANNEL_BYTES

    run = ChildRun(state, limits, "assert", json.dumps({"source": request["source"], "secret": secret,
                                                               "strict_guard": request.get("strict_guard")}).encode())
    deadline = run.started + timeout
    captures = {"out": Capture(limits["output_bytes"]), "err": Capture(limits["output_bytes"])}
    run.supervise(captures, on_result, lambda: deadline)
    timed_out = run.killed_by_us
    record = _completion_record(bytes(result_buffer), secret)
    how, code, _sig = run.exit_description()
    if record is not None and not timed_out and how == "exited" and code == 0:
        status, error_type, error_message = record["status"], record["error_type"], record["error_message"]
        exit_code = record["exit_code"]
        if status == "memory" and not (run.oom_killed or run.hit_memory_limit):
            # Anyone can raise MemoryError; `memory` (an environment status) needs the cgroup's word for it.
            status = "error"
    elif len(result_buffer) > MAX_RESULT_CHANNEL_BYTES:
        # Killed for flooding the result channel (fd 3 is reachable), not for time: the code's own doing.
        status, error_type, exit_code = "error", "ProtocolViolation", None
        error_message = f"more than {MAX_RESULT_CHANNEL_BYTES} bytes written to the result channel"
    else:
        status, error_type, error_message = _status_from_exit(run, timed_out)
        exit_code = code if how == "exited" and status == "error" else None
        if status == "harness_error":
            error_message += ": " + captures["err"].text()[-2000:]
    return {"status": status, "error_type": error_type, "error_message": error_message, "exit_code": exit_code,
            "stdout": captures["out"].text(), "stderr": captures["err"].text(), "duration_s": run.duration,
            "wall_s": run.duration, "cpu_s": run.cpu_s}


def _completion_record(raw: bytes, secret: str) -> dict | None:
    """The harness's verdict line, accepted only with this run's secret and a known status."""
    lines = raw.split(b"\n")
    for position, line in enumerate(lines):
        verdict = line.decode("ascii", errors="replace").split(" ")
        if len(verdict) == 3 and verdict[0] == secret and verdict[1] in ASSERT_STATUSES:
            details = None
            try:
                details = json.loads(lines[position + 1]) if position + 1 < len(lines) else None
            except (ValueError, RecursionError):
                pass
            error_type, error_message = (details if isinstance(details, list) and len(details) == 2
                                         else (None, None))
            try:
                exit_code: int | None = int(verdict[2])
            except ValueError:
                exit_code = None
            return {"status": verdict[1], "error_type": error_type, "error_message": error_message,
                    "exit_code": exit_code}
    return None
