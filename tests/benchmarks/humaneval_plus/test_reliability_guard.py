"""EvalPlus's reliability guard as replayed: what it disables, and what EvalPlus's process had loaded before it."""

from __future__ import annotations

import pytest

from audit_lib import sandbox
from audit_lib.benchmarks.humaneval_plus.guard import preloaded_finder_source, with_reliability_guard

NUMPY_SAMPLE = "import numpy as np\n\ndef total(xs):\n    return np.sum(np.array(xs))\n"
# Modules EvalPlus's process had loaded before its guard, imported by samples in ways no text search finds.
PRELOADED_SAMPLES = {
    "numpy": NUMPY_SAMPLE,
    "multiprocessing": "from multiprocessing import cpu_count\n\ndef total(xs):\n    return sum(xs)\n",
    "numpy by a computed name": "import importlib\nnp = importlib.import_module('nu' + 'mpy')\n\n"
                                "def total(xs):\n    return int(np.sum(xs))\n",
    "numpy at call time": "def total(xs):\n    import numpy\n    return int(numpy.sum(xs))\n",
}


def _call(source: str, guarded: str | None = None) -> sandbox.CallJobResult:
    return sandbox.call_function(guarded or with_reliability_guard(source), "total", [[[1, 2, 3]]],
                                 limits=sandbox.Limits(timeout_s=20, total_timeout_s=40))


@pytest.mark.parametrize("name", PRELOADED_SAMPLES)
def test_a_module_evalplus_had_loaded_imports_under_the_guard_as_under_evalplus(name: str) -> None:
    result = _call(PRELOADED_SAMPLES[name])
    assert result.load_error is None, result.load_error
    assert [(o.kind, o.value) for o in result.outcomes] == [("value", 6)], result.outcomes  # np.int64 as its int


@pytest.mark.parametrize("name", PRELOADED_SAMPLES)
def test_without_the_preloaded_finder_the_guard_breaks_those_imports(name: str) -> None:
    """The replay is shown to need the finder: the same guard without it fails each sample."""
    source = PRELOADED_SAMPLES[name]
    guarded = with_reliability_guard(source)
    assert preloaded_finder_source() in guarded
    result = _call(source, guarded.replace(preloaded_finder_source(), ""))
    assert result.load_error is not None or result.outcomes[0].kind != "value", name


def test_the_guard_still_disables_what_evalplus_disables() -> None:
    """Before and after a preloaded module's import (which runs with the guard undone), and for psutil, which the
    guard makes unimportable though EvalPlus had loaded it."""
    checks = "[os.getcwd is None, open is None, exit is None, shutil.rmtree is None]"
    source = f"import os, shutil\nbefore = {checks}\nimport multiprocessing, numpy\n\n" \
             f"def total(xs):\n    return before + {checks}\n"
    assert _call(source).outcomes[0].value == [True] * 8
    psutil = "def total(xs):\n    import psutil\n    return 6\n"
    assert _call(psutil).outcomes[0].kind == "exception"
