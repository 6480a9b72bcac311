"""EvalPlus's reliability guard as replayed: what it disables, and numpy loaded before it as in EvalPlus's process."""

from __future__ import annotations

from audit_lib import sandbox
from audit_lib.benchmarks.humaneval_plus.guard import NUMPY_FIRST, with_reliability_guard

NUMPY_SAMPLE = "import numpy as np\n\ndef total(xs):\n    return np.sum(np.array(xs))\n"


def _call(source: str) -> sandbox.CallJobResult:
    return sandbox.call_function(with_reliability_guard(source), "total", [[[1, 2, 3]]],
                                 limits=sandbox.Limits(timeout_s=20, total_timeout_s=40))


def test_a_sample_importing_numpy_loads_under_the_guard_as_under_evalplus() -> None:
    result = _call(NUMPY_SAMPLE)
    assert result.load_error is None, result.load_error
    assert [(o.kind, o.value) for o in result.outcomes] == [("value", 6)]  # np.int64 crosses as its int


def test_without_numpy_first_the_guard_breaks_numpys_import() -> None:
    """The replay is shown to need the early import: the same guard without it fails the sample's load."""
    guarded = with_reliability_guard(NUMPY_SAMPLE).replace(NUMPY_FIRST, "")
    result = sandbox.call_function(guarded, "total", [[[1, 2, 3]]], limits=sandbox.Limits(timeout_s=20,
                                                                                           total_timeout_s=40))
    assert result.load_error is not None


def test_the_guard_still_disables_what_evalplus_disables() -> None:
    source = "import os\n\ndef total(xs):\n    return [os.getcwd is None, open is None, exit is None]\n"
    assert _call(source).outcomes[0].value == [True, True, True]
    assert NUMPY_FIRST not in with_reliability_guard(source)  # only samples that may need numpy pay its import
