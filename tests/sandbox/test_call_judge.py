"""Class 4 of issue 24: the parent pays nothing for values; decoding and comparison are bounded by CPU time.

Call mode's outputs are decoded and compared with their expected values in a jailed judge (`sandbox.CallJudge`),
each within a CPU-time budget enforced there; the parent gets a small record per input (verdict, reason, preview).
Where a caller still wants values in the parent (the ground truth's canonical outputs), their decoding has a CPU-time
budget too. Before, every output was decoded and compared in the parent, bounded by bytes only: a deep-nested
42 MB line took about 20 s of its CPU and 2.4 GB, and the CLI printed 61 MB for a 2 s job. Each test here fails on
the code before (there was no judge in call mode, no CPU budget, and the CLI printed every value whole).
"""

from __future__ import annotations

import json
import textwrap
import time
from pathlib import Path

import pytest

from audit_lib import sandbox
from audit_lib.sandbox import Limits
from audit_lib.sandbox import api as sandbox_api
from audit_lib.sandbox import budget as sandbox_budget
from audit_lib.sandbox import cli as sandbox_cli
from audit_lib.sandbox.call_options import EQUALITY_RULES

LIMITS = Limits(timeout_s=20, total_timeout_s=120, memory_mb=2048)
# Writes one result line itself (fd 3 is the result pipe): what a hostile child can send without encoding anything.
HOSTILE_WRITER = """
import os
def f():
    os.write(3, b"0 value 0.0 " + {payload} + b"\\n")
    os.write(3, b"D\\n")
    os._exit(0)
"""
# ~40 MB: 100,000 lists each nested 199 deep (within the codec's depth limit): 20M containers to build.
DEEP_NESTED = 'b"[" + b",".join([b"[" * 199 + b"0" + b"]" * 199] * 100_000) + b"]"'


def test_outputs_judged_in_the_sandbox_never_reach_the_parent() -> None:
    program = "def f(x):\n    return [x] * 3\n"
    judge = sandbox.CallJudge(EQUALITY_RULES, ([1, 1, 1], [9], sandbox.NO_EXPECTED))
    result = sandbox.call_function(program, "f", [[1], [2], [3]], judge=judge, values="preview")
    assert [(o.kind, o.value, o.verdict, o.preview) for o in result.outcomes] == [
        ("value", None, "match", "[1, 1, 1]"), ("value", None, "wrong_value", "[2, 2, 2]"),
        ("value", None, None, "[3, 3, 3]")]
    assert result.outcomes[1].reason == "not equal"


def test_a_deep_nested_value_is_the_judges_work_within_its_cpu_budget_never_the_parents() -> None:
    """20M nested lists: refused by the judge before it parses them (parsing cannot be interrupted)."""
    program = textwrap.dedent(HOSTILE_WRITER.format(payload=DEEP_NESTED))
    judge = sandbox.CallJudge(EQUALITY_RULES, (0,), value_cpu_s=2.0)
    result = sandbox.call_function(program, "f", [[]], limits=LIMITS, judge=judge, values="preview")
    (outcome,) = result.outcomes
    assert outcome.value is None, "decoded in the parent"
    assert (outcome.kind, outcome.exc_type) == ("unserializable", "BudgetExceeded"), outcome
    assert "cannot be interrupted" in outcome.exc_message


def test_a_value_that_decodes_slowly_is_refused_once_its_cpu_time_is_up() -> None:
    """~2M nested lists, within the count the judge parses: decoding them takes longer than the value's 0.2 s."""
    program = textwrap.dedent(HOSTILE_WRITER.format(payload=DEEP_NESTED.replace("100_000", "10_000")))
    judge = sandbox.CallJudge(EQUALITY_RULES, (0,), value_cpu_s=0.2)
    (outcome,) = sandbox.call_function(program, "f", [[]], limits=LIMITS, judge=judge, values="preview").outcomes
    assert (outcome.kind, outcome.exc_type) == ("unserializable", "BudgetExceeded"), outcome
    assert "0.2 s of CPU" in outcome.exc_message


def test_the_judge_bounds_each_comparison_by_cpu_time() -> None:
    spinning = ("def make_comparer(setup, api):\n    return Spin()\n"
                "class Spin:\n    def compare(self, inputs, output, expected):\n"
                "        while True:\n            pass\n")
    judge = sandbox.CallJudge(spinning, (1, 2), value_cpu_s=0.5)
    result = sandbox.call_function("def f(x):\n    return x\n", "f", [[1], [2]], limits=LIMITS, judge=judge)
    assert [(o.kind, o.exc_type) for o in result.outcomes] == [("unserializable", "BudgetExceeded")] * 2
    assert "0.5 s of CPU" in result.outcomes[0].exc_message


@pytest.mark.parametrize("rules", ["this is not python", "import os\nos._exit(0)\n",
                                   "def make_comparer(setup, api):\n    raise MemoryError\n"])
def test_rules_that_fail_refuse_every_output_never_pass_it(rules: str) -> None:
    judge = sandbox.CallJudge(rules, (1, 2))
    result = sandbox.call_function("def f(x):\n    return x\n", "f", [[1], [2]], limits=LIMITS, judge=judge)
    assert [o.kind for o in result.outcomes] == ["unserializable"] * 2, result.outcomes
    assert all(o.verdict is None for o in result.outcomes)


def test_a_judge_that_ends_refuses_what_it_did_not_judge() -> None:
    ending = ("import os\ndef make_comparer(setup, api):\n    return Ends()\n"
              "class Ends:\n    def compare(self, inputs, output, expected):\n        os._exit(0)\n")
    result = sandbox.call_function("def f(x):\n    return x\n", "f", [[1], [2], [3]], limits=LIMITS,
                                   judge=sandbox.CallJudge(ending, (1, 2, 3)))
    assert [o.kind for o in result.outcomes] == ["unserializable"] * 3, result.outcomes
    assert {o.exc_type for o in result.outcomes} == {"JudgeLimit"}


def test_values_decoded_in_the_parent_have_a_cpu_time_budget() -> None:
    """The ground truth's values still come back decoded (the canonical's outputs are the expected values): the
    decoding thread's CPU time is bounded, checked while a value is decoded, not only its bytes and depth."""
    line = b"0 value 0.0:0.0:0.0 [" + b",".join([b"[" * 150 + b"0" + b"]" * 150] * 2_000) + b"]"
    budget = sandbox_budget.DecodeBudget(max_cpu_s=0.002)
    started = time.thread_time()
    (outcome,) = sandbox_api._decode_outcomes(line, frozenset(), budget)
    assert (outcome.kind, outcome.exc_type) == ("unserializable", "BudgetExceeded"), outcome
    assert "CPU" in outcome.exc_message
    assert time.thread_time() - started < 30  # a hang, not the load, could break this: the budget stopped it
    (honest,) = sandbox_api._decode_outcomes(line, frozenset())
    assert honest.kind == "value" and len(honest.value) == 2_000


def test_the_cli_prints_a_huge_output_as_its_start(tmp_path: Path, capsys) -> None:
    program = tmp_path / "program.py"
    program.write_text("def f():\n    return list(range(1_000_000))\n")  # ~7 MB of tagged JSON
    inputs = tmp_path / "inputs.json"
    inputs.write_text("[[]]")
    code = sandbox_cli.main(["sandbox", str(program), "--call", "f", "--inputs", str(inputs), "--timeout", "20"])
    out = capsys.readouterr().out
    assert code == 0 and len(out) < 64 * 1024, len(out)
    value = json.loads(out)["outcomes"][0]["value"]
    assert set(value) == {"$preview"} and value["$preview"].startswith("[0, 1, 2") and "sha256" in value["$preview"]


def test_an_int_too_long_to_print_is_judged_and_previewed() -> None:
    """repr() refuses ints past 4,300 digits: the judge's preview falls back to the codec, and nothing a value makes
    go wrong in the judge ends it (before, the fallback's import failed where the project is out of reach, the
    judge died, and every later output of the job was refused: HumanEval/83 and /139 in full runs)."""
    program = "def f(x):\n    return 7 ** x\n"
    judge = sandbox.CallJudge(EQUALITY_RULES, (7 ** 20_000, 7 ** 3, 7 ** 20_000))
    result = sandbox.call_function(program, "f", [[20_000], [3], [20_000]], judge=judge, values="preview")
    assert [o.verdict for o in result.outcomes] == ["match", "match", "match"], result.outcomes
    assert result.outcomes[0].preview.startswith('{"$int": "0x')
