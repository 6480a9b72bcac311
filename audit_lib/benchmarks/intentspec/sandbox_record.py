"""What a check decided by sandboxed runs records about them: who judged them, and its failures split by cause."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from audit_lib.benchmarks.intentspec.audit import Inputs
from audit_lib.benchmarks.intentspec.runs import CandidateRun, judged_summary
from audit_lib.benchmarks.intentspec.timing_split import split_observed
from audit_lib.findings import Result


def with_sandbox_record(inputs: Inputs, result: Result, judged: Sequence[CandidateRun] | None = None) -> Result:
    """`result` with who judged its sandboxed runs (`meta.sandbox_trust`).

    Given the runs it `judged`, their failures are also split into deterministic and timing."""
    runs = inputs.runs
    constraint_runs = [*runs.canonical.values(), *(r for by_task in runs.references.values() for r in by_task.values()),
                       *runs.generations]
    trust = {"constraint_runs": judged_summary(constraint_runs), "probe_runs": judged_summary(runs.probes)}
    result = replace(result, meta={**result.meta, "sandbox_trust": trust})
    if judged is None or result.status in ("skipped", "error") or not isinstance(result.observed, dict):
        return result
    observed, meta = split_observed(judged, inputs.quiet_reruns, inputs.timeout_s)
    lead = result.summary.rstrip()
    return replace(result, observed={**result.observed, **observed}, meta={**result.meta, **meta},
                   summary=f"{lead}{'' if lead.endswith('.') else '.'} Failing constraint runs: "
                           f"{meta['failure_headline']}.")
