"""One script request: `program + snippet` run as `python -c` would, its exit code seen from outside (evidence).

Nothing here is a verdict: an exit-code harness (IntentSpec's) is replayed from this exit code, and the judge
(`tests_job`) decides the project's own verdict. The code may write anything anywhere; only how its process
ended, as the cell's init reported it, is read.
"""

from __future__ import annotations

import json

from audit_lib.sandbox.zygote.state import ZygoteState
from audit_lib.sandbox.zygote.supervise import Capture, ChildRun


def run_script(state: ZygoteState, request: dict) -> dict:
    limits, timeout = request["limits"], float(request["timeout"])
    run = ChildRun(state, limits, "script", json.dumps({"source": request["source"]}).encode())
    deadline = run.started + timeout
    captures = {"out": Capture(limits["output_bytes"]), "err": Capture(limits["output_bytes"])}
    run.supervise(captures, lambda _chunk: True, lambda: deadline)
    how, code, _signal = run.exit_description()
    exited = how == "exited" and not run.killed_by_us and run.setup_done
    return {"exit_code": code if exited else None, "stdout": captures["out"].text(),
            "stderr": captures["err"].text(), "wall_s": run.duration, "cpu_s": run.cpu_s}
