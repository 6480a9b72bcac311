"""Time HumanEval+ ground truth + the OpenAI-canonical replay three ways on this machine.

1. floor: one plain interpreter running every program in-process, no sandbox (EvalPlus's `trusted_exec` for the
   canonical, then the sample with EvalPlus's SIGALRM per-input limits), on one core;
2. our engine: `compute_ground_truth` + `run_candidate` through the sandbox, values compared in the parent, once
   with every input run (what the audit does) and once with `fast_check` (what `evalplus.evaluate` does by
   default: a sample's split stops at its first failure);
3. `evalplus.evaluate` on the same data and samples (with `--parallel` = CPU count, like our pool), from the
   test-only venv when built (`bash tools/upstream/make_evalplus_venv.sh`, through `tools/upstream/evalplus_driver.py`),
   else when this interpreter imports `evalplus`; `HUMANEVAL_OVERRIDE_PATH` points it at the mirror file and a fresh
   cache folder forces its ground truth. Our side starts with no warm zygote, as evalplus starts with no worker.

Usage: AUDIT_MIRROR=../shared/data .venv/bin/python perf/bench_humaneval_plus.py [--max-tasks N] [--repeat N]
       [--rounds-only]   (only the interleaved rounds against evalplus: no floor, no every-input run)
       [--tree-cpu]      (each side of a round in its own process under `perf stat -e task-clock`: the CPU of
                         the whole process tree, sandbox cells included, which no rusage of ours sees)

Each round line carries the 1-minute load average at its start: on a shared machine, compare rounds, not runs.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from audit_lib import sandbox
from audit_lib.benchmarks.humaneval_plus.data import OPENAI_HUMANEVAL, load_humaneval, load_plus
from audit_lib.benchmarks.humaneval_plus.groundtruth import GroundTruth, compute_ground_truth
from audit_lib.benchmarks.humaneval_plus.replay import (
    DEFAULT_MIN_TIME_LIMIT_S,
    original_solutions,
    run_candidate,
    score_split,
)
from audit_lib.benchmarks.humaneval_plus.runs import SPLITS

# The floor runs in a separate plain interpreter so the benchmark's own process never executes benchmark code.
# Like EvalPlus: the canonical runs unlimited and timed; the sample then runs in-process with a SIGALRM limit of
# max(min_time_limit, 4 x canonical time) per input and a whole-sample budget of min(60, sum of limits) + 1.
FLOOR_DRIVER = """
import copy, json, signal, sys, time
class Timeout(BaseException):
    pass
def alarm(signum, frame):
    raise Timeout()
signal.signal(signal.SIGALRM, alarm)
def load(program, entry_point):
    namespace = {"__name__": "__floor__"}
    exec(compile(program, "<floor>", "exec"), namespace)
    return namespace[entry_point]
jobs = json.load(sys.stdin)
started = time.perf_counter()
for job in jobs:
    canonical = load(job["program"], job["entry_point"])
    times = []
    for args in job["inputs"]:
        begin = time.perf_counter()
        try:
            canonical(*copy.deepcopy(args))
        except Exception:
            pass
        times.append(time.perf_counter() - begin)
    if job["sample"] is None:
        continue
    sample = load(job["sample"], job["entry_point"])
    limits = [max(job["min_time_limit"], 4.0 * t) for t in times]
    budget_end = time.perf_counter() + min(60.0, sum(limits)) + 1.0
    for args, limit in zip(job["inputs"], limits):
        if time.perf_counter() > budget_end:
            break
        signal.setitimer(signal.ITIMER_REAL, limit)
        try:
            sample(*args)
        except BaseException:
            pass
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
print(json.dumps({"seconds": time.perf_counter() - started}))
"""


GROUND_TRUTH_LINE = "Expected outputs computed in "  # evalplus.evaluate's line when it computed its ground truth


def floor_seconds(tasks, solutions: dict[str, str], *, min_time_limit: float = DEFAULT_MIN_TIME_LIMIT_S) -> float:
    jobs = [{"program": task.program, "entry_point": task.entry_point, "sample": solutions.get(task.task_id),
             "inputs": [list(i) for i in task.base_input + task.plus_input], "min_time_limit": min_time_limit}
            for task in tasks]
    completed = subprocess.run([sys.executable, "-c", FLOOR_DRIVER], input=json.dumps(jobs), text=True,
                               capture_output=True, check=True)
    return json.loads(completed.stdout)["seconds"]


# What getting values out of a process costs, apart from the calls: in a plain interpreter, no sandbox, one core,
# each canonical output is encoded as the job's child encodes it (`sandbox.codec` + JSON) and decoded as the parent
# decodes it. EvalPlus keeps its expected outputs in the process that computed them, so it pays none of this.
VALUE_PATH_DRIVER = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
from audit_lib.sandbox import codec
jobs = json.load(sys.stdin)
clock = time.perf_counter
seconds = {"calls": 0.0, "encode": 0.0, "decode": 0.0}
for job in jobs:
    namespace = {"__name__": "__floor__"}
    exec(compile(job["program"], "<floor>", "exec"), namespace)
    function = namespace[job["entry_point"]]
    for args in job["inputs"]:
        begin = clock()
        try:
            value = function(*args)
        except Exception:
            value = None
        called = clock()
        try:
            text = json.dumps(codec.encode(value))
        except (codec.Unserializable, ValueError, RecursionError):
            text = "null"
        encoded = clock()
        codec.decode(json.loads(text))
        seconds["calls"] += called - begin
        seconds["encode"] += encoded - called
        seconds["decode"] += clock() - encoded
print(json.dumps(seconds))
"""


def value_path_seconds(tasks) -> dict[str, float]:
    """Seconds (one core, no sandbox) of the canonical's calls, of encoding their values and of decoding them."""
    jobs = [{"program": task.program, "entry_point": task.entry_point,
             "inputs": [list(i) for i in task.base_input + task.plus_input]} for task in tasks]
    completed = subprocess.run([sys.executable, "-c", VALUE_PATH_DRIVER, str(Path(__file__).resolve().parent.parent)],
                               input=json.dumps(jobs), text=True, capture_output=True, check=True)
    return json.loads(completed.stdout)


def _machine_busy_seconds() -> float:
    """CPU seconds the whole machine has spent outside idle and iowait (Linux `/proc/stat`)."""
    with open("/proc/stat") as handle:
        fields = [int(field) for field in handle.readline().split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def _load_average() -> float:
    return os.getloadavg()[0]


def engine_seconds(loaded, solutions: dict[str, str], *, fast_check: bool = False) -> tuple[float, int, dict]:
    """(seconds, failing task splits, phases: each phase's wall and machine CPU seconds, and this process's CPU)."""
    sandbox.shutdown()  # start with no warm zygote, as evalplus starts with no worker
    started, busy, own = time.perf_counter(), _machine_busy_seconds(), time.process_time()
    runs = compute_ground_truth(loaded.tasks, "humaneval")
    gt_done, gt_busy = time.perf_counter(), _machine_busy_seconds()
    gt = GroundTruth("humaneval", loaded.provenance.sha256, runs, Path("unused"), 0, len(loaded.tasks))
    candidate = run_candidate(loaded.tasks, solutions, "humaneval", gt, fast_check=fast_check)
    phases = {"ground truth": (gt_done - started, gt_busy - busy),
              "candidate": (time.perf_counter() - gt_done, _machine_busy_seconds() - gt_busy),
              "of which this process": (None, time.process_time() - own)}
    elapsed = time.perf_counter() - started
    failing = sum(1 for task in loaded.tasks for split in SPLITS
                  if (task.task_id, split) in candidate
                  and not all(v.passed for v in score_split(task, "humaneval", candidate[(task.task_id, split)],
                                                            gt.run(task.task_id, split))))
    return elapsed, failing, phases


def _phases_text(phases: dict) -> str:
    return ", ".join(f"{name} {wall:.2f} s (machine CPU {cpu:.1f} s)" if wall is not None else f"{name}: CPU {cpu:.1f} s"
                     for name, (wall, cpu) in phases.items())


EVALPLUS_VENV_PYTHON = Path(__file__).resolve().parent.parent / "build" / "evalplus-venv" / "bin" / "python"
EVALPLUS_DRIVER = Path(__file__).resolve().parent.parent / "tools" / "upstream" / "evalplus_driver.py"


def evalplus_command(samples: Path, dataset: Path, parallel: int) -> list[str] | None:
    """How to run `evalplus.evaluate --parallel N`: the test-only venv's interpreter through the driver when built
    (`bash tools/upstream/make_evalplus_venv.sh`), else this interpreter if it imports evalplus; None otherwise."""
    if EVALPLUS_VENV_PYTHON.exists():
        return [str(EVALPLUS_VENV_PYTHON), str(EVALPLUS_DRIVER), "evaluate", str(samples), str(dataset), str(parallel)]
    if importlib.util.find_spec("evalplus") is not None:
        return [sys.executable, "-m", "evalplus.evaluate", "--dataset", "humaneval", "--samples", str(samples),
                "--i-just-wanna-run", "--parallel", str(parallel)]
    return None


def evalplus_seconds(loaded, solutions: dict[str, str]) -> tuple[float, float, float | None, float] | None:
    """(seconds until evalplus printed its scores, seconds until its process exited, seconds its ground truth took
    by its own report, the machine's CPU seconds until the scores), or None if not installed.

    `evalplus.evaluate` starts a non-daemon "stucking checker" thread that sleeps 20 s at a time, so the process
    exits only at the next 20 s boundary after the work is done. The first figure leaves that idle wait out.
    """
    with tempfile.TemporaryDirectory() as folder:
        samples = Path(folder) / "samples.jsonl"
        dataset = Path(folder) / "HumanEvalPlus.jsonl"
        command = evalplus_command(samples, dataset, os.cpu_count() or 1)
        if command is None:
            return None
        samples.write_text("".join(json.dumps({"task_id": t, "solution": s}) + "\n" for t, s in solutions.items()))
        with gzip.open(loaded.path, "rt", encoding="utf-8") as handle:
            rows = [json.loads(line) for line in handle if line.strip()]
        wanted = {task.task_id for task in loaded.tasks}
        dataset.write_text("".join(json.dumps(r) + "\n" for r in rows if r["task_id"] in wanted))
        env = {**os.environ, "HUMANEVAL_OVERRIDE_PATH": str(dataset), "XDG_CACHE_HOME": str(Path(folder) / "cache"),
               "PYTHONUNBUFFERED": "1"}
        started, busy = time.perf_counter(), _machine_busy_seconds()
        scored_at = ground_truth_s = scored_busy = None
        with subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              text=True) as process:
            for line in process.stdout:
                if line.startswith("pass@"):
                    scored_at, scored_busy = time.perf_counter() - started, _machine_busy_seconds() - busy
                elif line.startswith(GROUND_TRUTH_LINE):
                    ground_truth_s = float(line[len(GROUND_TRUTH_LINE):].strip().rstrip("s"))
        exited_at = time.perf_counter() - started
        if process.returncode != 0 or scored_at is None:
            raise RuntimeError(f"evalplus.evaluate failed (exit {process.returncode}) or printed no pass@k: "
                               f"{' '.join(command)}")
        return scored_at, exited_at, ground_truth_s, scored_busy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-tasks", type=int, default=0, help="first N tasks only (0 = all 164)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="rounds of (our fast_check, evalplus), interleaved; medians are compared (default 3)")
    parser.add_argument("--tree-cpu", action="store_true",
                        help="run each side of a round under `perf stat` and print its process tree's CPU")
    parser.add_argument("--side", choices=("ours", "evalplus"), help=argparse.SUPPRESS)  # one side, for --tree-cpu
    parser.add_argument("--rounds-only", action="store_true",
                        help="skip the floor, the every-input run and the value path: only the rounds")
    args = parser.parse_args()
    if args.tree_cpu:
        tree_cpu_rounds(args)
        return
    loaded = load_plus("humaneval", max_tasks=args.max_tasks)
    originals, _ = load_humaneval(OPENAI_HUMANEVAL)
    solutions = original_solutions(loaded.tasks, originals)
    if args.side is not None:  # a child of --tree-cpu: one side, its seconds as JSON
        seconds = engine_seconds(loaded, solutions, fast_check=True)[0] if args.side == "ours" \
            else evalplus_seconds(loaded, solutions)[0]
        print(json.dumps({"seconds": seconds}))
        return
    inputs = sum(len(t.base_input) + len(t.plus_input) for t in loaded.tasks)
    print(f"{len(loaded.tasks)} tasks, {inputs:,} inputs, each run twice (canonical + OpenAI canonical); "
          f"{os.cpu_count()} CPUs", flush=True)
    engine = None
    if not args.rounds_only:
        floor = floor_seconds(loaded.tasks, solutions)
        engine, failing, phases = engine_seconds(loaded, solutions)
        print(f"floor (in-process, no sandbox, 1 core): {floor:8.2f} s")
        print(f"our engine (sandbox, local pool):       {engine:8.2f} s   ratio to floor {engine / floor:5.2f}x "
              f"(target <= 2x); {failing} failing task splits; {_phases_text(phases)}", flush=True)
        path = value_path_seconds(loaded.tasks)
        print(f"the canonicals' values, no sandbox, 1 core: calls {path['calls']:.2f} s, encoding them "
              f"{path['encode']:.2f} s (in the job), decoding them {path['decode']:.2f} s (in the parent)", flush=True)
    # The samples' own run time varies from run to run (inputs near the 1 s floor time out or not), so the
    # comparison with evalplus alternates the two and compares medians.
    ours: list[float] = []
    theirs: list[tuple[float, float]] = []
    for round_number in range(1, max(1, args.repeat) + 1):
        our_load = _load_average()
        seconds, failing_fast, phases = engine_seconds(loaded, solutions, fast_check=True)
        ours.append(seconds)
        their_load = _load_average()
        reference = evalplus_seconds(loaded, solutions)
        if reference is not None:
            theirs.append(reference)
        their_text = "not installed" if reference is None else \
            f"{reference[0]:7.2f} s to its scores (machine CPU {reference[3]:.1f} s; {reference[1]:.2f} s to exit; " \
            f"its ground truth {'?' if reference[2] is None else f'{reference[2]:.2f}'} s)"
        print(f"round {round_number}: our engine, fast_check {seconds:7.2f} s at load {our_load:.1f} ({failing_fast} "
              f"failing task splits; {_phases_text(phases)}); evalplus.evaluate {their_text} at load "
              f"{their_load:.1f}", flush=True)
    fast = statistics.median(ours)
    print(f"our engine, fast_check (as evalplus):   {fast:8.2f} s   median of {len(ours)}; a split stops at its first "
          f"failure (exception, timeout, or a value != expected where == decides)")
    if not theirs:
        print("evalplus.evaluate:                       not installed (optional; see this file's docstring)")
        return
    scored = statistics.median(t[0] for t in theirs)
    exited = statistics.median(t[1] for t in theirs)
    print(f"evalplus.evaluate --parallel {os.cpu_count()}:       {scored:8.2f} s   median of {len(theirs)}, until it printed "
          f"its scores ({exited:.2f} s until its process exited)")
    print(f"ours / evalplus, same semantics:        {fast / scored:8.2f}x  (target < 1; {fast / exited:.2f}x against its "
          f"exit time)" + (f"; ours running every input: {engine / scored:.2f}x" if engine is not None else ""))


def tree_cpu_rounds(args: argparse.Namespace) -> None:
    """Interleaved rounds, each side a process of its own under `perf stat`: wall to the scores, tree CPU, load.

    The tree CPU covers the whole process (Python start, reading the data: alike on both sides) to its exit."""
    results: dict[str, list[tuple[float, float]]] = {"ours": [], "evalplus": []}
    for round_number in range(1, max(1, args.repeat) + 1):
        for side in ("ours", "evalplus"):
            load = _load_average()
            completed = subprocess.run(
                ["perf", "stat", "-e", "task-clock", "-x", ",", "--", sys.executable, __file__, "--side", side,
                 "--max-tasks", str(args.max_tasks)], capture_output=True, text=True, check=True)
            seconds = json.loads(completed.stdout.strip().splitlines()[-1])["seconds"]
            cpu = next(float(line.split(",")[0]) / 1000 for line in completed.stderr.splitlines()
                       if ",task-clock," in line)
            results[side].append((seconds, cpu))
            print(f"round {round_number}: {side:8s} {seconds:7.2f} s to the scores, process tree CPU {cpu:6.1f} s "
                  f"(load {load:.1f} at its start)", flush=True)
    medians = {side: (statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows))
               for side, rows in results.items()}
    (ours_s, ours_cpu), (theirs_s, theirs_cpu) = medians["ours"], medians["evalplus"]
    print(f"medians of {len(results['ours'])}: ours {ours_s:.2f} s, CPU {ours_cpu:.1f} s; evalplus.evaluate "
          f"--parallel {os.cpu_count()} {theirs_s:.2f} s, CPU {theirs_cpu:.1f} s; ours is {theirs_s / ours_s:.2f}x as "
          f"fast (target >= 1.3x) and uses {ours_cpu / theirs_cpu:.2f}x its CPU")


if __name__ == "__main__":
    os.environ.setdefault("AUDIT_CACHE", "off")  # times execution: no verdict served from the cache
    main()
