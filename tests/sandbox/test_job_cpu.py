"""The CPU time recorded for a job is all of its processes', read outside it, however the job ends.

Root reads it from the job's cpuacct cgroup. Not root (CI runs this file as an unprivileged user too), it comes from
/proc for the job's live processes and from the cell's init for the reaped ones: round 5 found the worker's own
rusage recorded instead (children it never waited for left out: 0.01 s for 1.4 s of work) and 0 for every
assert-mode timeout (the init, which reports it, dies with the kill). The timing split judges timeouts on this time.
"""

from __future__ import annotations

import textwrap

from audit_lib import sandbox
from audit_lib.sandbox import Limits

BURNERS = """
import os, time
def burn(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
for _ in range(2):
    if os.fork() == 0:
        burn(0.5)
        os._exit(0)
time.sleep(1.5)  # never waits for them: they end (or are killed) unreaped by this process
"""


def test_processes_the_worker_never_waited_for_are_counted() -> None:
    snippet = sandbox.run_asserts("", [textwrap.dedent(BURNERS)],
                                  limits=Limits(timeout_s=5, total_timeout_s=20, memory_mb=256)).snippets[0]
    assert snippet.status == "pass", snippet
    assert snippet.cpu_s >= 0.8, snippet  # two children of 0.5 s each


def test_an_assert_mode_timeout_keeps_the_cpu_time_it_used() -> None:
    snippet = sandbox.run_asserts("", ["while True:\n    pass\n"],
                                  limits=Limits(timeout_s=1.0, total_timeout_s=20, memory_mb=256)).snippets[0]
    assert snippet.status == "timeout", snippet
    assert snippet.cpu_s >= 0.5, snippet  # about 1 s of a core, less on a loaded machine; never 0


def test_a_call_mode_timeout_counts_the_children_that_did_the_work() -> None:
    program = textwrap.dedent("""
        import os, time
        def f(n):
            for _ in range(2):
                if os.fork() == 0:
                    while True:
                        pass
            time.sleep(60)
    """)
    result = sandbox.call_function(program, "f", [[1]], limits=Limits(timeout_s=1.0, total_timeout_s=20,
                                                                        memory_mb=256))
    (outcome,) = result.outcomes
    assert outcome.kind == "timeout", result
    assert result.cpu_s >= 0.8, result  # two busy children for about 1 s, on 2 cores
