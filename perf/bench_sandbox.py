"""Sandbox speed, measured side by side with its baseline in one run on the same machine.

    AUDIT_MIRROR=../shared/data .venv/bin/python perf/bench_sandbox.py [--assert-count 1000]
        [--rss-jobs 100000] [--only assert,call,rss]

1. Assert mode, N tiny snippets: ours (`run_many` of `AssertJob`s, local pool; and one worker) against the naive
   `subprocess.run([sys.executable, "-c", program + test], timeout=5)` per snippet. Target: >= 15x faster.
   Beside them the **fork floor**: a plain interpreter with the sandbox's preloaded modules that forks one child
   per snippet (one forking process per CPU, no isolation, no supervision, the exit code as the verdict). It is
   the most any design that runs each snippet in a fresh process of this interpreter can reach on this machine.
   Last, the same snippets the way the audits run assert tests (`TestsJob`: one request per program, each snippet a
   job that answers calls and a judge that runs the test, `sandbox.testrun`).
2. Function-call mode over every HumanEval+ input (base + plus) with the EvalPlus canonical solutions: ours against
   the same calls made with no sandbox at all (a plain interpreter that execs each program and loops over the
   inputs; run as a separate process so the benchmark itself never executes benchmark code). Target: <= 2x.
3. Peak RSS of this (parent) process while streaming N jobs through `run_many`. Target: < 300 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from audit_lib import sandbox  # noqa: E402
from audit_lib.sandbox import Limits  # noqa: E402
from audit_lib.sandbox.zygote.protocol import PRELOADED_MODULES  # noqa: E402

TINY_PROGRAM = "def add(a, b):\n    return a + b\n"

# The fork floor of assert mode: per snippet a fork of a warmed interpreter that runs program + snippet and exits;
# one forking process per CPU. Run as a separate process: the benchmark itself never executes the snippets.
FORK_FLOOR_SCRIPT = r"""
import gc, json, os, sys, time
job = json.load(sys.stdin)
for name in job["preload"]:
    try:
        __import__(name)
    except ImportError:
        pass
gc.freeze()
sources, workers = job["sources"], job["workers"]
counts_r, counts_w = os.pipe()
started = time.perf_counter()
for worker in range(workers):
    if os.fork() == 0:
        passes = 0
        for source in sources[worker::workers]:
            child = os.fork()
            if child == 0:
                try:
                    exec(compile(source, "<floor>", "exec"), {"__name__": "__main__"})
                except BaseException:
                    os._exit(1)
                os._exit(0)
            passes += os.waitpid(child, 0)[1] == 0
        os.write(counts_w, f"{passes}\n".encode())
        os._exit(0)
os.close(counts_w)
for _ in range(workers):
    os.wait()
elapsed = time.perf_counter() - started
with os.fdopen(counts_r) as counts:
    passes = sum(int(line) for line in counts)
print(json.dumps({"seconds": elapsed, "passes": passes}))
"""

# The floor: load each program and call its entry point on every input, no sandbox, no copies, no limits.
FLOOR_SCRIPT = r"""
import json, sys, time
tasks = json.load(sys.stdin)
exceptions = calls = 0
started = time.perf_counter()
for task in tasks:
    namespace = {"__name__": "__floor__"}
    exec(compile(task["program"], "<floor>", "exec"), namespace)
    function = namespace[task["entry_point"]]
    for args in task["inputs"]:
        calls += 1
        try:
            function(*args)
        except Exception:
            exceptions += 1
elapsed = time.perf_counter() - started
print(json.dumps({"seconds": elapsed, "calls": calls, "exceptions": exceptions}))
"""


def tiny_snippets(count: int) -> list[str]:
    # One in ten is false, so both sides have real work to classify.
    return [f"assert add({i}, 1) == {i + 1 if i % 10 else i}" for i in range(count)]


def bench_assert(count: int) -> dict:
    snippets = tiny_snippets(count)
    started = time.perf_counter()
    naive_passes = 0
    for snippet in snippets:
        completed = subprocess.run([sys.executable, "-c", TINY_PROGRAM + "\n\n" + snippet], timeout=5,
                                   capture_output=True)
        naive_passes += completed.returncode == 0
    naive_s = time.perf_counter() - started

    limits = Limits(timeout_s=5, total_timeout_s=60)
    per_job = 10
    jobs = [sandbox.AssertJob(i, TINY_PROGRAM, tuple(snippets[i:i + per_job]), limits)
            for i in range(0, count, per_job)]
    sandbox.run_asserts(TINY_PROGRAM, ["pass"])  # warm one zygote like a long-running session would have
    started = time.perf_counter()
    pool_passes = sum(s.status == "pass" for _k, r in sandbox.run_many(jobs, "local", progress=False)
                      for s in r.snippets)
    pool_s = time.perf_counter() - started
    started = time.perf_counter()
    single_passes = sum(s.status == "pass" for _k, r in sandbox.run_many(jobs, "local", progress=False, workers=1)
                        for s in r.snippets)
    single_s = time.perf_counter() - started
    # The same snippets the way the audits run assert tests: `TestsJob`, entry point named.
    tests_jobs = [sandbox.TestsJob(i, TINY_PROGRAM, tuple(snippets[i:i + per_job]), ("add",), limits)
                  for i in range(0, count, per_job)]
    started = time.perf_counter()
    tests_results = [r for _k, r in sandbox.run_many(tests_jobs, "local", progress=False)]
    tests_s = time.perf_counter() - started
    tests_passes = sum(s.status == "pass" for r in tests_results for s in r.snippets)
    floor = json.loads(subprocess.run(
        [sys.executable, "-I", "-c", FORK_FLOOR_SCRIPT], capture_output=True, text=True, check=True, timeout=600,
        input=json.dumps({"preload": list(PRELOADED_MODULES), "workers": os.cpu_count() or 1,
                          "sources": [TINY_PROGRAM + "\n\n" + snippet for snippet in snippets]})).stdout)
    return {"snippets": count, "naive_s": naive_s, "pool_s": pool_s, "one_worker_s": single_s,
            "fork_floor_s": floor["seconds"], "tests_s": tests_s,
            "passes": (naive_passes, pool_passes, single_passes, floor["passes"], tests_passes)}


def load_humaneval_plus() -> list[dict]:
    try:
        from audit_lib.data.fetch import fetch  # noqa: PLC0415
        from audit_lib.data.readers import read_jsonl  # noqa: PLC0415

        return read_jsonl(fetch("humaneval_plus", "HumanEvalPlus.jsonl.gz").path)
    except ImportError:
        import gzip  # noqa: PLC0415

        mirror = os.environ["AUDIT_MIRROR"]
        with gzip.open(Path(mirror) / "humaneval_plus" / "HumanEvalPlus.jsonl.gz", "rt") as handle:
            return [json.loads(line) for line in handle]


def bench_call() -> dict:
    rows = load_humaneval_plus()
    tasks = [{"program": row["prompt"] + row["canonical_solution"], "entry_point": row["entry_point"],
              "inputs": row["base_input"] + row["plus_input"]} for row in rows]
    floor = subprocess.run([sys.executable, "-c", FLOOR_SCRIPT], input=json.dumps(tasks), text=True,
                           capture_output=True, check=True, timeout=3600)
    floor_result = json.loads(floor.stdout)
    limits = Limits(timeout_s=20, total_timeout_s=900, memory_mb=4096)
    figures = {"tasks": len(tasks), "inputs": sum(len(t["inputs"]) for t in tasks), "floor_s": floor_result["seconds"],
               "floor_exceptions": floor_result["exceptions"]}
    for label, deep, workers in (("pool_s", False, None), ("pool_deepcopy_s", True, None),
                                 ("one_worker_s", False, 1)):
        jobs = [sandbox.CallJob(row["task_id"], t["program"], t["entry_point"], tuple(t["inputs"]), limits,
                                deepcopy_inputs=deep) for row, t in zip(rows, tasks)]
        started = time.perf_counter()
        kinds: dict[str, int] = {}
        for _key, result in sandbox.run_many(jobs, "local", progress=False, workers=workers):
            for outcome in result.outcomes:
                kinds[outcome.kind] = kinds.get(outcome.kind, 0) + 1
        figures[label] = time.perf_counter() - started
        figures[label.replace("_s", "_kinds")] = kinds
    return figures


def bench_rss(count: int) -> dict:
    limits = Limits(timeout_s=5, total_timeout_s=10)

    def jobs():
        for i in range(count):
            if i % 2:
                yield sandbox.AssertJob(i, TINY_PROGRAM, (f"assert add({i}, 1) == {i + 1}",), limits)
            else:
                yield sandbox.CallJob(i, TINY_PROGRAM, "add", ((i, 1), (i, 2)), limits)

    before_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    done = passed = 0
    for _key, result in sandbox.run_many(jobs(), "local", progress=False):
        done += 1
        passed += result.status == "pass"
    return {"jobs": done, "passed": passed, "seconds": time.perf_counter() - started,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "rss_before_mb": before_kb / 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--assert-count", type=int, default=1000)
    parser.add_argument("--rss-jobs", type=int, default=100_000)
    parser.add_argument("--only", default="assert,call,rss")
    args = parser.parse_args()
    chosen = set(args.only.split(","))
    print(f"machine: {os.cpu_count()} CPUs, python {sys.version.split()[0]}, euid {os.geteuid()}", flush=True)
    if "assert" in chosen:
        a = bench_assert(args.assert_count)
        print(f"[1] assert mode, {a['snippets']} tiny snippets: naive subprocess.run {a['naive_s']:.2f}s "
              f"({a['snippets'] / a['naive_s']:.0f}/s) | ours pool {a['pool_s']:.2f}s "
              f"({a['snippets'] / a['pool_s']:.0f}/s) = {a['naive_s'] / a['pool_s']:.1f}x faster | ours 1 worker "
              f"{a['one_worker_s']:.2f}s = {a['naive_s'] / a['one_worker_s']:.1f}x faster | fork floor (no sandbox) "
              f"{a['fork_floor_s']:.2f}s = {a['naive_s'] / a['fork_floor_s']:.1f}x, ours/floor "
              f"{a['pool_s'] / a['fork_floor_s']:.2f} | as the audits run them (run_tests, one "
              f"request per program, a job and a judge per snippet) {a['tests_s']:.2f}s = "
              f"{a['naive_s'] / a['tests_s']:.1f}x faster | "
              f"passes naive/pool/1-worker/floor/run_tests {a['passes']}", flush=True)
    if "call" in chosen:
        c = bench_call()
        print(f"[2] call mode, {c['tasks']} HumanEval+ tasks, {c['inputs']} inputs: in-process floor "
              f"{c['floor_s']:.2f}s ({c['floor_exceptions']} exceptions) | ours pool {c['pool_s']:.2f}s = "
              f"{c['pool_s'] / c['floor_s']:.2f}x floor | ours pool with deepcopy {c['pool_deepcopy_s']:.2f}s = "
              f"{c['pool_deepcopy_s'] / c['floor_s']:.2f}x | ours 1 worker {c['one_worker_s']:.2f}s = "
              f"{c['one_worker_s'] / c['floor_s']:.2f}x | outcome kinds {c['pool_kinds']}", flush=True)
    if "rss" in chosen and chosen != {"rss"}:
        # ru_maxrss is a lifetime peak: measure in a fresh process so phases 1-2 cannot inflate it.
        subprocess.run([sys.executable, __file__, "--only", "rss", "--rss-jobs", str(args.rss_jobs)], check=True)
    elif "rss" in chosen:
        r = bench_rss(args.rss_jobs)
        print(f"[3] parent peak RSS over {r['jobs']} jobs ({r['passed']} passed, {r['seconds']:.0f}s): "
              f"{r['peak_rss_mb']:.0f} MB (before: {r['rss_before_mb']:.0f} MB; target < 300 MB)", flush=True)


if __name__ == "__main__":
    os.environ.setdefault("AUDIT_CACHE", "off")  # times execution: no verdict served from the cache
    main()
