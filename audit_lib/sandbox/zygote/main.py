"""The sandbox zygote: a warmed `python -I` worker that forks one fresh, limited child per job (stdlib only).

Started by `audit_lib.sandbox.pool` with an empty environment and stdin at /dev/null; it speaks length-prefixed JSON frames
on two private pipes (moved off fd 0/1 at start). Once, at start, it makes itself a child subreaper and
non-dumpable, enters its own network namespace (as root), claims a dedicated unprivileged uid (as root), and
pre-imports common stdlib modules. Per job it forks a child that:

  setsid -> stdin=/dev/null, stdout/stderr/result pipes on fd 1/2/3, every other fd closed -> chdir to a fresh
  empty temp dir owned by the job uid -> rlimits (AS, CPU, FSIZE, NOFILE, NPROC, CORE=0) -> drop to the job uid
  (root only; so hard limits cannot be raised again) -> minimal environment -> run the code.

The zygote supervises: bounded capture of stdout/stderr (drained past the cap), wall-clock deadlines, and on
timeout or exit it SIGKILLs the child's process group and then every remaining descendant (as subreaper, every
orphaned grandchild becomes the zygote's own child, listed in /proc/self/task/<tid>/children), so nothing the
job spawned outlives it. The parent only ever reads JSON from here; nothing is unpickled.
"""

from __future__ import annotations

import json
import os
import traceback

from audit_lib.sandbox.zygote.assert_job import run_assert
from audit_lib.sandbox.zygote.call_job import run_call
from audit_lib.sandbox.zygote.protocol import read_frames, read_raw_frames, write_frames
from audit_lib.sandbox.zygote.state import ZygoteState


def main() -> None:
    protocol_in, protocol_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    config, _ = read_frames(protocol_in)
    try:
        state = ZygoteState(config, (protocol_in, protocol_out))
    except BaseException:  # noqa: BLE001
        write_frames(protocol_out, {"ok": False, "error": traceback.format_exc()})
        return
    write_frames(protocol_out, state.hello())
    while True:
        try:
            raw, _blob = read_raw_frames(protocol_in)
        except EOFError:  # the parent closed the pipe or exited
            state.close()
            return
        request = json.loads(raw)
        try:
            if request["op"] == "assert":
                write_frames(protocol_out, run_assert(state, request))
            elif request["op"] == "call":
                header, blob = run_call(state, request, raw, protocol_in)
                write_frames(protocol_out, header, blob)
            else:
                write_frames(protocol_out, {"harness_error": f"unknown op {request['op']!r}"})
        except BaseException:  # noqa: BLE001
            write_frames(protocol_out, {"harness_error": traceback.format_exc()})
