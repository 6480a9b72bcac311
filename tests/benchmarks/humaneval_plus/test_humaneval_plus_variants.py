"""The `variants` check: reduced EvalPlus files against the full one, on hand-made tasks and on the real mirror."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from audit_lib.benchmarks.humaneval_plus.checks_variants import index_ranges, variants_from
from audit_lib.benchmarks.humaneval_plus.data import (
    HUMANEVAL_PLUS_MINI,
    HUMANEVAL_PLUS_NOEXTREME,
    PlusTask,
    load_plus,
    parse_plus_rows,
)
from audit_lib.benchmarks.humaneval_plus.groundtruth import GroundTruth, compute_ground_truth
from audit_lib.benchmarks.humaneval_plus.replay import run_candidate
from audit_lib.benchmarks.humaneval_plus.variants import (
    ReferenceVerdicts,
    VariantData,
    compare_detection,
    compare_task,
    compare_variant,
    reference_verdicts,
)


def make_task(task_id: str, entry: str, body: str, base: list[Any], plus: list[Any]) -> PlusTask:
    """Same shape as `test_humaneval_plus.make_task` (not imported: `tests` is not a package under bare `pytest`)."""
    prompt = f"def {entry}(x):\n    \"\"\"doc\"\"\"\n"
    return PlusTask(task_id, prompt, entry, body, "", tuple(base), tuple(plus), 0.0, None, 1)


FULL = (
    make_task("T/0", "square", "    return x * x\n", [[2]], [[3], [-4], [10], [7]]),
    make_task("T/1", "half", "    return x / 3\n", [[1]], [[2], [3]]),
)
SQUARE, HALF = FULL


def with_plus(task: PlusTask, plus: list[Any]) -> PlusTask:
    return dataclasses.replace(task, plus_input=tuple(plus))


def variant_of(*tasks: PlusTask, name: str = "Toy-Mini") -> VariantData:
    return VariantData(name, f"{name}.jsonl.gz", tuple(tasks))


def test_variant_that_only_drops_plus_inputs_passes() -> None:
    mini = (with_plus(SQUARE, [[10], [3]]), HALF)
    comparison = compare_variant(FULL, mini)
    assert [c.task_id for c in comparison] == ["T/0", "T/1"]
    square, half = comparison
    assert square.only_drops_plus_inputs and square.drops_plus_inputs and not square.changed_fields
    assert (square.full_plus_inputs, square.variant_plus_inputs, square.variant_plus_not_in_full) == (4, 2, 0)
    assert square.kept_full_plus_indices == (0, 2)
    assert half.identical
    check = variants_from(FULL, [variant_of(*mini)], None, detection_skip_reason="no reference here")
    assert check.status == "pass"
    totals = check.observed["Toy-Mini"]
    assert totals["plus_inputs_full"] == 6 and totals["plus_inputs_variant"] == 4 and totals["reduction_factor"] == 1.5
    assert totals["tasks_changed_beyond_input_drops"] == [] and totals["tasks_detection_lost"] is None
    assert [(row["task_id"], row["finding"], row["kept_full_plus_indices"]) for row in check.details] == \
        [("T/0", "plus_inputs_dropped", "0,2")]
    assert "Detection power was not judged: no reference here" in check.summary
    assert check.meta["detection_power"] == "skipped: no reference here"


def test_variant_that_changes_a_canonical_is_a_quirk() -> None:
    changed = dataclasses.replace(SQUARE, canonical_solution="    return x ** 2\n", plus_input=((3,),))
    assert compare_task(SQUARE, changed).changed_fields == ("canonical_solution",)
    check = variants_from(FULL, [variant_of(changed, HALF)], None)
    assert check.status == "quirk"
    assert check.observed["Toy-Mini"]["tasks_changed_beyond_input_drops"] == ["T/0"]
    assert check.details[0]["finding"] == "changed_beyond_input_drops"
    assert check.details[0]["changed_fields"] == "canonical_solution"


def test_missing_or_extra_task_is_a_change() -> None:
    check = variants_from(FULL, [variant_of(SQUARE)], None)
    assert check.status == "quirk"
    assert check.observed["Toy-Mini"]["tasks_only_in_full"] == ["T/1"]
    assert check.details[0]["finding"] == "task_missing_from_variant"


def test_input_not_in_the_full_set_is_counted_and_not_judged() -> None:
    # 3.0 is not 3 and (3,) is not [3]: neither is one of the full task's inputs.
    odd = with_plus(SQUARE, [[3.0], [(3,)], [-4]])
    comparison = compare_task(SQUARE, odd)
    assert comparison.variant_plus_not_in_full == 2 and comparison.kept_full_plus_indices == (1,)
    verdicts = {"T/0": ReferenceVerdicts(failing_plus=frozenset({0}))}  # the reference fails on x=3 only
    detection = {row.task_id: row for row in compare_detection(FULL, (odd, HALF), verdicts)}["T/0"]
    assert (detection.detection, detection.failing_full, detection.failing_in_variant, detection.not_judged) == \
        ("undetermined", 1, 0, 2)
    check = variants_from(FULL, [variant_of(odd, HALF)], verdicts)
    totals = check.observed["Toy-Mini"]
    assert totals["plus_inputs_not_in_full"] == 2 and totals["not_judged_inputs"] == 2
    assert totals["tasks_detection_lost"] == [] and totals["tasks_detection_undetermined"] == ["T/0"]
    assert check.status == "quirk"  # adding inputs is more than dropping some
    assert check.details[0]["finding"] == "detection_undetermined" and check.details[0]["not_judged"] == 2


def test_variant_dropping_every_failing_input_loses_detection() -> None:
    verdicts = {"T/0": ReferenceVerdicts(failing_plus=frozenset({2})),  # wrong on x=10 only
                "T/1": ReferenceVerdicts()}
    drops_failing = (with_plus(SQUARE, [[3], [7]]), with_plus(HALF, [[2]]))
    check = variants_from(FULL, [variant_of(*drops_failing)], verdicts, full_name="Toy+",
                           reference_name="the wrong square")
    assert check.status == "quirk"
    totals = check.observed["Toy-Mini"]
    assert totals["tasks_detection_lost"] == ["T/0"] and totals["reference_failing_tasks"] == 1
    assert totals["tasks_changed_beyond_input_drops"] == []
    first = check.details[0]
    assert (first["task_id"], first["finding"], first["reference_failing_full"],
            first["reference_failing_in_variant"]) == ("T/0", "detection_lost", 1, 0)
    assert "would accept it on 1 (T/0)" in check.summary and "the wrong square" in check.summary

    by_timeout = {"T/0": dataclasses.replace(verdicts["T/0"], failure_kinds=(("timeout", 1),))}
    timed = variants_from(FULL, [variant_of(*drops_failing)], by_timeout)
    assert timed.observed["Toy-Mini"]["tasks_detection_lost_timeout_only"] == ["T/0"]
    assert "rejected only by timeouts" in timed.summary and timed.details[0]["reference_failure_kinds"] == "timeout:1"

    keeps_failing = (with_plus(SQUARE, [[10]]), HALF)
    kept = variants_from(FULL, [variant_of(*keeps_failing)], verdicts)
    assert kept.status == "pass" and kept.observed["Toy-Mini"]["tasks_detection_lost"] == []
    assert kept.details[0]["reference_detection"] == "detected"


def test_base_inputs_are_shared_so_a_base_failure_stays_detected() -> None:
    verdicts = {"T/0": ReferenceVerdicts(failing_base=frozenset({0}), failing_plus=frozenset({2}))}
    rows = compare_detection(FULL, (with_plus(SQUARE, [[3]]), HALF), verdicts)
    assert rows[0].detection == "detected" and rows[0].failing_in_variant == 1
    assert rows[1].detection == "not_scored"


def test_unavailable_variant_files_skip_with_the_reason() -> None:
    missing = VariantData("Toy-Mini", "Toy-Mini.jsonl.gz", None, "not in the mirror", key="toy/Toy-Mini.jsonl.gz")
    check = variants_from(FULL, [missing], None)
    assert check.status == "skipped" and "Toy-Mini: not in the mirror" in check.summary
    assert check.meta["missing"] == ["toy/Toy-Mini.jsonl.gz"]
    partly = variants_from(FULL, [missing, variant_of(*FULL, name="Toy-NoExtreme")], None)
    assert partly.status == "pass" and "Unavailable: Toy-Mini: not in the mirror" in partly.summary
    assert list(partly.observed) == ["Toy-NoExtreme"]
    assert partly.meta["unavailable"] == {"Toy-Mini": "not in the mirror"}


def test_index_ranges() -> None:
    assert index_ranges([0, 1, 2, 5, 7, 8]) == "0-2,5,7-8"
    assert index_ranges([]) == ""


def test_reference_verdicts_from_sandbox_runs() -> None:
    gt = GroundTruth("humaneval", "t", compute_ground_truth(FULL, "humaneval"), Path("unused"), 0, len(FULL))
    wrong = {"T/0": SQUARE.prompt + "    return x * x if x != 10 else 99\n",
             "T/1": HALF.prompt + "    return x / 3\n"}
    verdicts = reference_verdicts(FULL, "humaneval", run_candidate(FULL, wrong, "humaneval", gt), gt)
    assert verdicts["T/0"].failing_plus == frozenset({2}) and not verdicts["T/0"].failing_base
    assert verdicts["T/0"].failure_kinds == (("wrong_value", 1),)
    assert verdicts["T/1"].failing == 0


def test_missing_original_test_field_is_noted() -> None:
    row = {"task_id": "T/0", "prompt": "", "entry_point": "f", "canonical_solution": "", "contract": "",
           "base_input": [[1]], "plus_input": [], "atol": 0}
    notes: list[dict[str, Any]] = []
    tasks = parse_plus_rows([row], dataset="humaneval", file="mini.jsonl", notes=notes)
    assert tasks[0].original_test is None
    assert [(note["field"], note["task_id"]) for note in notes] == [("test", "T/0")]


@pytest.mark.mirror
def test_real_variants_are_the_full_tasks_with_plus_inputs_dropped(mirror_dir: Path, isolated_cache: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUDIT_MIRROR", str(mirror_dir))
    full = load_plus("humaneval")
    mini = load_plus("humaneval", source=HUMANEVAL_PLUS_MINI)
    noextreme_tasks = load_plus("humaneval", source=HUMANEVAL_PLUS_NOEXTREME).tasks
    assert [note["field"] for note in mini.schema_notes] == ["test"]  # Mini ships no `test` field
    comparisons = [compare_variant(full.tasks, variant) for variant in (mini.tasks, noextreme_tasks)]
    for comparison, variant in zip(comparisons, (mini.tasks, noextreme_tasks)):
        assert len(comparison) == len(full.tasks) == len(variant)
        assert [c.task_id for c in comparison if not c.only_drops_plus_inputs] == []
        assert sum(c.variant_plus_inputs for c in comparison) == sum(len(t.plus_input) for t in variant)
        assert sum(c.variant_plus_inputs for c in comparison) < sum(len(t.plus_input) for t in full.tasks)
    noextreme = comparisons[1]
    # PROVENANCE.md: NoExtreme trims the plus inputs of these seven tasks and no other.
    assert [c.task_id for c in noextreme if c.drops_plus_inputs] == \
        [f"HumanEval/{n}" for n in (25, 39, 55, 63, 77, 96, 138)]
    check = variants_from(full.tasks, [VariantData("HumanEvalPlus-Mini", HUMANEVAL_PLUS_MINI[1], mini.tasks)], None,
                           detection_skip_reason="not run in this test")
    assert check.status == "pass" and check.observed["HumanEvalPlus-Mini"]["plus_inputs_not_in_full"] == 0


def test_accepted_tasks_split_into_deterministic_and_timing() -> None:
    verdicts = {"T/0": ReferenceVerdicts(failing_plus=frozenset({2}), failure_kinds=(("wrong_value", 1),)),
                "T/1": ReferenceVerdicts(failing_plus=frozenset({1}), failure_kinds=(("timeout", 1),))}
    drops_failing = (with_plus(SQUARE, [[3], [7]]), with_plus(HALF, [[2]]))
    check = variants_from(FULL, [variant_of(*drops_failing)], verdicts,
                           causes={"T/0": "deterministic", "T/1": "not_a_failure"})
    totals = check.observed["Toy-Mini"]
    assert totals["tasks_detection_lost"] == ["T/0", "T/1"]
    assert totals["tasks_detection_lost_deterministic"] == ["T/0"]
    assert totals["tasks_detection_lost_timing"] == [{"task_id": "T/1", "state": "not_a_failure"}]
    assert "[1 deterministic + 0 timing (confirmed), 0 borderline, 1 not failures on a quiet rerun]" in check.summary
    assert "tasks_detection_lost_deterministic" not in variants_from(
        FULL, [variant_of(*drops_failing)], verdicts).observed["Toy-Mini"]
