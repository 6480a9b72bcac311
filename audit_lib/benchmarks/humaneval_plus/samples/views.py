"""What the report shows of `your_samples` besides the check itself: its opening sentence and three tables.

Each takes the finished check and returns rows (or text); a check that did not run gives none.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any

from audit_lib.findings import Check

USABLE = ("pass", "quirk", "defect")


def headline(check: Check) -> str:
    """The section's opening sentence about the user's pass@1, or why there is none.

    "your pass@1 on HumanEval+ is A %; B % without the N flawed tasks; P of your passes and F of your failures rest
    on them".
    """
    if check.status not in USABLE:
        return f"Your samples were not scored: {check.summary}"
    return str(check.meta.get("headline") or check.finding)


def headline_html(check: Check) -> str:
    """The headline, escaped for the report."""
    return html.escape(headline(check))


def flawed_table(check: Check) -> list[dict[str, Any]]:
    """check -> tasks -> why, over the tasks your samples cover."""
    observed: Mapping[str, Any] = check.observed if isinstance(check.observed, Mapping) else {}
    return [dict(row) for row in observed.get("flawed_table", ())]


def pass_at_k_table(check: Check) -> list[dict[str, Any]]:
    """pass@k on base (and base + plus), with and without the flawed tasks, each with its interval."""
    observed: Mapping[str, Any] = check.observed if isinstance(check.observed, Mapping) else {}
    rows = []
    for split, label in (("base", "base tests"), ("base_plus", "base + plus tests")):
        figures = observed.get(split)
        if not figures:
            continue
        for key in sorted(k for k in figures if k.startswith("pass@") and "_" not in k):
            rows.append({"tests": label, "metric": key, "all covered tasks": figures[key],
                         "95 % interval": figures.get(f"{key}_ci"),
                         "without flawed tasks": figures.get(f"{key}_adjusted"),
                         "interval (adjusted)": figures.get(f"{key}_adjusted_ci"),
                         "adjusted - all, interval": figures.get(f"{key}_adjusted_minus_ci")})
    return rows


def timing_table(check: Check) -> list[dict[str, Any]]:
    """Every verdict a clock decided, with its CPU time alone and its limit (machine-dependent)."""
    observed: Mapping[str, Any] = check.observed if isinstance(check.observed, Mapping) else {}
    return [dict(row) for row in observed.get("timing", ())]


def disagreement_table(check: Check) -> list[dict[str, Any]]:
    """Every split whose verdict differs from the official one, with its cause and evidence."""
    observed: Mapping[str, Any] = check.observed if isinstance(check.observed, Mapping) else {}
    agreement = observed.get("agreement") or {}
    return [dict(row) for row in agreement.get("disagreements", ())]


__all__ = ["USABLE", "disagreement_table", "flawed_table", "headline", "headline_html", "pass_at_k_table",
           "timing_table"]
