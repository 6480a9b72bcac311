"""EvalPlus's output comparison rules, self-contained: run by the sandbox's judge on a sample's outputs, and here.

Replays `evalplus/eval/__init__.py::unsafe_execute` (evalplus HEAD 26d6d00, PyPI 0.3.1) for one sample on one input
list: exact match first, then the dataset's special oracles, then the float tolerance path. One quirk is kept on
purpose: EvalPlus promotes `atol` from 0 to 1e-6 on the first input whose expected output is a float (or a
non-empty list/tuple of floats) and the promoted value stays for every later input of the same run.

This module imports nothing of the project: the sandbox's judge runs its source (`make_comparer` is the entry
point, see `sandbox.CallJudge`) in a jailed process, with the helpers it needs from the sandbox's codec passed in as
`api` (`ValueDigest`, `digest_of`, `bounded_set`, `Unserializable`). numpy is imported only on the tolerance path.
"""

from __future__ import annotations

import collections
import math
import sys
from collections.abc import Iterator, Sequence
from typing import Any

DEFAULT_FLOAT_ATOL = 1e-6
ALLCLOSE_RTOL = 1e-7

# MBPP+ tasks whose outputs are compared as sets (`_special_oracle.MBPP_OUTPUT_SET_EQ_TASKS`).
MBPP_OUTPUT_SET_EQ_ENTRY_POINTS: frozenset[str] = frozenset({
    "similar_elements", "find_char_long", "common_in_nested_lists", "extract_singly",
    "larg_nnum", "intersection_array", "find_dissimilar", "Diff",
})
# MBPP+ tasks whose expected output is only `out is not None` (`MBPP_OUTPUT_NOT_NONE_TASKS`).
MBPP_OUTPUT_NOT_NONE_ENTRY_POINTS: frozenset[str] = frozenset({"check_str", "text_match_three", "text_starta_endb"})


def is_floats(value: Any) -> bool:
    """EvalPlus's `is_floats`: a float, a non-empty list/tuple of floats, or a float numpy array."""
    if isinstance(value, float):
        return True
    if isinstance(value, (list, tuple)) and value:
        return all(isinstance(item, float) for item in value)
    numpy = sys.modules.get("numpy")  # no array exists where numpy was never imported (the codec decodes none)
    if numpy is not None and isinstance(value, numpy.ndarray):
        return value.dtype in (numpy.float64, numpy.float32)
    return False


def poly(coefficients: Sequence[float], x: float) -> float:
    """HumanEval/32's polynomial, evaluated the way its prompt (and EvalPlus's oracle) does."""
    return sum(coefficient * math.pow(x, power) for power, coefficient in enumerate(coefficients))


def surface_area_oracle(base_edge: float, height: float) -> int:
    """Mbpp/581's alternative reading: `height` is the pyramid's perpendicular height."""
    slant_height = math.sqrt((base_edge / 2) ** 2 + height ** 2)
    return round(base_edge ** 2 + 2 * base_edge * slant_height)


def digit_distance_oracle(first: int, second: int) -> int:
    """Mbpp/558's alternative reading: numbers are zero-padded to the same length first."""
    left, right = str(first), str(second)
    width = max(len(left), len(right))
    return sum(abs(int(a) - int(b)) for a, b in zip(left.zfill(width), right.zfill(width)))


def safe_equal(left: Any, right: Any) -> bool:
    try:
        return bool(left == right)
    except Exception:  # numpy arrays and odd types: an ambiguous comparison is not a match
        return False


_MAPPINGS = (dict, collections.OrderedDict, collections.Counter, collections.defaultdict)


def integer_forms(value: Any) -> Iterator[Any]:
    """`value` and its integer-valued forms, each equal to it by `==`.

    `value`, then (when they differ) the same value with its integral floats and zero-imaginary complexes as ints, then
    also with its bools as ints: each equal to `value` by `==` (Python compares int and float exactly), in the exact
    builtin types the codec sends (anything else is left as it is).
    """
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
        for key, item in pairs:  # item by item: Counter.update would add counts, dict.update skips OrderedDict's order
            rebuilt[key] = item
        return rebuilt
    return value


class Rules:
    """One sample's comparisons, input by input, carrying EvalPlus's sticky atol promotion.

    `compare(inputs, output, expected)` returns `(passed, reason, atol_used)`. `api` holds the codec's `ValueDigest`,
    `digest_of`, `bounded_set` and `Unserializable`."""

    def __init__(self, dataset: str, entry_point: str, atol: float, api: Any) -> None:
        if dataset not in ("humaneval", "mbpp"):
            raise ValueError(f"dataset must be 'humaneval' or 'mbpp', not {dataset!r}")
        self.dataset, self.entry_point, self.atol, self.api = dataset, entry_point, float(atol), api

    def compare(self, inputs: Sequence[Any], output: Any, expected: Any) -> tuple[bool, str, float]:
        """Apply the rules to one input; a failure never promotes atol, exactly as EvalPlus."""
        try:
            return self._compare(inputs, output, expected)
        except Exception as exc:  # EvalPlus catches everything the comparison raises as a failed input
            return False, f"comparison raised {type(exc).__name__}: {exc}", self.atol

    def _compare(self, inputs: Sequence[Any], output: Any, expected: Any) -> tuple[bool, str, float]:
        if isinstance(expected, self.api.ValueDigest):
            return self._compare_digest(output, expected)
        exact = safe_equal(output, expected)
        if self.dataset == "mbpp":
            exact = self._mbpp_exact_match(inputs, output, expected, exact)
        if self.dataset == "humaneval" and self.entry_point == "find_zero":
            return self._find_zero(inputs, output)
        if self.atol == 0 and is_floats(expected):
            self.atol = DEFAULT_FLOAT_ATOL
        if exact:
            return True, "", self.atol
        if self.atol == 0:
            return False, "not equal", self.atol
        if type(output) is not type(expected):
            return False, f"type {type(output).__name__} != expected {type(expected).__name__}", self.atol
        if isinstance(expected, (list, tuple)) and len(output) != len(expected):
            return False, f"length {len(output)} != expected {len(expected)}", self.atol
        import numpy as np  # noqa: PLC0415 - the tolerance path only (a float output that is not exactly equal)

        if np.allclose(output, expected, rtol=ALLCLOSE_RTOL, atol=self.atol):
            return True, "", self.atol
        return False, f"not allclose (rtol={ALLCLOSE_RTOL}, atol={self.atol})", self.atol

    def _find_zero(self, inputs: Sequence[Any], output: Any) -> tuple[bool, str, float]:
        """HumanEval/32: the output must be a root, `|poly(xs, out)| <= atol`; the expected value is ignored."""
        try:
            residual = abs(poly(inputs[0], output))
        except Exception as exc:  # a non-numeric answer is a failure, as in EvalPlus
            return False, f"find_zero oracle raised {type(exc).__name__}: {exc}", self.atol
        if residual <= self.atol:
            return True, "", self.atol
        return False, f"|poly(xs, out)| = {residual!r} > atol {self.atol!r}", self.atol

    def _mbpp_exact_match(self, inputs: Sequence[Any], output: Any, expected: Any, exact: bool) -> bool:
        entry_point = self.entry_point
        if entry_point == "are_equivalent":  # Mbpp/164: any answer is accepted
            return True
        if entry_point == "sum_div":  # Mbpp/295
            return exact or safe_equal(output, 0)
        if entry_point == "surface_Area":  # Mbpp/581
            return exact or abs(output - surface_area_oracle(*inputs)) <= self.atol
        if entry_point == "digit_distance_nums":  # Mbpp/558
            return exact or safe_equal(output, digit_distance_oracle(*inputs))
        if entry_point in MBPP_OUTPUT_SET_EQ_ENTRY_POINTS:
            return self.api.bounded_set(output) == set(expected)  # output comes from the child
        if entry_point in MBPP_OUTPUT_NOT_NONE_ENTRY_POINTS:
            # The program run in the sandbox maps a non-bool output to `out is not None` (see not_none_wrapper).
            return safe_equal(output, expected)
        return exact

    def _compare_digest(self, output: Any, expected: Any) -> tuple[bool, str, float]:
        """A float-free expected value: only the exact path of EvalPlus's rules can apply.

        The output may itself be a digest, computed in the sandbox by the same rule. A decoded output is also tried
        in its integer forms (`integer_forms`): each is `==` to the output, so one whose encoding is the expected
        one's makes `output == expected` hold, as EvalPlus finds `[1.0, 2.0] == [1, 2]`.
        """
        try:
            if isinstance(output, self.api.ValueDigest):
                matched = output.sha256 == expected.sha256
            else:
                matched = any(self.api.digest_of(form).sha256 == expected.sha256 for form in integer_forms(output))
        except (self.api.Unserializable, RecursionError):
            matched = False
        if matched:
            return True, "", self.atol
        return False, (f"not equal (expected {expected.type_name} of {expected.nbytes:,} encoded bytes)"), self.atol


def make_comparer(setup: dict, api: Any) -> Rules:
    """The judge's entry point: `setup` is `{"dataset", "entry_point", "atol"}`."""
    return Rules(str(setup["dataset"]), str(setup["entry_point"]), float(setup["atol"]), api)
