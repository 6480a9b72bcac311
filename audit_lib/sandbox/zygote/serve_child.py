"""The job side of a tests job: load the program, then only answer the judge's calls (stdlib only).

The worker runs the program's module body as `__main__`, describes the names the test reads (`L` frame), then
answers one request at a time from its go pipe (`Q` frames relayed by the zygote) with one `A` frame each: a
value (tagged JSON), a handle to an object that is not plain data, or the exception raised. Nothing here decides a
verdict: whatever the code writes here is only an answer the judge decodes as plain data.
"""

from __future__ import annotations

import builtins
import json
import sys
import types

from audit_lib.sandbox import codec as sandbox_codec
from audit_lib.sandbox.zygote.call_child import GO_FD
from audit_lib.sandbox.zygote.frames import ANSWER, LOAD, read_frame, write_frame
from audit_lib.sandbox.zygote.harness_io import exception_fields as _exception_fields, flush_std_streams as _flush_std_streams, fresh_module as _fresh_module
from audit_lib.sandbox.nesting import depth_room as _depth_room
from audit_lib.sandbox.object_graph import ObjectGraph
from audit_lib.sandbox.zygote.protocol import RESULT_FD
# Bound here, not looked up in builtins at each use: the code under test may rebind builtins in the job.
from builtins import (  # noqa: A004
    BaseException, LookupError, OSError, RecursionError, bool, callable, compile, dict, enumerate, exec, getattr, int,
    isinstance, issubclass, iter, len, list, next, object, range, str, type, vars,
)

# `raw_decode`: `json.loads` checks the end of the text with the builtins' `len`, which the code may rebind.
_json_dumps, _raw_decode, _type, _isinstance = json.dumps, json.JSONDecoder().raw_decode, type, isinstance
_mro_of = type.__dict__["__mro__"].__get__
_qualname_of = type.__dict__["__qualname__"].__get__
_BUILTIN_EXCEPTIONS = {cls: name for name, cls in vars(builtins).items()
                       if _isinstance(cls, type) and issubclass(cls, BaseException)}
_args_of = BaseException.__dict__["args"].__get__
_loaded_modules = sys.modules
_module_dict_of = types.ModuleType.__dict__["__dict__"].__get__
_MISSING = object()
_os_error_filename = OSError.__dict__["filename"].__get__
_os_error_filename2 = OSError.__dict__["filename2"].__get__
# More arguments than this and the judge rebuilds the exception from its message alone (attributes: without them).
MAX_EXCEPTION_ARGS = 64
# Causes and contexts carried per exception, counted down the chain (a context may loop back to itself).
MAX_EXCEPTION_CHAIN = 4
_instance_dict_of = BaseException.__dict__["__dict__"].__get__
_cause_of = BaseException.__dict__["__cause__"].__get__
_context_of = BaseException.__dict__["__context__"].__get__
_suppress_context_of = BaseException.__dict__["__suppress_context__"].__get__


def builtin_bases(cls: type) -> list[str]:
    """The most specific builtin exception classes of `cls`'s real MRO, by name.

    The names of the builtin exception classes of `cls`'s real MRO that no other of them derives from, in MRO order (a
    class's own name is never read): the classes CPython's `except` matches it by, at their most specific.
    """
    found: list[type] = []
    for base in _mro_of(cls):
        if base in _BUILTIN_EXCEPTIONS and not any(issubclass(earlier, base) for earlier in found):
            found.append(base)
    return [_BUILTIN_EXCEPTIONS[base] for base in found] or ["BaseException"]


class _Server:
    """The program's namespace, the handles given out so far, and the answer to one request."""

    def __init__(self, namespace: dict) -> None:
        self.namespace = namespace
        self.handles: list[object] = []

    def describe(self, name: str) -> dict:
        if name not in self.namespace:
            return {"kind": "absent"}
        value = self.namespace[name]
        if _type(value) is types.ModuleType:
            return {"kind": "module", "module": _module_name(value)}
        if callable(value):
            described = {"kind": "callable", "handle": self._handle(value), "type": _type_text(value)}
        else:
            described = self.describe_value(value)
        if _module_attribute(name) is value:  # `from datetime import datetime`: the judge checks the module has one
            described["of_module"] = True
        return described

    def _handle(self, value: object) -> int:
        self.handles.append(value)
        return len(self.handles) - 1

    def describe_value(self, value: object, graph: ObjectGraph | None = None) -> dict:
        """`value` as tagged JSON, or a handle when it is not plain data.

        With the call's `graph`, the objects numbered in it (the arguments, what the call added to them) are refs
        (`"graph": true`): the judge then hands back its own objects, as the program's value holds them."""
        try:
            if graph is not None and graph.objects:
                tagged, referred = graph.encode_value(value)
                return {"kind": "value", "graph": True, "value": tagged} if referred else \
                    {"kind": "value", "value": tagged}
            return {"kind": "value", "value": sandbox_codec.encode(value)}
        except (sandbox_codec.Unserializable, RecursionError):
            return {"kind": "handle", "handle": self._handle(value), "type": _type_text(value)}

    def _resolve(self, ref: object) -> object:
        if _type(ref) is not int or not 0 <= ref < len(self.handles):
            raise LookupError(f"no handle {ref!r}")
        return self.handles[ref]

    def answer(self, request: dict) -> dict:
        """Do one request, and say what it did to the objects the judge sent.

        The answer carries the entries of the argument objects the call changed (even when it raised) and of the new
        objects they reach, so the judge's objects end as the job's did."""
        target = self._resolve(request["target"])
        op = request["op"]
        graph = ObjectGraph(resolve_remote=self._resolve)
        received = request.get("objects")
        if received is not None:
            graph.receive(received)
        # Decoding may hand back the request's own objects: what each one was, as text, before the call.
        sent = [_json_dumps(entry) for entry in graph.entries]
        args = [graph.decode(arg) for arg in request.get("args") or []]
        kwargs = {key: graph.decode(arg) for key, arg in (request.get("kwargs") or {}).items()}
        try:
            result, raised = _performed(op, target, args, kwargs), None
        except BaseException as exc:  # noqa: BLE001 - the program's exception, with the objects as it left them
            raised = exc
        changed = []
        for number, before in enumerate(sent):  # first: the value then refers to the objects they reach
            try:
                now = graph.encode_entry(number)
            except (sandbox_codec.Unserializable, RecursionError):
                continue  # holds something that does not cross: the judge's object stays as it was
            if _json_dumps(now) != before:
                changed.append([number, now])
        changed.extend([number, graph.entries[number]] for number in range(len(sent), len(graph.objects)))
        try:
            answer = self.describe_value(result, graph) if raised is None else _exception_answer(raised, self)
        except BaseException as exc:  # noqa: BLE001
            answer = _exception_answer(exc, self)
        if changed:
            answer["objects"] = changed
        return answer


def _performed(op: str, target: object, args: list, kwargs: dict) -> object:
    if op == "call":
        return target(*args, **kwargs)
    if op == "getattr":
        return getattr(target, args[0])
    if op == "iter":
        return iter(target)
    if op == "next":
        return next(target)
    if op == "bool":
        return bool(target)
    raise LookupError(f"unknown op {op!r}")


def _module_attribute(name: str) -> object:
    """What the loaded module called `name` holds under its own name (`datetime.datetime`), read without running code."""
    module = _loaded_modules.get(name)
    if _type(module) is not types.ModuleType:
        return _MISSING
    attributes = _module_dict_of(module)
    return attributes.get(name, _MISSING) if _type(attributes) is dict else _MISSING


def _module_name(module: types.ModuleType) -> str:
    name = module.__dict__.get("__name__")
    return name if _type(name) is str else "?"


def _type_text(value: object) -> str:
    try:
        name = _qualname_of(_type(value))
    except BaseException:  # noqa: BLE001
        return "?"
    return name if _type(name) is str else "?"


def _exception_answer(exc: BaseException, server: _Server | None = None, chain: int = 0) -> dict:
    """What the judge rebuilds `exc` from.

    Its class's name and builtin bases, its message (`str()`), and with a `server` its `args` and the attributes
    its instance holds (`e.code` set by its `__init__`; each a value or a handle), and the exceptions it was raised
    from or during (`__cause__`, `__context__`, up to `MAX_EXCEPTION_CHAIN` deep); for an exception of an exact
    builtin class, that class's name (`builtin`)."""
    error_type, message = _exception_fields(exc)
    cls = _type(exc)
    bases = builtin_bases(cls)
    answer = {"kind": "exception", "type": error_type, "base": bases[0], "bases": bases, "message": message}
    if cls in _BUILTIN_EXCEPTIONS:
        answer["builtin"] = _BUILTIN_EXCEPTIONS[cls]
    if server is not None:
        try:
            args = _constructor_args(exc)
            if _type(args) is tuple and len(args) <= MAX_EXCEPTION_ARGS:
                answer["args"] = [server.describe_value(arg) for arg in args]
        except BaseException:  # noqa: BLE001, S110 - the judge falls back on the message
            pass
        try:
            answer.update(_exception_state(exc, server, chain))
        except BaseException:  # noqa: BLE001, S110 - the judge makes it without them
            pass
    return answer


def _exception_state(exc: BaseException, server: _Server, chain: int) -> dict:
    """The attributes `exc`'s instance holds, and its cause and context (read past any property its class defines)."""
    state: dict = {}
    attributes = _instance_dict_of(exc)
    if _type(attributes) is dict and 0 < len(attributes) <= MAX_EXCEPTION_ARGS:
        state["attrs"] = {name: server.describe_value(value) for name, value in attributes.items()
                          if _type(name) is str and (not name.startswith("__") or name == "__notes__")}
    if chain < MAX_EXCEPTION_CHAIN:
        cause, context = _cause_of(exc), _context_of(exc)
        if cause is not None and cause is not exc:
            state["cause"] = _exception_answer(cause, server, chain + 1)
        if context is not None and context is cause:  # `raise ... from e` inside `except ... as e`: one exception
            state["context_is_cause"] = True
        elif context is not None and context is not exc:
            state["context"] = _exception_answer(context, server, chain + 1)
        state["suppress"] = _suppress_context_of(exc) is True
    return state


def _constructor_args(exc: BaseException) -> tuple:
    """The arguments that make `exc` again.

    BaseException's own `args` (past any property a subclass defines); for an OSError with a file name (which its
    `args` leave out), the constructor's five."""
    args = _args_of(exc)
    if _isinstance(exc, OSError) and len(args) == 2:
        filename, filename2 = _os_error_filename(exc), _os_error_filename2(exc)
        if filename is not None or filename2 is not None:
            return (*args, filename, None, filename2)
    return args


def serve(program: str, names: list[str]) -> None:
    """Load `program` as `__main__`, describe `names`, then answer requests until the go pipe closes."""
    streams = (sys.stdout, sys.stderr)
    try:
        namespace = _fresh_module("__main__").__dict__
        exec(compile(program, "<sandbox>", "exec"), namespace)
        server = _Server(namespace)
        load = {"ok": True, "names": {name: server.describe(name) for name in names}}
    except BaseException as exc:  # noqa: BLE001 - SystemExit at load is the program's own doing too
        _flush_std_streams(streams)
        write_frame(RESULT_FD, LOAD, _json_dumps({"ok": False, **_exception_answer(exc)}).encode())
        while read_frame(GO_FD) is not None:  # alive until the verdict: ending first would be a status of its own
            pass
        return
    _flush_std_streams(streams)
    with _depth_room():
        body = _json_dumps(load).encode()
    write_frame(RESULT_FD, LOAD, body)
    while True:
        got = read_frame(GO_FD)
        if got is None:
            return
        try:
            with _depth_room():  # parsing and writing values nested up to MAX_DEPTH; the call itself runs outside
                asked = _raw_decode(got[1].decode())[0]
            answer = server.answer(asked)
        except BaseException as exc:  # noqa: BLE001
            answer = _exception_answer(exc, server)
        try:
            with _depth_room():
                body = _json_dumps(answer).encode()
        except BaseException as exc:  # noqa: BLE001 - e.g. an exception message that will not encode
            body = _json_dumps(_exception_answer(exc)).encode()
        _flush_std_streams(streams)
        write_frame(RESULT_FD, ANSWER, body)
