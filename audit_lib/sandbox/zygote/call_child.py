"""The call-mode harness inside a job worker: load the program, then one result line per input (stdlib only).

With input groups (`call_function(..., input_groups=...)`: one group per lifted test snippet), each group runs in a
fresh fork of the worker, which loads the program itself there (as a process of its own would) and answers its
inputs, so no state crosses groups. The worker only compiles the program and decodes the inputs (neither runs any of
the program's code), so the process every group is forked from never ran the code under test: nothing the code
can set up (a thread, a shared mapping, an open file or pipe, a hook of any kind) exists in it to outlive one group
and reach the next. The first group's load is the job's load (timed by the supervisor up to its `L ok`); a later
group loads once its first input was started, so its load counts in that input's time. The worker is this job's own
process and holds only this job (its program and its inputs, never an expected value). A group whose process did
not end cleanly (it crashed, was killed or left before its last input) ends the worker the same way, so the
supervisor sees exactly what it sees without groups and restarts after the input that was running. Processes a
group left behind are killed before the next group starts (the worker is their subreaper).
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
# Bound when the harness is imported, before any of the program's code runs in this process: rebinding them in their
# modules cannot change what the harness does after the code ran.
_exit_now, _json_dumps, _os_write = os._exit, json.dumps, os.write


class _InputTimeout(BaseException):
    """Raised by the per-input SIGALRM handler; a BaseException so `except Exception` does not swallow it."""


def _on_alarm(_signum, _frame):
    raise _InputTimeout


def _call_child(program: str, entry_point: str, inputs_json: list, timeouts: list, start: int,
                deep: bool, load_timeout: float, stop_after_failure: bool = False,
                digests: tuple[int, frozenset | None] | None = None, groups: list[int] | None = None) -> None:
    """Load the program, then call the entry point for inputs[start:], one result line per input.

    `digests` = (size, inputs or None for all): a float-free value whose canonical encoding is larger than `size`
    is sent as its digest (`sandbox_codec.ValueDigest`) instead of the value. `groups`: the first input of each
    group, each group loading and running the program in a fresh fork of this worker.
    """
    streams = (sys.stdout, sys.stderr)
    signal.signal(signal.SIGALRM, _on_alarm)
    load = _ProgramLoad(program, entry_point, load_timeout)
    try:
        code = load.compile()
        inputs = [sandbox_codec.decode(args) for args in inputs_json]
    except BaseException as exc:  # noqa: BLE001
        load.report_failure(exc, streams)
    answer = _Answerer(load, inputs, timeouts, deep, stop_after_failure, digests, streams if groups is not None else ())
    if groups is None:
        answer.function = load.announce(code, streams)
        answer.run(range(start, len(inputs)))
    else:
        gc.freeze()  # a collection in a group's fork then leaves the worker's objects, and so their pages, alone
        if _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")
        spans = group_spans(groups, start, len(inputs))
        for position, (first, end) in enumerate(spans):
            announce = position == 0  # this worker's first group loads as the job's load; later ones, lazily
            if position < len(spans) - 1:
                _run_group(answer, code, range(first, end), streams, announce)
            else:  # the last group needs no fork: nothing is forked from this worker after it
                _answer_group(answer, code, range(first, end), streams, announce)
    _flush_std_streams(streams)
    _write_all_raw(RESULT_FD, b"D\n")
    _exit_now(0)


class _ProgramLoad:
    """Compiling the program (no code of it runs) and running its module body to get the entry point."""

    def __init__(self, program: str, entry_point: str, load_timeout: float) -> None:
        self.program, self.entry_point, self.load_timeout = program, entry_point, load_timeout
        self.failure: BaseException | None = None  # a group's lazy load that raised: each of its inputs gets it

    def compile(self):
        signal.setitimer(signal.ITIMER_REAL, self.load_timeout)
        try:
            return compile(self.program, "<sandbox>", "exec")
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)

    def function(self, code):
        """Run the module body in a fresh module; the entry point, or an exception."""
        namespace = _fresh_module("__sandbox__").__dict__
        exec(code, namespace)
        function = namespace.get(self.entry_point)
        if not callable(function):
            raise NameError(f"entry point {self.entry_point!r} is not defined or not callable")
        return function

    def announce(self, code, streams: tuple):
        """The job's load, timed by the supervisor up to the `L` line: on success `L ok`, else `L <failure>` and
        the end of this process."""
        signal.setitimer(signal.ITIMER_REAL, self.load_timeout)
        try:
            try:
                function = self.function(code)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        except BaseException as exc:  # noqa: BLE001
            self.report_failure(exc, streams)
        _flush_std_streams(streams)  # the load's output precedes its marker
        _write_all_raw(RESULT_FD, b"L ok\n")
        return function

    @staticmethod
    def report_failure(exc: BaseException, streams: tuple) -> None:
        kind = "timeout" if _issubclass(_type(exc), _InputTimeout) else "error"
        error_type, error_message = _exception_fields(exc)
        _flush_std_streams(streams)
        _write_all_raw(RESULT_FD, b"L " + _json_dumps({"kind": kind, "exc_type": error_type,
                                                       "exc_message": error_message}).encode() + b"\n")
        _exit_now(0)


def group_spans(groups: list[int], start: int, count: int) -> list[tuple[int, int]]:
    """[first, end) of each group's inputs from `start` on; a restart inside a group runs that group's rest."""
    bounds = sorted({first for first in groups if start < first < count} | {start, count})
    return list(zip(bounds, bounds[1:]))


def _answer_group(answer: _Answerer, code, indices: range, streams: tuple, announce: bool) -> None:
    """In the process that runs this group: its own numbers, its own load, its inputs."""
    random.seed()  # each group draws its own numbers, as a process of its own would
    answer.function = answer.load.announce(code, streams) if announce else None
    answer.code = code
    answer.run(indices)


def _run_group(answer: _Answerer, code, indices: range, streams: tuple, announce: bool) -> None:
    """Answer `indices` in a fresh fork; when the fork did not end cleanly, end this worker the way it ended.

    Groups never stop after a failure (`call_function` refuses the combination), so a group answers all its inputs;
    a first group whose load failed has ended the job (its `L` line says so), and this worker ends with it."""
    done_r, done_w = os.pipe()
    pid = _fork()
    if pid == 0:
        os.close(done_r)
        _answer_group(answer, code, indices, streams, announce)
        _flush_std_streams(streams)
        _os_write(done_w, GROUP_DONE)
        _exit_now(0)
    os.close(done_w)
    _pid, status = os.waitpid(pid, 0)
    ended = os.read(done_r, 1)
    os.close(done_r)
    _end_leftovers()
    if ended == GROUP_DONE and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
        return
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
    """libc's fork: this worker ran none of the program's code, so it has no other thread, and Python's at-fork
    handlers (which exist for other threads) would only make the fork touch more pages."""
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

    def __init__(self, load: _ProgramLoad, inputs: list, timeouts: list, deep: bool, stop_after_failure: bool,
                 digests: tuple[int, frozenset | None] | None, flushed: tuple = ()) -> None:
        self.load, self.inputs, self.timeouts, self.deep = load, inputs, timeouts, deep
        self.function = None  # set by the job's load; None in a later group until its first input loads it
        self.code = None
        self.flushed = flushed  # streams flushed before each result line (groups: each input's output precedes it)
        self.stop_after_failure = stop_after_failure
        self.digest_above, self.digest_inputs = digests if digests is not None else (None, None)

    def run(self, indices: range) -> None:
        """Answer each input of `indices` in turn, until the first failure with `stop_after_failure`."""
        write_all, dumps, exit_now, perf = _write_all_raw, _json_dumps, _exit_now, time.perf_counter
        encode, unserializable = sandbox_codec.encode, sandbox_codec.Unserializable
        large_value_digest = sandbox_codec.large_value_digest
        digest_above, digest_inputs = self.digest_above, self.digest_inputs
        setitimer, install = signal.setitimer, signal.signal
        inputs, timeouts, deep = self.inputs, self.timeouts, self.deep
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
                    value = (self.function or self._load_now())(*args)
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

    def _load_now(self):
        """A later group's load, within its first input's time; its failure is each of the group's inputs'."""
        if self.load.failure is not None:
            raise self.load.failure
        try:
            self.function = self.load.function(self.code)
        except BaseException as exc:  # noqa: BLE001
            self.load.failure = exc
            raise
        return self.function
