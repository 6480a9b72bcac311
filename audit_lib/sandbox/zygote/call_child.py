"""The call-mode harness inside a job worker: load the program once, then one result line per input (stdlib only).

With input groups (`call_function(..., input_groups=...)`: one group per lifted test snippet), the worker loads the
program once and runs each group's inputs in a fresh fork of itself, so no state crosses groups, as if each group
had a process of its own; the load's output is flushed before the first fork, so no group repeats it. The worker
is this job's own process and holds only this job (its program and its inputs, never an expected value), so a fork
of it holds nothing another job could read. A group whose process did not end cleanly (it crashed, was killed or
left before its last input) ends the worker the same way, so the supervisor sees exactly what it sees without
groups and restarts after the input that was running. Processes a group left behind are killed before the next
group starts (the worker is their subreaper).
"""

from __future__ import annotations

import copy
import ctypes
import gc
import json
import os
import random
import signal
import sys
import time

from audit_lib.sandbox import codec as sandbox_codec
from audit_lib.sandbox.zygote.harness_io import (
    _exception_fields,
    _flush_std_streams,
    _fresh_module,
    _issubclass,
    _os_read,
    _safe_text,
    _type,
    _write_all_raw,
)
from audit_lib.sandbox.zygote.protocol import MAX_VALUE_BYTES, RESULT_FD

GO_FD = 6
PR_SET_CHILD_SUBREAPER = 36
GROUP_DONE = b"d"  # from a group's fork to the worker: it answered all its inputs
# kill(-1) + reap rounds after a group: best effort for honest programs that leave a process behind (the cell's init
# kills whatever is left when the job ends).
LEFTOVER_ROUNDS = 50
_libc = ctypes.CDLL(None, use_errno=True)


class _InputTimeout(BaseException):
    """Raised by the per-input SIGALRM handler; a BaseException so `except Exception` does not swallow it."""


def _on_alarm(_signum, _frame):
    raise _InputTimeout


def _call_child(program: str, entry_point: str, inputs_json: list, timeouts: list, start: int,
                deep: bool, load_timeout: float, stop_after_failure: bool = False,
                digests: tuple[int, frozenset | None] | None = None, groups: list[int] | None = None) -> None:
    """Load the program once, then call the entry point for inputs[start:], one result line per input.

    `digests` = (size, inputs or None for all): a float-free value whose canonical encoding is larger than `size`
    is sent as its digest (`sandbox_codec.ValueDigest`) instead of the value. `groups`: the first input of each
    group, each group run in a fresh fork of the loaded program.
    """
    write_all, dumps, exit_now = _write_all_raw, json.dumps, os._exit
    streams = (sys.stdout, sys.stderr)
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, load_timeout)
    try:
        try:
            code = compile(program, "<sandbox>", "exec")
            namespace = _fresh_module("__sandbox__").__dict__
            exec(code, namespace)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
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
    if groups is not None:  # the load's output: before its marker (the supervisor gives it to every group), and
        _flush_std_streams(streams)  # once (each group's fork would repeat what is still buffered)
    write_all(RESULT_FD, b"L ok\n")
    answer = _Answerer(function, inputs, timeouts, deep, stop_after_failure, digests,
                       streams if groups is not None else ())
    if groups is None:
        answer.run(range(start, len(inputs)))
    else:
        gc.freeze()  # a collection in a group's fork then leaves the loaded objects, and so their pages, alone
        if _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")
        spans = group_spans(groups, start, len(inputs))
        for first, end in spans[:-1]:
            _run_group(answer, range(first, end), streams)
        if spans:  # the last group needs no fork: nothing runs after it
            random.seed()
            answer.run(range(*spans[-1]))
    _flush_std_streams(streams)
    write_all(RESULT_FD, b"D\n")
    exit_now(0)


def group_spans(groups: list[int], start: int, count: int) -> list[tuple[int, int]]:
    """[first, end) of each group's inputs from `start` on; a restart inside a group runs that group's rest."""
    bounds = sorted({first for first in groups if start < first < count} | {start, count})
    return list(zip(bounds, bounds[1:]))


def _run_group(answer: _Answerer, indices: range, streams: tuple) -> None:
    """Answer `indices` in a fresh fork; when the fork did not end cleanly, end this worker the way it ended.

    Groups never stop after a failure (`call_function` refuses the combination), so a group answers all its inputs."""
    done_r, done_w = os.pipe()
    pid = _fork()
    if pid == 0:
        os.close(done_r)
        random.seed()  # each group draws its own numbers, as a process of its own would
        answer.run(indices)
        _flush_std_streams(streams)
        os.write(done_w, GROUP_DONE)
        os._exit(0)
    os.close(done_w)
    _pid, status = os.waitpid(pid, 0)
    ended = os.read(done_r, 1)
    os.close(done_r)
    _end_leftovers()
    if ended == GROUP_DONE and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
        return
    _flush_std_streams(streams)
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            signal.signal(number, signal.SIG_DFL)
        except (OSError, ValueError):  # SIGKILL and SIGSTOP keep their default anyway
            pass
        os.kill(os.getpid(), number)
        os._exit(128 + number)  # a signal whose default is not to end the process
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def _fork() -> int:
    """libc's fork while this worker is single-threaded (Python's at-fork handlers exist for other threads and would
    make the fork touch more pages); `os.fork` once the program started a thread."""
    if len(os.listdir("/proc/self/task")) != 1:
        return os.fork()
    pid = _libc.fork()
    if pid < 0:
        raise OSError(ctypes.get_errno(), "fork")
    return pid


def _end_leftovers() -> None:
    """SIGKILL every other process of the job but the cell's init (kill(-1)), and reap those reparented here."""
    for _round in range(LEFTOVER_ROUNDS):
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            return
        while True:
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    break
            except ChildProcessError:
                break
        time.sleep(0.0005)


class _Answerer:
    """Calls the entry point on given inputs, each started by the supervisor's go byte; one result line each."""

    def __init__(self, function, inputs: list, timeouts: list, deep: bool, stop_after_failure: bool,
                 digests: tuple[int, frozenset | None] | None, flushed: tuple = ()) -> None:
        self.function, self.inputs, self.timeouts, self.deep = function, inputs, timeouts, deep
        self.flushed = flushed  # streams flushed before each result line (groups: each input's output precedes it)
        self.stop_after_failure = stop_after_failure
        self.digest_above, self.digest_inputs = digests if digests is not None else (None, None)

    def run(self, indices: range) -> None:
        """Answer each input of `indices` in turn, until the first failure with `stop_after_failure`."""
        write_all, dumps, exit_now, perf = _write_all_raw, json.dumps, os._exit, time.perf_counter
        encode, unserializable = sandbox_codec.encode, sandbox_codec.Unserializable
        large_value_digest = sandbox_codec.large_value_digest
        digest_above, digest_inputs = self.digest_above, self.digest_inputs
        setitimer, install = signal.setitimer, signal.signal
        function, inputs, timeouts, deep = self.function, self.inputs, self.timeouts, self.deep
        read = _os_read
        for index in indices:
            # Each input starts when the supervisor says so, after it took the previous line's arrival time.
            if read(GO_FD, 1) != b"g":
                exit_now(0)
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
                        + dumps([_safe_text(lambda: type(value).__name__), "value too large to send"]).encode()
                        + b"\n")
            if self.flushed:
                _flush_std_streams(self.flushed)
            write_all(RESULT_FD, line)
            if self.stop_after_failure and kind != "value":
                return
