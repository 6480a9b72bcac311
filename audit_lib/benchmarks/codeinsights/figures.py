"""The pattern figure: lengths and failing bits of each row's `pass` pattern, as written vs after `int()`."""

from __future__ import annotations

from matplotlib.figure import Figure

from audit_lib.benchmarks.codeinsights.facts import EdgeCaseAudit
from audit_lib.benchmarks.codeinsights.synthetic import SUBMISSIONS_FILE


def pattern_figure(audit: EdgeCaseAudit) -> Figure:
    """Pattern lengths and failing-bit counts per row: as written vs after `int()`."""
    true_rows = [r for r in audit.rows if r.pattern_true is not None]
    after_rows = [r for r in audit.rows if r.pattern_after_int is not None]
    fig = Figure(figsize=(11, 4))
    left, right = fig.subplots(1, 2)
    length_bins = range(0, max([len(r.pattern_true) for r in true_rows] + [1]) + 2)
    left.hist([[len(r.pattern_true) for r in true_rows], [len(r.pattern_after_int) for r in after_rows]],
              bins=length_bins, label=["as written (text)", "after int() (HELM)"], align="left")
    left.set_xlabel("pattern length (bits)")
    left.set_ylabel("rows")
    left.legend()
    zero_bins = range(0, max([r.pattern_true.count(0) for r in true_rows] + [1]) + 2)
    right.hist([[r.pattern_true.count(0) for r in true_rows], [r.pattern_after_int.count(0) for r in after_rows]],
               bins=zero_bins, label=["as written (text)", "after int() (HELM)"], align="left")
    right.set_xlabel("failing bits (zeros) per pattern")
    right.legend()
    title = f"{len(audit.rows)} rows of {SUBMISSIONS_FILE}"
    fig.suptitle(title + (" — SYNTHETIC DATA" if audit.data.synthetic else ""))
    fig.tight_layout()
    return fig
