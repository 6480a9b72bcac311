"""`audit.task(id)` on hand-made fixtures: the view, an unknown id, an audit without tasks; the per-task drill-down
(what it shows for a failing task, nothing for passing ones, its size cap) and the notebooks' Explore helpers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from audit_lib.errors import NoTaskViewError, UnknownTaskError
from audit_lib.findings import Result
from audit_lib.plugin import AuditPlugin, CheckSpec, param
from audit_lib.report.tasks import drilldown_markup, explore_evidence, explore_task
from audit_lib.report.task_view import VERDICT_COLUMNS, TaskView, near_matches, unknown_task, verdict_frame

LONG_INPUT = "[" + ", ".join(str(n) for n in range(400)) + "]"


@dataclass(frozen=True)
class Params:
    prompt_lines: int = param(3, "lines in each task's prompt", minimum=1)


@dataclass(frozen=True)
class Task:
    task_id: str
    prompt: str
    canonical: str
    cases: tuple[tuple[str, str, str], ...]  # (input, expected, got)


@dataclass(frozen=True)
class Inputs:
    tasks: Mapping[str, Task]
    provenance: tuple[Any, ...] = ()
    missing: Mapping[str, str] = field(default_factory=dict)


def _load(params: Params) -> Inputs:
    def task(number: int, cases: tuple[tuple[str, str, str], ...]) -> Task:
        prompt = "\n".join(f"PROMPT-{number} line {line}" for line in range(params.prompt_lines))
        return Task(f"T/{number}", prompt, f"def f(x):\n    return x  # CANONICAL-{number}\n", cases)

    return Inputs({t.task_id: t for t in (
        task(1, (("[1]", "1", "1"), ("[2]", "4", "5"), (LONG_INPUT, "9", "RecursionError: deep"))),
        task(2, (("[3]", "9", "9"),)),
        task(10, (("[0]", "0", "0"),)),
    )}, missing={"toy/absent.txt": "toy/absent.txt is not published"})


def _rows(task: Task) -> list[dict[str, Any]]:
    return [{"solution": "canonical", "input_id": f"plus[{i}]", "input": given, "expected": want, "got": got,
             "status": "pass" if want == got else "fail", "kind": "match" if want == got else "wrong_value",
             "cause": None if want == got else "deterministic", "wall_s": 0.01 * (i + 1), "cpu_s": 0.01}
            for i, (given, want, got) in enumerate(task.cases)]


def _task_view(inputs: Inputs, params: Params, task_id: str) -> TaskView:
    if task_id not in inputs.tasks:
        raise unknown_task(task_id, list(inputs.tasks), scope="the toy tasks")
    task = inputs.tasks[task_id]
    return TaskView("?", task_id, task.prompt, {"canonical": task.canonical}, verdict_frame(_rows(task)))


def _wrong_outputs(inputs: Inputs, params: Params) -> Result:
    rows = [{"task_id": t.task_id, "failing_inputs": sum(w != g for _, w, g in t.cases)}
            for t in inputs.tasks.values() if any(w != g for _, w, g in t.cases)]
    return Result("defect" if rows else "pass", observed={"tasks": len(rows)}, summary=f"{len(rows)} task(s) fail",
                  details=rows)


def _all_tasks_listed(inputs: Inputs, params: Params) -> Result:
    return Result("pass", summary="all listed", details=[{"task_id": task_id} for task_id in inputs.tasks])


def _needs_a_file(inputs: Inputs, params: Params) -> Result:
    raise AssertionError("never called: its need is missing")


SPECS = (CheckSpec("wrong_outputs", "Every canonical output is right", _wrong_outputs),
         CheckSpec("listed", "Every task is listed", _all_tasks_listed),
         CheckSpec("needs_file", "Reads a file that is not there", _needs_a_file, needs=("toy/absent.txt",)))
WITH_TASKS = AuditPlugin("toy_tasks", "Toy with tasks", Params, _load, SPECS, task_view=_task_view)
WITHOUT_TASKS = AuditPlugin("toy_no_tasks", "Toy without tasks", Params, _load, SPECS)


def _session(plugin: AuditPlugin = WITH_TASKS, **raw: Any) -> Any:
    return plugin.session(raw, out_dir="unused")


def test_task_returns_prompt_canonical_and_every_verdict() -> None:
    audit = _session()
    audit.run("wrong_outputs")
    view = audit.task("T/1")
    assert (view.audit, view.task_id) == ("toy_tasks", "T/1")
    assert view.prompt.startswith("PROMPT-1") and "CANONICAL-1" in view.solutions["canonical"]
    assert list(view.verdicts.columns) == list(VERDICT_COLUMNS)
    assert len(view.verdicts) == 3 and list(view.failing["input_id"]) == ["plus[1]", "plus[2]"]
    assert list(view.failing["expected"]) == ["4", "9"] and list(view.failing["got"]) == ["5", "RecursionError: deep"]
    assert list(view.evidence["check"]) == ["wrong_outputs"]  # the task's rows in the checks run so far
    assert view.summary() == "toy_tasks T/1: 3 verdicts over 1 solution, 2 not passing"


def test_task_view_renders_in_jupyter_and_in_a_terminal() -> None:
    view = _session().task("T/1")
    markup = view._repr_html_()
    assert "PROMPT-1 line 0" in markup and "CANONICAL-1" in markup
    # failing rows come first, and a long value is collapsed with its start as the summary
    assert markup.index("RecursionError") < markup.index("<td>plus[0]</td>")
    assert "<details><summary><code>[0, 1, 2, 3" in markup and LONG_INPUT[:500] in markup
    assert "measured on the machine that ran the audit (machine-dependent)" in markup
    text = str(view)
    assert text.startswith("toy_tasks T/1: 3 verdicts") and "PROMPT-1 line 0" in text
    assert "not passing (2;" in text and "RecursionError: deep" in text


def test_unknown_task_id_names_the_near_matches() -> None:
    with pytest.raises(UnknownTaskError) as caught:
        _session().task("t/1")
    message = str(caught.value)
    assert message.startswith("toy_tasks: no task 't/1' among the toy tasks (3 tasks: T/1, T/2, T/10)")
    assert caught.value.fields["near_matches"][0] == "T/1" and caught.value.fields["audit"] == "toy_tasks"
    assert near_matches("T/100", ["T/1", "T/10", "T/2"])[0] == "T/10"
    assert near_matches("HumanEval/32", ["Mbpp/32", "Mbpp/2"]) == ["Mbpp/32"]
    assert near_matches("zzz", ["T/1"]) == []


def test_an_audit_without_tasks_says_so_and_lists_its_checks() -> None:
    with pytest.raises(NoTaskViewError, match=r"toy_no_tasks offers no per-task view .*wrong_outputs, listed"):
        _session(WITHOUT_TASKS).task("T/1")


def test_a_failed_load_is_no_task_view_naming_the_error() -> None:
    def broken_load(params: Params) -> Inputs:
        raise OSError("disk on fire")

    plugin = AuditPlugin("toy_broken", "Broken", Params, broken_load, SPECS, task_view=_task_view)
    with pytest.raises(NoTaskViewError, match="loading the inputs failed: OSError: disk on fire"):
        _session(plugin).task("T/1")


def test_drilldown_shows_each_failing_task_with_prompt_canonical_and_expected_vs_got() -> None:
    markup = drilldown_markup(_session(), "wrong_outputs")
    assert markup.startswith('<details class="task-drilldown" data-check="wrong_outputs">')
    assert markup.count('<details class="task">') == 1
    assert "PROMPT-1 line 0" in markup and "CANONICAL-1" in markup
    assert "<td>4</td><td>5</td>" in markup  # expected vs got of the failing input
    assert "RecursionError: deep" in markup
    assert "<td>plus[0]</td>" not in markup  # its passing input is left out
    assert "PROMPT-2" not in markup and "PROMPT-10" not in markup  # passing tasks have no section


def test_drilldown_is_empty_for_a_passing_check_and_filters_solutions() -> None:
    audit = _session()
    assert drilldown_markup(audit, "listed") == ""
    assert drilldown_markup(audit, "needs_file") == ""  # skipped: no rows, nothing to drill into
    only_check_rows = drilldown_markup(audit, "wrong_outputs", solutions=[])
    assert "PROMPT-1 line 0" in only_check_rows and "RecursionError" not in only_check_rows
    assert "RecursionError" not in drilldown_markup(audit, "wrong_outputs", solutions=["reference"])


def test_drilldown_keeps_to_its_byte_budget_and_says_how_many_tasks_it_left_out() -> None:
    audit = _session(prompt_lines=2000)  # ~40 kB of prompt per task
    def failing_everywhere(inputs: Inputs, params: Params) -> Result:
        return Result("defect", summary="all fail", details=[{"task_id": task_id} for task_id in inputs.tasks])
    audit._specs["wrong_outputs"] = CheckSpec("wrong_outputs", "t", failing_everywhere)
    full = drilldown_markup(audit, "wrong_outputs", budget_bytes=10_000_000)
    assert full.count('<details class="task">') == 3 and "not shown here" not in full
    capped = drilldown_markup(audit, "wrong_outputs", budget_bytes=len(full) // 2)
    assert len(capped.encode()) <= len(full) // 2
    assert capped.count('<details class="task">') == 1
    assert "2 more tasks not shown here (this report keeps 1 to stay small)" in capped
    assert "evidence download" in capped
    assert drilldown_markup(audit, "wrong_outputs", max_tasks=2).count('<details class="task">') == 2


def test_explore_helpers_show_a_note_instead_of_failing() -> None:
    audit = _session()
    assert explore_evidence(audit, "needs_file") is None  # skipped
    assert explore_evidence(audit, "no_such_check") is None
    assert len(explore_evidence(audit, "wrong_outputs")) == 1
    assert explore_task(audit, "T/99") is None
    assert explore_task(_session(WITHOUT_TASKS), "T/1") is None
    assert explore_task(audit, "T/1").task_id == "T/1"


def test_explore_notes_say_why(monkeypatch: pytest.MonkeyPatch) -> None:
    shown: list[str] = []
    monkeypatch.setattr("audit_lib.report.tasks.emit", lambda markup: shown.append(markup))
    audit = _session()
    explore_evidence(audit, "needs_file")
    explore_task(audit, "T/100")
    explore_evidence(audit, "wrong_outputs")
    assert "the check is <b>skipped</b>" in shown[0] and "toy/absent.txt" in shown[0]
    assert "nothing to show" in shown[1] and "near matches: T/10" in shown[1]
    assert "a DataFrame of 1 row × 2 columns" in shown[2]


def test_drilldown_of_a_task_whose_verdicts_all_pass_shows_the_checks_rows() -> None:
    audit = _session()
    def names_a_passing_task(inputs: Inputs, params: Params) -> Result:
        return Result("quirk", summary="T/2 is odd", details=[{"task_id": "T/2", "why": "odd"}])
    audit._specs["wrong_outputs"] = CheckSpec("wrong_outputs", "t", names_a_passing_task)
    markup = drilldown_markup(audit, "wrong_outputs", solutions=["canonical"])
    assert "<code>T/2</code> — 1 row in this check" in markup and "PROMPT-2" in markup and "<td>odd</td>" in markup
