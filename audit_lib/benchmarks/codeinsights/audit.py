"""HELM `codeinsights_edge_case`: its three inputs (real, or SYNTHETIC when unavailable), replayed as shipped and
as fixed, and thirteen checks of the gold labels against the `pass` strings as written.

The data is read in `data.py`, replayed in `replay.py` / `facts.py`; the checks live in `label_checks.py` (how
`pass` becomes a gold label) and `checks.py` (what the replays build from it). This module stays light to import.
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
from audit_lib.findings import Check
from audit_lib.plugin import AuditPlugin, CheckSpec, param

if TYPE_CHECKING:
    from audit_lib.benchmarks.codeinsights.data import CodeInsightsData
    from audit_lib.benchmarks.codeinsights.facts import EdgeCaseAudit

NAME = "codeinsights_edge_case"
DATASET = synthetic.DATASET
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


# ---------------------------------------------------------------------------------------------- checks
# Each adapter runs one check on the shared replay; the check modules import pandas/numpy, so they load here.


def _pass_read_dtype(inputs: Inputs, params: Params) -> Check:
    from audit_lib.benchmarks.codeinsights.label_checks import check_pass_read_dtype

    return check_pass_read_dtype(inputs.replay)


def _leading_zero_loss(inputs: Inputs, params: Params) -> Check:
    from audit_lib.benchmarks.codeinsights.label_checks import check_leading_zero_loss

    return check_leading_zero_loss(inputs.replay)


def _float_precision(inputs: Inputs, params: Params) -> Check:
    from audit_lib.benchmarks.codeinsights.label_checks import check_float_precision

    return check_float_precision(inputs.replay)


def _single_failure_after_int(inputs: Inputs, params: Params) -> Check:
    from audit_lib.benchmarks.codeinsights.label_checks import check_single_failure_after_int

    return check_single_failure_after_int(inputs.replay)


def _single_failure_true(inputs: Inputs, params: Params) -> Check:
    from audit_lib.benchmarks.codeinsights.label_checks import check_single_failure_true

    return check_single_failure_true(inputs.replay)


def _is_single_failure_column(inputs: Inputs, params: Params) -> Check:
    from audit_lib.benchmarks.codeinsights.label_checks import check_is_single_failure_column

    return check_is_single_failure_column(inputs.replay)


def _alignment_ceiling(inputs: Inputs, params: Params) -> Check:
    from audit_lib.benchmarks.codeinsights.checks import check_alignment_ceiling

    return check_alignment_ceiling(inputs.replay)


def _gold_index_hidden_by_truncation(inputs: Inputs, params: Params) -> Check:
    from audit_lib.benchmarks.codeinsights.checks import check_gold_index_hidden_by_truncation

    return check_gold_index_hidden_by_truncation(inputs.replay)


def _pattern_length_mismatch(inputs: Inputs, params: Params) -> Check:
    from audit_lib.benchmarks.codeinsights.label_checks import check_pattern_length_mismatch

    return check_pattern_length_mismatch(inputs.replay)


def _qid_lookup(inputs: Inputs, params: Params) -> Check:
    from audit_lib.benchmarks.codeinsights.checks import check_qid_lookup

    return check_qid_lookup(inputs.replay)


def _timestamp_ties(inputs: Inputs, params: Params) -> Check:
    from audit_lib.benchmarks.codeinsights.checks import check_timestamp_ties

    return check_timestamp_ties(inputs.replay)


def _prompt_as_built(inputs: Inputs, params: Params) -> Check:
    from audit_lib.benchmarks.codeinsights.checks import check_prompt_as_built

    return check_prompt_as_built(inputs.replay)


def _baseline_scores(inputs: Inputs, params: Params) -> Check:
    from audit_lib.benchmarks.codeinsights.checks import check_baseline_scores

    return check_baseline_scores(inputs.replay)


# No check `needs` a file: without the real files every check runs on the SYNTHETIC fixture and says so.
AUDIT: AuditPlugin[Inputs, Params] = AuditPlugin(
    name=NAME,
    title="CodeInsights edge case (HELM)",
    params=Params,
    load=load,
    checks=(
        CheckSpec("pass_read_dtype", "`pass` as pandas infers it vs as text", _pass_read_dtype),
        CheckSpec("leading_zero_loss", "Leading zeros dropped by int(pass)", _leading_zero_loss),
        CheckSpec("float_precision", "`pass` read as float64 loses digits", _float_precision),
        CheckSpec("single_failure_after_int", "Instances HELM scores as single failures (after int())",
                  _single_failure_after_int),
        CheckSpec("single_failure_true", "Instances that truly have exactly one failing test", _single_failure_true),
        CheckSpec("is_single_failure_column", "`is_single_failure` column vs the true rule vs the rule after int()",
                  _is_single_failure_column),
        CheckSpec("alignment_ceiling", "Highest reachable unittest_alignment: as shipped vs with true patterns",
                  _alignment_ceiling),
        CheckSpec("gold_index_hidden_by_truncation", "Gold index beyond the tests shown in the prompt",
                  _gold_index_hidden_by_truncation),
        CheckSpec("pattern_length_mismatch", "Pattern length vs parsed unit-test count", _pattern_length_mismatch),
        CheckSpec("qid_lookup", "Question-id lookup and every skipped student", _qid_lookup),
        CheckSpec("timestamp_ties", "Students whose first row is ambiguous (ties, text vs time order)",
                  _timestamp_ties),
        CheckSpec("prompt_as_built", "The prompt HELM actually builds vs the one its code seems to intend",
                  _prompt_as_built),
        CheckSpec("baseline_scores", "Baselines under the metric: always-0, random, oracle; as shipped vs as fixed",
                  _baseline_scores),
    ),
)

__all__ = ["AUDIT", "Inputs", "Params", "load"]
