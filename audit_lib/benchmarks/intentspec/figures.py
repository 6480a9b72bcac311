"""The notebook's IVR-per-task table and heatmap (matplotlib is imported only when a figure is drawn)."""

from __future__ import annotations

from typing import Any

from audit_lib.benchmarks.intentspec.checks_replay import model_replays
from audit_lib.benchmarks.intentspec.load import IntentSpecData
from audit_lib.benchmarks.intentspec.replay import ReplayRuns
from audit_lib.plugin import AuditSession


def ivr_rows_for(audit: AuditSession[Any, Any]) -> list[dict[str, Any]]:
    """The IVR-per-task rows of a notebook's session (none when `ivr_replay` could not run).

    Its finding says why, so the figure cell never fails where the check did not."""
    if audit.run("ivr_replay").status in ("skipped", "error"):
        return []
    return ivr_per_task_table(audit.inputs.data, audit.inputs.runs)


def ivr_per_task_table(data: IntentSpecData, runs: ReplayRuns) -> list[dict[str, Any]]:
    """One row per task: replayed and published IVR per model (None = excluded, no stated-passing solution)."""
    replays = model_replays(data.selected_specs, list(runs.generations), data.published)
    rows = []
    for spec in data.selected_specs:
        row: dict[str, Any] = {"task_id": spec.task_id}
        for replay in replays:
            ours = replay.replayed_task_ivr.get(spec.task_id)
            theirs = replay.published_task_ivr.get(spec.task_id)
            row[f"{replay.model} replayed"] = None if ours is None else ours.ivr
            row[f"{replay.model} published"] = None if theirs is None else theirs.ivr
        rows.append(row)
    return rows


def task_order(task_id: str) -> tuple[str, int, str]:
    """`HumanEval/9` before `HumanEval/10`: by prefix, then the number after the last `/` (text after numbers)."""
    prefix, _, number = task_id.rpartition("/")
    return (prefix, int(number), "") if number.isdigit() else (prefix, -1, number)


def plot_ivr_per_task(rows: list[dict[str, Any]]):
    """Heatmap of IVR per task (columns) per model and source (rows); grey = excluded (no stated-passing solution)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    import numpy as np

    if not rows:
        return None
    rows = sorted(rows, key=lambda row: task_order(str(row["task_id"])))
    series = [key for key in rows[0] if key != "task_id"]
    matrix = np.array([[np.nan if row[key] is None else row[key] for row in rows] for key in series], dtype=float)
    fig, ax = plt.subplots(figsize=(max(6.0, 0.26 * len(rows) + 2.5), 0.55 * len(series) + 1.6))
    cmap = matplotlib.colormaps["viridis"].with_extremes(bad="#d0d7de")
    image = ax.imshow(np.ma.masked_invalid(matrix), aspect="auto", cmap=cmap, vmin=0.0, vmax=1.0)
    ax.set_yticks(range(len(series)), labels=series)
    ax.set_xticks(range(len(rows)), labels=[row["task_id"].split("/")[-1] for row in rows], rotation=90, fontsize=7)
    ax.set_xlabel("HumanEval task")
    ax.set_title("IntentSpec IVR per task (grey: no stated-passing solution, excluded from the mean)")
    fig.colorbar(image, ax=ax, label="IVR", fraction=0.03)
    fig.tight_layout()
    return fig


def your_ivr_rows(audit: AuditSession[Any, Any]) -> list[dict[str, Any]]:
    """Your model(s) beside the published ones on the same tasks, or none when `your_generations` did not run."""
    check = audit.run("your_generations")
    if check.status in ("skipped", "error"):
        return []
    return list(check.observed["comparison"])
