"""Readings of the one published unconventional problem, `sort_concat_square_deduplicate`, and where they disagree.

arXiv 2306.11644v2, §4 prints one problem. Its docstring (paraphrased in the mirror's PROVENANCE.md): sort each
integer list ascending, concatenate them, square the entries at even indices, drop entries smaller than
`my_threshold`, remove duplicates, return the list. Each reading below is a program text that differs from the
literal reading in exactly one choice, so any disagreement is attributable to that choice. The programs run only
in the sandbox; their outputs are compared here, in the parent.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from audit_lib.sandbox import CallJob, Limits, run_many, safe_repr
from audit_lib.sandbox import decoded_or_refusal

ENTRY_POINT = "sort_concat_square_deduplicate"
EXAMPLE_SIGNATURE = "def sort_concat_square_deduplicate(list1, list2, my_threshold):"
EXAMPLE_CITATION = "arXiv 2306.11644v2, Section 4: the only one of the 50 problems the paper prints"
LITERAL_READING = "literal"


@dataclass(frozen=True)
class Reading:
    """One interpretation of the docstring: the choice it makes and its source text (run only in the sandbox)."""

    name: str
    choice: str
    source: str


_DEDUP_KEEP_FIRST = '''
def _keep_first(values):
    seen = []
    for value in values:
        if value not in seen:
            seen.append(value)
    return seen
'''

READINGS: tuple[Reading, ...] = (
    Reading(LITERAL_READING,
            "steps in the order written: square even (0-based) indices of the concatenation, keep x >= threshold, "
            "then drop repeats keeping first occurrences",
            _DEDUP_KEEP_FIRST + '''
def sort_concat_square_deduplicate(list1, list2, my_threshold):
    merged = sorted(list1) + sorted(list2)
    squared = [x * x if i % 2 == 0 else x for i, x in enumerate(merged)]
    kept = [x for x in squared if x >= my_threshold]
    return _keep_first(kept)
'''),
    Reading("square_each_list",
            "even indices counted within each sorted list, squared before concatenating",
            _DEDUP_KEEP_FIRST + '''
def sort_concat_square_deduplicate(list1, list2, my_threshold):
    def square_even(values):
        return [x * x if i % 2 == 0 else x for i, x in enumerate(values)]
    merged = square_even(sorted(list1)) + square_even(sorted(list2))
    kept = [x for x in merged if x >= my_threshold]
    return _keep_first(kept)
'''),
    Reading("square_one_based_even",
            "'even indices' read as even positions counted from 1 (the 2nd, 4th, ... entries)",
            _DEDUP_KEEP_FIRST + '''
def sort_concat_square_deduplicate(list1, list2, my_threshold):
    merged = sorted(list1) + sorted(list2)
    squared = [x * x if (i + 1) % 2 == 0 else x for i, x in enumerate(merged)]
    kept = [x for x in squared if x >= my_threshold]
    return _keep_first(kept)
'''),
    Reading("dedup_before_square",
            "duplicates removed from the concatenation first, then squaring and the threshold",
            _DEDUP_KEEP_FIRST + '''
def sort_concat_square_deduplicate(list1, list2, my_threshold):
    merged = _keep_first(sorted(list1) + sorted(list2))
    squared = [x * x if i % 2 == 0 else x for i, x in enumerate(merged)]
    return [x for x in squared if x >= my_threshold]
'''),
    Reading("strict_threshold",
            "the threshold filter is strict: entries equal to my_threshold are dropped too",
            _DEDUP_KEEP_FIRST + '''
def sort_concat_square_deduplicate(list1, list2, my_threshold):
    merged = sorted(list1) + sorted(list2)
    squared = [x * x if i % 2 == 0 else x for i, x in enumerate(merged)]
    kept = [x for x in squared if x > my_threshold]
    return _keep_first(kept)
'''),
    Reading("dedup_sorted_set",
            "duplicates removed with a set, result returned sorted",
            '''
def sort_concat_square_deduplicate(list1, list2, my_threshold):
    merged = sorted(list1) + sorted(list2)
    squared = [x * x if i % 2 == 0 else x for i, x in enumerate(merged)]
    kept = [x for x in squared if x >= my_threshold]
    return sorted(set(kept))
'''),
)

# Small hand-picked inputs that separate the readings; generated inputs are added to these.
FIXED_INPUTS: tuple[tuple[list[int], list[int], int], ...] = (
    ([], [], 0),
    ([3, 1], [2], 0),
    ([1, 2, 3], [4, 5], 2),
    ([-2, 2], [], 0),
    ([2], [2], 4),
    ([-3, 1], [0, 2], 1),
    ([1, 1], [2], 0),
)


@dataclass(frozen=True)
class ReadingOutcome:
    """What one reading returned for one input, decoded in the parent (a value, or the kind of failure)."""

    kind: str
    value: Any = None
    detail: str = ""

    def key(self) -> str:
        return safe_repr(self.value, 10_000) if self.kind == "value" else f"<{self.kind}: {self.detail}>"


@dataclass(frozen=True)
class Counterexample:
    """The smallest input on which a reading disagrees with the literal reading."""

    reading: str
    choice: str
    list1: tuple[int, ...]
    list2: tuple[int, ...]
    my_threshold: int
    literal_output: str
    reading_output: str
    disagreements: int
    inputs: int


@dataclass(frozen=True)
class AmbiguityReport:
    """Outputs of every reading on every input, and the disagreements among them."""

    inputs: tuple[tuple[tuple[int, ...], tuple[int, ...], int], ...]
    outcomes: Mapping[str, tuple[ReadingOutcome, ...]]
    counterexamples: tuple[Counterexample, ...]
    inputs_with_any_disagreement: int
    distinct_outputs_per_input: tuple[int, ...]
    pairwise_disagreement: Mapping[str, Mapping[str, int]]
    sandbox_statuses: Mapping[str, str]
    # per reading, each input's CPU time measured by the sandbox's supervisor, and the per-input limit they ran under
    cpu_s: Mapping[str, tuple[float, ...]] = field(default_factory=dict)
    limit_s: float = Limits().timeout_s


def generated_inputs(seed: int, count: int, *, max_len: int = 5, value_range: tuple[int, int] = (-4, 6),
                     threshold_range: tuple[int, int] = (-2, 12)) -> list[tuple[list[int], list[int], int]]:
    """Seeded small integer inputs (short lists, negatives included, so squaring reorders and collides)."""
    rng = np.random.default_rng(seed)
    inputs = []
    for _ in range(count):
        list1 = [int(v) for v in rng.integers(value_range[0], value_range[1] + 1, size=rng.integers(0, max_len + 1))]
        list2 = [int(v) for v in rng.integers(value_range[0], value_range[1] + 1, size=rng.integers(0, max_len + 1))]
        threshold = int(rng.integers(threshold_range[0], threshold_range[1] + 1))
        inputs.append((list1, list2, threshold))
    return inputs


def readings_jobs(inputs: Sequence[tuple[list[int], list[int], int]], readings: Iterable[Reading] = READINGS,
                  limits: Limits | None = None) -> list[CallJob]:
    """One sandbox `CallJob` per reading, each calling the function on every input."""
    chosen_limits = limits if limits is not None else Limits()
    as_args = [[list(a), list(b), t] for a, b, t in inputs]
    return [CallJob(key=reading.name, program=reading.source, entry_point=ENTRY_POINT, inputs=tuple(as_args),
                    limits=chosen_limits, per_input_timeout_s=None)
            for reading in readings]


def run_readings(inputs: Sequence[tuple[list[int], list[int], int]], *, executor: Any = None,
                 readings: Sequence[Reading] = READINGS, limits: Limits | None = None) -> AmbiguityReport:
    """Run every reading in the sandbox on the same inputs and compare the outputs in the parent."""
    chosen_limits = limits if limits is not None else Limits()
    jobs = readings_jobs(inputs, readings, chosen_limits)
    results = dict(run_many(jobs, executor, progress_desc="readings", progress_unit="readings"))
    outcomes: dict[str, tuple[ReadingOutcome, ...]] = {}
    statuses: dict[str, str] = {}
    cpu_s: dict[str, tuple[float, ...]] = {}
    for reading in readings:
        result = results[reading.name]
        statuses[reading.name] = str(result.status)
        outcomes[reading.name] = _decode_outcomes(result, len(inputs))
        by_index = {outcome.index: float(outcome.cpu_s or 0.0) for outcome in result.outcomes}
        cpu_s[reading.name] = tuple(by_index.get(index, 0.0) for index in range(len(inputs)))
    report = compare_outcomes(inputs, outcomes, readings, statuses)
    return dataclasses.replace(report, cpu_s=cpu_s, limit_s=chosen_limits.timeout_s)


def compare_outcomes(inputs: Sequence[tuple[Sequence[int], Sequence[int], int]],
                     outcomes: Mapping[str, tuple[ReadingOutcome, ...]], readings: Sequence[Reading] = READINGS,
                     statuses: Mapping[str, str] | None = None) -> AmbiguityReport:
    """Pure comparison of already-decoded outputs (kept apart from execution so it can be tested directly)."""
    frozen_inputs = tuple((tuple(a), tuple(b), int(t)) for a, b, t in inputs)
    names = [r.name for r in readings]
    distinct = tuple(len({outcomes[name][i].key() for name in names}) for i in range(len(frozen_inputs)))
    pairwise = {a: {b: sum(outcomes[a][i].key() != outcomes[b][i].key() for i in range(len(frozen_inputs)))
                    for b in names} for a in names}
    counterexamples = []
    literal = outcomes[LITERAL_READING]
    for reading in readings:
        if reading.name == LITERAL_READING:
            continue
        differing = [i for i in range(len(frozen_inputs)) if outcomes[reading.name][i].key() != literal[i].key()]
        if not differing:
            continue
        smallest = min(differing, key=lambda i: (len(frozen_inputs[i][0]) + len(frozen_inputs[i][1]), i))
        list1, list2, threshold = frozen_inputs[smallest]
        counterexamples.append(Counterexample(
            reading=reading.name, choice=reading.choice, list1=list1, list2=list2, my_threshold=threshold,
            literal_output=literal[smallest].key(), reading_output=outcomes[reading.name][smallest].key(),
            disagreements=len(differing), inputs=len(frozen_inputs)))
    return AmbiguityReport(
        inputs=frozen_inputs, outcomes=dict(outcomes), counterexamples=tuple(counterexamples),
        inputs_with_any_disagreement=sum(1 for d in distinct if d > 1), distinct_outputs_per_input=distinct,
        pairwise_disagreement=pairwise, sandbox_statuses=dict(statuses or {}))


def _decode_outcomes(result: Any, expected: int) -> tuple[ReadingOutcome, ...]:
    """Turn a `CallJobResult` into one outcome per input; a program that failed to load fails every input."""
    if getattr(result, "load_error", None):
        return tuple(ReadingOutcome("load_error", detail=str(result.load_error)) for _ in range(expected))
    decoded = [ReadingOutcome("not_run", detail=str(result.status)) for _ in range(expected)]
    for outcome in result.outcomes:
        if outcome.kind == "value":
            value, refusal = decoded_or_refusal(outcome.value)  # a value kept encoded is decoded here, or refused
            decoded[outcome.index] = ReadingOutcome("value", value=value) if refusal is None else \
                ReadingOutcome("unserializable", detail=" ".join(refusal)[:500])
        else:
            detail = f"{outcome.exc_type or ''} {outcome.exc_message or ''}".strip()
            decoded[outcome.index] = ReadingOutcome(str(outcome.kind), detail=detail)
    return tuple(decoded)
