"""Per-input time is the supervisor's, and each input's runs from its own start (the go the supervisor sends).

Before the go protocol, result lines that reached the supervisor in one read shared one arrival time: the first
carried the whole interval and the others zero, so an input could look instantaneous whatever it cost.
"""

from __future__ import annotations

import textwrap

from audit_lib import sandbox
from audit_lib.sandbox import Limits
from audit_lib.sandbox.zygote.call_job import CallProgress

QUICK = Limits(timeout_s=4, total_timeout_s=20, memory_mb=256)


class FakeClocks:
    """The supervisor's clocks, moved by the test: (wall, cpu) readings and the wall time of each go."""

    def __init__(self) -> None:
        self.now = 0.0
        self.gos: list[float] = []

    def reading(self) -> tuple[float, float]:
        return self.now, self.now

    def progress(self, inputs: int) -> CallProgress:
        return CallProgress(0, [5.0] * inputs, 1.0, 1e9, 5.0, clock=self.reading,
                            go=lambda: self.gos.append(self.now), wall_clock=lambda: self.now)


def test_each_input_is_started_by_a_go_and_timed_from_it() -> None:
    clocks = FakeClocks()
    progress = clocks.progress(2)
    clocks.now = 1.0
    assert progress.feed(b"L ok\n") and clocks.gos == [1.0]
    clocks.now = 3.0
    assert progress.feed(b"0 value 0.0 1\n") and clocks.gos == [1.0, 3.0]
    clocks.now = 3.5
    assert progress.feed(b"1 value 0.0 2\nD\n") and progress.done
    walls = [float(line.split(b" ")[2].split(b":")[0]) for line in progress.lines]
    assert walls == [2.0, 0.5]


def test_lines_read_together_never_give_an_input_zero_time() -> None:
    # The old supervisor accepted both lines and timed the second at 0.0 s: here it is refused instead.
    clocks = FakeClocks()
    progress = clocks.progress(2)
    assert progress.feed(b"L ok\n")
    clocks.now = 2.0
    accepted = progress.feed(b"0 value 0.0 1\n1 value 0.0 2\n")
    assert not accepted and "before it was started" in progress.violation
    assert [line.split(b" ")[0] for line in progress.lines] == [b"0"]


def test_a_line_started_before_its_go_in_the_same_read_is_refused() -> None:
    clocks = FakeClocks()
    progress = clocks.progress(2)
    assert progress.feed(b"L ok\n")
    assert not progress.feed(b"0 value 0.0 1\n1 val")
    assert "before it was started" in progress.violation


def test_measured_times_follow_each_inputs_own_work() -> None:
    program = textwrap.dedent("""
        import time
        def f(seconds):
            time.sleep(seconds)
            return seconds
    """)
    result = sandbox.call_function(program, "f", [[0.4], [0.0], [0.4], [0.0]], limits=QUICK)
    walls = [outcome.wall_s for outcome in result.outcomes]
    assert result.status == "pass", result
    assert walls[0] >= 0.4 and walls[2] >= 0.4, walls
    assert walls[1] < 0.2 and walls[3] < 0.2, walls
