"""Issue 13's process and isolation classes, each attacked at least two ways from inside a job.

Every test here failed against the sandbox before the template/namespace rewrite (run with the old package first
on PYTHONPATH); see the README's Sandbox section for what each defence is.
"""

from __future__ import annotations

import os
import secrets
import socket
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from audit_lib import sandbox
from audit_lib.errors import SandboxHarnessError
from audit_lib.sandbox import Limits
from tests.sandbox.job_probes import marked_processes, MEMORY_SCANNER, wait_until_gone

QUICK = Limits(timeout_s=4, total_timeout_s=20, memory_mb=256)
IS_ROOT = os.geteuid() == 0
PROJECT = Path(__file__).resolve().parents[2]

def _one_snippet(code: str, limits: Limits = QUICK) -> sandbox.SnippetResult:
    return sandbox.run_asserts(textwrap.dedent(code), ["pass"], limits=limits).snippets[0]


# ------------------------------------------------------------------------------------- class 1: earlier jobs' memory

def test_a_call_job_finds_no_earlier_jobs_program_or_inputs_in_its_memory() -> None:
    tag = "Q" + secrets.token_hex(4)
    program_secret, input_secret = secrets.token_hex(16), secrets.token_hex(16)
    canonical = f"SOLUTION = '{tag}-LEAK-{program_secret}'\ndef f(x):\n    return x\n"
    # Same thread, one after the other: the pool hands both jobs to the same warmed zygote.
    sandbox.call_function(canonical, "f", [[f"{tag}-LEAK-{input_secret}"]], limits=QUICK)
    result = sandbox.call_function(MEMORY_SCANNER, "scan", [[tag]], limits=QUICK)
    assert result.outcomes[0].kind == "value", result
    assert program_secret not in result.outcomes[0].value
    assert input_secret not in result.outcomes[0].value


def test_an_assert_job_finds_no_earlier_jobs_tests_or_inputs_in_its_memory() -> None:
    tag = "Q" + secrets.token_hex(4)
    hidden_test, hidden_input = secrets.token_hex(16), secrets.token_hex(16)
    sandbox.run_asserts("def f():\n    return 1\n", [f"assert f() == 1, '{tag}-LEAK-{hidden_test}'"], limits=QUICK)
    sandbox.call_function("def f(x):\n    return x\n", "f", [[f"{tag}-LEAK-{hidden_input}"]], limits=QUICK)
    probe = MEMORY_SCANNER + f"\nprint(scan({tag!r}))\n"
    result = sandbox.run_asserts(probe, ["pass"], limits=QUICK).snippets[0]
    assert result.status == "pass", result
    assert hidden_test not in result.stdout
    assert hidden_input not in result.stdout


# ----------------------------------------------------------------------------- class 2: time and status from outside

def test_a_slow_input_cannot_report_itself_fast() -> None:
    # The code cancels the alarm, burns 1.5 s, writes its own result line claiming 1 ms and exits.
    liar = textwrap.dedent("""
        import os, signal, time
        def f(x):
            signal.setitimer(signal.ITIMER_REAL, 0)
            end = time.monotonic() + 1.5
            while time.monotonic() < end:
                pass
            os.write(3, b'0 value 0.001 42\\nD\\n')
            os._exit(0)
    """)
    result = sandbox.call_function(liar, "f", [[1]], limits=Limits(timeout_s=1.0, total_timeout_s=10))
    outcome = result.outcomes[0]
    assert outcome.kind == "timeout", outcome
    assert outcome.wall_s >= 1.0 and outcome.cpu_s > 0.05  # CPU: whatever share of the 2 shared cores it got


def test_cpu_time_per_input_is_measured_outside_the_child() -> None:
    program = textwrap.dedent("""
        import time
        def f(seconds):
            end = time.process_time() + seconds
            while time.process_time() < end:
                pass
            time.sleep(seconds)  # wall time that is not CPU time
            return seconds
    """)
    result = sandbox.call_function(program, "f", [[0.0], [0.4]], limits=QUICK)
    slow = result.outcomes[1]
    assert slow.kind == "value"
    assert 0.3 <= slow.cpu_s <= 0.7, slow
    assert slow.wall_s >= 0.75, slow
    assert result.cpu_s >= slow.cpu_s


@pytest.mark.parametrize("code", [123, 124, 125])
def test_exit_codes_the_code_chooses_never_become_environment_statuses(code: int) -> None:
    snippet = _one_snippet(f"import os\nos._exit({code})\n")
    assert snippet.status == "error", snippet
    call = sandbox.call_function(f"import os\nos._exit({code})\n", "f", [[1]], limits=QUICK)
    assert call.status == "error", call
    loaded = sandbox.call_function(f"import os\ndef f(x):\n    os._exit({code})\n", "f", [[1], [2]], limits=QUICK)
    assert loaded.status not in sandbox.ENVIRONMENT_STATUSES
    assert [o.exc_type for o in loaded.outcomes] == ["ProcessExit", "ProcessExit"]


def test_a_raised_memory_error_is_not_an_environment_failure() -> None:
    snippet = _one_snippet("raise MemoryError('fake')\n")
    assert snippet.status == "error" and snippet.error_type == "MemoryError"
    call = sandbox.call_function("raise MemoryError('fake')\n", "f", [[1]], limits=QUICK)
    assert call.status == "error"


# --------------------------------------------------------------------------- class 5: nothing survives the parent

def test_job_processes_die_when_the_parent_gives_up_on_the_zygote() -> None:
    from audit_lib.sandbox import pool  # noqa: PLC0415 - the pool's own give-up path is what is tested

    marker = str(time.time_ns())
    source = textwrap.dedent(f"""
        import os, time
        if os.fork() == 0:
            os.setsid()
            os.execv('/bin/sleep', ['sleep', '300.{marker}'])
        time.sleep(300)
    """)
    from audit_lib.sandbox import testrun  # noqa: PLC0415

    request = {"op": "tests", "program": source, "snippets": ["pass"], "names": [[]], "timeouts": [60.0],
               "total_timeout": 60.0, "limits": Limits().wire(60.0), "judge_limits": testrun._judge_limits(60.0)}
    outcome: list[BaseException] = []

    def ask() -> None:
        try:
            pool.request(request, 2.0, network_isolation=True)
        except BaseException as exc:  # noqa: BLE001 - recorded, asserted below
            outcome.append(exc)

    import threading  # noqa: PLC0415

    asking = threading.Thread(target=ask)
    asking.start()
    deadline = time.monotonic() + 2.0
    while not (seen := marked_processes(marker)) and time.monotonic() < deadline:
        time.sleep(0.02)
    asking.join()
    assert seen, "the job's process never started: the test would prove nothing"
    assert len(outcome) == 1 and isinstance(outcome[0], SandboxHarnessError), outcome
    assert wait_until_gone(marker) == []


def test_a_stalled_judge_does_not_hold_the_job_or_outlive_it() -> None:
    from audit_lib.sandbox import pool  # noqa: PLC0415 - bypasses the parent's own decoding of the same value

    # 80,000 distinct ints that all hash alike: building the set in the judge takes about a minute.
    colliding = ",".join(f'{{"$int": "{hex(k * (2**61 - 1))}"}}' for k in range(1, 80001))
    writer = (f"import os\ndef f(x):\n    os.write(3, b'0 value 0.0 {{\"$set\": [{colliding}]}}\\nD\\n')\n"
              "    os._exit(0)\n")
    request = {"op": "call", "program": writer, "entry_point": "f", "inputs": [[1]], "timeouts": [10.0],
               "deepcopy": True, "total_timeout": 60.0, "load_timeout": 5.0, "grace_s": 1.0,
               "stop_after_failure": True, "limits": Limits().wire(60.0)}
    started = time.monotonic()
    answer, blob, _isolated = pool.request(request, 40.0, network_isolation=True,
                                           sealed={"stop_expected": [[0, {"$set": [1]}]]})
    assert time.monotonic() - started < 300
    assert blob.startswith(b"0 value")


# ----------------------------------------------------------------------------------- class 6: limits per job

@pytest.mark.skipif(not IS_ROOT, reason="per-job memory cgroups need root (cgroup v1); the fallback is per process")
def test_memory_limit_holds_across_the_jobs_processes() -> None:
    snippet = _one_snippet("""
        import os, time
        children = []
        for _ in range(4):
            pid = os.fork()
            if pid == 0:
                block = bytearray(100 * 1024 * 1024)
                block[::4096] = b"x" * len(block[::4096])
                time.sleep(30)
                os._exit(0)
            children.append(pid)
            time.sleep(0.5)
        # Children the kernel killed for the job's memory are gone; the others hold their 100 MB each.
        print(sum(os.waitpid(pid, os.WNOHANG) == (0, 0) for pid in children))
    """, limits=Limits(timeout_s=10, total_timeout_s=20, memory_mb=256))
    # Each process alone is well under the limit; together they are not.
    assert snippet.stdout.strip() in ("0", "1", "2"), snippet


def test_shm_is_sized_with_the_jobs_memory_limit() -> None:
    snippet = _one_snippet("""
        block = b"x" * (8 * 1024 * 1024)
        for number in range(12):  # 96 MB in files under the 16 MB file-size limit
            with open(f'/dev/shm/part{number}', 'wb') as handle:
                handle.write(block)
    """, limits=Limits(timeout_s=10, total_timeout_s=20, memory_mb=64))
    assert snippet.status in ("error", "memory"), snippet


# ------------------------------------------------------------------------------------- class 7: shared host state

def test_project_data_reports_and_home_are_invisible() -> None:
    places = [str(PROJECT / "data_cache"), str(PROJECT / "reports"), str(PROJECT / "README.md"),
              str(Path(sandbox.__file__)), str(PROJECT / ".git")]
    snippet = _one_snippet(f"""
        import os
        print([p for p in {places!r} if os.path.exists(p)])
        for folder in ({str(PROJECT)!r}, {os.path.expanduser("~")!r}):
            print(sorted(os.listdir(folder)) if os.path.isdir(folder) else [])
    """)
    assert snippet.status == "pass", snippet
    visible, project, home = snippet.stdout.splitlines()
    assert visible == "[]"
    # At most the path down to a bind-mounted interpreter (a venv inside the project, a pyenv under HOME).
    assert set(eval(project)) <= _first_steps_to_python(PROJECT)
    assert set(eval(home)) <= _first_steps_to_python(Path(os.path.expanduser("~")))


def _first_steps_to_python(folder: Path) -> set[str]:
    prefixes = {sys.prefix, sys.base_prefix, os.path.dirname(os.path.realpath(sys.executable))}
    return {Path(p).resolve().relative_to(folder.resolve()).parts[0] for p in prefixes
            if Path(p).resolve().is_relative_to(folder.resolve()) and Path(p).resolve() != folder.resolve()}


def test_a_unix_socket_at_a_filesystem_path_is_unreachable() -> None:
    folder = tempfile.mkdtemp(prefix="sandbox-socket-")
    os.chmod(folder, 0o777)  # reachable by any uid, as a careless host service would leave it
    path = os.path.join(folder, "service.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        listener.bind(path)
        os.chmod(path, 0o777)
        listener.listen(1)
        listener.settimeout(0.5)
        snippet = _one_snippet(f"""
            import socket
            client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            client.connect({path!r})
            client.sendall(b'reached')
        """)
        # Refused by the filesystem the job sees (nothing at that path), not by a missing module.
        assert snippet.status == "error" and snippet.error_type in (
            "FileNotFoundError", "ConnectionRefusedError", "PermissionError"), snippet
        with pytest.raises(socket.timeout):
            listener.accept()
    finally:
        listener.close()
        os.unlink(path)
        os.rmdir(folder)


def test_temp_roots_are_not_predictable_names_followed_through_links(tmp_path: Path) -> None:
    # Plant links at predictable temp-root names (the zygote's pid, say); a zygote must never chmod through them.
    victim = tmp_path / "victim"
    victim.mkdir(mode=0o700)
    next_pid = int(Path("/proc/sys/kernel/ns_last_pid").read_text()) + 1
    planted = [Path(tempfile.gettempdir(), f"benchaudit-sandbox-{pid}") for pid in range(next_pid, next_pid + 300)]
    planted = [link for link in planted if not os.path.lexists(link)]
    for link in planted:
        link.symlink_to(victim)
    try:
        sandbox.shutdown()  # fresh zygotes, started while the links are there
        assert _one_snippet("pass\n").status == "pass"
    finally:
        for link in planted:
            link.unlink()
    assert victim.stat().st_mode & 0o777 == 0o700


def test_a_killed_zygote_leaves_no_temp_root_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from audit_lib.sandbox import pool  # noqa: PLC0415 - a zygote of its own, killed the hard way

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    zygote = pool.Zygote(network_isolation=True)
    try:
        # the template has entered its own root by the time the zygote answers, so nothing needs the host's dir
        assert sorted(p.name for p in tmp_path.iterdir()) == []
    finally:
        os.killpg(zygote.process.pid, 9)
        zygote.process.wait()
    assert sorted(p.name for p in tmp_path.iterdir()) == []


# ------------------------------------------------------------------------- class 8: no privilege inside the job

def test_the_job_is_a_nonzero_uid_without_capabilities() -> None:
    snippet = _one_snippet("""
        import os
        status = dict(line.split(':', 1) for line in open('/proc/self/status'))
        print(os.getuid(), os.geteuid(), int(status['CapEff'], 16), int(status['CapPrm'], 16), int(status['CapBnd'], 16))
    """)
    uid, euid, effective, permitted, bounding = (int(x) for x in snippet.stdout.split())
    assert uid != 0 and euid != 0
    assert effective == permitted == 0
    assert bounding == 0 or IS_ROOT  # as root the job uid's bounding set is the host's, but it holds nothing


def test_the_job_cannot_see_or_signal_the_parent_or_read_its_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    canary = secrets.token_hex(16)
    monkeypatch.setenv("BENCHAUDIT_CANARY", canary)
    snippet = _one_snippet(f"""
        import os
        seen = []
        for entry in os.listdir('/proc'):
            if entry.isdigit():
                try:
                    seen.append(open(f'/proc/{{entry}}/environ', 'rb').read())
                except OSError:
                    pass
        print({canary!r}.encode() in b''.join(seen))
        try:
            os.kill({os.getpid()}, 0)
            print('signalled')
        except OSError as exc:
            print(type(exc).__name__)
    """)
    leaked, signal_result = snippet.stdout.split()
    assert leaked == "False"
    assert signal_result in ("ProcessLookupError", "PermissionError")
    assert signal_result == "ProcessLookupError"  # its own PID namespace: the parent does not exist for it


# ------------------------------------------------------------------------------ class 9: a readable interpreter

STDLIB_MODULES = ("calendar", "glob", "queue", "socket", "decimal", "fractions", "heapq", "itertools",
                  "collections", "re", "json", "math", "statistics", "typing", "functools", "string", "datetime",
                  "csv", "difflib", "sqlite3", "zoneinfo", "xml.etree.ElementTree", "email.message", "uuid",
                  "pprint", "shlex", "textwrap", "bisect", "operator", "copy", "array", "struct", "hashlib",
                  "random", "secrets", "enum", "dataclasses", "pathlib", "unittest", "argparse", "logging")


def test_a_wide_set_of_stdlib_modules_imports_inside_a_job() -> None:
    modules = list(STDLIB_MODULES)
    try:
        import numpy  # noqa: F401, PLC0415
        modules.append("numpy")
    except ImportError:
        pass
    snippet = _one_snippet(f"""
        import importlib
        failed = []
        for name in {modules!r}:
            try:
                importlib.import_module(name)
            except Exception as exc:
                failed.append(name + ': ' + repr(exc))
        assert not failed, failed
    """, limits=Limits(timeout_s=20, total_timeout_s=30, memory_mb=1024))
    assert snippet.status == "pass", snippet


def test_a_call_job_can_use_modules_the_zygote_never_loaded() -> None:
    program = "import calendar, glob, queue\ndef f(year):\n    return calendar.isleap(year), glob.glob('/nonexistent*')\n"
    result = sandbox.call_function(program, "f", [[2024]], limits=QUICK)
    assert result.status == "pass" and result.outcomes[0].value == (True, [])


def test_a_job_has_the_builtins_and_path_of_python_dash_i_and_none_of_the_harness_loaded() -> None:
    # The template is a fresh `python -I -S` (lean: every job forks it); what `site` gives code (exit, quit, help...)
    # and the venv's packages must still be there, and nothing of the zygote or the parent's rewrite.
    import subprocess  # noqa: PLC0415

    plain = subprocess.run([sys.executable, "-I", "-c", "import builtins; print(sorted(dir(builtins)))"],
                           capture_output=True, text=True, check=True).stdout.strip()
    site_packages = [path for path in sys.path if path.endswith("site-packages")]
    snippet = _one_snippet(f"""
        import builtins, sys
        assert sorted(dir(builtins)) == {plain}, sorted(set(dir(builtins)) ^ set({plain}))
        assert all(path in sys.path for path in {site_packages!r}), sys.path
        loaded = [name for name in sys.modules if name.startswith(("audit_lib", "ast", "dataclasses", "inspect"))]
        assert not loaded, loaded
        exit(3)
    """)
    assert (snippet.status, snippet.error_type, snippet.error_message) == ("error", "SystemExit", "3"), snippet
