"""What removing a benchmark's flawed tasks does to a published leaderboard (pure computation, no I/O).

Given every model's per-task outcomes and the tasks an audit found flawed: each model's pass@1 as published and
without those tasks, both rankings and their Kendall tau, the models that move, the pairs whose order flips (with a
paired bootstrap over the remaining tasks), eval-arena's noise floor, and the tasks no model / every model solves
and those stronger models solve less often (eval-arena's negative `tau`), each marked when flawed.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from audit_lib.leaderboard.results import ModelResults
from audit_lib.leaderboard.stats import (
    BootstrapDifference,
    NoiseFloor,
    bootstrap_indices,
    competition_ranks,
    kendall_tau_b,
    noise_floor,
    paired_bootstrap,
    task_strength_tau,
)

DEFAULT_RESAMPLES = 10_000
DEFAULT_SEED = 20240604  # eval-arena's data commit date: any fixed seed makes the figures reproducible


@dataclass(frozen=True)
class ModelImpact:
    """One model: pass@1 and rank (1 = best) as published and without the flawed tasks."""

    model: str
    pass1_published: float
    pass1_without_flawed: float
    rank_published: int
    rank_without_flawed: int

    @property
    def places_gained(self) -> int:
        """Positive when the model moves up once the flawed tasks are gone."""
        return self.rank_published - self.rank_without_flawed


@dataclass(frozen=True)
class FlippedPair:
    """Two models whose order reverses: `above` led `below` as published and trails it without the flawed tasks."""

    above: str
    below: str
    difference_published: float      # pass@1(above) - pass@1(below), > 0
    difference_without_flawed: float  # the same without the flawed tasks, < 0
    bootstrap: BootstrapDifference   # of pass@1(above) - pass@1(below) on the remaining tasks (< 0)


@dataclass(frozen=True)
class TaskFacts:
    """One task across the leaderboard: how many models solve it, eval-arena's tau, and why it is flawed (if so)."""

    task_id: str
    solved_by: int
    models: int
    solve_rate: float
    tau: float
    flaws: tuple[str, ...]

    @property
    def flawed(self) -> bool:
        return bool(self.flaws)


@dataclass(frozen=True)
class LeaderboardImpact:
    """The whole comparison; `flawed_tasks` are the flawed tasks present in the results."""

    benchmark: str
    models: tuple[ModelImpact, ...]
    tasks: int
    flawed_tasks: tuple[str, ...]
    flawed_not_in_results: tuple[str, ...]
    kendall_tau: float
    flips: tuple[FlippedPair, ...]
    noise_floor_published: NoiseFloor
    noise_floor_without_flawed: NoiseFloor
    task_facts: tuple[TaskFacts, ...]
    resamples: int
    seed: int

    @property
    def rank_changes(self) -> tuple[ModelImpact, ...]:
        """The models whose rank moves, the largest move first."""
        moved = [row for row in self.models if row.places_gained]
        return tuple(sorted(moved, key=lambda row: (-abs(row.places_gained), row.rank_published, row.model)))

    @property
    def unsolved(self) -> tuple[TaskFacts, ...]:
        return tuple(task for task in self.task_facts if task.solved_by == 0)

    @property
    def all_solved(self) -> tuple[TaskFacts, ...]:
        return tuple(task for task in self.task_facts if task.solved_by == task.models)

    @property
    def suspects(self) -> tuple[TaskFacts, ...]:
        """Tasks stronger models solve less often (tau < 0), the most negative first."""
        negative = [task for task in self.task_facts if not math.isnan(task.tau) and task.tau < 0]
        return tuple(sorted(negative, key=lambda task: (task.tau, task.task_id)))


def compare_leaderboards(results: ModelResults, flaws: Mapping[str, Sequence[str]], *,
                       resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> LeaderboardImpact:
    """Compare the leaderboard with and without the tasks in `flaws` (task id -> why it is flawed)."""
    present = set(results.tasks)
    flawed = tuple(task for task in results.tasks if task in flaws)
    keep = np.array([task not in flaws for task in results.tasks])
    if not keep.any():
        raise ValueError(f"every one of the {len(results.tasks)} tasks is flawed: no leaderboard is left to compare")
    published, without = results.pass_at_1(), results.pass_at_1(keep)
    ranks_published, ranks_without = competition_ranks(published), competition_ranks(without)
    models = tuple(ModelImpact(model, float(published[i]), float(without[i]), ranks_published[i], ranks_without[i])
                   for i, model in enumerate(results.models))
    kept_outcomes = results.outcomes[:, keep]
    indices = bootstrap_indices(kept_outcomes.shape[1], resamples, seed)
    flips = []
    for i, j in itertools.combinations(range(len(results.models)), 2):
        before, after = published[i] - published[j], without[i] - without[j]
        if before * after >= 0:  # same order, or a tie on either side: not a reversal
            continue
        above, below = (i, j) if before > 0 else (j, i)
        flips.append(FlippedPair(results.models[above], results.models[below],
                                 float(published[above] - published[below]), float(without[above] - without[below]),
                                 paired_bootstrap(kept_outcomes[above], kept_outcomes[below], indices, seed=seed)))
    flips.sort(key=lambda pair: (pair.bootstrap.p_value, pair.above, pair.below))
    solved = (results.outcomes > 0).sum(axis=0)
    taus = task_strength_tau(results.outcomes, published)
    rates = results.solve_rate()
    facts = tuple(TaskFacts(task, int(solved[j]), len(results.models), float(rates[j]), float(taus[j]),
                            tuple(flaws.get(task, ()))) for j, task in enumerate(results.tasks))
    return LeaderboardImpact(
        benchmark=results.benchmark, models=models, tasks=len(results.tasks), flawed_tasks=flawed,
        flawed_not_in_results=tuple(sorted(set(flaws) - present)),
        kendall_tau=kendall_tau_b(published, without), flips=tuple(flips),
        noise_floor_published=noise_floor(results.models, results.outcomes),
        noise_floor_without_flawed=noise_floor(results.models, kept_outcomes),
        task_facts=facts, resamples=resamples, seed=seed)


__all__ = ["DEFAULT_RESAMPLES", "DEFAULT_SEED", "FlippedPair", "LeaderboardImpact", "ModelImpact", "TaskFacts",
           "compare_leaderboards"]
