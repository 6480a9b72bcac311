"""The two leaderboard figures: pass@1 per model before vs after, and the tasks x models outcome heatmap."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import numpy as np

from audit_lib.leaderboard.impact import ModelImpact
from audit_lib.leaderboard.results import ModelResults

PUBLISHED_COLOR, WITHOUT_COLOR, MOVED_COLOR, FLAWED_COLOR = "#4477aa", "#ee6677", "#aa3377", "#cc3311"


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def pass_at_1_figure(models: Sequence[ModelImpact], *, flawed: int, kendall_tau: float, benchmark_name: str) -> Any:
    """Each model's pass@1 as published and without the `flawed` tasks; models that change rank in bold colour."""
    plt = _pyplot()
    rows = sorted(models, key=lambda row: (row.rank_published, row.model))
    height = max(3.0, 0.26 * len(rows) + 1.4)
    fig, axis = plt.subplots(figsize=(9.5, height))
    positions = np.arange(len(rows))[::-1]
    for y, row in zip(positions, rows):
        axis.plot([100 * row.pass1_published, 100 * row.pass1_without_flawed], [y, y], color="#bbbbbb", lw=1,
                  zorder=1)
    axis.scatter([100 * row.pass1_published for row in rows], positions, color=PUBLISHED_COLOR, s=22, zorder=2,
                 label="as published (all tasks)")
    axis.scatter([100 * row.pass1_without_flawed for row in rows], positions, color=WITHOUT_COLOR, marker="D", s=18,
                 zorder=3, label=f"without the {flawed} flawed tasks")
    axis.set_yticks(positions)
    labels = [f"{row.model}  ({row.rank_published}" + (f" -> {row.rank_without_flawed})" if row.places_gained else ")")
              for row in rows]
    axis.set_yticklabels(labels, fontsize=7.5)
    for tick, row in zip(axis.get_yticklabels(), rows):
        if row.places_gained:
            tick.set_color(MOVED_COLOR)
            tick.set_fontweight("bold")
    axis.set_ylim(-0.8, len(rows) - 0.2)
    axis.set_xlabel("pass@1 (%)")
    axis.set_ylabel("model (rank as published -> without the flawed tasks)")
    axis.set_title(f"{benchmark_name}: pass@1 per model, as published and without the flawed tasks\n"
                   f"({sum(1 for row in rows if row.places_gained)} of {len(rows)} models change rank; Kendall tau "
                   f"{kendall_tau:.3f})", fontsize=10)
    axis.grid(axis="x", color="#eeeeee")
    axis.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    return fig


def outcome_heatmap(results: ModelResults, flawed: Collection[str], *, benchmark_name: str) -> Any:
    """Models (best at the top) x tasks (easiest on the left), solved cells dark; `flawed` tasks marked above."""
    plt = _pyplot()
    from matplotlib.colors import ListedColormap

    model_order = np.argsort(-results.pass_at_1(), kind="stable")
    rates = results.solve_rate()
    task_order = np.lexsort((np.arange(len(rates)), -rates))  # easiest first, ties in task order
    matrix = results.outcomes[model_order][:, task_order]
    flawed = set(flawed) & set(results.tasks)
    flagged = np.array([[results.tasks[j] in flawed for j in task_order]], dtype=float)
    width = min(18.0, max(8.0, 0.035 * len(task_order) + 4.5))
    height = max(4.0, 0.17 * len(model_order) + 1.8)
    fig, (strip, axis) = plt.subplots(2, 1, figsize=(width, height), sharex=True,
                                      gridspec_kw={"height_ratios": [1, max(8, len(model_order) // 2)]})
    strip.imshow(flagged, aspect="auto", cmap=ListedColormap(["#ffffff", FLAWED_COLOR]), vmin=0, vmax=1,
                 interpolation="nearest")
    strip.set_yticks([0])
    strip.set_yticklabels(["flawed"], fontsize=8, color=FLAWED_COLOR)
    strip.tick_params(axis="x", bottom=False)
    axis.imshow(matrix, aspect="auto", cmap="Greys", vmin=0, vmax=1, interpolation="nearest")
    axis.set_yticks(np.arange(len(model_order)))
    axis.set_yticklabels([results.models[i] for i in model_order], fontsize=6.5)
    step = max(1, len(task_order) // 30)
    ticks = np.arange(0, len(task_order), step)
    axis.set_xticks(ticks)
    axis.set_xticklabels([results.tasks[task_order[j]].split("/")[-1] for j in ticks], fontsize=6.5, rotation=90)
    axis.set_xlabel("task number (sorted by the share of models solving it, easiest first)")
    axis.set_ylabel("model (best pass@1 at the top)")
    strip.set_title(f"{benchmark_name}: per-task outcomes of {len(model_order)} published models "
                    f"(dark = solved), tasks sorted by difficulty; {len(flawed)} flawed tasks marked in red",
                    fontsize=10)
    fig.tight_layout()
    return fig


__all__ = ["outcome_heatmap", "pass_at_1_figure"]
