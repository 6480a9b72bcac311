"""IntentSpec audit: data integrity, canonical IVR == 0, reference checks, and a replay of the published IVR.

The pieces live in `data` (typed rows), `load` (fetching), `ivr` (the upstream IVR formula), `runs` (sandboxed
runs; see its docstring for how each candidate is bound to `solution`), `replay` (every run of the audit in one
batch) and the `checks_*` modules, one function per check, named as its id.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from audit_lib.benchmarks.intentspec.load import (
    CANONICALS_KEY,
    REFERENCE_KEYS,
    SPEC_PAIRS_KEY,
    IntentSpecData,
    load_intentspec,
)
from audit_lib.benchmarks.intentspec.replay import ReplayRuns, execute_replay
from audit_lib.benchmarks.intentspec.runs import OPENAI_REFERENCE, CandidateRun, run_candidates
from audit_lib.benchmarks.intentspec.timing_split import rerun_timeouts
from audit_lib.benchmarks.intentspec.user_generations import (
    UserGenerations,
    generations_dir_rule,
    read_generations_dir,
    user_candidates,
)
from audit_lib.plugin import AuditPlugin, CheckSpec, param
from audit_lib.timing import QuietRerun

MAX_TIMEOUT_S = 300.0


def _positive(value: float) -> str | None:
    return None if value > 0 else "must be more than 0 seconds"


@dataclass(frozen=True)
class Params:
    """The notebook's parameters cell."""

    executor: str = param("local", "where jobs run: local, dask-local or a dask scheduler address")
    max_tasks: int = param(0, "run only the first N tasks of spec_pairs.jsonl; 0 runs all 49", minimum=0)
    timeout_s: float = param(5.0, "wall-clock seconds per constraint run; upstream uses 5", maximum=MAX_TIMEOUT_S,
                             rule=_positive)
    generations_dir: str = param("", "your generations to score: a folder of <model>__HumanEval_<n>.jsonl files, "
                                 "the supplement's layout; empty for none", rule=generations_dir_rule)


@dataclass(frozen=True)
class Inputs:
    """The loaded data, and every sandboxed run of the audit, executed once when a check first needs it."""

    data: IntentSpecData
    executor: str = "local"
    timeout_s: float = 5.0
    generations_dir: str = ""

    @property
    def provenance(self) -> tuple[Any, ...]:
        return self.data.provenance

    @property
    def missing(self) -> Mapping[str, str]:
        return self.data.unavailable

    @cached_property
    def replay(self) -> ReplayRuns | Exception:
        # A failed batch is kept too, so the checks that share it report its error instead of re-running it.
        try:
            return execute_replay(self.data, executor=self.executor, timeout_s=self.timeout_s)
        except Exception as exc:  # the error becomes each dependent check's finding
            return exc

    @property
    def runs(self) -> ReplayRuns:
        outcome = self.replay
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    @cached_property
    def quiet_reruns(self) -> Mapping[str, QuietRerun]:
        """Every constraint run of the batch that timed out, re-run alone after it (see `timing_split`)."""
        runs = self.runs
        judged = [*runs.canonical.values(), *(r for by_task in runs.references.values() for r in by_task.values()),
                  *runs.generations]
        return rerun_timeouts(judged, self.data.specs_by_task, self.timeout_s)


    @cached_property
    def user_generations(self) -> UserGenerations:
        """The samples of `-p generations_dir` (its layout was checked before the kernel started)."""
        return read_generations_dir(self.generations_dir)

    @cached_property
    def user_runs(self) -> tuple[CandidateRun, ...]:
        """Every sample of `-p generations_dir` against every constraint of its task, in one batch."""
        runs = run_candidates(user_candidates(self.user_generations), self.data.specs_by_task,
                              timeout_s=self.timeout_s, executor=self.executor)
        return tuple(runs.values())


def load(params: Params) -> Inputs:
    return Inputs(load_intentspec(params.max_tasks), executor=params.executor, timeout_s=params.timeout_s,
                  generations_dir=params.generations_dir)


def _task_view(inputs: Inputs, params: Params, task_id: str):  # -> TaskView; imported when asked (pandas)
    from audit_lib.benchmarks.intentspec.tasks import task_view

    return task_view(inputs, params, task_id)


SPECS_AND_CANONICALS = (SPEC_PAIRS_KEY, CANONICALS_KEY)

AUDIT: AuditPlugin[Inputs, Params] = AuditPlugin(
    name="intentspec",
    title="IntentSpec (DevIntent)",
    params=Params,
    load=load,
    checks=(
        CheckSpec("schema", "Structure of spec_pairs.jsonl and canonicals.jsonl", ".checks_schema:schema",
                  SPECS_AND_CANONICALS),
        CheckSpec("canonical_ivr_zero", "Canonical solutions against every constraint (canonical IVR, documented 0)",
                  ".checks_canonical:canonical_ivr_zero", SPECS_AND_CANONICALS),
        CheckSpec("canonical_provenance",
                  "Where the canonical solutions come from (the data README says: HumanEval's, verbatim)",
                  ".checks_canonical:canonical_provenance",
                  (*SPECS_AND_CANONICALS, REFERENCE_KEYS[OPENAI_REFERENCE])),
        # runs on whichever references are available, and names the ones it could not run
        CheckSpec("constraints_vs_references",
                  "Constraints against the HumanEval reference solutions (OpenAI's and HumanEval+'s)",
                  ".checks_canonical:constraints_vs_references", (SPEC_PAIRS_KEY,)),
        CheckSpec("ivr_replay", "Published outcomes and IVR vs a re-execution of the cached generations",
                  ".checks_replay:ivr_replay", (SPEC_PAIRS_KEY,)),
        CheckSpec("exit_code_exploit",
                  "A solution that exits with status 0 before any assertion, under the upstream harness",
                  ".checks_exploit:exit_code_exploit", (SPEC_PAIRS_KEY,)),
        # its spot-check lists the constraints that reject the canonical and every reference
        CheckSpec("constraint_power", "How well constraints discriminate between generations; descriptions vs tests",
                  ".checks_power:constraint_power", SPECS_AND_CANONICALS),
        CheckSpec("your_generations", "Your generations' IVR, scored with upstream's rules, beside the published models",
                  ".checks_yours:your_generations", (SPEC_PAIRS_KEY,)),
    ),
    task_view=_task_view,
)
