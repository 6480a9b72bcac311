"""The inventory at a glance: files per dataset and state (figure), one overview line per file."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from audit_lib.benchmarks.data_inventory.inventory import FileInventory


def state_figure(inventories: Sequence[FileInventory]) -> Any:
    """Horizontal stacked bars: per dataset, how many files are ok, unavailable, mismatched or unreadable."""
    import matplotlib.pyplot as plt

    datasets = list(dict.fromkeys(item.source.dataset for item in inventories))
    colours = {"ok": "#1a7f37", "unavailable": "#6e7781", "checksum_mismatch": "#cf222e", "unreadable": "#bc4c00"}
    fig, ax = plt.subplots(figsize=(7, 0.5 + 0.45 * max(1, len(datasets))))
    left = [0] * len(datasets)
    for state, colour in colours.items():
        counts = [sum(1 for i in inventories if i.source.dataset == d and i.state == state) for d in datasets]
        if any(counts):
            ax.barh(datasets, counts, left=left, color=colour, label=state)
            left = [a + b for a, b in zip(left, counts)]
    ax.set_xlabel("registered files")
    ax.set_title("Registered files by dataset and state")
    ax.invert_yaxis()
    if inventories:
        ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    return fig


def overview_rows(inventories: Sequence[FileInventory]) -> list[dict[str, Any]]:
    """One line per file for the notebook's overview table."""
    rows = []
    for item in inventories:
        provenance = item.provenance
        rows.append({
            "file": item.source.key,
            "state": item.state,
            "source": provenance.source if provenance else "—",
            "pinned": item.source.pinned,
            "bytes": item.size_bytes,
            "rows": item.rows,
            "unit": item.row_kind if item.rows is not None else "",
            "columns": len(item.columns) if item.columns else None,
            "null cells": sum(c.nulls for c in item.columns) if item.columns else None,
            "sha256": (item.actual_sha256 or "")[:12],
        })
    return rows


def state_counts(inventories: Sequence[FileInventory]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for item in inventories:
        counts[item.state] = counts.get(item.state, 0) + 1
    return counts
