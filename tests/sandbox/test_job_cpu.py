"""The CPU time recorded for a job is all of its processes', read outside it, however the job ends.

Root reads it from the job's cpuacct cgroup. Not root (CI runs this file as an unprivileged user too), it comes from
/proc for the job's live processes and from the cell's init for the reaped ones, not the worker's own rusage (which
leaves out children it never waited for: 0.01 s for 1.4 s of work) and not 0 for an assert-mode timeout (the init,
which reports it, dies with the kill). The timing split judges timeouts on this time.
"""

from __future__ import annotations

from audit_lib import sandbox
from audit_lib.sandbox import Limits

# Two children burn 0.4 s of CPU each and exit; the worker learns it through a pipe, never waits for them (they stay
# unreaped zombies until the job ends), then returns.
BURNERS = """
import os, time
def burn(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
def f(n):
    done_r, done_w = os.pipe()
    for _ in range(2):
        if os.fork() == 0:
            burn(0.4)
            os.write(done_w, b"x")
            os._exit(0)
    assert len(os.read(done_r, 1) + os.read(done_r, 1)) == 2
    return n
"""
ROOMY = Limits(timeout_s=20, total_timeout_s=40, memory_mb=256)  # the children need 0.8 s of CPU, however loaded


def test_processes_the_worker_never_waited_for_are_counted_in_assert_mode() -> None:
    snippet = sandbox.run_asserts(BURNERS, ["assert f(1) == 1\n"], limits=ROOMY).snippets[0]
    assert snippet.status == "pass", snippet
    assert snippet.cpu_s >= 0.8, snippet


def test_processes_the_worker_never_waited_for_are_counted_in_call_mode() -> None:
    result = sandbox.call_function(BURNERS, "f", [[1]], limits=ROOMY)
    assert result.status == "pass" and result.outcomes[0].value == 1, result
    assert result.cpu_s >= 0.8, result


def test_an_assert_mode_timeout_keeps_the_cpu_time_it_used() -> None:
    snippet = sandbox.run_asserts("", ["while True:\n    pass\n"],
                                  limits=Limits(timeout_s=1.0, total_timeout_s=20, memory_mb=256)).snippets[0]
    assert snippet.status == "timeout", snippet
    assert snippet.cpu_s > 0.02, snippet  # about 1 s of a core, less on a loaded machine; never 0


def test_children_the_kernel_would_reap_itself_are_counted() -> None:
    # With SIGCHLD ignored the kernel reaps a job's children itself and their CPU time reaches no parent's count, so
    # a non-root job could hide most of its CPU (a confirmed timeout read as not_a_failure). Not root, the filter
    # refuses the change; as root the cgroup counts every process anyway.
    hiding = BURNERS.replace("def f(n):\n", "def f(n):\n    import signal\n    try:\n"
                             "        signal.signal(signal.SIGCHLD, signal.SIG_IGN)\n    except OSError:\n"
                             "        pass\n")
    result = sandbox.call_function(hiding, "f", [[1]], limits=ROOMY)
    assert result.status == "pass" and result.outcomes[0].value == 1, result
    assert result.cpu_s >= 0.8, result
