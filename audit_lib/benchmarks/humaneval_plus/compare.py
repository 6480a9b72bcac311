"""EvalPlus's output comparison rules, replayed in the parent on values decoded from the sandbox.

Replays `evalplus/eval/__init__.py::unsafe_execute` (evalplus HEAD 26d6d00, PyPI 0.3.1) for one sample on one input
list: exact match first, then the dataset's special oracles, then the float tolerance path. One quirk is kept on
purpose: EvalPlus promotes `atol` from 0 to 1e-6 on the first input whose expected output is a float (or a
non-empty list/tuple of floats) and the promoted value stays for every later input of the same run. `SampleComparer`
carries that state; `compare_one` is the stateless form for a single input.
"""

from __future__ import annotations

import collections
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from audit_lib import sandbox
from audit_lib.sandbox import ValueDigest, bounded_set, canonical_encoding, contains_float, digest_of

DEFAULT_FLOAT_ATOL = 1e-6
ALLCLOSE_RTOL = 1e-7

Dataset = Literal["humaneval", "mbpp"]
Verdict = Literal["match", "wrong_value", "exception", "timeout", "unserializable", "not_run"]

# MBPP+ tasks whose outputs are compared as sets (`_special_oracle.MBPP_OUTPUT_SET_EQ_TASKS`).
MBPP_OUTPUT_SET_EQ_ENTRY_POINTS: frozenset[str] = frozenset({
    "similar_elements", "find_char_long", "common_in_nested_lists", "extract_singly",
    "larg_nnum", "intersection_array", "find_dissimilar", "Diff",
})
# MBPP+ tasks whose expected output is only `out is not None` (`MBPP_OUTPUT_NOT_NONE_TASKS`).
MBPP_OUTPUT_NOT_NONE_ENTRY_POINTS: frozenset[str] = frozenset({"check_str", "text_match_three", "text_starta_endb"})
NOT_NONE_WRAPPED_FUNCTION = "_benchaudit_wrapped"  # the wrapper's keyword-only parameter bound to the entry point


@dataclass(frozen=True)
class Comparison:
    """The verdict for one input: did the output match under EvalPlus's rules, and why not."""

    passed: bool
    reason: str = ""
    atol_used: float = 0.0


def is_floats(value: Any) -> bool:
    """EvalPlus's `is_floats`: a float, a non-empty list/tuple of floats, or a float numpy array."""
    if isinstance(value, float):
        return True
    if isinstance(value, (list, tuple)) and value:
        return all(isinstance(item, float) for item in value)
    if isinstance(value, np.ndarray):
        return value.dtype in (np.float64, np.float32)
    return False


def poly(coefficients: Sequence[float], x: float) -> float:
    """HumanEval/32's polynomial, evaluated the way its prompt (and EvalPlus's oracle) does."""
    return sum(coefficient * math.pow(x, power) for power, coefficient in enumerate(coefficients))


def find_zero_oracle(inputs: Sequence[Any], output: Any, atol: float) -> Comparison:
    """HumanEval/32: the output must be a root, `|poly(xs, out)| <= atol`; the expected value is ignored."""
    try:
        residual = abs(poly(inputs[0], output))
    except Exception as exc:  # a non-numeric answer is a failure, as in EvalPlus
        return Comparison(False, f"find_zero oracle raised {type(exc).__name__}: {exc}", atol)
    if residual <= atol:
        return Comparison(True, "", atol)
    return Comparison(False, f"|poly(xs, out)| = {residual!r} > atol {atol!r}", atol)


def surface_area_oracle(base_edge: float, height: float) -> int:
    """Mbpp/581's alternative reading: `height` is the pyramid's perpendicular height."""
    slant_height = math.sqrt((base_edge / 2) ** 2 + height ** 2)
    return round(base_edge ** 2 + 2 * base_edge * slant_height)


def digit_distance_oracle(first: int, second: int) -> int:
    """Mbpp/558's alternative reading: numbers are zero-padded to the same length first."""
    left, right = str(first), str(second)
    width = max(len(left), len(right))
    return sum(abs(int(a) - int(b)) for a, b in zip(left.zfill(width), right.zfill(width)))


def _safe_equal(left: Any, right: Any) -> bool:
    try:
        return bool(left == right)
    except Exception:  # numpy arrays and odd types: an ambiguous comparison is not a match
        return False


def _mbpp_exact_match(entry_point: str, inputs: Sequence[Any], output: Any, expected: Any,
                      exact: bool, atol: float) -> bool:
    if entry_point == "are_equivalent":  # Mbpp/164: any answer is accepted
        return True
    if entry_point == "sum_div":  # Mbpp/295
        return exact or _safe_equal(output, 0)
    if entry_point == "surface_Area":  # Mbpp/581
        return exact or abs(output - surface_area_oracle(*inputs)) <= atol
    if entry_point == "digit_distance_nums":  # Mbpp/558
        return exact or _safe_equal(output, digit_distance_oracle(*inputs))
    if entry_point in MBPP_OUTPUT_SET_EQ_ENTRY_POINTS:
        return bounded_set(output) == set(expected)  # output comes from the child
    if entry_point in MBPP_OUTPUT_NOT_NONE_ENTRY_POINTS:
        # The program run in the sandbox maps a non-bool output to `out is not None` (see not_none_wrapper).
        return _safe_equal(output, expected)
    return exact


class SampleComparer:
    """Compares one sample's outputs input by input, carrying EvalPlus's sticky atol promotion."""

    def __init__(self, *, dataset: Dataset, entry_point: str, atol: float) -> None:
        if dataset not in ("humaneval", "mbpp"):
            raise ValueError(f"dataset must be 'humaneval' or 'mbpp', not {dataset!r}")
        self.dataset = dataset
        self.entry_point = entry_point
        self.atol = float(atol)

    def compare(self, inputs: Sequence[Any], output: Any, expected: Any) -> Comparison:
        """Apply the rules to one input; a failure never promotes atol, exactly as EvalPlus."""
        try:
            return self._compare(inputs, output, expected)
        except Exception as exc:  # EvalPlus catches everything the comparison raises as a failed input
            return Comparison(False, f"comparison raised {type(exc).__name__}: {exc}", self.atol)

    def _compare(self, inputs: Sequence[Any], output: Any, expected: Any) -> Comparison:
        if isinstance(expected, ValueDigest):
            return self._compare_digest(output, expected)
        exact = _safe_equal(output, expected)
        if self.dataset == "mbpp":
            exact = _mbpp_exact_match(self.entry_point, inputs, output, expected, exact, self.atol)
        if self.dataset == "humaneval" and self.entry_point == "find_zero":
            return find_zero_oracle(inputs, output, self.atol)
        if self.atol == 0 and is_floats(expected):
            self.atol = DEFAULT_FLOAT_ATOL
        if exact:
            return Comparison(True, "", self.atol)
        if self.atol == 0:
            return Comparison(False, "not equal", self.atol)
        if type(output) is not type(expected):
            return Comparison(False, f"type {type(output).__name__} != expected {type(expected).__name__}",
                              self.atol)
        if isinstance(expected, (list, tuple)) and len(output) != len(expected):
            return Comparison(False, f"length {len(output)} != expected {len(expected)}", self.atol)
        if np.allclose(output, expected, rtol=ALLCLOSE_RTOL, atol=self.atol):
            return Comparison(True, "", self.atol)
        return Comparison(False, f"not allclose (rtol={ALLCLOSE_RTOL}, atol={self.atol})", self.atol)

    def _compare_digest(self, output: Any, expected: ValueDigest) -> Comparison:
        """A float-free expected value: only the exact path of EvalPlus's rules can apply.

        The output may itself be a digest, computed in the sandbox by the same rule (`sandbox.call_function`). A
        decoded output is also tried in its integer forms (`integer_forms`): each is `==` to the output, so one whose
        encoding is the expected one's makes `output == expected` hold, as EvalPlus finds `[1.0, 2.0] == [1, 2]`.
        """
        try:
            if isinstance(output, ValueDigest):
                matched = output.sha256 == expected.sha256
            else:
                matched = any(digest_of(form).sha256 == expected.sha256 for form in integer_forms(output))
        except (sandbox.Unserializable, RecursionError):
            matched = False
        if matched:
            return Comparison(True, "", self.atol)
        return Comparison(False, f"not equal (expected {expected.type_name} of {expected.nbytes:,} encoded bytes)",
                          self.atol)


_MAPPINGS = (dict, collections.OrderedDict, collections.Counter, collections.defaultdict)


def integer_forms(value: Any) -> Iterator[Any]:
    """`value` and its integer-valued forms, each equal to it by `==`.

    `value`, then (when they differ) the same value with its integral floats and zero-imaginary complexes as ints, then
    also with its bools as ints (Python compares int and float exactly), in the exact builtin types the codec sends;
    anything else is left as it is."""
    yield value
    numbers = _as_ints(value, False)
    if numbers is not value:
        yield numbers
    numbers_and_bools = _as_ints(numbers, True)
    if numbers_and_bools is not numbers:
        yield numbers_and_bools


def _as_ints(value: Any, bools: bool) -> Any:
    """`value` with numbers that equal an int replaced by that int; the same object when nothing changes."""
    kind = type(value)
    if kind is float:
        return int(value) if math.isfinite(value) and value.is_integer() else value
    if kind is complex:
        real = _as_ints(value.real, bools) if value.imag == 0 else None
        return real if type(real) is int else value
    if kind is bool:
        return int(value) if bools else value
    if kind in (list, tuple, set, frozenset):
        items = [_as_ints(item, bools) for item in value]
        return value if all(new is old for new, old in zip(items, value)) else kind(items)
    if kind in _MAPPINGS:
        pairs = [(_as_ints(k, bools), _as_ints(v, bools)) for k, v in value.items()]
        if all(k is k0 and v is v0 for (k, v), (k0, v0) in zip(pairs, value.items())):
            return value
        rebuilt = collections.defaultdict(value.default_factory) if kind is collections.defaultdict else kind()
        dict.update(rebuilt, pairs)  # Counter.update would add counts
        return rebuilt
    return value


# Entry points whose verdict is not `output == expected` alone, so a differing value does not decide it.
MBPP_ORACLE_ENTRY_POINTS: frozenset[str] = frozenset({"are_equivalent", "sum_div", "surface_Area",
                                                     "digit_distance_nums"}) | MBPP_OUTPUT_SET_EQ_ENTRY_POINTS \
    | MBPP_OUTPUT_NOT_NONE_ENTRY_POINTS
# An expected value larger than this (encoded) is not worth shipping to the sandbox for an early stop.
EARLY_STOP_MAX_BYTES = 64 * 1024


def decided_by_inequality(dataset: Dataset, entry_point: str, atol: float,
                          expected_values: Sequence[tuple[bool, Any]]) -> dict[int, Any]:
    """The inputs where `output != expected` alone makes EvalPlus fail the sample: {input index: expected value}.

    `expected_values` holds, per input, (whether the canonical produced a value, that value). An input qualifies
    when the task has no special oracle and `atol` is still 0 after EvalPlus's sticky promotion, which a float
    expected output triggers at its own input and keeps for every later one. In a fast-check run every earlier
    input returned a value and was compared, so the promotion state here is exactly the one `SampleComparer`
    reaches. Digests and large values are left out (no early stop there, never a different verdict).
    """
    if (dataset == "humaneval" and entry_point == "find_zero") or \
            (dataset == "mbpp" and entry_point in MBPP_ORACLE_ENTRY_POINTS):
        return {}
    decided: dict[int, Any] = {}
    for index, (has_value, value) in enumerate(expected_values):
        if not has_value:
            continue
        if atol == 0 and is_floats(value):
            atol = DEFAULT_FLOAT_ATOL
        if atol != 0:
            break
        if not isinstance(value, ValueDigest) and _roughly_at_most(value, EARLY_STOP_MAX_BYTES):
            decided[index] = value
    return decided


def _roughly_at_most(value: Any, budget: int) -> bool:
    """Is the value's encoded size roughly within `budget` bytes? Gives up as soon as it is not, so it is cheap."""
    if type(value) in (int, bool, type(None)):
        return True  # the common case, without building a work list
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, (str, bytes, bytearray)):
            budget -= len(item) + 2
        elif isinstance(item, (list, tuple, set, frozenset)):
            budget -= len(item) + 2
            if budget < 0:
                return False
            if any(isinstance(x, (str, bytes, bytearray, list, tuple, set, frozenset, dict)) for x in item):
                pending.extend(item)
            else:
                budget -= 8 * len(item)  # numbers, bools, None: a few bytes each
        elif isinstance(item, dict):
            budget -= 2 * len(item) + 2
            pending.extend(item.keys())
            pending.extend(item.values())
        else:
            budget -= 8
        if budget < 0:
            return False
    return True


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
    "ALLCLOSE_RTOL", "Comparison", "DEFAULT_FLOAT_ATOL", "EARLY_STOP_MAX_BYTES", "MBPP_ORACLE_ENTRY_POINTS",
    "MBPP_OUTPUT_NOT_NONE_ENTRY_POINTS", "ValueDigest", "canonical_encoding", "contains_float",
    "decided_by_inequality", "digest_of",
    "MBPP_OUTPUT_SET_EQ_ENTRY_POINTS", "SampleComparer", "Verdict", "compare_one", "digit_distance_oracle",
    "find_zero_oracle", "is_floats", "not_none_wrapper", "poly", "surface_area_oracle",
]
