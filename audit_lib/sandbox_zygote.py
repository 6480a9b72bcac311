"""The sandbox zygote: a warmed `python -I` worker that forks one fresh, limited child per job (stdlib only).

Started by `sandbox_pool` with an empty environment and stdin at /dev/null; it speaks length-prefixed JSON frames
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

import builtins
import copy
import ctypes
import fcntl
import json
import os
import resource
import select
import signal
import struct
import sys
import time
import traceback
import types

from audit_lib import sandbox_codec, sandbox_strict

RESULT_FD = 3
FRAME_HEADER = struct.Struct("<Q")
PRELOADED_MODULES = (
    "re", "math", "cmath", "itertools", "functools", "collections", "heapq", "bisect", "string", "typing",
    "json", "random", "hashlib", "fractions", "decimal", "statistics", "datetime", "operator", "dataclasses",
    "array", "textwrap", "unicodedata", "base64", "struct", "enum", "abc", "numbers", "contextlib", "io",
    "tempfile", "threading", "copy", "types",
)
CLONE_NEWNET = 0x40000000
PR_SET_DUMPABLE = 4
PR_SET_CHILD_SUBREAPER = 36
CHILD_SETUP_FAILED = 125
CHILD_HARNESS_CRASHED = 124
CHILD_OUT_OF_MEMORY = 123
MAX_RESULT_BYTES = 512 * 1024 * 1024
MAX_VALUE_BYTES = 64 * 1024 * 1024
SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"


# ---------------------------------------------------------------------------------------------------- framing

def _read_exact(fd: int, size: int) -> bytes:
    chunks = []
    while size:
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def read_frames(fd: int) -> tuple[dict, bytes]:
    """One message: a JSON header frame and a raw blob frame."""
    (header_size,) = FRAME_HEADER.unpack(_read_exact(fd, FRAME_HEADER.size))
    header = json.loads(_read_exact(fd, header_size))
    (blob_size,) = FRAME_HEADER.unpack(_read_exact(fd, FRAME_HEADER.size))
    return header, _read_exact(fd, blob_size)


def write_frames(fd: int, header: dict, blob: bytes = b"") -> None:
    encoded = json.dumps(header).encode()
    _write_all(fd, FRAME_HEADER.pack(len(encoded)) + encoded + FRAME_HEADER.pack(len(blob)) + blob)


# ---------------------------------------------------------------------------------------------------- zygote state

class ZygoteState:
    """What the zygote set up once: the job uid, its temp root and whether the network is isolated."""

    def __init__(self, config: dict) -> None:
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        self.libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
        self.package_parent = config["package_parent"]
        self.uid: int | None = None
        self.lock_fd: int | None = None
        if config.get("drop_uid"):
            self.uid, self.lock_fd = _claim_uid(config["uid_base"], config["uid_count"], config["uid_lock_dir"])
        if config.get("network_isolation") and os.geteuid() == 0 and not config.get("already_unshared"):
            self.libc.unshare(CLONE_NEWNET)  # failure shows up in the namespace comparison below
        self.network_isolated = os.stat("/proc/self/ns/net").st_ino != config["parent_netns"]
        self.tmp_root = os.path.join(config["tmp_root"], f"benchaudit-sandbox-{os.getpid()}")
        os.makedirs(self.tmp_root, mode=0o711, exist_ok=True)
        os.chmod(self.tmp_root, 0o711)
        self.job_counter = 0
        self.protected_pids: set[int] = set()  # the zygote's own helpers (a job's judge), never killed as leftovers
        self.tid_children = f"/proc/self/task/{os.getpid()}/children"
        self.has_children_file = os.path.exists(self.tid_children)
        for name in PRELOADED_MODULES:
            try:
                __import__(name)
            except ImportError:
                pass

    def hello(self) -> dict:
        return {"ok": True, "pid": os.getpid(), "uid": self.uid, "network_isolated": self.network_isolated,
                "subreaper_children_file": self.has_children_file}


def _claim_uid(base: int, count: int, lock_dir: str) -> tuple[int, int]:
    """A dedicated uid for this zygote's jobs, held by an exclusive lock for the zygote's lifetime."""
    os.makedirs(lock_dir, mode=0o700, exist_ok=True)
    for uid in range(base, base + count):
        fd = os.open(os.path.join(lock_dir, f"{uid}.lock"), os.O_CREAT | os.O_RDWR, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        return uid, fd
    raise RuntimeError(f"no free sandbox uid in [{base}, {base + count})")


# ---------------------------------------------------------------------------------------------------- child setup

def _set_limit(which: int, value: int) -> None:
    resource.setrlimit(which, (value, value))


def _setup_child(state: ZygoteState, tmpdir: str, limits: dict, out_w: int, err_w: int, res_w: int) -> None:
    """Runs in the forked child, still as the zygote's user; ends as the job uid with limits set."""
    os.setsid()
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(out_w, 1)
    os.dup2(err_w, 2)
    os.dup2(res_w, RESULT_FD)
    os.closerange(RESULT_FD + 1, 1 << 16)
    os.chdir(tmpdir)
    mb = 1024 * 1024
    _set_limit(resource.RLIMIT_CORE, 0)
    _set_limit(resource.RLIMIT_FSIZE, int(limits["file_size_mb"] * mb))
    _set_limit(resource.RLIMIT_NOFILE, int(limits["open_files"]))
    _set_limit(resource.RLIMIT_AS, int(limits["memory_mb"] * mb))
    cpu = int(limits["cpu_s"]) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    if state.uid is not None:
        # The job uid owns no other process, so NPROC counts exactly this job's processes and threads.
        _set_limit(resource.RLIMIT_NPROC, int(limits["processes"]) + 1)
        os.setgroups([])
        os.setresgid(state.uid, state.uid, state.uid)
        os.setresuid(state.uid, state.uid, state.uid)
        if os.getresuid() != (state.uid,) * 3 or os.getresgid() != (state.uid,) * 3:
            raise RuntimeError("could not drop privileges")
    else:
        _set_limit(resource.RLIMIT_NPROC, _tasks_of_uid(os.getuid()) + int(limits["processes"]) + 1)
    os.environ.clear()
    os.environ.update({"PATH": SAFE_PATH, "HOME": tmpdir, "TMPDIR": tmpdir, "LANG": "C.UTF-8"})
    tempfile_module = sys.modules.get("tempfile")
    if tempfile_module is not None:
        tempfile_module.tempdir = tmpdir
    random_module = sys.modules.get("random")
    if random_module is not None:
        random_module.seed()
    sys.path[:] = [p for p in sys.path if p != state.package_parent]
    sys.argv[:] = ["-c"]
    for name in [n for n in sys.modules if n == "audit_lib" or n.startswith("audit_lib.")]:
        del sys.modules[name]


def _tasks_of_uid(uid: int) -> int:
    """How many tasks (processes and threads) the real uid runs now; NPROC counts those."""
    total = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    total += len(os.listdir(f"/proc/{entry}/task"))
            except OSError:
                continue
    return total


# The harness keeps its own references: the code under test may rebind builtins, os.write or json internals.
_type, _str, _issubclass, _memoryview, _os_write = type, str, issubclass, memoryview, os.write
_int, _getattr = int, getattr
_BaseException, _AssertionError, _MemoryError, _SystemExit = BaseException, AssertionError, MemoryError, SystemExit
ASSERT_STATUSES = ("pass", "fail", "error", "memory")


def _write_all_raw(fd: int, data: bytes) -> None:
    view = _memoryview(data)
    while view:
        view = view[_os_write(fd, view):]


def _safe_text(thunk, cap: int = 2000) -> str:
    try:
        text = thunk()
        return text[:cap] if _type(text) is _str else "?"
    except _BaseException:  # hostile __str__ / __name__
        return "?"


def _exception_fields(exc: BaseException) -> tuple[str, str]:
    exc_type = _safe_text(lambda: _type(exc).__name__, 200)
    return exc_type, _safe_text(lambda: _str(exc))


def _disable_tracing() -> None:
    """A trace function may jump over lines (frame.f_lineno); the snippet must not be able to skip its asserts."""
    def refuse(*_args, **_kwargs):
        raise RuntimeError("tracing is disabled in the sandbox")
    sys.settrace = refuse
    sys.setprofile = refuse
    threading = sys.modules.get("threading")
    if threading is not None:
        threading.settrace = refuse
        threading.setprofile = refuse


def _fresh_module(name: str) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__builtins__ = builtins
    sys.modules[name] = module
    return module


def _flush_std_streams(streams: tuple) -> None:
    for stream in streams:
        try:
            stream.flush()
        except _BaseException:
            pass


def _python_exit_code(exc: BaseException) -> int:
    """The status `python -c` exits with for an uncaught SystemExit: None -> 0, an int -> itself, else 1."""
    value = _getattr(exc, "code", None)
    if value is None:
        return 0
    return value if _type(value) is _int else 1


def _assert_child(source: str, secret: str, strict_guard: str | None = None) -> None:
    """Run program + snippet as `__main__`; the completion record with the secret is written only if it returns.

    With `strict_guard`, the snippet's asserts call the guard of that name (`sandbox_strict`), bound before the
    code under test runs.

    The verdict line `<secret> <status>` is built by plain str concatenation (no json, no patchable module
    function); the details line after it is informational only.
    """
    write_all, exit_now, dumps, subclass = _write_all_raw, os._exit, json.dumps, _issubclass
    streams = (sys.stdout, sys.stderr)
    status, details, exit_code = "pass", None, 0
    _disable_tracing()
    try:
        code = compile(source, "<sandbox>", "exec")
        namespace = _fresh_module("__main__").__dict__
        if strict_guard:
            sandbox_strict.install_guard(namespace, strict_guard)
        exec(code, namespace)
    except _BaseException as exc:  # noqa: BLE001 - SystemExit and KeyboardInterrupt are failures of the code too
        cls = _type(exc)
        status = ("fail" if subclass(cls, _AssertionError) else "memory" if subclass(cls, _MemoryError)
                  else "error")
        details = _exception_fields(exc)
        exit_code = _python_exit_code(exc) if subclass(cls, _SystemExit) else 1
    _flush_std_streams(streams)
    try:
        details_line = dumps(details).encode()
    except _BaseException:
        details_line = b"null"
    write_all(RESULT_FD, (secret + " " + status + " " + _str(exit_code) + "\n").encode() + details_line + b"\n")
    exit_now(0)


class _InputTimeout(BaseException):
    """Raised by the per-input SIGALRM handler; a BaseException so `except Exception` does not swallow it."""


def _on_alarm(_signum, _frame):
    raise _InputTimeout


def _call_child(program: str, entry_point: str, inputs_json: list, timeouts: list, start: int,
                deep: bool, load_timeout: float, stop_after_failure: bool = False,
                digests: tuple[int, frozenset | None] | None = None) -> None:
    """Load the program once, then call the entry point for inputs[start:], one result line per input.

    `digests` = (size, inputs or None for all): a float-free value whose canonical encoding is larger than `size`
    is sent as its digest (`sandbox_codec.ValueDigest`) instead of the value.
    """
    write_all, dumps, exit_now, perf = _write_all_raw, json.dumps, os._exit, time.perf_counter
    encode, unserializable = sandbox_codec.encode, sandbox_codec.Unserializable
    large_value_digest = sandbox_codec.large_value_digest
    digest_above, digest_inputs = digests if digests is not None else (None, None)
    setitimer, install = signal.setitimer, signal.signal
    streams = (sys.stdout, sys.stderr)
    install(signal.SIGALRM, _on_alarm)
    setitimer(signal.ITIMER_REAL, load_timeout)
    try:
        try:
            code = compile(program, "<sandbox>", "exec")
            namespace = _fresh_module("__sandbox__").__dict__
            exec(code, namespace)
        finally:
            setitimer(signal.ITIMER_REAL, 0)
        function = namespace.get(entry_point)
        if not callable(function):
            raise NameError(f"entry point {entry_point!r} is not defined or not callable")
        inputs = [sandbox_codec.decode(args) for args in inputs_json]
    except BaseException as exc:  # noqa: BLE001
        kind = "timeout" if _issubclass(_type(exc), _InputTimeout) else "error"
        error_type, error_message = _exception_fields(exc)
        _flush_std_streams(streams)
        write_all(RESULT_FD, b"L " + dumps({"kind": kind, "exc_type": error_type,
                                            "exc_message": error_message}).encode() + b"\n")
        exit_now(0)
    write_all(RESULT_FD, b"L ok\n")
    for index in range(start, len(inputs)):
        limit = timeouts[index]
        kind, payload = "value", None
        elapsed = 0.0
        try:
            args = copy.deepcopy(inputs[index]) if deep else inputs[index]
            install(signal.SIGALRM, _on_alarm)  # the previous input may have replaced it
            began = perf()
            setitimer(signal.ITIMER_REAL, limit)
            try:
                value = function(*args)
            finally:
                setitimer(signal.ITIMER_REAL, 0)
                elapsed = perf() - began
        except _InputTimeout:
            kind = "timeout"
        except BaseException as exc:  # noqa: BLE001
            kind = "exception"
            payload = _exception_fields(exc)
        if kind == "value" and elapsed > limit:
            kind = "timeout"  # the code swallowed the alarm and finished late
        if kind == "value":
            try:
                payload = encode(value)
            except unserializable as exc:
                kind, payload = "unserializable", [exc.type_name, exc.reason]
            except RecursionError:
                kind, payload = "unserializable", [_safe_text(lambda: type(value).__name__), "recursive"]
        text = dumps(payload)
        # The canonical encoding is never shorter than this one, so a short text needs no digest check.
        if kind == "value" and digest_above is not None and len(text) > digest_above \
                and (digest_inputs is None or index in digest_inputs):
            digest = large_value_digest(value, payload, digest_above)
            if digest is not None:
                text = dumps(digest.to_json())
        line = f"{index} {kind} {elapsed!r} ".encode() + text.encode() + b"\n"
        if len(line) > MAX_VALUE_BYTES:
            line = (f"{index} unserializable {elapsed!r} ".encode()
                    + dumps([_safe_text(lambda: type(value).__name__), "value too large to send"]).encode() + b"\n")
        write_all(RESULT_FD, line)
        if stop_after_failure and kind != "value":
            break
    _flush_std_streams(streams)
    write_all(RESULT_FD, b"D\n")
    exit_now(0)


# ---------------------------------------------------------------------------------------------------- supervision

class Capture:
    """Keeps the first `cap` bytes of a stream and counts the rest, which is read and dropped."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.kept = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        room = self.cap - len(self.kept)
        if room > 0:
            self.kept += chunk[:room]
        self.dropped += max(0, len(chunk) - max(room, 0))

    def text(self) -> str:
        text = self.kept.decode("utf-8", errors="replace")
        return text + (f"\n[... {self.dropped} more bytes dropped]" if self.dropped else "")


class ChildRun:
    """One forked child and its pipes, supervised until it and every descendant are gone."""

    def __init__(self, state: ZygoteState, limits: dict, target, args: tuple) -> None:
        state.job_counter += 1
        self.state = state
        self.memory_mb = limits.get("memory_mb")
        self.tmpdir = os.path.join(state.tmp_root, f"job-{state.job_counter}")
        os.mkdir(self.tmpdir, 0o700)
        if state.uid is not None:
            os.chown(self.tmpdir, state.uid, state.uid)
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        res_r, res_w = os.pipe()
        self.started = time.monotonic()
        pid = os.fork()
        if pid == 0:  # child
            exit_code = CHILD_SETUP_FAILED
            try:
                os.close(out_r), os.close(err_r), os.close(res_r)
                _setup_child(state, self.tmpdir, limits, out_w, err_w, res_w)
                exit_code = CHILD_HARNESS_CRASHED
                target(*args)
            except MemoryError:
                # The harness itself (encoding a result, building a traceback) hit the memory cap.
                exit_code = CHILD_OUT_OF_MEMORY if exit_code == CHILD_HARNESS_CRASHED else exit_code
            except BaseException:  # noqa: BLE001
                try:
                    os.write(2, traceback.format_exc().encode()[-4000:])
                except BaseException:
                    pass
            os._exit(exit_code)
        self.pid = pid
        for fd in (out_w, err_w, res_w):
            os.close(fd)
        self.pidfd = os.pidfd_open(pid)
        self.fds = {out_r: "out", err_r: "err", res_r: "res"}
        self.exit_status: int | None = None
        self.killed_by_us = False

    def supervise(self, captures: dict, on_result, deadline_of) -> None:
        """Read the pipes until EOF and the child exits, killing everything when `deadline_of()` passes."""
        poller = select.poll()
        for fd in self.fds:
            poller.register(fd, select.POLLIN)
        poller.register(self.pidfd, select.POLLIN)
        open_fds = set(self.fds)
        while open_fds or self.exit_status is None:
            remaining = deadline_of() - time.monotonic()
            if remaining <= 0 and not self.killed_by_us:
                self.kill_all()
                self.killed_by_us = True
                remaining = 0.05
            for fd, _event in poller.poll(max(1, int(min(remaining, 1.0) * 1000) + 1)):
                if fd == self.pidfd:
                    poller.unregister(fd)
                    self._reap_main()
                    continue
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    poller.unregister(fd)
                    open_fds.discard(fd)
                    os.close(fd)
                elif self.fds[fd] == "res":
                    if not on_result(chunk):
                        self.kill_all()
                        self.killed_by_us = True
                else:
                    captures[self.fds[fd]].add(chunk)
            if self.killed_by_us and self.exit_status is None:
                self._reap_main()
        for fd in open_fds:
            os.close(fd)
        os.close(self.pidfd)
        self.duration = time.monotonic() - self.started
        _remove_tree(self.tmpdir)

    def _reap_main(self) -> None:
        if self.exit_status is None:
            _pid, status = os.waitpid(self.pid, 0)
            self.exit_status = status
            # Anything the job left behind (daemons, setsid'd grandchildren) now belongs to us as subreaper.
            self.kill_descendants()

    def kill_all(self) -> None:
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except OSError:
            pass
        self.kill_descendants()

    def kill_descendants(self) -> None:
        """SIGKILL and reap every child of the zygote except the main child, until none is left."""
        for _round in range(10000):
            others = [pid for pid in _children(self.state) if pid != self.pid and pid not in self.state.protected_pids]
            if not others:
                return
            for pid in others:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            for pid in others:
                try:
                    os.waitpid(pid, 0)
                except ChildProcessError:
                    pass

    def exit_description(self) -> tuple[str, int | None, str | None]:
        """('exited', code, None) or ('signal', None, signal name)."""
        status = self.exit_status or 0
        if os.WIFSIGNALED(status):
            number = os.WTERMSIG(status)
            try:
                name = signal.Signals(number).name
            except ValueError:
                name = str(number)
            return "signal", None, name
        return "exited", os.WEXITSTATUS(status), None


def _children(state: ZygoteState) -> list[int]:
    if not state.has_children_file:
        return []
    try:
        with open(state.tid_children) as handle:
            return [int(pid) for pid in handle.read().split()]
    except OSError:
        return []


def _remove_tree(path: str) -> None:
    import shutil  # noqa: PLC0415 - only the zygote needs it, after the child is gone
    shutil.rmtree(path, ignore_errors=True)


# ---------------------------------------------------------------------------------------------------- jobs

def _status_from_exit(run: ChildRun, timed_out: bool) -> tuple[str, str, str]:
    how, code, signame = run.exit_description()
    if timed_out or signame == "SIGXCPU":
        return "timeout", "Timeout", "wall-clock limit reached" if timed_out else "CPU time limit reached"
    if how == "signal":
        return "killed", signame or "?", f"killed by {signame}"
    if code == CHILD_SETUP_FAILED:
        return "harness_error", "SandboxSetupError", "the child could not be set up"
    if code == CHILD_OUT_OF_MEMORY:
        return "memory", "MemoryError", f"out of memory under the {run.memory_mb} MB limit"
    if code == CHILD_HARNESS_CRASHED:
        return "harness_error", "SandboxHarnessCrash", "the harness inside the child crashed"
    return "error", "EarlyExit", f"exited with code {code} before the test completed"


def run_assert(state: ZygoteState, request: dict) -> dict:
    limits, timeout = request["limits"], float(request["timeout"])
    secret = os.urandom(16).hex()
    result_buffer = bytearray()

    def on_result(chunk: bytes) -> bool:
        result_buffer.extend(chunk)
        return len(result_buffer) <= 1 << 20

    run = ChildRun(state, limits, _assert_child, (request["source"], secret, request.get("strict_guard")))
    deadline = run.started + timeout
    captures = {"out": Capture(limits["output_bytes"]), "err": Capture(limits["output_bytes"])}
    run.supervise(captures, on_result, lambda: deadline)
    timed_out = run.killed_by_us
    record = _completion_record(bytes(result_buffer), secret)
    how, code, _sig = run.exit_description()
    if record is not None and not timed_out and how == "exited" and code == 0:
        status, error_type, error_message = record["status"], record["error_type"], record["error_message"]
        exit_code = record["exit_code"]
    else:
        status, error_type, error_message = _status_from_exit(run, timed_out)
        exit_code = code if how == "exited" and status == "error" else None
        if status == "harness_error":
            error_message += ": " + captures["err"].text()[-2000:]
    return {"status": status, "error_type": error_type, "error_message": error_message, "exit_code": exit_code,
            "stdout": captures["out"].text(), "stderr": captures["err"].text(), "duration_s": run.duration}


def _completion_record(raw: bytes, secret: str) -> dict | None:
    """The harness's verdict line, accepted only with this run's secret and a known status."""
    lines = raw.split(b"\n")
    for position, line in enumerate(lines):
        verdict = line.decode("ascii", errors="replace").split(" ")
        if len(verdict) == 3 and verdict[0] == secret and verdict[1] in ASSERT_STATUSES:
            details = None
            try:
                details = json.loads(lines[position + 1]) if position + 1 < len(lines) else None
            except ValueError:
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


class CallProgress:
    """Parses the child's result lines as they arrive: which input is next and when it is due."""

    def __init__(self, first: int, timeouts: list, grace: float, total_deadline: float, load_timeout: float,
                 stop_after_failure: bool = False, judge: Judge | None = None):
        self.next_index = first
        self.loaded = False
        self.load_failure: dict | None = None
        self.done = False
        self.lines: list[bytes] = []
        self.partial = bytearray()
        self.size = 0
        self.timeouts, self.grace, self.total_deadline = timeouts, grace, total_deadline
        self.deadline = time.monotonic() + load_timeout + grace
        self.last_event = time.monotonic()
        self.violation: str | None = None
        self.stop_after_failure = stop_after_failure
        self.stopped_after_failure = False
        # With a judge, a value line that differs from its expected value stops the child (see `Judge`).
        self.judge = judge
        self.awaiting_judgement: list[tuple[int, bytes]] = []  # (position in self.lines, line)
        self.stopped_on_mismatch = False

    def feed(self, chunk: bytes) -> bool:
        """Take a chunk of the result pipe; False asks the supervisor to kill the child now."""
        if self.stopped_on_mismatch:
            return True  # the child is being killed; what it still sent is not needed
        self.size += len(chunk)
        if self.size > MAX_RESULT_BYTES:
            self.violation = "result channel exceeded its size cap"
            return False
        if b"\n" not in chunk:  # part of a long line: appending in place keeps a huge value O(size)
            self.partial += chunk
            return True
        self.partial += chunk
        *complete, rest = bytes(self.partial).split(b"\n")
        self.partial = bytearray(rest)
        for line in complete:
            if not self._accept(line):
                return False
        return self._judge_pending()

    def _judge_pending(self) -> bool:
        """Ask the judge about this chunk's value lines; keep lines up to the first mismatch and stop there."""
        if not self.awaiting_judgement:
            return True
        pending, self.awaiting_judgement = self.awaiting_judgement, []
        verdicts = self.judge.mismatches([line for _position, line in pending])
        first = next((position for (position, _line), differs in zip(pending, verdicts) if differs), None)
        if first is None:
            return True
        del self.lines[first + 1:]  # inputs after the first mismatch count as not run, however fast they were
        self.next_index = int(self.lines[first].split(b" ", 1)[0]) + 1
        self.stopped_after_failure = self.stopped_on_mismatch = self.done = True
        return False

    def _accept(self, line: bytes) -> bool:
        if self.done:
            self.violation = "data after the end marker"
            return False
        if not self.loaded:
            if line == b"L ok":
                self.loaded = True
                self._arm()
                return True
            if line.startswith(b"L "):
                try:
                    self.load_failure = json.loads(line[2:])
                except ValueError:
                    self.load_failure = {"kind": "error", "exc_type": "?", "exc_message": "unreadable load error"}
                return True
            self.violation = "unexpected line before the load marker"
            return False
        if line == b"D":
            self.done = self.next_index == len(self.timeouts) or self.stopped_after_failure
            if not self.done:
                self.violation = "end marker before every input was answered"
            return self.done
        head = line.split(b" ", 1)[0]
        if head != str(self.next_index).encode():
            self.violation = f"result for input {head[:20]!r} when {self.next_index} was expected"
            return False
        self.lines.append(line)
        self.next_index += 1
        kind = line.split(b" ", 2)[1:2]
        self.stopped_after_failure = self.stop_after_failure and kind != [b"value"]
        if self.judge is not None and kind == [b"value"]:
            self.awaiting_judgement.append((len(self.lines) - 1, line))
        self._arm()
        return True

    def _arm(self) -> None:
        if self.next_index < len(self.timeouts):
            limit = self.timeouts[self.next_index]
            self.deadline = time.monotonic() + limit + self.grace + limit * 0.25
        self.last_event = time.monotonic()

    def current_deadline(self) -> float:
        return min(self.deadline, self.total_deadline)


class Judge:
    """A process that holds a job's expected values and says which value lines differ from them.

    The expected values come in a sealed message that follows the request on the zygote's request pipe. The judge,
    forked from the zygote, reads that message itself, so the values never enter the zygote's memory and therefore
    never appear in the memory of a job child (each child is a fork of the zygote, with all its objects and stack
    frames). The judge runs as the zygote's user, apart from every child, and exits when the job is over.
    """

    def __init__(self, state: ZygoteState, protocol_in: int) -> None:
        query_r, query_w = os.pipe()
        answer_r, answer_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the judge
            status = 1
            try:
                os.close(query_w), os.close(answer_r)
                _judge_main(protocol_in, query_r, answer_w)
                status = 0
            finally:
                os._exit(status)
        os.close(query_r), os.close(answer_w)
        self.state, self.pid, self.query_fd, self.answer_fd = state, pid, query_w, answer_r
        state.protected_pids.add(pid)
        if os.read(answer_r, 1) != b"R":
            self.close()
            raise RuntimeError("the judge could not read the job's expected values")

    def mismatches(self, lines: list[bytes]) -> list[bool]:
        write_frames(self.query_fd, {"count": len(lines)}, b"\n".join(lines))
        answer = _read_exact(self.answer_fd, len(lines))
        return [flag == ord("1") for flag in answer]

    def close(self) -> None:
        os.close(self.query_fd)
        os.close(self.answer_fd)
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass
        self.state.protected_pids.discard(self.pid)


def _judge_main(protocol_in: int, query_r: int, answer_w: int) -> None:
    sealed, _ = read_frames(protocol_in)
    expected = {int(index): (sandbox_codec.decode(tagged), json.dumps(tagged).encode())
                for index, tagged in sealed["stop_expected"]}
    _write_all(answer_w, b"R")
    while True:
        try:
            header, blob = read_frames(query_r)
        except EOFError:
            return
        lines = blob.split(b"\n") if header["count"] else []
        _write_all(answer_w, bytes(ord("1") if _differs(line, expected) else ord("0") for line in lines))


def _differs(line: bytes, expected: dict) -> bool:
    """Is this value line's value `!=` its expected value? Inputs without one never differ.

    Equal JSON text means equal values; otherwise both sides are decoded and compared with `==`, exactly as the
    parent will, and a comparison that raises counts as a difference (the parent scores it wrong too).
    """
    parts = line.split(b" ", 3)
    entry = expected.get(int(parts[0]))  # the zygote accepted the line only with the index it expected
    if entry is None:
        return False
    if len(parts) != 4:
        return True  # a value line without a value: the parent cannot match it either
    if parts[3] == entry[1]:
        return False
    try:
        return not bool(sandbox_codec.decode(json.loads(parts[3])) == entry[0])
    except BaseException:  # noqa: BLE001 - undecodable or incomparable
        return True


def run_call(state: ZygoteState, request: dict, protocol_in: int) -> tuple[dict, bytes]:
    """One call job; a sealed message with expected values follows the request when `sealed_follows` is set."""
    judge = Judge(state, protocol_in) if request.get("sealed_follows") else None
    try:
        return _run_call_children(state, request, judge)
    finally:
        if judge is not None:
            judge.close()


def _run_call_children(state: ZygoteState, request: dict, judge: Judge | None) -> tuple[dict, bytes]:
    limits = request["limits"]
    timeouts = [float(t) for t in request["timeouts"]]
    total_deadline = time.monotonic() + float(request["total_timeout"])
    grace = float(request.get("grace_s", 1.0))
    captures = {"out": Capture(limits["output_bytes"]), "err": Capture(limits["output_bytes"])}
    lines: list[bytes] = []
    start, restarts, status, load_error, started = 0, 0, "pass", None, time.monotonic()
    stop_after_failure = bool(request.get("stop_after_failure", False))
    digests = None
    if request.get("digest_above_bytes") is not None:
        chosen = request.get("digest_inputs")
        digests = (int(request["digest_above_bytes"]), None if chosen is None else frozenset(chosen))
    stopped_on_mismatch = False
    while start < len(timeouts) or (start == 0 and not timeouts):
        progress = CallProgress(start, timeouts, grace, total_deadline, float(request["load_timeout"]),
                                stop_after_failure, judge)
        run = ChildRun(state, limits, _call_child, (request["program"], request["entry_point"], request["inputs"],
                                                     timeouts, start, bool(request["deepcopy"]),
                                                     float(request["load_timeout"]), stop_after_failure, digests))
        run.supervise(captures, progress.feed, progress.current_deadline)
        lines.extend(progress.lines)
        stopped_on_mismatch = progress.stopped_on_mismatch
        if progress.violation:
            status, load_error = "error", f"ProtocolViolation: {progress.violation}"
            break
        if progress.done:
            break
        over_total = time.monotonic() >= total_deadline
        if progress.load_failure is not None or not progress.loaded:
            failure = progress.load_failure
            if failure is not None:
                status = "timeout" if failure["kind"] == "timeout" else (
                    "memory" if failure["exc_type"] == "MemoryError" else "error")
                load_error = f"{failure['exc_type']}: {failure['exc_message']}"
            else:
                status, error_type, message = _status_from_exit(run, run.killed_by_us)
                load_error = f"{error_type}: {message}"
                if status == "harness_error":
                    load_error += ": " + captures["err"].text()[-2000:]
            if restarts:
                load_error = f"after restart {restarts}: {load_error}"
            break
        # The child died or was killed while running input `next_index`: record it, then carry on after it.
        index = progress.next_index
        if run.killed_by_us:
            lines.append(f"{index} timeout {time.monotonic() - progress.last_event!r} null".encode())
        else:
            _status, error_type, message = _status_from_exit(run, False)
            payload = json.dumps(["ProcessExit" if error_type == "EarlyExit" else error_type, message])
            lines.append(f"{index} exception 0.0 {payload}".encode())
        start = index + 1
        if over_total:
            status = "timeout"
            break
        if stop_after_failure:  # the killed or crashed input is the sample's first failure
            break
        restarts += 1
        if not timeouts:
            break
    header = {"status": status, "load_error": load_error, "stdout": captures["out"].text(),
              "stderr": captures["err"].text(), "duration_s": time.monotonic() - started, "restarts": restarts,
              "stopped_on_mismatch": stopped_on_mismatch}
    return header, b"\n".join(lines)


# ---------------------------------------------------------------------------------------------------- main loop

def main() -> None:
    protocol_in, protocol_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    config, _ = read_frames(protocol_in)
    try:
        state = ZygoteState(config)
    except BaseException:  # noqa: BLE001
        write_frames(protocol_out, {"ok": False, "error": traceback.format_exc()})
        return
    write_frames(protocol_out, state.hello())
    while True:
        try:
            request, _blob = read_frames(protocol_in)
        except EOFError:  # the parent closed the pipe or exited
            _remove_tree(state.tmp_root)
            return
        try:
            if request["op"] == "assert":
                write_frames(protocol_out, run_assert(state, request))
            elif request["op"] == "call":
                header, blob = run_call(state, request, protocol_in)
                write_frames(protocol_out, header, blob)
            else:
                write_frames(protocol_out, {"harness_error": f"unknown op {request['op']!r}"})
        except BaseException:  # noqa: BLE001
            write_frames(protocol_out, {"harness_error": traceback.format_exc()})
