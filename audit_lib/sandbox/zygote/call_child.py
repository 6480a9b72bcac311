"""The call-mode harness inside a job worker: load the program, then one result line per input (stdlib only).

With input groups (`call_function(..., input_groups=...)`: a group per independent set of inputs), the zygote runs each
group as a job of its own in its cell (`call_job`): a worker forked from the cell's init, fresh /tmp and /dev/shm,
its own IPC namespace, every process of the previous group killed first. This worker answers the inputs of the
group its first input belongs to, from that input on, and ends; no group's code reaches another group's process.
"""

from __future__ import annotations

import _signal
import copy
import json
import os
import signal
import sys
import time

from audit_lib.sandbox import codec as sandbox_codec
from audit_lib.sandbox.nesting import depth_room
from audit_lib.sandbox.zygote.harness_io import (
    exception_fields as _exception_fields,
    flush_std_streams as _flush_std_streams,
    fresh_module as _fresh_module,
    pristine_issubclass as _issubclass,
    pristine_os_read as _os_read,
    safe_text as _safe_text,
    pristine_type as _type,
    write_all_raw as _write_all_raw,
)
from audit_lib.sandbox.zygote.fast_json import dumps as _dumps
from audit_lib.sandbox.zygote.protocol import MAX_VALUE_BYTES, RESULT_FD

GO_FD = 6
# Bound when the harness is imported, before any of the program's code runs in this process: rebinding them in their
# modules cannot change what the harness does after the code ran. `_signal.signal` is what `signal.signal` calls,
# without its wrapper's enum conversions (measured: 0.3 us a call instead of 7 us, once per input).
_exit_now, _json_dumps, _setitimer, _install = os._exit, json.dumps, signal.setitimer, _signal.signal
_SIGALRM, _ITIMER_REAL, _plain_leaf = signal.SIGALRM, signal.ITIMER_REAL, sandbox_codec.plain_leaf


class _InputTimeout(BaseException):
    """Raised by the per-input SIGALRM handler; a BaseException so `except Exception` does not swallow it."""


def _on_alarm(_signum, _frame):
    raise _InputTimeout


def call_child_main(program: str, entry_point: str, inputs_json: list, timeouts: list, start: int,
                deep: bool, load_timeout: float, stop_after_failure: bool = False,
                digests: tuple[int, frozenset | None] | None = None, groups: list[int] | None = None) -> None:
    """Load the program, then call the entry point for inputs[start:], one result line per input.

    `digests` = (size, inputs or None for all): a float-free value whose canonical encoding is larger than `size`
    is sent as its digest (`sandbox_codec.ValueDigest`) instead of the value. `groups`: the first input of each
    group; this worker then answers only the inputs of `start`'s group, from `start` on.
    """
    streams = (sys.stdout, sys.stderr)
    signal.signal(signal.SIGALRM, _on_alarm)
    load = _ProgramLoad(program, entry_point, load_timeout)
    try:
        code = load.compile()
        inputs = [sandbox_codec.decode(args) for args in inputs_json]
    except BaseException as exc:  # noqa: BLE001
        load.report_failure(exc, streams)
    end = len(inputs)
    if groups is not None:  # each line follows its own input's output, which the supervisor gives to its group
        end = min([first for first in groups if first > start] + [end])
    answer = _Answerer(inputs, timeouts, deep, stop_after_failure, digests, streams if groups is not None else ())
    answer.function = load.announce(code, streams)
    # After its last answer the child waits for one more go before it ends: the supervisor reads the CPU time of
    # the last input while this process is still there to be read.
    if answer.run(range(start, end)) and _os_read(GO_FD, 1) != b"g":
        _exit_now(0)
    _flush_std_streams(streams)
    _write_all_raw(RESULT_FD, b"D\n")
    _exit_now(0)


class _ProgramLoad:
    """Compiling the program (no code of it runs) and running its module body to get the entry point."""

    def __init__(self, program: str, entry_point: str, load_timeout: float) -> None:
        self.program, self.entry_point, self.load_timeout = program, entry_point, load_timeout

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


class _Answerer:
    """Calls the entry point on given inputs, each started by the supervisor's go byte; one result line each."""

    def __init__(self, inputs: list, timeouts: list, deep: bool, stop_after_failure: bool,
                 digests: tuple[int, frozenset | None] | None, flushed: tuple = ()) -> None:
        self.inputs, self.timeouts, self.deep = inputs, timeouts, deep
        self.function = None  # set by the load
        self.flushed = flushed  # streams flushed before each result line (groups: each input's output precedes it)
        self.stop_after_failure = stop_after_failure
        self.digest_above, self.digest_inputs = digests if digests is not None else (None, None)

    def run(self, indices: range) -> bool:
        """Answer each input of `indices` in turn, until the first failure with `stop_after_failure` (False then)."""
        write_all, dumps, exit_now, perf, room = _write_all_raw, _dumps, _exit_now, time.perf_counter, depth_room
        setitimer, install = _setitimer, _install
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
                if deep:  # decoded plain data, copied with the codec's room: an input as deep as a value may be
                    with room():
                        args = copy.deepcopy(inputs[index])
                else:
                    args = inputs[index]
                install(_SIGALRM, _on_alarm)  # the previous input may have replaced it
                began = perf()
                setitimer(_ITIMER_REAL, limit)
                try:
                    value = self.function(*args)
                finally:
                    setitimer(_ITIMER_REAL, 0)
                    elapsed = perf() - began
            except _InputTimeout:
                kind = "timeout"
            except BaseException as exc:  # noqa: BLE001
                kind = "exception"
                payload = _exception_fields(exc)
            if kind == "value" and elapsed > limit:
                kind = "timeout"  # the code swallowed the alarm and finished late
            kind, text = self._text(index, kind, value if kind == "value" else payload)
            line = f"{index} {kind} {elapsed!r} ".encode() + text.encode() + b"\n"
            if len(line) > MAX_VALUE_BYTES:
                line = (f"{index} unserializable {elapsed!r} ".encode()
                        + dumps([_safe_text(lambda: type(value).__name__), "value too large to send"]).encode()
                        + b"\n")
            if self.flushed:
                _flush_std_streams(self.flushed)
            write_all(RESULT_FD, line)
            if self.stop_after_failure and kind != "value":
                return False
        return True

    def _text(self, index: int, kind: str, value) -> tuple[str, str]:
        """The line's kind and JSON: a value's tagged form (or its digest), an exception's fields as they are."""
        if kind != "value":
            return kind, _dumps(value)
        if _plain_leaf(value):
            payload, text = value, _dumps(value)  # a leaf is its own tagged form (`codec.encode`): nothing nested
        else:
            with depth_room():  # values nested up to MAX_DEPTH; the call itself ran at the limit it was given
                try:
                    payload = sandbox_codec.encode(value)
                except sandbox_codec.Unserializable as exc:
                    return "unserializable", _dumps([exc.type_name, exc.reason])
                except RecursionError:
                    return "unserializable", _dumps([_safe_text(lambda: type(value).__name__), "recursive"])
                text = _dumps(payload)
        # The canonical encoding is never shorter than this one, so a short text needs no digest check.
        if self.digest_above is not None and len(text) > self.digest_above \
                and (self.digest_inputs is None or index in self.digest_inputs):
            with depth_room():
                digest = sandbox_codec.large_value_digest(value, payload, self.digest_above)
            if digest is not None:
                text = _dumps(digest.to_json())
        return kind, text
