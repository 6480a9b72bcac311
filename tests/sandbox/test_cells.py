"""A cell serves one job after another: nothing of a job reaches the next one in the same cell.

Each test runs its jobs one after another in one thread, so the pool hands them to the same zygote and its current
cell, and first checks that they did share the cell (same PID namespace): otherwise it would test nothing. Each
was run against a deliberately broken cell (no kill(-1), no fresh /tmp and /dev/shm, no IPC namespace per job, an
init that keeps the job's spec, limits set once per cell) and failed there.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import textwrap
import time
from pathlib import Path

import pytest

from audit_lib import sandbox
from audit_lib.sandbox import Limits
from tests.sandbox.job_probes import MEMORY_SCANNER, marked_processes, wait_until_gone

QUICK = Limits(timeout_s=4, total_timeout_s=20, memory_mb=256)
IS_ROOT = os.geteuid() == 0
PID_NAMESPACE = "import os\nNAMESPACE = os.readlink('/proc/self/ns/pid')\n"


def _job(code: str, limits: Limits = QUICK) -> sandbox.SnippetResult:
    """One assert-mode job that prints its PID namespace on its first stdout line, then runs `code`."""
    source = PID_NAMESPACE + "print(NAMESPACE, flush=True)\n" + textwrap.dedent(code)
    return sandbox.run_asserts(source, ["pass"], limits=limits).snippets[0]


def _same_cell(first: sandbox.SnippetResult, second: sandbox.SnippetResult) -> None:
    """Root: the jobs shared a cell (else the test would test nothing). Not root, each job has a cell of its own
    (it runs as its init's kernel uid; see `test_cell_init_reach`): the rest of the test then checks that too."""
    shared = first.stdout.split("\n")[0] == second.stdout.split("\n")[0]
    assert shared == IS_ROOT, ("the jobs shared a cell" if shared else "the jobs did not share a cell", first, second)


def _output(result: sandbox.SnippetResult) -> str:
    return result.stdout.split("\n", 1)[1].strip()


# ------------------------------------------------------------------------------------------------- files

def test_a_file_left_in_tmp_or_shm_is_not_visible_to_the_next_job() -> None:
    name = "left-" + secrets.token_hex(4)
    writer = _job(f"""
        for folder in ('/tmp', '/dev/shm'):
            with open(folder + '/{name}', 'w') as handle:
                handle.write('for the next job')
    """)
    reader = _job(f"""
        import os
        print(sorted(os.listdir('/tmp') + os.listdir('/dev/shm')))
    """)
    assert writer.status == "pass" and reader.status == "pass", (writer, reader)
    _same_cell(writer, reader)
    assert _output(reader) == "[]"
    assert not Path("/tmp", name).exists() and not Path("/dev/shm", name).exists()  # nor on the host


def test_a_hidden_file_held_open_by_a_daemon_is_not_visible_to_the_next_job() -> None:
    name = ".hidden-" + secrets.token_hex(4)
    writer = _job(f"""
        import os, time
        os.makedirs('/tmp/deep/er', exist_ok=True)
        handle = open('/tmp/deep/er/{name}', 'w')
        handle.write('kept open')
        handle.flush()
        if os.fork() == 0:
            os.setsid()
            os.closerange(0, 64)  # let the job end; keep the file open
            time.sleep(60)
            os._exit(0)
    """)
    reader = _job(f"""
        import os
        print([path for path in ('/tmp/deep/er/{name}', '/tmp/deep') if os.path.exists(path)])
    """)
    _same_cell(writer, reader)
    assert _output(reader) == "[]", reader


# ------------------------------------------------------------------------------------------------- processes

def _leaves_a_process(marker: str, daemonize: bool) -> str:
    detach = "    if os.fork():\n        os._exit(0)\n    os.setsid()\n" if daemonize else ""
    return ("import os\nif os.fork() == 0:\n" + detach
            + "    os.closerange(0, 64)  # holds none of the job's pipes: the job itself ends at once\n"
            + f"    os.execv('/bin/sleep', ['sleep', '60.{marker}'])\n")


LIST_OTHER_PROCESSES = """
    import os
    own = {1, os.getpid()}
    print(sorted(int(p) for p in os.listdir('/proc') if p.isdigit() and int(p) not in own))
"""


@pytest.mark.parametrize("daemonize", [False, True], ids=["background_child", "double_forked_daemon"])
def test_a_process_left_by_a_job_is_dead_before_the_next_job_starts(daemonize: bool) -> None:
    marker = str(time.time_ns())
    leaver = _job(_leaves_a_process(marker, daemonize))
    # No waiting here: the next job must already find the namespace empty.
    looker = _job(LIST_OTHER_PROCESSES)
    _same_cell(leaver, looker)
    assert leaver.status == "pass", leaver
    assert _output(looker) == "[]", looker
    assert marked_processes(marker) == []


def test_a_process_in_a_namespace_of_its_own_is_dead_before_the_next_job_starts() -> None:
    # A new session in a new user + PID namespace (where unprivileged namespaces are allowed): still a process of
    # the cell's PID namespace, so still killed.
    marker = str(time.time_ns())
    leaver = _job(f"""
        import os, ctypes
        if os.fork() == 0:
            os.setsid()
            ctypes.CDLL(None).unshare(0x10000000 | 0x20000000)
            if os.fork() == 0:
                os.closerange(0, 64)
                os.execv('/bin/sleep', ['sleep', '60.{marker}'])
            os._exit(0)
        os.wait()
    """)
    looker = _job(LIST_OTHER_PROCESSES)
    _same_cell(leaver, looker)
    assert _output(looker) == "[]", looker
    assert wait_until_gone(marker, 1.0) == []


# ------------------------------------------------------------------------------------------------- IPC

SYSV = """
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    IPC_CREAT, IPC_EXCL = 0o1000, 0o2000
"""


@pytest.mark.parametrize("kind", ["shm", "msg"])
def test_a_sysv_object_left_by_a_job_is_invisible_to_the_next_job(kind: str) -> None:
    key = secrets.randbelow(1 << 30) + 1
    create = (f"assert libc.shmget({key}, 4096, IPC_CREAT | IPC_EXCL | 0o666) >= 0" if kind == "shm"
              else f"assert libc.msgget({key}, IPC_CREAT | IPC_EXCL | 0o666) >= 0")
    leaver = _job(SYSV + textwrap.indent(create, "    ") + "\n")
    find = f"libc.shmget({key}, 0, 0o666)" if kind == "shm" else f"libc.msgget({key}, 0o666)"
    # shmctl(SHM_INFO) / msgctl(MSG_INFO): how many objects the job's IPC namespace holds (its /proc has no sysvipc)
    count = "libc.shmctl(0, 14, info)" if kind == "shm" else "libc.msgctl(0, 12, info)"
    looker = _job(SYSV + f"""
    info = ctypes.create_string_buffer(512)
    assert {count} >= 0
    print({find}, ctypes.c_int.from_buffer(info).value)
    """)
    _same_cell(leaver, looker)
    assert leaver.status == "pass", leaver
    assert _output(looker) == "-1 0", looker
    with open(f"/proc/sysvipc/{kind}") as table:  # nor is it left in the host's IPC namespace
        assert str(key) not in table.read()


def test_each_job_has_an_ipc_namespace_of_its_own_and_no_new_privileges() -> None:
    probe = """
        import os
        flags = [line.split()[1] for line in open('/proc/self/status') if line.startswith('NoNewPrivs:')]
        print(os.readlink('/proc/self/ns/ipc'), flags[0])
    """
    first, second = _job(probe), _job(probe)
    _same_cell(first, second)
    (first_ipc, first_flag), (second_ipc, second_flag) = _output(first).split(), _output(second).split()
    # Not the host's; that it is not the last job's either is what an object left in it shows
    # (`test_a_sysv_object_left_by_a_job_is_invisible_to_the_next_job`): the kernel may give a freed namespace's
    # number to the next one.
    assert os.readlink("/proc/self/ns/ipc") not in (first_ipc, second_ipc)
    assert first_flag == second_flag == "1", (first, second)


# ------------------------------------------------------------------------------------------------- memory

def test_the_next_job_finds_no_value_a_job_computed_in_its_memory() -> None:
    tag = "Q" + secrets.token_hex(4)
    computed = _job(f"""
        import hashlib, os
        value = '{tag}' + '-LEAK-' + os.urandom(16).hex()
        kept = [value * 4 for _ in range(1000)]
        print(hashlib.sha256(value.encode()).hexdigest(), value[-32:])
    """)
    scanner = _job(MEMORY_SCANNER + f"\nprint(scan({tag!r}))\n")
    _same_cell(computed, scanner)
    assert scanner.status == "pass", scanner
    secret = _output(computed).split()[1]
    assert secret not in scanner.stdout


def test_the_next_job_finds_no_spec_of_an_earlier_job_in_its_memory() -> None:
    tag = "Q" + secrets.token_hex(4)
    program_secret, input_secret = secrets.token_hex(16), secrets.token_hex(16)
    first = sandbox.call_function(PID_NAMESPACE + f"SOLUTION = '{tag}-LEAK-{program_secret}'\n"
                                  "def f(x):\n    return [NAMESPACE, x]\n", "f",
                                  [[f"{tag}-LEAK-{input_secret}"]], limits=QUICK)
    scanner = PID_NAMESPACE + MEMORY_SCANNER + "def g(prefix):\n    return [NAMESPACE, scan(prefix)]\n"
    second = sandbox.call_function(scanner, "g", [[tag]], limits=QUICK)
    assert (first.outcomes[0].value[0] == second.outcomes[0].value[0]) == IS_ROOT, "a cell per job only when not root"
    assert program_secret not in second.outcomes[0].value[1]
    assert input_secret not in second.outcomes[0].value[1]


# ------------------------------------------------------------------------------------------------- limits

def test_the_next_jobs_tmpfs_is_sized_with_its_own_memory_limit() -> None:
    fill = """
        block = b"x" * (8 * 1024 * 1024)
        for number in range(12):  # 96 MB in files under the 16 MB file-size limit
            with open(f'/dev/shm/part{number}', 'wb') as handle:
                handle.write(block)
    """
    big = _job(fill, Limits(timeout_s=10, total_timeout_s=20, memory_mb=1024))
    small = _job(fill, Limits(timeout_s=10, total_timeout_s=20, memory_mb=64))
    _same_cell(big, small)
    assert big.status == "pass", big
    assert small.status in ("error", "memory"), small


@pytest.mark.skipif(not IS_ROOT, reason="per-job memory cgroups need root (cgroup v1); the fallback is per process")
def test_the_next_jobs_memory_limit_is_its_own() -> None:
    grab = """
        block = bytearray(300 * 1024 * 1024)
        block[::4096] = b"x" * len(block[::4096])
        print("held")
    """
    big = _job(grab, Limits(timeout_s=10, total_timeout_s=20, memory_mb=1024))
    small = _job(grab, Limits(timeout_s=10, total_timeout_s=20, memory_mb=128))
    _same_cell(big, small)
    assert big.status == "pass", big
    assert small.status in ("memory", "killed", "error") and "held" not in small.stdout, small


@pytest.mark.skipif(not IS_ROOT, reason="per-job cgroups need root (cgroup v1)")
def test_a_zygote_removes_the_groups_of_zygotes_killed_before_their_cleanup() -> None:
    from audit_lib.sandbox.zygote import cgroups

    dead = _dead_pid()
    parents = [os.path.join(cgroups.CGROUP_ROOT, controller) + cgroups._own_path(controller)
               for controller in cgroups.CONTROLLERS]
    stale = [os.path.join(parent, f"{cgroups.GROUP_PREFIX}{dead}") for parent in parents]
    busy = os.path.join(parents[0], f"{cgroups.GROUP_PREFIX}{dead + 1}-not-a-pid")
    for path in [*stale, busy]:
        os.mkdir(path)
    group = cgroups.JobCgroup.create()
    try:
        assert group is not None
        assert not any(os.path.isdir(path) for path in stale)
        assert os.path.isdir(busy)  # not a name this code gives: left alone
    finally:
        os.rmdir(busy)
        if group is not None:
            group.remove()


def _dead_pid() -> int:
    """A pid no process has now (a child that has exited and been reaped)."""
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_the_next_job_cannot_read_how_many_processes_the_last_one_made() -> None:
    # In a reused cell the last PID handed out would carry over: a job's fork count would be the next job's PID (a
    # channel to hand a half-done computation to the next snippet). Each worker is PID 2.
    make = ("import os\nfor _ in range({count}):\n    pid = os.fork()\n    if pid == 0:\n        os._exit(0)\n"
            "    os.waitpid(pid, 0)\n")
    pids = []
    for count in (0, 40):
        _job(make.format(count=count))
        pids.append(_output(_job("import os\nprint(os.getpid())")))
    assert pids[0] == pids[1], pids
    program = "import os\ndef f(count):\n    for _ in range(count):\n        pid = os.fork()\n        if pid == 0:\n" \
              "            os._exit(0)\n        os.waitpid(pid, 0)\n    return os.getpid()\n"
    grouped = sandbox.call_function(program, "f", [[37], [0], [100], [0]], input_groups=[1, 1, 1, 1], limits=QUICK)
    assert len({outcome.value for outcome in grouped.outcomes}) == 1, grouped.outcomes


# ------------------------------------------------------------------------------------------------- how a job ended

ENDINGS = {
    "passed": ("", QUICK),
    "out of time": ("while True:\n    pass\n", Limits(timeout_s=1, total_timeout_s=20, memory_mb=256)),
    "out of time, ignoring signals": ("import signal\nfor s in (signal.SIGTERM, signal.SIGINT, signal.SIGALRM):\n"
                                      "    signal.signal(s, signal.SIG_IGN)\nwhile True:\n    pass\n",
                                      Limits(timeout_s=1, total_timeout_s=20, memory_mb=256)),
    "out of memory": ("blocks = []\nwhile True:\n    blocks.append(bytearray(16 << 20))\n",
                      Limits(timeout_s=10, total_timeout_s=20, memory_mb=64)),
    "exited": ("import os\nos._exit(3)\n", QUICK),
}
CELL_PROBE = ("import os\n"
              "print(os.readlink('/proc/self/ns/mnt'), os.stat('/proc').st_mtime_ns, os.stat('/dev/shm').st_ctime_ns, flush=True)\n")


@pytest.mark.parametrize("ending", sorted(ENDINGS))
def test_how_a_job_ended_does_not_show_in_the_next_jobs_cell(ending: str) -> None:
    """However a job ends (its own choice, once it has learnt something it should not pass on), the next job finds
    the cell it would have found anyway: as root the same cell (the init ends a job that ran out of time, the cell
    stays); not root a cell of its own, made before the ended job started (its /proc is no younger than the ended
    job's /dev/shm). Before, a job that ran out of time, or that the memory cgroup killed, retired its cell: the next
    job found a new mount namespace, one bit the ended job chose."""
    code, limits = ENDINGS[ending]
    before = _job(CELL_PROBE)
    ended = sandbox.run_asserts(CELL_PROBE + code, ["pass"], limits=limits).snippets[0]
    after = _job(CELL_PROBE)
    assert (ended.status == "pass") == (ending == "passed"), ended
    before_mnt = _output(before).split()[0]
    after_mnt, after_made = _output(after).split()[0], int(_output(after).split()[1])
    ended_started = int(ended.stdout.split()[2])
    assert after_made <= ended_started, (ending, after_made, ended_started)
    if IS_ROOT:
        assert after_mnt == before_mnt, (ending, before, ended, after)


def test_each_job_draws_its_own_random_numbers() -> None:
    """Workers are forked without Python's at-fork reseeding (`cell_init._fork_worker`): the init reseeds `random`
    before each fork, so jobs served by one cell draw numbers of their own, as fresh interpreters do."""
    probe = "import random\nprint(random.getrandbits(64), random.getrandbits(64))\n"
    first, second = _job(probe), _job(probe)
    _same_cell(first, second)
    assert first.status == second.status == "pass", (first, second)
    assert len(set(_output(first).split() + _output(second).split())) == 4, (first, second)
