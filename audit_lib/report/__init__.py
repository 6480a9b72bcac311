"""What notebooks show: the banner, each check, tables, figures, and the per-task drill-down and Explore views.

The public face; `show` renders a check, `tables` / `values` / `split` format its parts, `tasks` and `task_view`
show tasks, and `export`, `evidence` and `page` assemble the HTML report the runner writes.
"""

from audit_lib.report.show import (
    EVIDENCE_SLOT,
    ReportHTML,
    banner,
    check,
    emit,
    findings_table,
    show_check,
    show_figure,
    show_table,
    value_lines,
    value_text,
)
from audit_lib.report.task_view import TaskView
from audit_lib.report.tasks import explore_evidence, explore_task, show_drilldown

__all__ = ["EVIDENCE_SLOT", "ReportHTML", "TaskView", "banner", "check", "emit", "explore_evidence", "explore_task",
           "findings_table", "show_check", "show_drilldown", "show_figure", "show_table", "value_lines", "value_text"]
