"""Class 5 of issue 24: no work outside an input's window counts toward it.

A program can do a slow input's work in a background thread (or process) while earlier inputs run, each padded to
just under its limit, so the slow input looks instant; or bank time between inputs, while the supervisor waits.
Upstream decides on each input's wall time alone, and so did we: on a quiet machine every attack here passed every
input, the slow one with the banked answer, while its work went uncounted. Now the CPU the job's other threads and
processes use (measured outside, apart from the main thread that runs the calls) is charged to the input in whose
window it ran, or to the next one when it ran between inputs: an input whose wall time plus that is over its limit
is `timeout`. What stays possible is what the main thread can do too and upstream allows: spread work over the
inputs' windows, each within its limit with its charge (on a busy machine a starved background thread gets little
CPU per window); so the tests check that every second of the background work is charged, and that nothing passes
over its limit with its charge.
"""

from __future__ import annotations

import textwrap

from audit_lib import sandbox
from audit_lib.sandbox import Limits

LIMIT_S = 1.0
LIMITS = Limits(timeout_s=LIMIT_S, total_timeout_s=60, memory_mb=256)
# 1.5 s of one core's time (over the limit on any machine), split over windows that each look fast.
SLOW_WORK = "spend(1.5)"
SPEND = """
def spend(seconds):
    import time
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass
    return "banked"
"""

THREAD_BANKS = SPEND + textwrap.dedent(f"""
    import threading, time
    banked = {{}}
    def work():
        banked["answer"] = {SLOW_WORK}
    def f(x):
        if x == "start":
            threading.Thread(target=work, daemon=True).start()
        if x == "slow":  # the answer, and the background work's CPU as this process sees it
            return [banked.get("answer", "not ready"), time.process_time() - time.thread_time()]
        time.sleep({LIMIT_S} * 0.8)  # padded to just under the limit, while the thread computes
        return x
""")
PROCESS_BANKS = SPEND + textwrap.dedent(f"""
    import os, time
    reader = None
    def f(x):
        global reader
        if x == "start":
            reader, writer = os.pipe()
            if os.fork() == 0:
                answer = {SLOW_WORK}
                os.write(writer, (answer + " " + repr(time.process_time())).encode())
                os._exit(0)
        if x == "slow":  # the answer, and the forked process's CPU
            answer, spent = os.read(reader, 64).decode().split()
            return [answer, float(spent)]
        time.sleep({LIMIT_S} * 0.8)
        return x
""")
INPUTS = [["start"]] + [["pad"]] * 8 + [["slow"]]  # enough windows for the work on a busy machine too


def _check_every_second_is_charged(result: sandbox.CallJobResult) -> None:
    """No input passed with its charge over its limit, and the background work's CPU (as the program measured it)
    was charged to the inputs (a busy machine changes how much of it lands in each window, not the total)."""
    assert result.load_error is None, result.load_error
    for outcome in result.outcomes:
        assert outcome.kind != "value" or outcome.wall_s + outcome.background_cpu_s <= LIMIT_S, outcome
    slow = result.outcomes[-1]
    if slow.kind == "value":
        _answer, background_work_s = slow.value
        charged = sum(o.background_cpu_s for o in result.outcomes)
        assert charged >= 0.8 * background_work_s, (charged, background_work_s, result.outcomes)


def test_work_a_thread_does_in_earlier_windows_is_charged_to_them() -> None:
    _check_every_second_is_charged(sandbox.call_function(THREAD_BANKS, "f", INPUTS, limits=LIMITS))


def test_work_a_forked_process_does_in_earlier_windows_is_charged_to_them() -> None:
    _check_every_second_is_charged(sandbox.call_function(PROCESS_BANKS, "f", INPUTS, limits=LIMITS))


def test_work_done_while_the_supervisor_holds_the_next_go_is_charged_to_the_next_input() -> None:
    """Between inputs the child waits for its go; with a fast check the go waits for the judge's record, which takes
    as long as the comparison takes (here a rule that sleeps 4 s). A thread working meanwhile banks the slow input's
    time: charged to the slow input, it makes it a timeout."""
    program = SPEND + textwrap.dedent(f"""
        import threading
        banked = {{}}
        def work():
            banked["answer"] = {SLOW_WORK}
        def f(x):
            if x == "start":
                threading.Thread(target=work, daemon=True).start()
                return 0
            return banked.get("answer", "not ready")
    """)
    slow_rules = ("import time\n"
                  "def make_comparer(setup, api):\n"
                  "    return Slow()\n"
                  "class Slow:\n"
                  "    def compare(self, inputs, output, expected):\n"
                  "        time.sleep(4)\n"
                  "        return output == expected, 'not equal'\n")
    judge = sandbox.CallJudge(slow_rules, (0, "banked"))
    result = sandbox.call_function(program, "f", [["start"], ["slow"]], limits=LIMITS, stop_after_failure=True,
                                   judge=judge)
    assert result.load_error is None, result.load_error
    first, slow = result.outcomes
    assert first.verdict == "match", first
    assert not (slow.kind == "value" and slow.verdict == "match"), slow
    assert slow.kind != "timeout" or slow.background_cpu_s > LIMIT_S - slow.wall_s, slow


def test_an_honest_program_is_charged_nothing() -> None:
    result = sandbox.call_function("def f(x):\n    return sum(range(x))\n", "f", [[n] for n in range(0, 20_000, 100)],
                                   limits=LIMITS)
    assert [o.kind for o in result.outcomes] == ["value"] * 200
    assert sum(o.background_cpu_s for o in result.outcomes) < 0.05, [o.background_cpu_s for o in result.outcomes]
