"""The sandbox zygote: a warmed `python -I` process that runs each job in a job cell (stdlib only).

Started by `audit_lib.sandbox.pool` with an empty environment and stdin at /dev/null; it speaks length-prefixed
JSON frames on two private pipes (moved off fd 0/1 at start). Once, at start, it makes itself non-dumpable, enters
its own network namespace (as root), claims a dedicated unprivileged uid (as root), creates the job cgroups,
pre-imports common stdlib modules and forks the pristine template (`template`), which starts job cells
(`cell_init`): PID 1 of a PID and mount namespace that runs one job after another, each in a fresh worker forked
from it. Per job the zygote sets the cgroup limits, hands the cell the job's pipes and a memfd with its spec
(`supervise.ChildRun`), and supervises: bounded capture of stdout/stderr, deadlines, per-input wall and CPU time
measured here (`call_job`); a job out of time is ended by the cell's init when the zygote asks, and a cell whose
init does not report how a job ended is retired (SIGKILL to its init: the kernel kills everything in its namespace). The parent only ever reads
JSON from here; nothing is unpickled.
"""

from __future__ import annotations

import json
import os
import traceback

from audit_lib.sandbox.zygote.call_job import run_call
from audit_lib.sandbox.zygote.protocol import read_frames, read_raw_frames, write_frames
from audit_lib.sandbox.zygote.script_job import run_script
from audit_lib.sandbox.zygote.state import ZygoteState
from audit_lib.sandbox.zygote.tests_job import run_tests_request


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
            if request["op"] == "script":
                write_frames(protocol_out, run_script(state, request))
            elif request["op"] == "tests":
                write_frames(protocol_out, run_tests_request(state, request))
            elif request["op"] == "call":
                header, blob = run_call(state, request, raw, protocol_in)
                write_frames(protocol_out, header, blob)
            else:
                write_frames(protocol_out, {"harness_error": f"unknown op {request['op']!r}"})
        except BaseException:  # noqa: BLE001
            write_frames(protocol_out, {"harness_error": traceback.format_exc()})
