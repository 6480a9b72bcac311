"""`audit.task(...)` for IntentSpec on hand-made specs and runs: one verdict row per candidate and constraint."""

from __future__ import annotations

import pytest

from audit_lib.benchmarks.intentspec.audit import Inputs
from audit_lib.benchmarks.intentspec.data import Canonical, Constraint, SpecPair
from audit_lib.benchmarks.intentspec.load import IntentSpecData
from audit_lib.benchmarks.intentspec.replay import ReplayRuns
from audit_lib.benchmarks.intentspec.runs import Candidate, CandidateRun, ConstraintVerdict
from audit_lib.benchmarks.intentspec.tasks import constraint_rows, task_view
from audit_lib.errors import NoTaskViewError, UnknownTaskError

SPEC = SpecPair("HumanEval/7", "ambiguous", "Write `solution` that filters.", "Write `solution` that keeps 'a'.",
                (Constraint("C1", "keeps matches", "assert solution(['a'], 'a') == ['a']"),
                 Constraint("C2", "drops the rest", "assert solution(['b'], 'a') == []")), ("C1",), ("C2",), 1)
CANONICAL = Canonical("HumanEval/7", "f", "def f(xs, s):\n", "    return [x for x in xs if s in x]\n",
                      "def f(xs, s):\n    return [x for x in xs if s in x]\n", 1)


def _verdict(constraint: str, status: str, error: str | None = None, exit_code: int | None = None) -> ConstraintVerdict:
    return ConstraintVerdict(constraint, status, "AssertionError" if error else None, error, "", exit_code, 0.02,
                             trust="judge")


def _run(kind: str, label: str, sample: int, *verdicts: ConstraintVerdict) -> CandidateRun:
    return CandidateRun(Candidate(kind, label, SPEC.task_id, sample, "def solution(*a): ..."), verdicts)


CANONICAL_RUN = _run("canonical", "canonicals.jsonl", 0, _verdict("C1", "pass"), _verdict("C2", "pass"))
GENERATION_RUN = _run("generation", "gpt-4_1", 3, _verdict("C1", "pass"), _verdict("C2", "fail", "kept 'b'"))


def test_constraint_rows_name_the_candidate_role_and_what_failed() -> None:
    rows = constraint_rows(SPEC, GENERATION_RUN)
    assert [(r["solution"], r["input_id"], r["role"], r["status"]) for r in rows] == [
        ("generation:gpt-4_1#3", "C1", "stated", "pass"), ("generation:gpt-4_1#3", "C2", "hidden", "fail")]
    assert rows[1]["input"] == SPEC.constraints[1].test_code and rows[1]["expected"] == "assertions hold"
    assert rows[1]["got"] == "fail: AssertionError: kept 'b'" and rows[1]["description"] == "drops the rest"


def _inputs(selected: tuple[str, ...] = ("HumanEval/7",)) -> Inputs:
    data = IntentSpecData((SPEC,), (CANONICAL,), selected, (), (), {}, ())
    inputs = Inputs(data)
    vars(inputs)["replay"] = ReplayRuns({SPEC.task_id: CANONICAL_RUN}, {}, (GENERATION_RUN,), (), 0.1)
    return inputs


def test_task_view_reads_the_audits_runs() -> None:
    view = task_view(_inputs(), None, "HumanEval/7")
    assert view.prompt == SPEC.ambiguous_prompt and view.context["gold prompt"] == SPEC.gold_prompt
    assert view.solutions == {"canonical": CANONICAL.full_source}
    assert list(view.verdicts["solution"].unique()) == ["canonical", "generation:gpt-4_1#3"]
    assert list(view.failing["input_id"]) == ["C2"]
    assert "C2 (hidden): drops the rest" in view.context["constraints"]


def test_unknown_or_unselected_task_and_no_data() -> None:
    with pytest.raises(UnknownTaskError, match=r"no task 'HumanEval/70' among the tasks of spec_pairs.jsonl .*"
                                               r"near matches: HumanEval/7"):
        task_view(_inputs(), None, "HumanEval/70")
    with pytest.raises(UnknownTaskError, match="among the 0 tasks this session selected"):
        task_view(_inputs(selected=()), None, "HumanEval/7")
    empty = Inputs(IntentSpecData((), (), (), (), (), {}, (), {"intentspec/spec_pairs.jsonl": "not in the mirror"}))
    with pytest.raises(NoTaskViewError, match="no tasks loaded: intentspec/spec_pairs.jsonl: not in the mirror"):
        task_view(empty, None, "HumanEval/7")
