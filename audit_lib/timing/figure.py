"""Failing tasks (inputs, runs) against machine speed, from a check's `speed_curve`; matplotlib only when drawn."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def speed_figure(curves: Mapping[str, Sequence[Sequence[float]]], *, title: str, unit: str = "tasks",
                 limit_note: str = "the 1 s floor does not", counted: str = "") -> Any:
    """One line per solution (or variant): failing `unit` at each speed factor.

    Failing is deterministic + timing-only, the deterministic floor dashed. `curves`: name -> [(speed factor, failing,
    of which timing-only), ...]; `counted` names what is counted when it is not "failing <unit>"."""
    counted = counted or f"failing {unit}"
    curves = {name: curve for name, curve in curves.items() if curve}
    if not curves:
        return None
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    fig, ax = plt.subplots(figsize=(9.0, 3.6))
    for name, curve in curves.items():
        speeds = [point[0] for point in curve]
        line, = ax.plot(speeds, [point[1] for point in curve], marker="o", label=f"{name}: {counted}")
        ax.plot(speeds, [point[1] - point[2] for point in curve], linestyle="--", color=line.get_color(),
                label=f"{name}: deterministic only")
    ax.axvline(1.0, color="grey", linewidth=0.8)
    ax.set_xscale("log", base=2)
    ax.set_xticks([point[0] for point in next(iter(curves.values()))],
                  labels=[f"{point[0]:g}x" for point in next(iter(curves.values()))])
    ax.tick_params(axis="x", labelsize=7)
    ax.set_xlabel(f"machine speed relative to this one (CPU time scales as 1/speed; {limit_note})")
    ax.set_ylabel(counted)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # counts of tasks, inputs or runs
    ax.set_ylim(bottom=0)  # counts from zero: a narrow automatic range makes one input look like a cliff
    ax.set_title(title + flat_note(curves, counted), fontsize=10)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # outside: never over a line
    fig.tight_layout()
    return fig


def flat_note(curves: Mapping[str, Sequence[Sequence[float]]], counted: str) -> str:
    """A title's second line when no curve moves with speed: a flat line is the finding, said in words."""
    if any(len({point[1] for point in curve}) > 1 for curve in curves.values()):
        return ""
    levels = " / ".join(f"{level:,}" for level in sorted({int(curve[0][1]) for curve in curves.values()}))
    if all(point[2] == 0 for curve in curves.values() for point in curve):
        return f"\nflat: {levels} {counted} at every speed, none of them timing-dependent"
    return f"\nflat: {levels} {counted} at every speed shown"


def speed_figure_of(check: Any, *, name: str = "this run") -> Any:
    """A check's own `observed["speed_curve"]` as a figure, or None when it has none.

    The unit comes from its `meta["failure_split"]`. Limits that do not scale with a reference are fixed."""
    observed = check.observed if isinstance(check.observed, dict) else {}
    if check.status in ("skipped", "error") or not observed.get("speed_curve"):
        return None
    unit = str(check.meta.get("failure_split", {}).get("unit", "runs"))
    return speed_figure({name: observed["speed_curve"]}, unit=unit, limit_note="a fixed limit does not",
                        title=f"Failing {unit} vs machine speed ({check.id}, CPU time)")


__all__ = ["flat_note", "speed_figure", "speed_figure_of"]
