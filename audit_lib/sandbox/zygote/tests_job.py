"""One tests request: per snippet, a job that answers calls and a judge that runs the test, supervised together.

For each snippet the zygote starts the job's worker (`serve_child`: loads the program, then answers one request at
a time) in a job cell and the judge's worker (`judge_child`: the test under real CPython) in a judge cell, and
relays frames between them unopened: the job's load description and answers to the judge, the judge's requests to
the job. It measures the snippet's wall time and CPU time and each call's, enforces the snippet's deadline, and
decides how the snippet ended from what it saw outside both processes: the judge's verdict frame counts only while
the job is alive and no call is in flight; a job that ended first, for any reason, ends the snippet with the status
of its ending; a deadline is `timeout`. Exit code 0 of either process means nothing.
"""

from __future__ import annotations

import json
import os
import select
import time

from audit_lib.sandbox.zygote.frames import ANSWER, LOAD, REQUEST, VERDICT, FrameCutter, Relay, body_of, kind_of
from audit_lib.sandbox.zygote.state import ZygoteState
from audit_lib.sandbox.zygote.supervise import Capture, ChildRun, status_from_exit as _status_from_exit

# After the verdict the job's go pipe is closed and the job ends by itself; past this it is killed.
JOB_END_GRACE_S = 2.0
JUDGE_OUTPUT_BYTES = 4096


class SnippetRun:
    """The job and the judge of one snippet, and what the zygote saw of them."""

    def __init__(self, state: ZygoteState, request: dict, index: int, timeout: float,
                 judge: ChildRun | None) -> None:
        limits, judge_limits = request["limits"], request["judge_limits"]
        job_spec = json.dumps({"program": request["program"], "names": request["names"][index]}).encode()
        self.job = ChildRun(state, limits, "serve", job_spec)
        self.deadline = self.job.started + timeout
        try:
            if judge is None:  # a judge for this snippet and the ones after it (`judge_child.judge`)
                judge_spec = json.dumps({"snippets": request["snippets"], "first": index,
                                         "entry_points": request.get("entry_points", [])}).encode()
                judge = ChildRun(state, judge_limits, "judge", judge_spec, judge=True)
                judge.captures = {"out": Capture(JUDGE_OUTPUT_BYTES), "err": Capture(JUDGE_OUTPUT_BYTES)}
        except BaseException:
            self.job.kill()
            _drain_all((self.job,), time.monotonic() + JOB_END_GRACE_S)
            raise
        self.judge = judge
        # Not root, the judge's CPU is not in the job's cgroup: its share of this snippet is read around it (the test
        # and the program run in one process upstream, so the snippet's CPU is both).
        self.judge_cpu_before = judge.cpu_so_far() if state.cgroup is None else 0.0
        self.captures = {"out": Capture(limits["output_bytes"]), "err": Capture(limits["output_bytes"])}
        self.judge_captures = judge.captures
        self.to_judge, self.to_job = Relay(self.judge), Relay(self.job)
        self.from_job, self.from_judge = FrameCutter(), FrameCutter()
        self.loaded = False
        self.in_flight: float | None = None  # when the current call was sent
        self.calls = 0
        self.call_wall_s = 0.0
        self.verdict: dict | None = None
        self.job_ended_first = False
        self.violation: str | None = None
        self.timed_out = False

    # ------------------------------------------------------------------ frames

    def _on_job(self, chunk: bytes) -> bool:
        for whole in self.from_job.feed(chunk):
            kind = kind_of(whole)
            if self.verdict is not None:
                continue
            if kind == LOAD and not self.loaded:
                self.loaded = True
                self.to_judge.push(whole)
            elif kind == ANSWER and self.in_flight is not None:
                self.call_wall_s += time.monotonic() - self.in_flight
                self.in_flight = None
                self.to_judge.push(whole)
            else:
                self.violation = "the job wrote a frame nobody asked for"
                return False
        if self.from_job.violation:
            self.violation = self.from_job.violation
            return False
        return True

    def _on_judge(self, chunk: bytes) -> bool:
        for whole in self.from_judge.feed(chunk):
            kind = kind_of(whole)
            if kind == REQUEST and self.loaded and self.in_flight is None and self.verdict is None:
                self.in_flight = time.monotonic()
                self.calls += 1
                self.to_job.push(whole)
            elif kind == VERDICT and self.in_flight is None and self.verdict is None:
                self.verdict = _parse_verdict(body_of(whole))
                self.job.close_go()  # the job ends by itself now; its end no longer matters
            else:
                self.violation = "the judge broke the protocol"
                return False
        return True

    # ------------------------------------------------------------------ supervision

    def supervise(self) -> None:
        poller = select.poll()
        self.job.register(poller)
        self.judge.register(poller)
        owner = {fd: self.job for fd in self.job.open_fds} | {fd: self.judge for fd in self.judge.open_fds}
        job_end_by = None
        while self.job.open_fds or (self.judge.open_fds and self.verdict is None):
            now = time.monotonic()
            if self.verdict is None and now >= self.deadline and not self.timed_out:
                self.timed_out = True
                self._kill_all()
            if self.verdict is not None and job_end_by is None:
                job_end_by = now + JOB_END_GRACE_S
            if job_end_by is not None and now >= job_end_by and self.job.open_fds and not self.job.killed_by_us:
                self.job.kill()
            for run in (self.job, self.judge):
                if run.killed_by_us:
                    run.enforce_end()
            self.to_job.flush()
            self.to_judge.flush()
            writers = {relay.run.go_fd: relay for relay in (self.to_job, self.to_judge) if relay.waiting()}
            for fd in writers:
                poller.register(fd, select.POLLOUT)
            next_stop = min(self.deadline if self.verdict is None else job_end_by, now + 1.0)
            if self.job.killed_by_us or self.judge.killed_by_us:
                next_stop = min(next_stop, now + 0.1)
            events = poller.poll(max(1, int(max(0.0, next_stop - now) * 1000) + 1))
            for fd in writers:
                poller.unregister(fd)
            for fd, _event in events:
                if fd in writers:
                    continue  # flushed at the top of the next round
                run = owner[fd]
                before = fd in run.open_fds
                if run is self.job:
                    run.read_ready(fd, poller, self.captures, self._on_job)
                    if before and fd not in run.open_fds and run.fds[fd] == "res" and self.verdict is None \
                            and not run.killed_by_us:
                        self.job_ended_first = True
                        self._kill(self.judge)
                else:
                    run.read_ready(fd, poller, self.judge_captures, self._on_judge)
                    # A judge that ends without a verdict ends the job too; not one we ended because the job had
                    # ended first, whose init may not have reported yet how the job ended.
                    if before and fd not in run.open_fds and run.fds[fd] == "res" and self.verdict is None \
                            and not self.job_ended_first:
                        self._kill(self.job)
            if self.violation is not None:
                self._kill_all()
        for fd in self.judge.open_fds:
            poller.unregister(fd)
        self.job.finish()
        if not self.judge.open_fds:
            self.judge.finish()

    def judge_left(self) -> ChildRun | None:
        """The judge, alive and between snippets, for the next one; None when it ended or was ended.

        A judge killed after its verdict (the job ended first, in the same poll round) is reaped here, never handed
        on: the next snippet would otherwise meet a dying judge and be charged with this snippet's end."""
        if not self.judge.open_fds or self.verdict is None:
            return None
        if self.judge.killed_by_us:
            _drain_all((self.judge,), time.monotonic() + JOB_END_GRACE_S)
            return None
        return self.judge

    def _kill(self, run: ChildRun) -> None:
        if not run.killed_by_us and run.open_fds:
            run.kill()

    def _kill_all(self) -> None:
        self._kill(self.job)
        self._kill(self.judge)

    # ------------------------------------------------------------------ outcome

    def outcome(self) -> dict:
        """The snippet's verdict record, decided from what was seen outside both processes."""
        status, error_type, message, reason = self._decide()
        return {"status": status, "error_type": error_type, "error_message": message, "reason": reason,
                "stdout": self.captures["out"].text(), "stderr": self.captures["err"].text(),
                "wall_s": self.job.duration, "cpu_s": self.job.cpu_s + self._judge_cpu_s(), "calls": self.calls,
                "call_wall_s": self.call_wall_s, "shadowed_modules": _shadowed(self.verdict)}

    def _judge_cpu_s(self) -> float:
        """The judge's CPU during this snippet where no cgroup holds it with the job's (not root)."""
        if self.judge.state.cgroup is not None:
            return 0.0
        return max(0.0, self.judge.cpu_so_far() - self.judge_cpu_before)

    def _decide(self) -> tuple[str, str | None, str | None, str | None]:
        if self.timed_out:
            return "timeout", "Timeout", "wall-clock limit reached", None
        if self.violation is not None:
            return "error", "ProtocolViolation", self.violation, None
        if self.job_ended_first:
            status, error_type, message = _status_from_exit(self.job, False)
            if status == "harness_error":
                message += ": " + self.captures["err"].text()[-2000:]
            return status, error_type, message, None
        if self.verdict is None:
            if not self.judge.setup_done:
                return "harness_error", "SandboxSetupError", "the judge could not be set up: " + \
                    self.judge_captures["err"].text()[-2000:], None
            how, code, signame = self.judge.exit_description()
            if how == "exited":  # the test itself ended the judge (an os._exit in the test code)
                return "error", "JudgeEnded", f"the test ended the judge (exit code {code}) before a verdict", None
            return "error", "JudgeLimit", f"the judge ended without a verdict ({how} {signame or ''})", "judge_limit"
        return self._from_verdict(self.verdict)

    def _from_verdict(self, verdict: dict) -> tuple[str, str | None, str | None, str | None]:
        status = verdict.get("status")
        error_type, message = verdict.get("error_type"), verdict.get("error_message")
        memory_evidence = self.job.oom_killed or self.job.hit_memory_limit
        if status == "load_error":
            base = verdict.get("base")
            if base == "AssertionError":
                return "fail", error_type, message, None
            if base == "MemoryError" and memory_evidence:
                return "memory", error_type, message, None
            return "error", error_type, message, None
        if status == "error" and (verdict.get("program_base") == "MemoryError"
                                  or verdict.get("reason") == "judge_limit") and memory_evidence:
            return "memory", error_type, message, None
        if status in ("pass", "fail", "error"):
            return status, error_type, message, verdict.get("reason")
        return "error", "ProtocolViolation", "the judge wrote an unknown verdict", None


def _drain_all(runs: tuple[ChildRun, ...], until: float) -> None:
    """Read `runs` until they end by themselves, killing what is still running at `until`."""
    poller = select.poll()
    for run in runs:
        run.register(poller)
    captures = {"out": Capture(0), "err": Capture(0)}
    while any(run.open_fds for run in runs):
        if time.monotonic() >= until:
            for run in runs:
                if run.open_fds and not run.killed_by_us:
                    run.kill()
        for run in runs:
            if run.killed_by_us:
                run.enforce_end()
        for fd, _event in poller.poll(100):
            for run in runs:
                if fd in run.open_fds:
                    run.read_ready(fd, poller, captures, lambda _chunk: True)
    for run in runs:
        run.finish()


def _shadowed(verdict: dict | None) -> list[str]:
    """The module names the judge bound in place of the program's objects, as its verdict lists them."""
    names = (verdict or {}).get("shadowed_modules")
    return [name[:100] for name in names[:64] if type(name) is str] if type(names) is list else []


def _parse_verdict(body: bytes) -> dict:
    try:
        verdict = json.loads(body)
    except ValueError:
        return {"status": "?"}
    return verdict if isinstance(verdict, dict) else {"status": "?"}


def run_tests_request(state: ZygoteState, request: dict) -> dict:
    """Every snippet of one program, one after another, each with a job and a judge of its own."""
    timeouts = [float(t) for t in request["timeouts"]]
    total_deadline = time.monotonic() + float(request["total_timeout"])
    results = []
    judge: ChildRun | None = None
    try:
        for index in range(len(request["snippets"])):
            remaining = total_deadline - time.monotonic()
            if remaining <= 0:
                results.append({"status": "timeout", "error_type": "NotRun", "not_run": True,
                                "error_message": "not run: the job's total time limit was used up"})
                continue
            run = SnippetRun(state, request, index, min(timeouts[index], remaining), judge)
            run.supervise()
            results.append(run.outcome())
            judge = run.judge_left()
    finally:
        if judge is not None:  # its go pipe closed, it ends by itself
            judge.close_go()
            _drain_all((judge,), time.monotonic() + JOB_END_GRACE_S)
    return {"results": results}
