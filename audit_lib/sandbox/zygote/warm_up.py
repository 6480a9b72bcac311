"""The template runs the job harness's own code paths a few times, on fixed data of its own, before it starts any cell
(stdlib only).

Every job's worker is a fork of the template (through its cell's init), so what the template has done once, no
worker does again: the dynamic linker's lazy binding of each C function a job calls, the interpreter's adaptive
specialisation of the harness's code, attribute caches, static types readied on first use. Without it, each worker
paid them again for every job (measured: about 13 % more CPU per tiny job once the template stopped preloading modules
that had done part of it by chance; `perf/bench_sandbox.py`).

Nothing here reads a request: the template stays pristine. The values below are made up to exercise the codec, the
harness's exception path, as a job's program and snippet would.
"""

from __future__ import annotations

import builtins
import json
import math

from audit_lib.sandbox import codec
from audit_lib.sandbox.zygote.harness_io import exception_fields as _exception_fields

ROUNDS = 12  # past CPython 3.11's warm-up of 8 runs before a code object is specialised
PROGRAM = """
def f(x, scale=2):
    return [x, x * scale, {"k": (x, None, True)}, {x, 3}, "ab" * x, 2.5, frozenset({1}), b"z", 1 + 2j]


def g(text):
    return sorted(set(text.split()), key=len)
"""
SNIPPET = """
value = f(3)
assert value == [3, 6, {"k": (3, None, True)}, {3}, "ababab", 2.5, frozenset({1}), b"z", 1 + 2j]
assert len(value) - 1 < 10 and 3 in value[3] and math.isclose(value[5], 2.5, rel_tol=1e-9)
assert g("a bb a") is not None and g("a bb a") != ["a"]
"""


def warm_up() -> None:
    """Run the snippet, an assert that fails, and the codec over the program's values, `ROUNDS` times."""
    code = compile(PROGRAM + SNIPPET, "<sandbox>", "exec")
    failing = compile("assert 1 == 2, 'no'", "<sandbox>", "exec")
    for _round in range(ROUNDS):
        namespace = {"__name__": "__warm_up__", "__builtins__": builtins, "math": math}
        exec(code, namespace)
        try:
            exec(failing, namespace)
        except AssertionError as exc:
            _exception_fields(exc)
        for value in (*namespace["value"], namespace["value"], namespace["g"]("c dd c")):
            text = json.dumps(codec.encode(value))
            codec.decode(json.loads(text))
        json.loads(json.dumps({"source": PROGRAM, "snippet": SNIPPET, "inputs": [[1, 2]]}))
