"""Source text of the programs the audit sends to the sandbox (built by parsing, never by running the code)."""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass

from audit_lib.benchmarks.humaneval_plus.compare import MBPP_OUTPUT_NOT_NONE_ENTRY_POINTS, not_none_wrapper
from audit_lib.benchmarks.humaneval_plus.data import Dataset, PlusTask
from audit_lib.benchmarks.humaneval_plus.guard import with_reliability_guard
from audit_lib.errors import SchemaError

CONTRACT_MARKER = "# $_CONTRACT_$"
WRAPPED_ENTRY_POINT = "_benchaudit_entry"


@dataclass(frozen=True)
class CallableProgram:
    """A program and the name of the function the sandbox calls in it."""

    source: str
    entry_point: str


def ground_truth_program(task: PlusTask, dataset: Dataset) -> CallableProgram:
    """`prompt + canonical_solution` without the contract; MBPP not-None tasks return `out is not None`."""
    return _with_output_mapping(task.program, task.entry_point, dataset, for_ground_truth=True)


def candidate_program(solution: str, task: PlusTask, dataset: Dataset) -> CallableProgram:
    """A sample's full program, run after EvalPlus's `reliability_guard` (`guard`).

    With the MBPP not-None mapping EvalPlus applies when comparing it."""
    return _with_output_mapping(with_reliability_guard(solution), task.entry_point, dataset, for_ground_truth=False)


def _with_output_mapping(source: str, entry_point: str, dataset: Dataset, *, for_ground_truth: bool) -> CallableProgram:
    if dataset == "mbpp" and entry_point in MBPP_OUTPUT_NOT_NONE_ENTRY_POINTS:
        wrapper = not_none_wrapper(entry_point, WRAPPED_ENTRY_POINT, for_ground_truth=for_ground_truth)
        return CallableProgram(append_harness(source, wrapper), WRAPPED_ENTRY_POINT)
    return CallableProgram(source, entry_point)


def append_harness(program: str, harness: str) -> str:
    """`program + harness`, only when the program parses on its own.

    Otherwise its text could take the harness in (a trailing decorator decorating the harness function), and the program
    alone fails its load the same way."""
    try:
        ast.parse(program)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return program
    return program + harness


def contract_lines(contract: str) -> list[str]:
    """The contract's lines that carry the marker (others, if any, are not part of the contract)."""
    return [line for line in contract.splitlines() if CONTRACT_MARKER in line]


def contract_program(task: PlusTask) -> CallableProgram:
    """`prompt + canonical` with the entry point's body replaced by the contract lines then `return None`.

    Calling it runs exactly the input-validity asserts EvalPlus placed at the top of the function; an exception
    (AssertionError or EvalPlus's `Exception("invalid inputs")`) marks the input as violating the contract.
    """
    module = _parse(task.program, task, "canonical_solution")
    contract_source = textwrap.dedent("\n".join(contract_lines(task.contract)))
    contract_body = _parse(contract_source, task, "contract").body if contract_source.strip() else []
    function = _find_entry_point(module, task)
    function.body = [*contract_body, ast.Return(value=ast.Constant(value=None))]
    return CallableProgram(ast.unparse(ast.fix_missing_locations(module)), task.entry_point)


def _parse(source: str, task: PlusTask, field: str) -> ast.Module:
    try:
        return ast.parse(source)
    except SyntaxError as exc:
        raise SchemaError(f"task {task.task_id} (row {task.row}): field {field!r} does not parse: {exc.msg} "
                          f"(line {exc.lineno})", row=task.row, field=field, task_id=task.task_id) from exc


def _find_entry_point(module: ast.Module, task: PlusTask) -> ast.FunctionDef:
    found = [node for node in module.body if isinstance(node, ast.FunctionDef) and node.name == task.entry_point]
    if not found:
        raise SchemaError(f"task {task.task_id} (row {task.row}): no top-level function {task.entry_point!r} in "
                          "prompt + canonical_solution", row=task.row, field="entry_point", task_id=task.task_id)
    return found[-1]  # the last definition is the one a call resolves to


def assert_program(prompt: str, solution: str) -> str:
    """The program HumanEval's harness builds before appending its `check` test."""
    return prompt + solution


def check_snippet(test: str, entry_point: str) -> str:
    """HumanEval's test snippet: the `check` source followed by `check(<entry point>)`."""
    return f"{test}\ncheck({entry_point})\n"


__all__ = ["CONTRACT_MARKER", "CallableProgram", "WRAPPED_ENTRY_POINT", "assert_program", "candidate_program",
           "check_snippet", "contract_lines", "contract_program", "ground_truth_program"]
