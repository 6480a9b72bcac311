"""The HumanEval+ audit through its session on hand-made files: shared runs, needs, and what a skip names."""

from __future__ import annotations

import dataclasses
import gzip
import json
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from audit_lib.benchmarks.humaneval_plus import replay
from audit_lib.benchmarks.humaneval_plus.audit import AUDIT
from audit_lib.benchmarks.humaneval_plus.data import (
    HUMANEVAL_ERRATA,
    HUMANEVAL_PLUS,
    HUMANEVAL_PLUS_MINI,
    HUMANEVAL_PLUS_NOEXTREME,
    HUMANEVAL_PLUS_V019,
    OPENAI_HUMANEVAL,
    LoadedPlus,
    PlusTask,
)
from audit_lib.benchmarks.humaneval_plus.inputs import Inputs, source_key
from audit_lib import sandbox
from audit_lib.data import fetch
from audit_lib.plugin import AuditSession

PROMPTS = {"square": 'def square(x):\n    """doc"""\n', "half": 'def half(x):\n    """doc"""\n'}
CONTRACT = '    assert isinstance(x, int), "invalid inputs" # $_CONTRACT_$\n'
SQUARE = PlusTask("T/0", PROMPTS["square"], "square", "    return x * x\n", CONTRACT, ((2,),),
                  ((3,), (-4,), (10,), (7,)), 0.0, None, 1)
HALF = PlusTask("T/1", PROMPTS["half"], "half", "    return x / 3\n", "", ((1,),), ((2,), (3,)), 0.0, None, 2)
FULL = (SQUARE, HALF)
# OpenAI's canonical for T/0 is wrong on x=10 only; the toy -Mini drops that input, so it would accept it.
OPENAI_BODIES = {"T/0": "    return x * x if x != 10 else 99\n", "T/1": "    return x / 3\n"}
MINI = (dataclasses.replace(SQUARE, plus_input=((3,), (7,))), HALF)
# The errata rewrites T/0's canonical (to a right one) and leaves T/1 alone.
ERRATA_BODIES = {"T/0": "    return x ** 2\n", "T/1": OPENAI_BODIES["T/1"]}
NOT_HERE = "not in this test's files"


def _provenance(file: str) -> fetch.Provenance:
    return fetch.Provenance("toy", file, "cache", file, "0" * 64, True, False, "test", "test")


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> fetch.FetchedFile:
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.writelines(json.dumps(row) + "\n" for row in rows)
    return fetch.FetchedFile(path, _provenance(path.name))


def _plus_rows(tasks: tuple[PlusTask, ...]) -> list[dict[str, Any]]:
    return [{"task_id": t.task_id, "prompt": t.prompt, "entry_point": t.entry_point,
             "canonical_solution": t.canonical_solution, "contract": t.contract, "base_input": list(t.base_input),
             "plus_input": list(t.plus_input), "atol": t.atol} for t in tasks]


def toy_inputs(folder: Path, *, files: tuple[tuple[str, str], ...], tasks: tuple[PlusTask, ...] = FULL,
               task_ids: tuple[str, ...] = ()) -> Inputs:
    """HumanEval+ inputs over `tasks` where only `files` (of OpenAI HumanEval and -Mini) exist."""
    writers = {
        OPENAI_HUMANEVAL: lambda path: _write_jsonl(path, [
            {"task_id": t.task_id, "prompt": t.prompt, "entry_point": t.entry_point,
             "canonical_solution": OPENAI_BODIES[t.task_id], "test": "def check(candidate):\n    pass\n"}
            for t in FULL]),
        HUMANEVAL_PLUS_MINI: lambda path: _write_jsonl(path, _plus_rows(MINI)),
        HUMANEVAL_ERRATA: lambda path: _write_jsonl(path, [
            {"task_id": t.task_id, "prompt": t.prompt, "entry_point": t.entry_point,
             "canonical_solution": ERRATA_BODIES[t.task_id], "test": "def check(candidate):\n    pass\n"}
            for t in FULL]),
    }
    fetched = {source_key(source): writers[source](folder / source[1].replace("/", "_")) for source in files}
    others = (OPENAI_HUMANEVAL, HUMANEVAL_PLUS_MINI, HUMANEVAL_PLUS_NOEXTREME, HUMANEVAL_PLUS_V019, HUMANEVAL_ERRATA)
    missing = {source_key(source): f"{source_key(source)}: {NOT_HERE}" for source in others if source not in files}
    plus = LoadedPlus("humaneval", tasks, _provenance("toy-plus"), "toy-plus")
    return Inputs("humaneval", plus, {source_key(HUMANEVAL_PLUS): fetch.FetchedFile(Path("toy"), plus.provenance),
                                      **fetched}, missing, task_ids=task_ids)


def session_over(inputs: Inputs, params: Mapping[str, Any] | None = None) -> AuditSession[Any, Any]:
    return dataclasses.replace(AUDIT, load=lambda _params: inputs).session(dict(params or {}))


@pytest.fixture()
def counted_candidate_runs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = replay.run_candidate

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(replay, "run_candidate", counting)
    return calls


def test_variants_judges_detection_without_original_canonical_run_first(
        tmp_path: Path, isolated_cache: Path, counted_candidate_runs: list[int]) -> None:
    audit = session_over(toy_inputs(tmp_path, files=(OPENAI_HUMANEVAL, HUMANEVAL_PLUS_MINI)))
    variants = audit.run("variants")
    assert variants.status == "quirk"
    assert variants.observed["HumanEvalPlus-Mini"]["tasks_detection_lost"] == ["T/0"]
    assert variants.meta["detection_power"] == "judged against OpenAI's original canonical solution"
    assert "HumanEvalPlus-NoExtreme" in variants.meta["unavailable"]
    original = audit.run("original_canonical_vs_plus")
    assert original.status == "quirk" and original.observed["tasks_disagreeing"] == 1
    assert len(counted_candidate_runs) == 1  # OpenAI's canonical ran once, for both checks


def test_the_errata_diff_variants_and_replay_run_each_canonical_on_each_input_once(
        tmp_path: Path, isolated_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runs: Counter[tuple[str, str]] = Counter()  # (which T/0 canonical, input) -> times run
    bodies = {"evalplus": SQUARE.canonical_solution, "openai": OPENAI_BODIES["T/0"], "errata": ERRATA_BODIES["T/0"]}
    real = sandbox.run_many

    def counting(jobs: Any, *args: Any, **kwargs: Any) -> Any:
        jobs = list(jobs)
        for job in jobs:
            which = [name for name, body in bodies.items() if isinstance(job, sandbox.CallJob) and body in job.program]
            runs.update((which[0], repr(args_)) for args_ in (job.inputs if which else ()))
        return real(jobs, *args, **kwargs)

    monkeypatch.setattr(sandbox, "run_many", counting)
    audit = session_over(toy_inputs(tmp_path, files=(OPENAI_HUMANEVAL, HUMANEVAL_PLUS_MINI, HUMANEVAL_ERRATA)))
    assert audit.run("original_canonical_vs_plus").observed["tasks_disagreeing"] == 1
    assert audit.run("variants").observed["HumanEvalPlus-Mini"]["tasks_detection_lost"] == ["T/0"]
    errata = audit.run("errata_diff")
    assert errata.observed["canonical_changed"] == 1 and errata.observed["canonical_indistinguishable"] == []
    row = next(row for row in errata.details if row["task_id"] == "T/0")
    assert row["inputs_separating_canonicals"] == 1 and row["first_separating_input"] == "(10,)"
    assert row["first_difference"].startswith("errata passes; original fails (wrong_value)")
    assert {which for which, _ in runs} == {"evalplus", "openai", "errata"}
    assert [key for key, times in runs.items() if times > 1] == []


def test_variants_without_openai_humaneval_reports_structure_only(tmp_path: Path, isolated_cache: Path) -> None:
    inputs = dataclasses.replace(toy_inputs(tmp_path, files=(HUMANEVAL_PLUS_MINI,), tasks=FULL[:1]), max_tasks=1)
    check = session_over(inputs).run("variants")
    assert check.status == "pass"
    assert check.observed["HumanEvalPlus-Mini"]["tasks"] == 1  # max_tasks: the variant is cut to the loaded tasks
    assert check.observed["HumanEvalPlus-Mini"]["tasks_only_in_variant"] == []
    assert check.meta["detection_power"] == f"skipped: OpenAI HumanEval unavailable: humaneval/HumanEval.jsonl.gz: " \
                                            f"{NOT_HERE}"


def test_no_variant_file_skips_naming_both(tmp_path: Path) -> None:
    check = session_over(toy_inputs(tmp_path, files=(OPENAI_HUMANEVAL,))).run("variants")
    assert check.status == "skipped"
    assert check.meta["missing"] == [source_key(HUMANEVAL_PLUS_MINI), source_key(HUMANEVAL_PLUS_NOEXTREME)]
    assert f"HumanEvalPlus-Mini: {source_key(HUMANEVAL_PLUS_MINI)}: {NOT_HERE}" in check.summary


@pytest.mark.parametrize("check_id, missing", [
    ("original_canonical_vs_plus", [source_key(OPENAI_HUMANEVAL)]),
    ("original_tests_vs_canonical", [source_key(OPENAI_HUMANEVAL)]),
    ("version_diff", [source_key(HUMANEVAL_PLUS_V019)]),
    ("errata_diff", [source_key(OPENAI_HUMANEVAL), source_key(HUMANEVAL_ERRATA)]),
])
def test_a_check_missing_a_file_is_skipped_naming_it(tmp_path: Path, check_id: str, missing: list[str]) -> None:
    check = session_over(toy_inputs(tmp_path, files=(HUMANEVAL_PLUS_MINI,))).run(check_id)
    assert check.status == "skipped" and check.meta["missing"] == missing
    assert NOT_HERE in check.summary


def test_a_selection_with_nothing_to_judge_names_the_parameter(tmp_path: Path) -> None:
    inputs = toy_inputs(tmp_path, files=(), tasks=(HALF,), task_ids=("T/1",))  # HALF has no contract
    check = session_over(inputs, {"task_ids": "T/1"}).run("contract_violations")
    assert check.status == "skipped" and check.meta["missing"] == ["param:task_ids"]
    assert "none of the 1 task(s) has a contract" in check.summary


def test_pass_at_k_needs_no_data(tmp_path: Path) -> None:
    inputs = dataclasses.replace(toy_inputs(tmp_path, files=()), plus=None,
                                 missing={source_key(HUMANEVAL_PLUS): f"HumanEvalPlus.jsonl.gz: {NOT_HERE}"})
    audit = session_over(inputs)
    assert audit.run("pass_at_k").status == "pass"
    ground_truth = audit.run("ground_truth")
    assert ground_truth.status == "skipped" and ground_truth.meta["missing"] == [source_key(HUMANEVAL_PLUS)]


def test_amplification_scatter_labels_a_narrow_range_of_base_inputs() -> None:
    # MBPP+ tasks have 3 to 7 base inputs: a symlog axis put its ticks at decades and left that range unlabelled
    from audit_lib.benchmarks.humaneval_plus.checks_static import amplification_figure

    tasks = [PlusTask(f"T/{n}", "", "f", "", "", ((1,),) * n, ((2,),) * 10, 0.0, None, n) for n in (3, 4, 7)]
    figure = amplification_figure(tasks)
    axis = figure.axes[1].xaxis
    shown = [t for t in axis.get_majorticklocs() if 3 <= t <= 7]
    assert len(shown) >= 3
    assert [axes.get_title() for axes in figure.axes] == ["Plus inputs per task (3 tasks)",
                                                          "Plus against base inputs, one dot per task"]
