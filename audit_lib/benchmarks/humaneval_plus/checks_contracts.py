"""Each task's input contract replayed on its own base and plus inputs."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from audit_lib.benchmarks.humaneval_plus.audit import Inputs, Params
from audit_lib.benchmarks.humaneval_plus.data import PlusTask, task_sort_key
from audit_lib.benchmarks.humaneval_plus.inputs import naming_the_selection
from audit_lib.benchmarks.humaneval_plus.programs import contract_lines, contract_program
from audit_lib.benchmarks.humaneval_plus.runs import SPLITS, Split, SplitRun, inputs_of, run_programs
from audit_lib.findings import Result

# Contracts are input-validity asserts, not scored code: they get a generous limit of their own.
CONTRACT_INPUT_TIMEOUT_S = 10.0


def run_contracts(tasks: Sequence[PlusTask], *, executor: Any = None,
                  timeout_s: float = CONTRACT_INPUT_TIMEOUT_S) -> dict[tuple[str, Split], SplitRun]:
    """Call each task's contract-only program on every base and plus input."""
    return run_programs(tasks, contract_program, lambda task, split: [timeout_s] * len(inputs_of(task, split)),
                        executor=executor)


def contract_violations(inputs: Inputs, params: Params) -> Result:
    """Each task's own input contract (its `assert` lines) run on every base and plus input, in the sandbox."""
    runs = run_contracts(inputs.tasks, executor=params.executor)
    return naming_the_selection(contract_violations_from(inputs.tasks, runs), inputs)


def contract_violations_from(tasks: Sequence[PlusTask], runs: Mapping[tuple[str, Split], SplitRun]) -> Result:
    """An exception from the contract asserts (or EvalPlus's `invalid inputs`) marks a violating input."""
    if not tasks:
        return Result.skipped("no tasks loaded")
    # A task without contract lines replays as a bare `return None`: it cannot violate anything, so say which.
    without_contract = [task.task_id for task in tasks if not contract_lines(task.contract)]
    rows: list[dict[str, Any]] = []
    for task in tasks:
        for split in SPLITS:
            run = runs[(task.task_id, split)]
            if run.load_error:
                rows.append({"task_id": task.task_id, "split": split, "input_index": None, "kind": "load_error",
                             "input": "", "detail": run.load_error[:300]})
                continue
            for index, outcome in enumerate(run.outcomes):
                if outcome.kind == "value":
                    continue
                message = outcome.exc_message or ""
                kind = ("invalid_inputs" if "invalid input" in message else
                        "assertion" if outcome.exc_type == "AssertionError" else outcome.kind)
                rows.append({"task_id": task.task_id, "split": split, "input_index": index, "kind": kind,
                             "input": repr(inputs_of(task, split)[index])[:200], "detail": outcome.describe()})
    violations = [row for row in rows if row["kind"] in ("invalid_inputs", "assertion", "exception")]
    by_split = Counter(row["split"] for row in violations)
    tasks_hit = sorted({row["task_id"] for row in violations}, key=task_sort_key)
    other = len(rows) - len(violations)
    summary = (f"{len(violations)} input(s) violate their task's contract ({by_split.get('base', 0)} base, "
               f"{by_split.get('plus', 0)} plus) in {len(tasks_hit)} task(s): {', '.join(tasks_hit[:15]) or 'none'}"
               + (f"; {other} contract run(s) timed out or did not load" if other else "")
               + (f"; {len(without_contract)} of {len(tasks)} task(s) have no contract to replay: "
                  f"{', '.join(without_contract[:15])}" if without_contract else "") + ".")
    status = "defect" if violations else ("error" if other else "pass")
    if status == "pass" and len(without_contract) == len(tasks):
        return Result.skipped(f"none of the {len(tasks)} task(s) has a contract")
    return Result(status,
                  observed={"violations": len(violations), "base": by_split.get("base", 0),
                            "plus": by_split.get("plus", 0), "tasks": tasks_hit, "not_decided": other,
                            "tasks_without_contract": without_contract},
                  expected={"violations": 0}, summary=summary, details=rows)


__all__ = ["CONTRACT_INPUT_TIMEOUT_S", "check_contract_violations", "run_contracts"]
