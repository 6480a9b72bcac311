"""EvalPlus's comparison rules where they run on untrusted outputs: the sandbox's judge, and the not-None wrapper."""

from __future__ import annotations

import pytest

from audit_lib.benchmarks.humaneval_plus.compare import SampleComparer


def test_the_sandbox_judge_applies_the_same_rules_as_the_parent() -> None:
    """The rules run in the sandbox's judge on the outputs (`evalplus_judge`): same verdicts as in this process,
    sticky atol included, and a fast check stops at the first input that fails any rule (EvalPlus's fast_check)."""
    from audit_lib import sandbox
    from audit_lib.benchmarks.humaneval_plus.compare import evalplus_judge

    program = "def f(x):\n    return x\n"
    outputs = [[1, 2], [1.0000001, 2], 0.5, [1.0000001, 2], 3.0000001, "x"]
    expected = [[1, 2], [1, 2], 0.5, [1, 2], 3.0, sandbox.NO_EXPECTED]
    judged = sandbox.call_function(program, "f", [[o] for o in outputs], values="preview",
                                   judge=evalplus_judge("humaneval", "f", 0.0, expected))
    comparer = SampleComparer(dataset="humaneval", entry_point="f", atol=0)
    here = [comparer.compare([], out, want).passed if want is not sandbox.NO_EXPECTED else None
            for out, want in zip(outputs, expected)]
    verdicts = [{"match": True, "wrong_value": False}.get(o.verdict) for o in judged.outcomes]
    assert verdicts == here == [True, False, True, True, True, None]
    assert all(o.value is None and o.preview for o in judged.outcomes)
    stopped = sandbox.call_function(program, "f", [[o] for o in [[1, 2], 3.5, [9]]], stop_after_failure=True,
                                    values="preview", judge=evalplus_judge("humaneval", "f", 0.0, [[1, 2], 3.0, [9]]))
    assert [o.kind for o in stopped.outcomes] == ["value", "value", "not_run"]  # 3.5 is off 3.0 by more than atol
    assert stopped.outcomes[1].verdict == "wrong_value" and "allclose" in stopped.outcomes[1].reason
    root = sandbox.call_function("def find_zero(xs):\n    return 1.0\n", "find_zero", [[[-1.0, 1.0]], [[1.0, 1.0]]],
                                 values="preview", judge=evalplus_judge("humaneval", "find_zero", 0.0, [0.0, 0.0]))
    assert [o.verdict for o in root.outcomes] == ["match", "wrong_value"]  # the oracle reads the inputs


@pytest.mark.parametrize("program", [
    "def isinstance(value, kind):\n    return True\n",  # would make the wrapper return the raw output
    "@(lambda function: lambda *args: False)\n",  # a trailing decorator would decorate the wrapper
])
def test_not_none_wrapper_is_out_of_the_program_s_reach(program: str) -> None:
    """The wrapper runs in the candidate's globals: EvalPlus maps 0 to `0 is not None` (True), whatever the
    candidate binds; a candidate that does not parse on its own still fails its load."""
    from types import SimpleNamespace  # noqa: PLC0415

    from audit_lib.benchmarks.humaneval_plus.programs import candidate_program  # noqa: PLC0415
    from audit_lib.sandbox import call_function  # noqa: PLC0415

    task = SimpleNamespace(entry_point="check_str")  # all candidate_program reads of the task
    wrapped = candidate_program("def check_str(s):\n    return 0\n" + program, task, "mbpp")
    job = call_function(wrapped.source, wrapped.entry_point, [["x"]])
    parses = "@" not in program
    assert (job.load_error is None) == parses, job
    if parses:
        assert job.outcomes[0].value is True
