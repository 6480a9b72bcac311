"""EvalPlus's output comparison rules in the parent, and the judge that applies them in the sandbox.

The rules themselves live in `evalplus_rules` (self-contained, so the sandbox's judge runs its source on a sample's
outputs: `evalplus_judge`). Here they run in-process on trusted values (two canonical runs compared), with the
codec's helpers. `SampleComparer` carries EvalPlus's sticky atol promotion; `compare_one` is the stateless form for a
single input.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Literal

from audit_lib import sandbox
from audit_lib.benchmarks.humaneval_plus import evalplus_rules
from audit_lib.benchmarks.humaneval_plus.evalplus_rules import (
    ALLCLOSE_RTOL,
    DEFAULT_FLOAT_ATOL,
    MBPP_OUTPUT_NOT_NONE_ENTRY_POINTS,
    MBPP_OUTPUT_SET_EQ_ENTRY_POINTS,
    digit_distance_oracle,
    integer_forms,
    is_floats,
    poly,
    surface_area_oracle,
)
from audit_lib.sandbox import ValueDigest, bounded_set, canonical_encoding, contains_float, digest_of

Dataset = Literal["humaneval", "mbpp"]
Verdict = Literal["match", "wrong_value", "exception", "timeout", "unserializable", "not_run"]
NOT_NONE_WRAPPED_FUNCTION = "_benchaudit_wrapped"  # the wrapper's keyword-only parameter bound to the entry point
# What the rules need of the codec, in this process (the judge passes its own).
CODEC_API = SimpleNamespace(ValueDigest=ValueDigest, digest_of=digest_of, bounded_set=bounded_set,
                            Unserializable=sandbox.Unserializable)
RULES_SOURCE = inspect.getsource(evalplus_rules)


@dataclass(frozen=True)
class Comparison:
    """The verdict for one input: did the output match under EvalPlus's rules, and why not."""

    passed: bool
    reason: str = ""
    atol_used: float = 0.0


def find_zero_oracle(inputs: Sequence[Any], output: Any, atol: float) -> Comparison:
    """HumanEval/32: the output must be a root, `|poly(xs, out)| <= atol`; the expected value is ignored."""
    return Comparison(*evalplus_rules.Rules("humaneval", "find_zero", atol, CODEC_API)._find_zero(inputs, output))


class SampleComparer:
    """Compares one sample's outputs input by input, carrying EvalPlus's sticky atol promotion."""

    def __init__(self, *, dataset: Dataset, entry_point: str, atol: float) -> None:
        self._rules = evalplus_rules.Rules(dataset, entry_point, atol, CODEC_API)
        self.dataset = dataset
        self.entry_point = entry_point

    @property
    def atol(self) -> float:
        return self._rules.atol

    def compare(self, inputs: Sequence[Any], output: Any, expected: Any) -> Comparison:
        """Apply the rules to one input; a failure never promotes atol, exactly as EvalPlus."""
        return Comparison(*self._rules.compare(inputs, output, expected))


def evalplus_judge(dataset: Dataset, entry_point: str, atol: float, expected: Sequence[Any]) -> sandbox.CallJudge:
    """The sandbox judge that compares a sample's outputs under EvalPlus's rules, in a jailed process.

    The sandbox judge that compares a sample's outputs with `expected` (one per input; `sandbox.NO_EXPECTED` where the
    canonical gave no value) under EvalPlus's rules, in a jailed process: the parent gets each input's verdict and a
    short preview of the output, never the output itself.
    """
    return sandbox.CallJudge(source=RULES_SOURCE, expected=tuple(expected),
                             setup={"dataset": dataset, "entry_point": entry_point, "atol": float(atol)})


# Entry points whose verdict is not `output == expected` alone (special oracles).
MBPP_ORACLE_ENTRY_POINTS: frozenset[str] = frozenset({"are_equivalent", "sum_div", "surface_Area",
                                                     "digit_distance_nums"}) | MBPP_OUTPUT_SET_EQ_ENTRY_POINTS \
    | MBPP_OUTPUT_NOT_NONE_ENTRY_POINTS


def compare_one(inputs: Sequence[Any], output: Any, expected: Any, *, dataset: Dataset = "humaneval",
                entry_point: str = "", atol: float = 0.0) -> Comparison:
    """Stateless comparison of a single input (a fresh comparer, so no earlier promotion applies)."""
    return SampleComparer(dataset=dataset, entry_point=entry_point, atol=atol).compare(inputs, output, expected)


def not_none_wrapper(entry_point: str, wrapped_name: str, *, for_ground_truth: bool) -> str:
    """Source of a function `wrapped_name` that maps the entry point's output the way EvalPlus does (MBPP+).

    Ground truth stores `out is not None`; a candidate's bool output is compared as-is, any other output as
    `out is not None`. Both mappings happen in the child because such outputs (e.g. `re.Match`) are not plain data.
    The wrapper runs in the program's own globals, so it looks up no name the program can bind: `out is True or
    out is False` is EvalPlus's `isinstance(out, bool)` (bool has no subclasses), and the entry point is taken once,
    when the module body has run, as EvalPlus's `exec_globals[entry_point]` (a default the harness never overrides:
    it calls with positional arguments only).
    """
    mapped = "out is not None" if for_ground_truth else \
        "out if (out is True or out is False) else out is not None"
    return (
        f"\n\ndef {wrapped_name}(*args, {NOT_NONE_WRAPPED_FUNCTION}={entry_point}):\n"
        f"    out = {NOT_NONE_WRAPPED_FUNCTION}(*args)\n"
        f"    return {mapped}\n"
    )


__all__ = [
    "ALLCLOSE_RTOL", "Comparison", "DEFAULT_FLOAT_ATOL", "MBPP_ORACLE_ENTRY_POINTS", "MBPP_OUTPUT_NOT_NONE_ENTRY_POINTS",
    "MBPP_OUTPUT_SET_EQ_ENTRY_POINTS", "RULES_SOURCE", "SampleComparer", "ValueDigest", "Verdict", "canonical_encoding",
    "compare_one", "contains_float", "digest_of", "digit_distance_oracle", "evalplus_judge", "find_zero_oracle",
    "integer_forms", "is_floats", "not_none_wrapper", "poly", "surface_area_oracle",
]
