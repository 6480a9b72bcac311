"""HELM `codeinsights_edge_case`: the audit's parameters, inputs and its thirteen checks.

Its three inputs (real, or SYNTHETIC when unavailable) are read in `data.py` and replayed as shipped and as fixed in
`replay.py` / `facts.py`; the checks of the gold labels against the `pass` strings as written live in `checks_labels.py`
(how `pass` becomes a gold label) and `checks_replay.py` (what the replays build from it).
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from audit_lib.benchmarks.codeinsights import synthetic
from audit_lib.data import fetch
from audit_lib.errors import DataError
from audit_lib.plugin import AuditPlugin, CheckSpec, Need, Unmet, param

if TYPE_CHECKING:
    from audit_lib.benchmarks.codeinsights.data import CodeInsightsData
    from audit_lib.benchmarks.codeinsights.facts import EdgeCaseAudit

NAME = "codeinsights_edge_case"
DATASET = synthetic.DATASET
SUBMISSIONS_KEY = f"{DATASET}/{synthetic.SUBMISSIONS_FILE}"  # what a skip for want of usable rows names
SOURCES = ("auto", "synthetic")


def _num_testcases_rule(value: int) -> str | None:
    return None if value == -1 or value >= 1 else "must be -1 (every test) or at least 1"


@dataclass(frozen=True)
class Params:
    """The notebook's parameters cell."""

    num_testcases: int = param(1, "tests shown per instance (HELM default 1; -1 keeps every test)",
                               rule=_num_testcases_rule)
    source: str = param("auto", "'auto': real files via fetch, SYNTHETIC fallback when unavailable; 'synthetic': "
                                "the generated fixture", choices=SOURCES)
    seed: int = param(0, "seed of the synthetic generator and of the random baseline", minimum=0)


@dataclass(frozen=True)
class Inputs:
    """The three files as read, and the replay every check compares with (built once, on first use)."""

    data: CodeInsightsData
    num_testcases: int
    seed: int
    missing: Mapping[str, str]  # real files that could not be fetched; the audit then runs on SYNTHETIC data

    @property
    def provenance(self) -> tuple[fetch.Provenance, ...]:
        return self.data.provenance

    @property
    def synthetic(self) -> bool:
        return self.data.synthetic

    @property
    def source_note(self) -> str:
        return self.data.source_note

    @cached_property
    def replay(self) -> EdgeCaseAudit:
        from audit_lib.benchmarks.codeinsights.facts import replay_audit

        return replay_audit(self.data, num_testcases=self.num_testcases, seed=self.seed)


def load(params: Params) -> Inputs:
    """`auto`: the real files via `fetch` (cache, mirror, download); when any is unavailable, SYNTHETIC data."""
    from audit_lib.benchmarks.codeinsights.data import load_files

    if params.source == "synthetic":
        fixture = synthetic.generate(params.seed)
        data = load_files(fixture.paths, provenance=fixture.provenance, synthetic=True,
                          source_note=f"SYNTHETIC data (seed {params.seed}) requested with source='synthetic'")
        return Inputs(data, params.num_testcases, params.seed, {})
    fetched: dict[str, Path] = {}
    provenance = []
    missing: dict[str, str] = {}
    for file in synthetic.FILES:
        outcome = fetch.try_fetch(DATASET, file)
        if isinstance(outcome, DataError):
            missing[f"{DATASET}/{file}"] = str(outcome)
            continue
        fetched[file] = outcome.path
        provenance.append(outcome.provenance)
    if missing:
        return Inputs(_synthetic_fallback(params.seed, missing), params.num_testcases, params.seed, missing)
    data = load_files(fetched, provenance=tuple(provenance), synthetic=False,
                      source_note="real files: " + ", ".join(f"{p.file} from {p.source}" for p in provenance))
    return Inputs(data, params.num_testcases, params.seed, {})


def _synthetic_fallback(seed: int, missing: Mapping[str, str]) -> CodeInsightsData:
    from audit_lib.benchmarks.codeinsights.data import load_files

    reasons = "\n".join(missing.values())
    message = (f"SYNTHETIC DATA: the real CodeInsights files are unavailable, so this audit runs on a seeded "
               f"synthetic fixture (seed {seed}). Its figures say nothing about the real benchmark.\n{reasons}")
    warnings.warn(message, stacklevel=3)
    print("!" * 100 + "\n" + message + "\n" + "!" * 100, file=sys.stderr)
    fixture = synthetic.generate(seed)
    return load_files(fixture.paths, provenance=fixture.provenance, synthetic=True, source_note=message)


def _without_rows(inputs: Inputs) -> Unmet | None:
    if inputs.replay.rows:
        return None
    return Unmet((SUBMISSIONS_KEY,), "Scenario5_data.csv has no data rows, so there is nothing to check")


def _without_instances(inputs: Inputs) -> Unmet | None:
    replayed = inputs.replay
    if replayed.shipped.instances:
        return None
    return Unmet((SUBMISSIONS_KEY,), f"HELM as shipped yields no instance at num_testcases={replayed.num_testcases} "
                                     f"(skips: {replayed.shipped.skip_counts()})")


ROWS = Need("rows of Scenario5_data.csv", _without_rows)
INSTANCES = Need("instances HELM builds", _without_instances)

# No check needs a file: without the real files every check runs on the SYNTHETIC fixture and says so.
AUDIT: AuditPlugin[Inputs, Params] = AuditPlugin(
    name=NAME,
    title="CodeInsights edge case (HELM)",
    params=Params,
    load=load,
    checks=(
        CheckSpec("pass_read_dtype", "`pass` as pandas infers it vs as text", ".checks_labels:pass_read_dtype",
                  (ROWS,)),
        CheckSpec("leading_zero_loss", "Leading zeros dropped by int(pass)", ".checks_labels:leading_zero_loss",
                  (ROWS,)),
        CheckSpec("float_precision", "`pass` read as float64 loses digits", ".checks_labels:float_precision",
                  (ROWS,)),
        CheckSpec("single_failure_after_int", "Instances HELM scores as single failures (after int())",
                  ".checks_labels:single_failure_after_int", (INSTANCES,)),
        CheckSpec("single_failure_true", "Instances that truly have exactly one failing test",
                  ".checks_labels:single_failure_true", (INSTANCES,)),
        CheckSpec("is_single_failure_column", "`is_single_failure` column vs the true rule vs the rule after int()",
                  ".checks_labels:is_single_failure_column", (ROWS,)),
        CheckSpec("alignment_ceiling", "Highest reachable unittest_alignment: as shipped vs with true patterns",
                  ".checks_replay:alignment_ceiling", (INSTANCES,)),
        CheckSpec("gold_index_hidden_by_truncation", "Gold index beyond the tests shown in the prompt",
                  ".checks_replay:gold_index_hidden_by_truncation", (INSTANCES,)),
        CheckSpec("pattern_length_mismatch", "Pattern length vs parsed unit-test count",
                  ".checks_labels:pattern_length_mismatch", (ROWS,)),
        CheckSpec("qid_lookup", "Question-id lookup and every skipped student", ".checks_replay:qid_lookup", (ROWS,)),
        CheckSpec("timestamp_ties", "Students whose first row is ambiguous (ties, text vs time order)",
                  ".checks_replay:timestamp_ties", (ROWS,)),
        CheckSpec("prompt_as_built", "The prompt HELM actually builds vs the one its code seems to intend",
                  ".checks_replay:prompt_as_built", (INSTANCES,)),
        CheckSpec("baseline_scores", "Baselines under the metric: always-0, random, oracle; as shipped vs as fixed",
                  ".checks_replay:baseline_scores", (INSTANCES,)),
    ),
)

__all__ = ["AUDIT", "Inputs", "Params", "load"]
