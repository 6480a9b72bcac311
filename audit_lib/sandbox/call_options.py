"""What `call_function` sends for its options, checked before any job starts: input groups and their time limits,
and the judge that decides each output (`CallJudge`, and the early stop `stop_expected` builds on it)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from audit_lib.errors import ParameterError
from audit_lib.sandbox import budget as sandbox_budget
from audit_lib.sandbox import codec as sandbox_codec
from audit_lib.sandbox.nesting import depth_room


class _NoExpected:
    """The expected value of an input that has none (the canonical gave no value): its output is not compared."""

    _instance: _NoExpected | None = None

    def __new__(cls) -> _NoExpected:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NO_EXPECTED"

    def __reduce__(self) -> str:
        return "NO_EXPECTED"


NO_EXPECTED = _NoExpected()
# Rules that pass an output equal (`==`) to its expected value: what `stop_expected` asks for.
EQUALITY_RULES = """
def make_comparer(setup, api):
    return Equality()


class Equality:
    def compare(self, inputs, output, expected):
        try:
            return bool(output == expected), "not equal"
        except Exception as exc:
            return False, f"comparison raised {type(exc).__name__}: {exc}"
"""
# CPU seconds the judge may spend decoding and comparing one value.
JUDGE_VALUE_CPU_S = 10.0


@dataclass(frozen=True)
class CallJudge:
    """How a call job's outputs are judged: in a jailed judge process, never in the parent nor the job.

    `source` is Python source defining `make_comparer(setup, api)`, whose result's `compare(inputs, output, expected)`
    returns `(passed, reason, ...)`; it runs under real CPython in the judge, with `api` giving the codec's
    `ValueDigest`, `digest_of`, `bounded_set` and `Unserializable` (the module must import nothing of this project;
    numpy is there). `expected` holds one value per input (plain data, a `ValueDigest`, or `NO_EXPECTED`: not
    compared); `setup` is plain data for `make_comparer`. None for `source`: the judge only previews each output.
    An output whose decoding and comparison take more than `value_cpu_s` of the judge's CPU is refused
    (`unserializable`, BudgetExceeded), as is every output once the judge is out of its own limits."""

    source: str | None = None
    expected: tuple[Any, ...] = ()
    setup: Mapping[str, Any] = field(default_factory=dict)
    value_cpu_s: float = JUDGE_VALUE_CPU_S  # CPU seconds to decode and compare one value, in the judge

    def __post_init__(self) -> None:
        if isinstance(self.value_cpu_s, bool) or not isinstance(self.value_cpu_s, (int, float)) \
                or not 0 < self.value_cpu_s <= 3600:
            raise ParameterError(f"CallJudge.value_cpu_s must be in (0, 3600], not {self.value_cpu_s!r}",
                                 field="value_cpu_s")

    @classmethod
    def equality(cls, expected: Mapping[int, Any], count: int) -> CallJudge:
        """`==` against the given inputs' expected values; the other inputs are not compared."""
        return cls(EQUALITY_RULES, tuple(expected.get(index, NO_EXPECTED) for index in range(count)))

    def wire(self, inputs: list[Any], count: int, digestible: frozenset[int] | None) -> dict[str, Any]:
        """The judge's spec (sent sealed: the zygote hands it to the judge unread)."""
        if self.expected and len(self.expected) != count:
            raise ParameterError(f"the judge has {len(self.expected)} expected values for {count} inputs",
                                 field="judge")
        expected = []
        with depth_room():  # once for every value, not once each
            for index, value in enumerate(self.expected):
                if value is NO_EXPECTED:
                    continue
                try:
                    expected.append([index, _tagged_expected(value)])
                except sandbox_codec.Unserializable as exc:
                    raise ParameterError(f"expected value {index} is not plain data: {exc}", field="judge") from exc
        return {"source": self.source, "setup": dict(self.setup), "expected": expected, "inputs": inputs,
                "digest_inputs": None if digestible is None else sorted(digestible),
                "value_cpu_s": float(self.value_cpu_s)}


def _tagged_expected(value: Any) -> Any:
    """An expected value's tagged JSON (a leaf is its own: `codec.encode`)."""
    if isinstance(value, sandbox_codec.ValueDigest):
        return value.to_json()
    if isinstance(value, sandbox_budget.EncodedValue):
        return value.tagged()
    return sandbox_codec.encode(value)


def groups_wire(sizes: Sequence[int] | None, timeouts: Sequence[float] | None, count: int,
                 stop_after_failure: bool) -> tuple[list[int], list[float]] | None:
    """(first input of each group, each group's limit) for the request; None without groups."""
    if sizes is None:
        if timeouts is not None:
            raise ParameterError("group_timeout_s needs input_groups", field="group_timeout_s")
        return None
    if stop_after_failure:
        raise ParameterError("input_groups cannot be combined with stop_after_failure", field="input_groups")
    sizes = list(sizes)
    if any(isinstance(size, bool) or not isinstance(size, int) or size < 1 for size in sizes) \
            or sum(sizes) != count:
        raise ParameterError(f"input_groups must be positive ints summing to the {count} inputs, not {sizes!r}",
                             field="input_groups")
    limits = [math.inf] * len(sizes) if timeouts is None else [float(t) for t in timeouts]
    if len(limits) != len(sizes) or any(not t > 0 or math.isnan(t) for t in limits):
        raise ParameterError("group_timeout_s needs one positive limit per group", field="group_timeout_s")
    firsts, first = [], 0
    for size in sizes:
        firsts.append(first)
        first += size
    return firsts, [min(limit, 1e9) for limit in limits]


def stop_expected_judge(stop_expected: Mapping[int, Any] | None, count: int,
                        stop_after_failure: bool) -> CallJudge | None:
    """The judge `stop_expected` stands for: `==` on the given inputs (checked here)."""
    if not stop_expected:
        return None
    if not stop_after_failure:
        raise ParameterError("stop_expected only applies with stop_after_failure=True", field="stop_expected")
    for index, value in sorted(stop_expected.items(), key=lambda item: repr(item[0])):
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count:
            raise ParameterError(f"stop_expected index {index!r} is not an input index (0..{count - 1})",
                                 field="stop_expected")
        try:
            sandbox_codec.encode(value)
        except sandbox_codec.Unserializable as exc:
            raise ParameterError(f"stop_expected[{index}] is not plain data: {exc}", field="stop_expected") from exc
    return CallJudge.equality(stop_expected, count)
