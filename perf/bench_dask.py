"""Jobs per second through `run_many` on a real Dask scheduler with 1 and 2 local workers, against the local pool.

Starts `dask scheduler` and `dask worker` processes (single-threaded workers, this interpreter), runs the same
HumanEval+ ground-truth jobs (EvalPlus canonicals on base and plus inputs, judged nowhere: values come back) through
`executors.run_many` with `dask://HOST:PORT` and with `"local"`, and checks that every job's outcome kinds and values
are the same on each. Figures are this machine's, at the load printed with each line.

Usage: AUDIT_MIRROR=../shared/data .venv/bin/python perf/bench_dask.py [--max-tasks N] [--port P]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from audit_lib import sandbox
from audit_lib.benchmarks.humaneval_plus.data import load_plus
from audit_lib.benchmarks.humaneval_plus.programs import ground_truth_program
from audit_lib.benchmarks.humaneval_plus.runs import SPLITS, inputs_of, job_limits



def ground_truth_jobs(max_tasks: int) -> list[sandbox.CallJob]:
    """One CallJob per task and split: the canonical on its inputs, 30 s per input (as the ground truth runs it)."""
    jobs = []
    for task in load_plus("humaneval", max_tasks=max_tasks).tasks:
        program = ground_truth_program(task, "humaneval")
        for split in SPLITS:
            inputs = inputs_of(task, split)
            if inputs:
                timeouts = (30.0,) * len(inputs)
                jobs.append(sandbox.CallJob(key=(task.task_id, split), program=program.source,
                                            entry_point=program.entry_point, inputs=inputs,
                                            limits=job_limits(timeouts), per_input_timeout_s=timeouts,
                                            deepcopy_inputs=False, digest_above_bytes=64 * 1024))
    return jobs


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for_workers(address: str, count: int, timeout_s: float = 120.0) -> None:
    from distributed import Client

    with Client(address, timeout=timeout_s) as client:
        client.wait_for_workers(count, timeout=timeout_s)


@contextlib.contextmanager
def dask_cluster(workers: int, port: int, folder: Path) -> Iterator[str]:
    """A scheduler on 127.0.0.1:`port` and `workers` single-threaded worker processes; yields "HOST:PORT"."""
    address = f"127.0.0.1:{port}"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parent.parent),
                                                        os.environ.get("PYTHONPATH", "")])}
    processes = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                   "--port", str(port), "--dashboard-address", ":0"], env=env, cwd=folder,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        for _ in range(workers):
            processes.append(subprocess.Popen(
                [sys.executable, "-m", "distributed.cli.dask_worker", f"tcp://{address}", "--nthreads", "1",
                 "--nworkers", "1", "--no-dashboard", "--local-directory", str(folder)], env=env, cwd=folder,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        _wait_for_workers(f"tcp://{address}", workers)
        yield address
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in reversed(processes):
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def timed_run(jobs: list[sandbox.CallJob], executor: str) -> tuple[float, dict]:
    started = time.perf_counter()
    results = dict(sandbox.run_many(jobs, executor, progress=False))
    return time.perf_counter() - started, results


def verdicts(results: dict) -> dict:
    """Per job: its status and each input's kind and value (what the ground truth keeps; times left out)."""
    return {key: (result.status, tuple((o.kind, repr(o.value)) for o in result.outcomes))
            for key, result in results.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-tasks", type=int, default=40, help="first N HumanEval+ tasks (default 40)")
    parser.add_argument("--port", type=int, default=0, help="scheduler port (default: a free one)")
    args = parser.parse_args()
    jobs = ground_truth_jobs(args.max_tasks)
    inputs = sum(len(job.inputs) for job in jobs)
    print(f"{len(jobs)} jobs ({inputs:,} inputs), {os.cpu_count()} CPUs", flush=True)
    seconds, local = timed_run(jobs, "local")
    reference = verdicts(local)
    print(f"local pool:            {seconds:7.2f} s  {len(jobs) / seconds:6.1f} jobs/s  "
          f"(load {os.getloadavg()[0]:.1f})", flush=True)
    for workers in (1, 2):
        with tempfile.TemporaryDirectory() as folder, \
                dask_cluster(workers, args.port or _free_port(), Path(folder)) as address:
            seconds, results = timed_run(jobs, f"dask://{address}")
            same = verdicts(results) == reference
            print(f"dask, {workers} worker(s):      {seconds:7.2f} s  {len(jobs) / seconds:6.1f} jobs/s  "
                  f"(load {os.getloadavg()[0]:.1f}); verdicts {'the same as' if same else 'DIFFER from'} the "
                  "local pool's", flush=True)
            if not same:
                differing = [key for key, value in verdicts(results).items() if reference.get(key) != value]
                print(f"    differing jobs: {differing[:10]}")


if __name__ == "__main__":
    os.environ.setdefault("AUDIT_CACHE", "off")  # times execution: no verdict served from the cache
    main()
