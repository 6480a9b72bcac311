"""The judge of a tests job: the benchmark's test code under real CPython, the program only a stub (stdlib only).

The judge runs in a cell and under a uid of its own, apart from the job. It gets the job's description of the
names the test reads (relayed `L` frame), binds each entry point and program object to a `Remote` whose calls go to
the job through the zygote, binds modules to its own imports and plain values to their decoded copies, then runs
the test snippet with its own builtins. Every value that comes back is decoded here into exact builtin types (plus
`Fraction`), so every comparison the test makes is CPython's own on data the program cannot rig. The judge writes
one verdict frame (`V`) and exits; the zygote decides how the job ended.
"""

from __future__ import annotations

import builtins
import ctypes
import gc
import importlib
import importlib.util
import json
import os
import signal
import sys
from collections.abc import Collection
from types import CodeType
from typing import Any

from audit_lib.sandbox import codec as sandbox_codec
from audit_lib.sandbox.nesting import depth_room
from audit_lib.sandbox.object_graph import ObjectGraph
from audit_lib.sandbox.value_errors import Unserializable
from audit_lib.sandbox.zygote.call_child import GO_FD
from audit_lib.sandbox.zygote.frames import ANSWER, LOAD, REQUEST, VERDICT, read_frame, write_frame
from audit_lib.sandbox.zygote.harness_io import exception_fields as _exception_fields
from audit_lib.sandbox.zygote.protocol import RESULT_FD

# Modules a program may have imported that the judge imports for the test itself: the standard library, and the
# numeric packages the benchmarks' tests use. Any other module name the program reports is left unbound.
JUDGE_MODULES = frozenset(sys.stdlib_module_names) | {"numpy", "scipy", "pandas"}


PROGRAM_MODULE = "<program>"
_libc = ctypes.CDLL(None, use_errno=True)  # the module of every exception class that stands for one the program raised


class JobGone(BaseException):
    """The job stopped answering (it ended or was killed): the zygote decides its status."""


class Remote:
    """An object that lives in the job: calling it, reading an attribute or iterating asks the job.

    Its truth value is the job's `bool()` of the object, as upstream's `assert candidate(x)` asks it (a `re.Match`
    is true): one bit the program could as well have returned, where object's default (always true) would pass a
    wrong answer. It is equal only to itself (object's `__eq__`), so no comparison with it runs the program's code:
    an object that claims to equal anything would pass any `==` without knowing the expected value."""

    __slots__ = ("_handle", "_type")

    def __init__(self, handle: int, type_name: str) -> None:
        object.__setattr__(self, "_handle", handle)
        object.__setattr__(self, "_type", type_name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return request("call", self, args, kwargs)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return request("getattr", self, (name,), {})

    def __iter__(self) -> Any:
        return request("iter", self, (), {})

    def __next__(self) -> Any:
        return request("next", self, (), {})

    def __repr__(self) -> str:
        return f"<{self._type} in the program>"

    def __bool__(self) -> bool:
        truth = request("bool", self, (), {})
        if type(truth) is not bool:
            raise TypeError(f"the job answered the truth value of a {self._type} object with a {type(truth).__name__}")
        return truth


def _remote_handle(value: Any) -> int | None:
    return value._handle if type(value) is Remote else None


_exception_classes: dict[tuple[str, tuple[str, ...]], type] = {}


def _program_str(self: BaseException) -> str:
    message = getattr(self, "_program_str", None)
    return message if type(message) is str else BaseException.__str__(self)


def _raised(answer: dict) -> BaseException:
    """An exception of the program's, as the test sees it.

    One of an exact builtin class is that class, made from the program's `args` (what upstream's test sees of it:
    `type(e) is KeyError`, `e.args[0] == "x"`). Any other is an instance of a class of the reported name under the
    builtin exception classes of its real MRO (those CPython's `except` would match it by), made from the same
    `args`, whose `str()` is the one the program's class gave. Without `args` (more than the job sends, or none
    that would make one) it is made from the message alone. The attributes the program's instance held (`e.code`)
    and the exceptions it was raised from or during (`__cause__`, `__context__`) are set on it likewise.
    """
    made = _made_from(answer)
    _restore_state(made, answer)
    return made


def _made_from(answer: dict) -> BaseException:
    args = _arguments(answer.get("args"))
    message = str(answer.get("message") or "")[:2000]
    exact = _builtin_classes([answer.get("builtin")]) if answer.get("builtin") else None
    if exact is not None and exact[0].__name__ == answer.get("builtin"):
        made = _made(exact[0], args)
        if made is not None:
            return made
    name = str(answer.get("type") or "?")[:200]
    bases = _builtin_classes(answer.get("bases") or [answer.get("base")])
    key = (name, tuple(base.__name__ for base in bases))
    if key not in _exception_classes:
        body = {"__module__": PROGRAM_MODULE, "__slots__": ("_program_str",), "__str__": _program_str}
        try:
            _exception_classes[key] = type(name, bases, body)
        except TypeError:  # bases no class can have together: the most specific one
            _exception_classes[key] = type(name, bases[:1], body)
    cls = _exception_classes[key]
    made = _made(cls, args)
    if made is None:
        made = cls(message)
    if len(message) < 2000:  # a longer one was cut: the str of the args is then the better copy
        made._program_str = message
    return made


def _restore_state(made: BaseException, answer: dict) -> None:
    """The attributes the program's instance held, and its cause and context, on the exception made here."""
    attributes = answer.get("attrs")
    for name, described in (attributes.items() if isinstance(attributes, dict) else ()):
        if isinstance(name, str) and isinstance(described, dict) and name not in ("args", "_program_str"):
            try:
                setattr(made, name, _bound(described))
            except Exception:  # noqa: BLE001, S110 - a name its class will not take (a read-only property)
                pass
    cause = answer.get("cause")
    if isinstance(cause, dict):
        made.__cause__ = _raised(cause)
    context = answer.get("context")
    if answer.get("context_is_cause") is True:
        made.__context__ = made.__cause__
    elif isinstance(context, dict):
        made.__context__ = _raised(context)
    made.__suppress_context__ = answer.get("suppress") is True


def _arguments(described: object) -> tuple | None:
    """The exception's `args` the job described (each a value or a handle); None when it sent none."""
    if not isinstance(described, list):
        return None
    return tuple(_bound(item) if isinstance(item, dict) else None for item in described)


def _made(cls: type, args: tuple | None) -> BaseException | None:
    """`cls(*args)`, or None when there are no args or the class refuses them (e.g. a UnicodeError's)."""
    if args is None:
        return None
    try:
        made = cls(*args)
    except Exception:  # noqa: BLE001
        return None
    return made if isinstance(made, cls) else None


def _builtin_classes(names: object) -> tuple[type, ...]:
    """The builtin exception classes named (unknown names dropped); `Exception` when none is left."""
    found = []
    for name in names if isinstance(names, list) else []:
        base = getattr(builtins, str(name), None)
        if isinstance(base, type) and issubclass(base, BaseException) and base not in found:
            found.append(base)
    return tuple(found[:8]) or (Exception,)


def request(op: str, target: Remote, args: tuple, kwargs: dict) -> Any:
    """Ask the job to do `op` on `target`; its value, decoded, or its exception, raised here.

    The arguments cross as one object graph (`object_graph`): the objects the call changed are changed here in
    place, so every reference the test holds to them (an inner list, an alias) sees it, and a ref in the value is
    the test's own object (`f(x) is x`)."""
    graph = ObjectGraph(remote_of=_remote_handle)
    try:
        sent_args = [graph.encode(arg) for arg in args]
        sent_kwargs = {str(key): graph.encode(value) for key, value in kwargs.items()}
    except Unserializable as exc:
        raise TypeError(f"the test passed a value the program cannot be sent: {exc}") from None
    body = {"op": op, "target": target._handle, "args": sent_args, "kwargs": sent_kwargs}
    if graph.objects:
        body["objects"] = graph.entries
    with depth_room():  # values nested up to MAX_DEPTH; the test code itself runs at the limit it was given
        text = json.dumps(body).encode()
    write_frame(RESULT_FD, REQUEST, text)
    got = read_frame(GO_FD)
    if got is None or got[0] != ANSWER:
        raise JobGone
    with depth_room():
        answer = json.loads(got[1])
    if "objects" in answer:  # before an exception too: upstream's test sees what the call did before it raised
        graph.update(answer["objects"])
    kind = answer.get("kind")
    if kind == "exception":
        _raise_programs(_raised(answer))
    if kind == "handle":
        return Remote(int(answer["handle"]), str(answer.get("type") or "?"))
    if answer.get("graph") is True:
        return graph.decode(answer.get("value"))
    return sandbox_codec.decode(answer.get("value"))


def _bound(description: dict) -> Any:
    """What a description of the job's stands for here: a `Remote` for a handle, else the decoded value."""
    if description.get("kind") in ("callable", "handle"):
        return Remote(int(description["handle"]), str(description.get("type") or "?"))
    return sandbox_codec.decode(description.get("value"))


def _raise_programs(exc: BaseException) -> None:
    """Raise the program's exception: the innermost frame of its traceback is this function's (`_from_program`)."""
    raise exc


def _from_program(exc: BaseException) -> bool:
    """Was `exc` raised by the program (through `_raise_programs`), not by the test or the judge?

    An exception of an exact builtin class has nothing else to tell it from the test's own: the innermost frame of
    its traceback, which a re-raise (`raise`, `raise e`) keeps, is `_raise_programs`'s."""
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_code is _raise_programs.__code__


def _bind(namespace: dict, names: dict, entry_points: Collection[str]) -> list[str]:
    """Bind what the job described; the names where the real module stood in for the program's object, sorted.

    A name the test reads that is the name of a module the judge can import (`_importable_module`), and that the
    program bound to something else (its own object, another module), is that module here: a program cannot hand
    the test a `math` whose `isclose` always agrees. Entry points stay the program's whatever their name."""
    shadowed = []
    for name, description in names.items():
        kind = description.get("kind")
        if kind != "absent" and name not in entry_points and description.get("module") != name \
                and _importable_module(name) and not _is_attribute_of_its_module(name, description):
            shadowed.append(name)
            try:
                namespace[name] = importlib.import_module(name)
            except Exception:  # noqa: BLE001, S110 - unbound: the test's use of it raises NameError
                pass
        elif kind in ("callable", "handle", "value"):
            namespace[name] = _bound(description)
        elif kind == "module" and description.get("module") in JUDGE_MODULES:
            try:
                namespace[name] = importlib.import_module(description["module"])
            except Exception:  # noqa: BLE001, S110 - unbound: the test's use of it raises NameError
                pass
    return sorted(shadowed)


def _is_attribute_of_its_module(name: str, description: dict) -> bool:
    """Is the program's object its module's own attribute of that name (`from datetime import datetime`)?

    The job says so, and the judge's module has such an attribute: it stays the program's, as a helper would."""
    if description.get("of_module") is not True:
        return False
    try:
        return hasattr(importlib.import_module(name), name)
    except Exception:  # noqa: BLE001
        return False


def _importable_module(name: str) -> bool:
    """Is `name` a module of the standard library, or a top-level one installed beside the judge's interpreter?

    Found by `importlib.util.find_spec`, which runs no module's code for a top-level name; a folder that is only a
    namespace package (no origin), or a module outside the standard library and site-packages, does not count."""
    if not name.isidentifier():
        return False
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return False
    if spec is None:
        return False
    if name in sys.stdlib_module_names:
        return True
    origin = getattr(spec, "origin", None)
    return type(origin) is str and any(part in ("site-packages", "dist-packages") for part in origin.split(os.sep))


def _verdict(status: str, exc: BaseException | None = None, **extra: Any) -> None:
    fields = {"status": status, **extra}
    if exc is not None:
        fields["error_type"], fields["error_message"] = _exception_fields(exc)
    write_frame(RESULT_FD, VERDICT, json.dumps(fields).encode())


def judge(snippets: list[str], first: int, entry_points: Collection[str] = ()) -> None:
    """For each snippet from `first` on: wait for its job's load, run the snippet against it, write the verdict.

    One judge serves one program's snippets in turn (each job is a fresh process of the program), each snippet in a
    fresh fork of this judge as it was before any test ran: upstream runs every test in a process of its own, so
    nothing one test's code changes (a module's attribute, builtins, a file in /tmp) reaches the next. A fork that
    ends without writing its verdict ends this judge the same way (same exit code or signal), for the zygote to
    decide; the zygote replaces a judge that ended."""
    gc.freeze()  # the forks' collections then leave this judge's objects, and so their pages, alone
    remaining = snippets[first:]
    for position, snippet in enumerate(remaining):
        # Compiled here, before the fork: in a fresh fork the compiler's first use copies about 80 pages. Compiling
        # runs none of the test's code.
        compiled = _compiled(snippet)
        if position == len(remaining) - 1:  # the last one: nothing after it for its changes to reach
            if _judge_one(compiled, entry_points):
                _flush((sys.stdout, sys.stderr))
            return
        done_r, done_w = os.pipe()
        pid = _libc.fork()  # not os.fork: this judge has no other thread, and Python's at-fork handlers cost pages
        if pid < 0:
            raise OSError(ctypes.get_errno(), "fork")
        if pid == 0:
            os.close(done_r)
            carry_on = _judge_one(compiled, entry_points)
            os.write(done_w, b"1" if carry_on else b"0")
            _flush((sys.stdout, sys.stderr))
            os._exit(0)
        os.close(done_w)
        del compiled
        _pid, status = os.waitpid(pid, 0)
        said = os.read(done_r, 1)
        os.close(done_r)
        if said != b"1" or status != 0:
            _end_like(status)
            return


def _end_like(status: int) -> None:
    """End this judge as its fork ended: by the same signal, or with the same exit code."""
    _flush((sys.stdout, sys.stderr))
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def _flush(streams: tuple) -> None:
    for stream in streams:
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001, S110
            pass


# A load like a job's: a handle and a value of several types, bound as a snippet's names are.
_WARM_UP_LOAD = json.dumps({"ok": True, "names": {
    "f": {"kind": "callable", "handle": 0, "type": "function"},
    "v": {"kind": "value", "value": {"$dict": [[1, ["a", 1.5, None, True]]]}}}})


def _warm_up() -> None:
    """Touch the pages a verdict's path writes (json, the codec) on fixed data, before the job's load arrives.

    In a fresh fork each first write to a page copies it (a few microseconds a page); done while the job starts,
    those copies leave the snippet's critical path."""
    try:
        _bind({}, json.loads(_WARM_UP_LOAD)["names"], ())
        json.dumps({"status": "pass"})
    except Exception:  # noqa: BLE001, S110 - a warm-up only
        pass


def _compiled(snippet: str) -> tuple[CodeType | None, BaseException | None]:
    """The snippet's code, or the exception compiling it raised (reported once the job has loaded)."""
    try:
        return compile(snippet, "<test>", "exec"), None
    except BaseException as exc:  # noqa: BLE001 - raised where exec would have run
        return None, exc


def _judge_one(compiled: tuple[CodeType | None, BaseException | None], entry_points: Collection[str]) -> bool:
    """One snippet's verdict (`_compiled`); False when the job went away or the zygote closed the pipe.

    The decoding path is warmed while the job is still starting: its load comes a few milliseconds later. A snippet
    that does not compile is reported as before, once the job has loaded."""
    code, compile_error = compiled
    _warm_up()
    got = read_frame(GO_FD)
    if got is None or got[0] != LOAD:
        return False
    with depth_room():
        load = json.loads(got[1])
    if not load.get("ok"):
        bases = [base.__name__ for base in _builtin_classes(load.get("bases") or [load.get("base")])]
        _verdict("load_error", None, base="AssertionError" if "AssertionError" in bases else bases[0],
                 error_type=str(load.get("type"))[:200],
                 error_message=str(load.get("message"))[:2000])
        return True
    namespace = {"__name__": "__main__", "__builtins__": builtins}
    shadowed: list[str] = []
    try:
        shadowed = _bind(namespace, load.get("names") or {}, frozenset(entry_points))
        if compile_error is not None:
            raise compile_error
        exec(code, namespace)
    except JobGone:
        return False
    except BaseException as exc:  # noqa: BLE001 - the program's exception, or the test's own
        from_program = _from_program(exc)
        if isinstance(exc, AssertionError):
            _verdict("fail", exc, **_noted(shadowed))
        elif not from_program and isinstance(exc, (MemoryError, RecursionError)):
            # decoding or the test itself outgrew the judge's limits
            _verdict("error", exc, reason="judge_limit", **_noted(shadowed))
        else:
            program_base = ("MemoryError" if isinstance(exc, MemoryError) else
                            next(c.__name__ for c in type(exc).__mro__ if c.__module__ == "builtins")) \
                if from_program else None
            _verdict("error", exc, program_base=program_base, **_noted(shadowed))
        return True
    _verdict("pass", **_noted(shadowed))
    return True


def _noted(shadowed: list[str]) -> dict[str, list[str]]:
    return {"shadowed_modules": shadowed} if shadowed else {}
