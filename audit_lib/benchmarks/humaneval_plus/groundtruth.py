"""Expected outputs (EvalPlus's `get_groundtruth`), run in the sandbox, cached as tagged JSON by dataset sha256."""

from __future__ import annotations

import gzip
import json
import platform
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from audit_lib import paths, sandbox
from audit_lib.atomic_files import atomic_output
from audit_lib.benchmarks.humaneval_plus.compare import MBPP_ORACLE_ENTRY_POINTS
from audit_lib.benchmarks.humaneval_plus.data import Dataset, LoadedPlus, PlusTask
from audit_lib.benchmarks.humaneval_plus.programs import ground_truth_program
from audit_lib.benchmarks.humaneval_plus.runs import SPLITS, InputOutcome, Split, SplitRun, run_programs, settled
from audit_lib.errors import CorruptFileError
from audit_lib.sandbox import DIGEST_TAG, ValueDigest, digest_from_json, large_value_digest

# 2: digests of canonical encodings with sets and mappings in one order (`codec.canonical_text`), defaultdicts
# with their factory, Decimals. A cache of an older format is recomputed, never read.
CACHE_FORMAT = 2
CACHE_GZIP_LEVEL = 1
# HumanEval+ expected outputs total ~300 MB of JSON, nearly all from a few tasks (/15, /130, /100, /83, /14, /139).
# A float-free HumanEval output larger than this is cached as its sha256 (`compare.ValueDigest`) instead.
DIGEST_ABOVE_BYTES = 64 * 1024
# EvalPlus runs the canonical with no limit at all; the sandbox needs one, so each input gets this much.
GROUND_TRUTH_INPUT_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class GroundTruth:
    """Expected outputs for every task and split, where they came from, and whether they were computed now."""

    dataset: Dataset
    dataset_sha256: str
    runs: Mapping[tuple[str, Split], SplitRun]
    cache_path: Path
    tasks_from_cache: int
    tasks_computed: int

    def run(self, task_id: str, split: Split) -> SplitRun:
        return self.runs[(task_id, split)]

    def times(self, task_id: str, split: Split) -> list[float]:
        return [outcome.duration_s for outcome in self.run(task_id, split).outcomes]


def cache_path_for(sha256: str) -> Path:
    return paths.data_cache_dir() / "groundtruth" / f"{sha256}.json.gz"


def compute_ground_truth(tasks: Sequence[PlusTask], dataset: Dataset, *, executor: Any = None,
                         input_timeout_s: float = GROUND_TRUTH_INPUT_TIMEOUT_S,
                         earlier: GroundTruth | None = None) -> dict[tuple[str, Split], SplitRun]:
    """Run `prompt + canonical_solution` (no contract) on every base and plus input in the sandbox, fresh.

    Huge float-free HumanEval outputs come back as digests straight from the sandbox (see `write_cache`). With an
    `earlier` ground truth, its times order the jobs longest first.
    """
    def earlier_seconds(task: PlusTask, split: Split) -> float:
        return sum(earlier.times(task.task_id, split)) if (task.task_id, split) in earlier.runs else 0.0

    return run_programs(tasks, lambda task: ground_truth_program(task, dataset),
                        lambda task, split: [input_timeout_s] * len(task.base_input if split == "base"
                                                                    else task.plus_input),
                        executor=executor, cost_for=earlier_seconds if earlier is not None else None,
                        progress_desc="ground truth",
                        digest_above_bytes=DIGEST_ABOVE_BYTES,
                        digest_inputs_for=lambda task, split: None if digests_allowed_for(dataset, task.entry_point)
                        else ())


def digests_allowed_for(dataset: Dataset, entry_point: str | None = None) -> bool:
    """Where a huge output may stand as its digest.

    Not for MBPP+'s special oracles (set equality, `out == 0`, ...), which need the value itself. Without an entry
    point: for every task of the dataset."""
    if dataset == "humaneval":
        return True
    return entry_point is not None and entry_point not in MBPP_ORACLE_ENTRY_POINTS


def load_or_compute_ground_truth(loaded: LoadedPlus, *, recompute: bool = False, executor: Any = None,
                                 input_timeout_s: float = GROUND_TRUTH_INPUT_TIMEOUT_S) -> GroundTruth:
    """Cached outputs for the tasks the cache holds; the rest (or all, with `recompute`) computed and cached."""
    sha256 = loaded.provenance.sha256
    path = cache_path_for(sha256)
    cached = {} if recompute else read_cache(path, sha256)
    missing = [task for task in loaded.tasks if any((task.task_id, split) not in cached for split in SPLITS)]
    fresh = compute_ground_truth(missing, loaded.dataset, executor=executor, input_timeout_s=input_timeout_s) \
        if missing else {}
    fresh_cacheable = {key: run for key, run in fresh.items() if run.job_status != "harness_error"}
    if fresh_cacheable:
        merged = {**read_cache(path, sha256), **fresh_cacheable} if recompute else {**cached, **fresh_cacheable}
        write_cache(path, sha256, loaded.dataset, merged)
    wanted = {(task.task_id, split) for task in loaded.tasks for split in SPLITS}
    runs = {key: run for key, run in {**cached, **fresh}.items() if key in wanted}
    return GroundTruth(loaded.dataset, sha256, runs, path, len(loaded.tasks) - len(missing), len(missing))


def _value_to_json(value: Any, *, may_digest: bool) -> Any:
    if isinstance(value, ValueDigest):
        return value.to_json()
    tagged = sandbox.encode(value)
    digest = large_value_digest(value, tagged, DIGEST_ABOVE_BYTES) if may_digest else None
    return digest.to_json() if digest is not None else tagged


def _value_from_json(payload: Any) -> Any:
    if isinstance(payload, dict) and set(payload) == {DIGEST_TAG}:
        digest = digest_from_json(payload)
        if digest is None:
            raise sandbox.MalformedTaggedValue(f"malformed digest {payload!r:.200}")
        return digest
    return sandbox.decode(payload)


def _outcome_to_json(outcome: InputOutcome, *, may_digest: bool) -> list[Any]:
    outcome = settled(outcome)  # the cache holds values: one kept encoded is decoded once to be written
    value = _value_to_json(outcome.value, may_digest=may_digest) if outcome.kind == "value" else None
    return [outcome.kind, value, round(outcome.duration_s, 6), outcome.exc_type, outcome.exc_message,
            round(outcome.cpu_s, 6)]


def _outcome_from_json(item: Sequence[Any]) -> InputOutcome:
    """Five fields (caches written before CPU times were kept: cpu_s reads as 0.0) or six."""
    kind, value, duration, exc_type, exc_message, *rest = item
    if len(rest) > 1:
        raise ValueError(f"an outcome has {len(item)} fields, not 5 or 6")
    return InputOutcome(kind, _value_from_json(value) if kind == "value" else None, float(duration),
                        exc_type, exc_message, cpu_s=float(rest[0]) if rest else 0.0)


def write_cache(path: Path, sha256: str, dataset: Dataset, runs: Mapping[tuple[str, Split], SplitRun]) -> None:
    """Write atomically; values are tagged JSON (never pickle), times are per input in seconds.

    Huge float-free HumanEval outputs are stored as digests; MBPP+ values are always kept whole because its
    special oracles (set equality, `out == 0`, ...) need the value itself.
    """
    digests_allowed = digests_allowed_for(dataset)
    tasks: dict[str, dict[str, Any]] = {}
    for (task_id, split), run in runs.items():
        tasks.setdefault(task_id, {})[split] = {"load_error": run.load_error, "job_status": run.job_status,
                                                "outcomes": [_outcome_to_json(o, may_digest=digests_allowed)
                                                             for o in run.outcomes]}
    payload = {"format": CACHE_FORMAT, "dataset": dataset, "dataset_sha256": sha256,
               "python": platform.python_version(), "machine": platform.machine(), "tasks": tasks}
    with atomic_output(path) as handle:
        with gzip.GzipFile(fileobj=handle, mode="wb", compresslevel=CACHE_GZIP_LEVEL) as zipped:
            with sandbox.depth_room():  # values nested up to the codec's MAX_DEPTH, two JSON levels per tag
                zipped.write(json.dumps(payload).encode("utf-8"))


def read_cache(path: Path, sha256: str) -> dict[tuple[str, Split], SplitRun]:
    """The cached runs: none without a cache or with an older format's; other bytes, a newer format or damage raise."""
    if not path.is_file():
        return {}
    try:
        with gzip.open(path, "rt", encoding="utf-8") as handle, sandbox.depth_room():
            payload = json.load(handle)
    except (OSError, EOFError, json.JSONDecodeError, RecursionError) as exc:
        raise CorruptFileError(f"{path}: ground-truth cache does not read ({exc}); delete it to recompute",
                               file=str(path), row=None, field=None) from exc
    if isinstance(payload.get("format"), int) and payload["format"] < CACHE_FORMAT \
            and payload.get("dataset_sha256") == sha256:
        return {}  # its digests or tags are not today's: the caller recomputes and overwrites it
    if payload.get("format") != CACHE_FORMAT or payload.get("dataset_sha256") != sha256:
        raise CorruptFileError(f"{path}: ground-truth cache is for format {payload.get('format')} / sha256 "
                               f"{payload.get('dataset_sha256')}, not {CACHE_FORMAT} / {sha256}",
                               file=str(path), row=None, field="dataset_sha256")
    runs: dict[tuple[str, Split], SplitRun] = {}
    for task_id, splits in payload["tasks"].items():
        for split, record in splits.items():
            try:
                outcomes = tuple(_outcome_from_json(item) for item in record["outcomes"])
                runs[(task_id, split)] = SplitRun(task_id, split, outcomes, record["load_error"],
                                                  record["job_status"])
            except (KeyError, TypeError, ValueError) as exc:  # MalformedTaggedValue is a ValueError
                raise CorruptFileError(f"{path}: ground-truth cache entry {task_id} {split} does not read "
                                       f"({type(exc).__name__}: {exc}); delete the file to recompute",
                                       file=str(path), row=task_id, field=split) from exc
    return runs


__all__ = ["GROUND_TRUTH_INPUT_TIMEOUT_S", "GroundTruth", "cache_path_for", "compute_ground_truth",
           "load_or_compute_ground_truth", "read_cache", "write_cache"]
