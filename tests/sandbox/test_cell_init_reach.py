"""What a job can do to the sandbox's own processes: its cell's init (PID 1 of the job's namespace), the template.

As root, memory a job holds outside any process (tmpfs files) must not make the template the largest task of the
job's memory cgroup (the kernel would kill it and the job come back `harness_error`). Not root, the job runs as its
init's kernel uid, so it must not renice, re-limit or signal the init or write its /proc files for the next job of
the cell to inherit. The tamper tests pass trivially as root; they can fail on the non-root path (CI runs this suite
as an unprivileged user, `.ci/sandbox-unprivileged`).
"""

from __future__ import annotations

import os
import textwrap

import pytest

from audit_lib import sandbox
from audit_lib.sandbox import Limits

IS_ROOT = os.geteuid() == 0
QUICK = Limits(timeout_s=4, total_timeout_s=20, memory_mb=256)

READ_INHERITED = """
import os, resource
def read(path):
    try:
        with open(path) as handle:
            return handle.read().strip()
    except OSError as exc:
        return type(exc).__name__
limits = [resource.getrlimit(r) for r in (resource.RLIMIT_STACK, resource.RLIMIT_MEMLOCK, resource.RLIMIT_MSGQUEUE)]
try:
    init_limits = [resource.prlimit(1, r) for r in (resource.RLIMIT_STACK, resource.RLIMIT_MEMLOCK)]
except OSError as exc:
    init_limits = type(exc).__name__
print(sorted({
    "own nice": os.getpriority(os.PRIO_PROCESS, 0), "own limits": limits, "init limits": init_limits,
    "init nice": os.getpriority(os.PRIO_PROCESS, 1), "init oom": read("/proc/1/oom_score_adj"),
    "init coredump filter": read("/proc/1/coredump_filter"), "init autogroup": read("/proc/1/autogroup").split()[-1:],
}.items()))
"""
TAMPER_WITH_THE_INIT = """
import os, resource
for attempt in (
    lambda: os.setpriority(os.PRIO_PROCESS, 1, 19),
    lambda: resource.prlimit(1, resource.RLIMIT_STACK, (1 << 20, 1 << 20)),
    lambda: resource.prlimit(1, resource.RLIMIT_MEMLOCK, (4096, 4096)),
    lambda: open("/proc/1/oom_score_adj", "w").write("777"),
    lambda: open("/proc/1/coredump_filter", "w").write("0x1a5"),
    lambda: open("/proc/1/autogroup", "w").write("17"),
):
    try:
        attempt()
    except OSError:
        pass
"""


def _snippet(code: str, limits: Limits = QUICK) -> sandbox.SnippetResult:
    return sandbox.run_asserts(textwrap.dedent(code), ["pass"], limits=limits).snippets[0]


def test_a_job_cannot_change_what_the_next_job_finds_in_its_cell() -> None:
    before = _snippet(READ_INHERITED)
    assert before.status == "pass", before
    tamper = _snippet(TAMPER_WITH_THE_INIT)
    assert tamper.status == "pass", tamper
    after = _snippet(READ_INHERITED)
    assert after.status == "pass", after
    assert after.stdout == before.stdout


def test_a_signal_to_the_cells_init_does_not_end_the_job() -> None:
    snippet = _snippet("""
        import os, signal, time
        for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1):
            try:
                os.kill(1, number)
            except PermissionError:
                pass
        time.sleep(0.2)
        print("still here")
    """)
    assert (snippet.status, snippet.stdout) == ("pass", "still here\n"), snippet


def test_sigint_in_the_job_is_still_pythons_keyboard_interrupt() -> None:
    snippet = _snippet("""
        import signal
        try:
            signal.raise_signal(signal.SIGINT)
        except KeyboardInterrupt:
            print("KeyboardInterrupt")
    """)
    assert (snippet.status, snippet.stdout) == ("pass", "KeyboardInterrupt\n"), snippet


def test_job_processes_are_the_oom_killers_first_choice() -> None:
    snippet = _snippet("""
        import os
        print(open("/proc/self/oom_score_adj").read().strip(), flush=True)
        if os.fork() == 0:
            print(open("/proc/self/oom_score_adj").read().strip(), flush=True)
            os._exit(0)
        os.wait()
    """)
    assert snippet.stdout.split() == ["1000", "1000"], snippet


@pytest.mark.skipif(not IS_ROOT, reason="per-job memory cgroups need root (cgroup v1)")
def test_memory_held_outside_any_process_ends_the_job_not_the_sandbox() -> None:
    # Small processes fill /tmp and /dev/shm (tmpfs, charged to the job's memory cgroup, in no process's RSS) past
    # the limit: the kernel must kill a job process, never the template or an init (before: the template, and the
    # job came back `harness_error`).
    limits = Limits(timeout_s=3, total_timeout_s=20, memory_mb=64)
    fill = "; ".join(f"dd if=/dev/zero of={path} bs=64k count=320 2>/dev/null"  # 4 x 20 MB
                     for path in ("/tmp/a", "/tmp/b", "/dev/shm/c", "/dev/shm/d")) + "; exec sleep 30"
    snippet = _snippet(f"import os\nos.execv('/bin/sh', ['sh', '-c', {fill!r}])\n", limits)
    assert snippet.status in ("memory", "timeout"), snippet
    call = sandbox.call_function(f"import os\ndef f():\n    os.execv('/bin/sh', ['sh', '-c', {fill!r}])\n", "f",
                                 [[]], limits=limits)
    assert call.status == "pass" and call.outcomes[0].kind in ("exception", "timeout"), call
    assert _snippet("print('next')", limits).status == "pass"
