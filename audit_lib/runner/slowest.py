"""The slowest checks of a batch, from the cost each check recorded (`meta["cost"]`), for the runner to print."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from audit_lib.check_cost import CheckCost

SLOWEST_SHOWN = 5


@dataclass(frozen=True)
class CheckTime:
    """One check's cost in this run, named by its audit and id."""

    audit: str
    check: str
    cost: CheckCost


def slowest_checks(checks_by_audit: Mapping[str, Sequence[Mapping[str, Any]]],
                   limit: int = SLOWEST_SHOWN) -> list[CheckTime]:
    """The `limit` checks with the longest wall time, longest first (ties: audit, then check id).

    Takes the checks as the index digests them (`cost` copied from `meta`) or as findings hold them (`meta.cost`);
    a check that recorded no cost is left out."""
    timed = []
    for audit, checks in checks_by_audit.items():
        for check in checks:
            cost = CheckCost.from_meta({"cost": check["cost"]} if "cost" in check else check.get("meta"))
            if cost is not None:
                timed.append(CheckTime(audit, str(check.get("id")), cost))
    timed.sort(key=lambda item: (-item.cost.wall_s, item.audit, item.check))
    return timed[:limit]


def slowest_lines(times: Sequence[CheckTime]) -> list[str]:
    """The runner's closing table: audit.check, wall, CPU (kernel + children), sandbox jobs; machine-dependent."""
    if not times:
        return []
    width = max(len(f"{t.audit}.{t.check}") for t in times)
    lines = ["slowest checks (measured on this machine in this run; wall, CPU = kernel + its child processes, "
             "sandbox jobs):"]
    for item in times:
        cost = item.cost
        name = f"{item.audit}.{item.check}"
        jobs = "-" if cost.sandbox_jobs is None else f"{cost.sandbox_jobs:,}"
        lines.append(f"    {name:<{width}}  {cost.wall_s:8.1f} s  {cost.total_cpu_s:8.1f} s CPU "
                     f"({cost.cpu_s:.1f} + {cost.children_cpu_s:.1f})  {jobs:>7} jobs")
    return lines


__all__ = ["SLOWEST_SHOWN", "CheckTime", "slowest_checks", "slowest_lines"]
