"""IntentSpec audit: data integrity, canonical IVR == 0, reference checks, and a replay of the published IVR.

The pieces live in `data` (typed rows), `load` (fetching), `schema`, `ivr` (the upstream IVR formula), `runs`
(sandboxed runs; see its docstring for how each candidate is bound to `solution`), `replay` (every run of the
audit in one batch) and the `checks_*` modules. This module is the plugin the notebook and the runner use.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

from audit_lib.benchmarks.intentspec.checks_canonical import (
    CANONICAL_TITLE,
    PROVENANCE_TITLE,
    REFERENCES_TITLE,
    canonical_ivr_zero_check,
    canonical_provenance_check,
    constraints_vs_references_check,
)
from audit_lib.benchmarks.intentspec.checks_exploit import EXPLOIT_TITLE, exit_code_exploit_check
from audit_lib.benchmarks.intentspec.checks_power import POWER_TITLE, constraint_power_check
from audit_lib.benchmarks.intentspec.checks_replay import REPLAY_TITLE, ivr_replay_check
from audit_lib.benchmarks.intentspec.load import (
    CANONICALS_KEY,
    REFERENCE_KEYS,
    SPEC_PAIRS_KEY,
    IntentSpecData,
    load_intentspec,
)
from audit_lib.benchmarks.intentspec.replay import ReplayRuns, execute_replay, rejected_by_canonical_and_references
from audit_lib.benchmarks.intentspec.runs import EXIT_ZERO_EXPLOIT, OPENAI_REFERENCE, CandidateRun, judged_summary
from audit_lib.benchmarks.intentspec.schema import SCHEMA_TITLE, schema_check
from audit_lib.benchmarks.intentspec.timing_split import rerun_timeouts, split_observed
from audit_lib.findings import Check
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


@dataclass(frozen=True)
class Inputs:
    """The loaded data, and every sandboxed run of the audit, executed once when a check first needs it."""

    data: IntentSpecData
    executor: str = "local"
    timeout_s: float = 5.0

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


def load(params: Params) -> Inputs:
    return Inputs(load_intentspec(params.max_tasks), executor=params.executor, timeout_s=params.timeout_s)


# ---- checks --------------------------------------------------------------------------------------------------

def _schema(inputs: Inputs, params: Params) -> Check:
    return schema_check(inputs.data.specs, inputs.data.canonicals)


def _canonical_ivr_zero(inputs: Inputs, params: Params) -> Check:
    return canonical_ivr_zero_check(inputs.data.selected_specs, inputs.runs.canonical, inputs.data.canonicals)


def _canonical_provenance(inputs: Inputs, params: Params) -> Check:
    data = inputs.data
    selected = set(data.selected)
    return canonical_provenance_check([c for c in data.canonicals if c.task_id in selected], data.references,
                                      data.unavailable_under("humaneval"))


def _constraints_vs_references(inputs: Inputs, params: Params) -> Check:
    return constraints_vs_references_check(inputs.data.selected_specs, inputs.runs.references,
                                           inputs.data.unavailable_under("humaneval"))


def _ivr_replay(inputs: Inputs, params: Params) -> Check:
    data = inputs.data
    return ivr_replay_check(data.selected_specs, inputs.runs.generations, data.published,
                            all_tasks=data.all_tasks_selected, unavailable=data.unavailable)


def _exit_code_exploit(inputs: Inputs, params: Params) -> Check:
    return exit_code_exploit_check(inputs.data.selected_specs, inputs.runs.probes, EXIT_ZERO_EXPLOIT)


def _constraint_power(inputs: Inputs, params: Params) -> Check:
    runs = inputs.runs
    return constraint_power_check(inputs.data.selected_specs, runs.generations,
                                  rejected_by_canonical_and_references(runs), unavailable=inputs.data.unavailable)


RunsOf = Callable[[ReplayRuns], Sequence[CandidateRun]]


def _executed(adapter: Callable[[Inputs, Params], Check], runs_of: RunsOf | None = None
              ) -> Callable[[Inputs, Params], Check]:
    """A check whose verdicts come from sandboxed runs records who decided them (the sandbox's judge).
    With `runs_of` (the runs the check judges), it also splits their failures into deterministic and timing."""
    def run(inputs: Inputs, params: Params) -> Check:
        check = adapter(inputs, params)
        runs = inputs.runs
        judged = [*runs.canonical.values(), *(r for by_task in runs.references.values() for r in by_task.values()),
                  *runs.generations]
        trust = {"constraint_runs": judged_summary(judged), "probe_runs": judged_summary(runs.probes)}
        check = replace(check, meta={**check.meta, "sandbox_trust": trust})
        if runs_of is None or check.status in ("skipped", "error") or not isinstance(check.observed, dict):
            return check
        observed, meta = split_observed(runs_of(runs), inputs.quiet_reruns, inputs.timeout_s)
        lead = check.summary.rstrip()
        return replace(check, observed={**check.observed, **observed}, meta={**check.meta, **meta},
                       summary=f"{lead}{'' if lead.endswith('.') else '.'} Failing constraint runs: "
                               f"{meta['failure_headline']}.")
    return run


def _task_view(inputs: Inputs, params: Params, task_id: str):  # -> TaskView; imported when asked (pandas)
    from audit_lib.benchmarks.intentspec.tasks import task_view

    return task_view(inputs, params, task_id)


def _canonical_runs(runs: ReplayRuns) -> Sequence[CandidateRun]:
    return list(runs.canonical.values())


def _reference_runs(runs: ReplayRuns) -> Sequence[CandidateRun]:
    return [run for by_task in runs.references.values() for run in by_task.values()]


def _generation_runs(runs: ReplayRuns) -> Sequence[CandidateRun]:
    return runs.generations


SPECS_AND_CANONICALS = (SPEC_PAIRS_KEY, CANONICALS_KEY)

AUDIT: AuditPlugin[Inputs, Params] = AuditPlugin(
    name="intentspec",
    title="IntentSpec (DevIntent)",
    params=Params,
    load=load,
    checks=(
        CheckSpec("schema", SCHEMA_TITLE, _schema, SPECS_AND_CANONICALS),
        CheckSpec("canonical_ivr_zero", CANONICAL_TITLE, _executed(_canonical_ivr_zero, _canonical_runs),
                  SPECS_AND_CANONICALS),
        CheckSpec("canonical_provenance", PROVENANCE_TITLE, _canonical_provenance,
                  (*SPECS_AND_CANONICALS, REFERENCE_KEYS[OPENAI_REFERENCE])),
        # runs on whichever references are available, and names the ones it could not run
        CheckSpec("constraints_vs_references", REFERENCES_TITLE,
                  _executed(_constraints_vs_references, _reference_runs), (SPEC_PAIRS_KEY,)),
        CheckSpec("ivr_replay", REPLAY_TITLE, _executed(_ivr_replay, _generation_runs), (SPEC_PAIRS_KEY,)),
        CheckSpec("exit_code_exploit", EXPLOIT_TITLE, _executed(_exit_code_exploit), (SPEC_PAIRS_KEY,)),
        # its spot-check lists the constraints that reject the canonical and every reference
        CheckSpec("constraint_power", POWER_TITLE, _executed(_constraint_power), SPECS_AND_CANONICALS),
    ),
    task_view=_task_view,
)
