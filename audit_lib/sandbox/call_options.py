"""What `call_function` sends for its options, checked before any job starts: input groups and their time limits,
and the expected values that may stop a run early; and which unrun inputs input groups leave by design."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from audit_lib.errors import ParameterError
from audit_lib.sandbox import codec as sandbox_codec
from audit_lib.sandbox.results import CallOutcome


def cut_short(outcomes: Sequence[CallOutcome], firsts: list[int]) -> frozenset[int]:
    """The inputs left unrun because an earlier input of their group timed out (the group was out of time)."""
    cut: set[int] = set()
    ends = [*firsts[1:], len(outcomes)]
    for first, end in zip(firsts, ends):
        timed_out = next((o.index for o in outcomes[first:end] if o.kind == "timeout"), None)
        if timed_out is not None:
            cut.update(o.index for o in outcomes[timed_out + 1:end] if o.kind == "not_run")
    return frozenset(cut)


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


def stop_expected_wire(stop_expected: Mapping[int, Any] | None, count: int,
                        stop_after_failure: bool) -> list[list[Any]]:
    if not stop_expected:
        return []
    if not stop_after_failure:
        raise ParameterError("stop_expected only applies with stop_after_failure=True", field="stop_expected")
    wire = []
    for index, value in sorted(stop_expected.items()):
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count:
            raise ParameterError(f"stop_expected index {index!r} is not an input index (0..{count - 1})",
                                 field="stop_expected")
        try:
            wire.append([index, sandbox_codec.encode(value)])
        except sandbox_codec.Unserializable as exc:
            raise ParameterError(f"stop_expected[{index}] is not plain data: {exc}", field="stop_expected") from exc
    return wire
