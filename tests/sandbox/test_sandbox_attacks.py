"""The attack corpus: code trying to fake a pass, hang the suite, or harm the machine. None may pass."""

from __future__ import annotations

import os
import socket
import textwrap
import threading
import time
from pathlib import Path

import pytest

from audit_lib import sandbox
from audit_lib.sandbox import Limits
from tests.sandbox.job_probes import marked_processes

pytestmark = pytest.mark.timeout(60)

QUICK = Limits(timeout_s=1.5, total_timeout_s=10, memory_mb=256, file_size_mb=1, processes=8)
PROGRAM = "def add(a, b):\n    return a + b\n"
IS_ROOT = os.geteuid() == 0


def run_one(snippet: str, program: str = PROGRAM, limits: Limits = QUICK,
            test: str = "assert add(1, 1) == 2") -> sandbox.SnippetResult:
    """`snippet` runs in the job, at the program's load (what the code under test can do); `test` in the judge."""
    result = sandbox.run_asserts(program + "\n\n" + textwrap.dedent(snippet), [test], limits=limits)
    assert len(result.snippets) == 1
    return result.snippets[0]


# Each entry: code in the program that tries to get a pass for a false test (`add(1, 1) == 3`) anyway.
EXIT_ATTACKS = {
    "sys_exit_0": "import sys\nsys.exit(0)\nassert add(1, 1) == 3\n",
    "os_exit_0": "import os\nos._exit(0)\nassert add(1, 1) == 3\n",
    "raise_system_exit": "raise SystemExit\nassert add(1, 1) == 3\n",
    "atexit_hook_exits_0": "import atexit, os\natexit.register(lambda: os._exit(0))\nassert add(1, 1) == 3\n",
    "atexit_hook_then_sys_exit": "import atexit, sys\natexit.register(print, 'PASSED')\nsys.exit(0)\n",
    "keyboard_interrupt": "raise KeyboardInterrupt\n",
    "monkeypatched_assertion_error":
        "import builtins\nbuiltins.AssertionError = type('Quiet', (Exception,), {})\nassert add(1, 1) == 3\n",
    "monkeypatched_builtins_used_by_harness":
        "import builtins\nbuiltins.type = builtins.issubclass = builtins.str = None\nassert add(1, 1) == 3\n",
    "monkeypatched_os_write_rewrites_record": """
        import os
        real_write = os.write
        os.write = lambda fd, data: real_write(fd, bytes(data).replace(b'"fail"', b'"pass"'))
        assert add(1, 1) == 3
    """,
    "replaced_sys_stdout": """
        import sys, io
        class Liar(io.StringIO):
            def flush(self):
                raise SystemExit(0)
        sys.stdout = sys.__stdout__ = Liar()
        print("ok")
        assert add(1, 1) == 3
    """,
    "print_completion_guesses": """
        import os
        for guess in ("0" * 32, "f" * 32, "pass", "PASSED"):
            print('{"secret": "%s", "status": "pass"}' % guess, flush=True)
            os.write(3, b'{"secret": "%s", "status": "pass", "error_type": null, "error_message": null}\\n' % guess.encode())
        os._exit(0)
    """,
    "read_parent_environment": """
        import os
        leaked = {k: v for k, v in os.environ.items() if k not in ("PATH", "HOME", "TMPDIR", "LANG", "OMP_NUM_THREADS",
                                                                   "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
        for value in leaked.values():
            os.write(3, ('{"secret": "%s", "status": "pass", "error_type": null, "error_message": null}\\n' % value).encode())
        os._exit(0)
    """,
    "read_proc_of_parent": """
        import os, re
        stolen = []
        for name in ("environ", "cmdline", "mem", "maps", "fd/0"):
            try:
                with open(f"/proc/{os.getppid()}/{name}", "rb") as handle:
                    stolen.append(handle.read(1 << 16))
            except OSError:
                pass
        for blob in stolen:
            for token in re.findall(rb"[0-9a-f]{32}", blob):
                os.write(3, b'{"secret": "%s", "status": "pass", "error_type": null, "error_message": null}\\n' % token)
        os._exit(0)
    """,
    "trace_function_jumps_over_asserts": """
        import sys
        def skipper(frame, event, arg):
            if event == "line" and "assert" in (frame.f_code.co_filename or "<sandbox>"):
                pass
            if event == "line" and frame.f_code.co_name == "<module>":
                try:
                    frame.f_lineno = frame.f_lineno + 1
                except Exception:
                    pass
            return skipper
        sys.settrace(skipper)
        assert add(1, 1) == 3
        assert add(2, 2) == 5
    """,
}


@pytest.mark.parametrize("name", sorted(EXIT_ATTACKS))
def test_exit_and_forgery_attacks_never_pass(name: str) -> None:
    result = run_one(EXIT_ATTACKS[name], test="assert add(1, 1) == 3")
    assert result.status in ("fail", "error"), (name, result)


def test_early_exit_from_program_import_is_not_a_pass() -> None:
    for program in ("import sys\nsys.exit(0)\n" + PROGRAM, "import os\nos._exit(0)\n" + PROGRAM,
                    "raise SystemExit(0)\n" + PROGRAM):
        result = sandbox.run_asserts(program, ["assert add(1, 1) == 2"], limits=QUICK)
        assert result.status == "error", (program, result)


def test_a_correct_program_still_passes_the_same_harness() -> None:
    # Control for the corpus above: the harness is not simply failing everything.
    assert run_one("assert add(1, 1) == 2\nprint('done')").status == "pass"


@pytest.mark.parametrize("snippet", [
    "while True:\n    pass\n",
    "import re\nre.match(r'(a+)+$', 'a' * 64 + 'b')\n",  # catastrophic backtracking inside C
    "import itertools\nall(itertools.repeat(True))\n",  # a C loop that never checks for signals
    "import time\ntime.sleep(100)\n",
    "import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\nwhile True:\n    pass\n",
], ids=["python_loop", "catastrophic_regex", "c_loop", "sleep", "replaced_sigalrm"])
def test_hangs_time_out_quickly(snippet: str) -> None:
    started = time.monotonic()
    result = run_one(snippet + "assert add(1, 1) == 2\n")
    assert result.status == "timeout"
    assert time.monotonic() - started < (QUICK.timeout_s + 3) * 10


def _processes_of_uid(uid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    found.append(int(entry))
            except OSError:
                continue
    return found


@pytest.mark.skipif(not IS_ROOT, reason="a per-job uid (and so this count) exists only when the parent is root")
def test_fork_bomb_is_capped_and_fully_killed() -> None:
    result = run_one("""
        import os, sys
        print(os.getuid(), os.stat('/proc/self/ns/pid').st_ino, flush=True)
        while True:
            try:
                os.fork()
            except OSError:
                pass
    """)
    assert result.status == "timeout"
    uid, pid_namespace = (int(x) for x in result.stdout.split()[:2])
    assert uid != 0
    # The job uid's only process left is the next job's prepared worker, in a namespace of its own.
    survivors = [pid for pid in _processes_of_uid(uid) if _pid_namespace(pid) == pid_namespace]
    assert survivors == []
    assert len(_processes_of_uid(uid)) <= 1


def _pid_namespace(pid: int) -> int | None:
    try:
        return os.stat(f"/proc/{pid}/ns/pid").st_ino
    except OSError:
        return None


def _sleeper(marker: str) -> str:
    # `sleep 300.<digits>`: a process of the job that the test can find from the host by its command line.
    return f"os.execv('/bin/sleep', ['sleep', '300.{marker}'])"


def test_child_spawned_to_outlive_the_timeout_is_killed() -> None:
    marker = str(time.time_ns())
    result = run_one(f"""
        import os, time
        pid = os.fork()
        if pid == 0:
            os.setsid()
            if os.fork() == 0:
                {_sleeper(marker)}
            os._exit(0)
        time.sleep(0.3)
        print("started", flush=True)
        time.sleep(300)
    """)
    assert result.status == "timeout"
    assert "started" in result.stdout
    assert marked_processes(marker) == []


def test_detached_daemon_left_after_a_clean_exit_is_killed() -> None:
    marker = str(time.time_ns())
    result = run_one(f"""
        import os, time
        pid = os.fork()
        if pid == 0:
            os.setsid()
            os.closerange(0, 1024)
            {_sleeper(marker)}
        time.sleep(0.3)
        print(pid, flush=True)
    """)
    assert result.status == "pass"  # the snippet has no failing assert; its daemon must still not survive
    assert marked_processes(marker) == []


def test_memory_bomb_hits_the_cap_not_the_machine() -> None:
    result = run_one("blocks = []\nwhile True:\n    blocks.append(bytearray(16 * 1024 * 1024))\n",
                     limits=Limits(timeout_s=10, total_timeout_s=20, memory_mb=128))
    if IS_ROOT:  # the job's memory cgroup: the kernel's OOM kill is the evidence for `memory`
        assert result.status == "memory"
    else:  # the fallback (RLIMIT_AS): the MemoryError is the code's own report, so an `error`
        assert (result.status, result.error_type) == ("error", "MemoryError")


@pytest.mark.skipif(not IS_ROOT, reason="only a root parent could let the child raise its hard limit")
def test_raising_rlimit_as_then_allocating_past_it_does_not_get_the_memory() -> None:
    result = run_one("""
        import resource
        try:
            resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
            print("raised")
        except (ValueError, OSError) as exc:
            print("refused", type(exc).__name__)
        block = bytearray(600 * 1024 * 1024)
        assert len(block) == 600 * 1024 * 1024
    """)
    # With a memory cgroup the job's limit does not depend on rlimits at all; without one, AS cannot be raised.
    assert result.status == "memory" or result.stdout.startswith("refused")
    assert result.status in ("memory", "error")


def test_one_gigabyte_print_is_capped_and_does_not_hang() -> None:
    limits = Limits(timeout_s=8, total_timeout_s=10, memory_mb=256, output_bytes=4096)
    started = time.monotonic()
    result = run_one("import sys\nchunk = 'x' * (1 << 20)\nfor _ in range(1024):\n    sys.stdout.write(chunk)\n"
                     "assert add(1, 1) == 3\n", limits=limits)
    assert result.status in ("fail", "timeout")
    assert len(result.stdout) < 4096 + 100
    assert "more bytes dropped" in result.stdout
    assert time.monotonic() - started < 100


def test_big_file_is_stopped_by_the_file_size_limit() -> None:
    result = run_one("with open('big.bin', 'wb') as out:\n    out.write(b'x' * (8 * 1024 * 1024))\n"
                     "assert add(1, 1) == 2\n")
    assert result.status == "error"
    assert result.error_type == "OSError"


@pytest.mark.skipif(not IS_ROOT, reason="the uid drop that denies these writes happens only as root")
def test_writing_outside_the_temp_dir_is_denied(tmp_path: Path) -> None:
    target = tmp_path / "planted.txt"
    os.chmod(tmp_path, 0o755)  # even a readable root-owned dir is not writable by the job uid
    result = run_one(f"open({str(target)!r}, 'w').write('pwned')\n")
    # The host's folders are not even visible to the job (FileNotFoundError); where they were, the uid denies it.
    assert result.status == "error" and result.error_type in ("PermissionError", "FileNotFoundError")
    assert not target.exists()


def test_socket_to_a_local_listener_does_not_get_through() -> None:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    listener.settimeout(0.2)
    port = listener.getsockname()[1]
    accepted: list[object] = []
    finished = threading.Event()

    def accept_loop() -> None:
        while not finished.is_set() and not accepted:
            try:
                accepted.append(listener.accept())
            except OSError:
                continue

    thread = threading.Thread(target=accept_loop)
    thread.start()
    try:
        probe = (f"import socket\ns = socket.create_connection(('127.0.0.1', {port}), timeout=1)\n"
                 "s.sendall(b'hello')\nassert False, 'connected'\n")
        result = sandbox.run_asserts(PROGRAM + "\n\n" + probe, ["assert add(1, 1) == 2"], limits=QUICK)
    finally:
        time.sleep(0.3)  # a connection that got through would be accepted by now
        finished.set()
        thread.join()
        listener.close()
    assert result.status == "error"  # the connect itself failed (no pass, and not the assert after it)
    assert result.network_isolated
    assert not accepted


def test_call_mode_rigged_values_cross_only_as_what_they_hold() -> None:
    program = textwrap.dedent("""
        class AlwaysEqual:
            def __eq__(self, other):
                return True
            def __ne__(self, other):
                return False
            __hash__ = object.__hash__
        class RiggedInt(int):
            def __eq__(self, other):
                return True
        class RiggedStr(str):
            def __eq__(self, other):
                return True
        def f(kind):
            return {"always": AlwaysEqual(), "int": RiggedInt(3), "str": RiggedStr("x"),
                    "nested": [1, (2, AlwaysEqual())]}[kind]
    """)
    result = sandbox.call_function(program, "f", [["always"], ["int"], ["str"], ["nested"]], limits=QUICK)
    kinds = [(o.kind, o.exc_type) for o in result.outcomes]
    assert kinds == [("unserializable", "__sandbox__.AlwaysEqual"), ("value", None), ("value", None),
                     ("unserializable", "__sandbox__.AlwaysEqual")]
    # A builtin subclass crosses as its base value: exact type, and its lying __eq__ left behind.
    rigged_int, rigged_str = result.outcomes[1].value, result.outcomes[2].value
    assert (type(rigged_int), rigged_int, type(rigged_str), rigged_str) == (int, 3, str, "x")
    assert rigged_int != 4 and rigged_str != "y"


def test_call_mode_replaced_sigalrm_is_killed_and_later_inputs_still_run() -> None:
    program = textwrap.dedent("""
        import signal
        def f(x):
            if x == 1:
                signal.signal(signal.SIGALRM, lambda *a: None)
                while True:
                    pass
            return x * 2
    """)
    limits = Limits(timeout_s=0.3, total_timeout_s=20, memory_mb=256)
    result = sandbox.call_function(program, "f", [[0], [1], [2]], limits=limits)
    assert [o.kind for o in result.outcomes] == ["value", "timeout", "value"]
    assert result.outcomes[2].value == 4
    assert result.restarts == 1


def test_call_mode_sees_no_parent_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BENCHAUDIT_PROBE_SECRET", "do-not-leak")
    program = "import os\ndef env():\n    return dict(os.environ)\n"
    result = sandbox.call_function(program, "env", [[]], limits=QUICK)
    environment = result.outcomes[0].value
    assert set(environment) == {"PATH", "HOME", "TMPDIR", "LANG", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                "MKL_NUM_THREADS"}
    assert "do-not-leak" not in repr(environment)
