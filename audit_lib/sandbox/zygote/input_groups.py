"""The input groups of a call job: which inputs run together, under one time limit.

The input groups of a call job (`call_function(input_groups=...)`): which inputs run together, in a worker of their own,
under one time limit for all of them (stdlib only).
"""

from __future__ import annotations

import bisect


class InputGroups:
    """The inputs' groups: each group's first input, time limit and deadline.

    The inputs' groups (`call_function(input_groups=...)`): each group's first input and the time limit of all its
    inputs together, and each group's deadline once its first run started (its load counts).
    """

    def __init__(self, firsts: list[int], timeouts: list[float], count: int) -> None:
        if len(firsts) != len(timeouts) or firsts != sorted(set(firsts)) or (firsts and firsts[0] != 0) \
                or any(not 0 <= first < count for first in firsts):
            raise ValueError("input groups: one increasing first input per group, from 0, and one limit each")
        self.firsts, self.timeouts = firsts, timeouts
        self.first_set = frozenset(firsts)
        self.deadlines: dict[int, float] = {}
        # (stdout, stderr) positions after each answered input's output.
        self.marks: dict[int, tuple[int, int]] = {}
        # Each group's CPU seconds: the sum of its runs' (each run a worker of its own, read once all its processes
        # are gone: its load, its calls and its exit).
        self.cpu = [0.0] * len(firsts)

    def group_of(self, index: int) -> int:
        return bisect.bisect_right(self.firsts, index) - 1

    def deadline(self, index: int, now: float) -> float:
        group = self.group_of(index)
        return self.deadlines.setdefault(group, now + self.timeouts[group])

    def passed(self, index: int, now: float) -> bool:
        """Whether the group of `index` is out of time (its deadline was set and is over)."""
        deadline = self.deadlines.get(self.group_of(index))
        return deadline is not None and now >= deadline

    def outputs(self, captures: dict, count: int) -> list[list[str]]:
        """[stdout, stderr] of each group.

        [stdout, stderr] of each group: what was written from the end of the previous group's last answered input to the
        end of its own (each group loads the program itself, so its load's output is in it too).
        """
        outputs = []
        previous = (0, 0)
        for group, first in enumerate(self.firsts):
            end = self.firsts[group + 1] if group + 1 < len(self.firsts) else count
            answered = [self.marks[index] for index in range(first, end) if index in self.marks]
            until = answered[-1] if answered else previous
            outputs.append([captures[name].text_between(since, upto)
                            for name, since, upto in (("out", previous[0], until[0]), ("err", previous[1], until[1]))])
            previous = until
        return outputs

    def next_first(self, index: int, count: int) -> int:
        """The first input of the group after the one of `index` (`count` after the last group)."""
        group = self.group_of(index) + 1
        return self.firsts[group] if group < len(self.firsts) else count
