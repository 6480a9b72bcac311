"""Our verdicts against the official harness's own, sample by sample and split by split, each difference explained.

A split is compared when both sides have it. It is `decided by time` when our verdict came from a clock (re-run
alone, judged on CPU time) or the official one is `timeout`: those are listed with our CPU time and limit, apart from
the agreement on the rest. Every other difference is listed with its cause: `release` (the results name another
HumanEval+ release than the one scored), `edited_text` (the official harness passed a sample that does not compile as
given: it ran other text, e.g. a harness that edits completions), or `deterministic` (our evidence: the first
failing input, expected vs got, or that every input passed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from audit_lib.benchmarks.humaneval_plus.samples.official_results import OfficialResults
from audit_lib.benchmarks.humaneval_plus.samples.verdicts import SampleVerdict, SplitVerdict


@dataclass(frozen=True)
class SplitComparison:
    """One split of one sample on both sides."""

    task_id: str
    sample: int
    split: str
    ours: str
    theirs: str  # pass | fail | timeout
    decided_by_time: bool
    cause: str | None  # None when they agree; `timing`, `release`, `edited_text` or `deterministic`
    evidence: str

    @property
    def agrees(self) -> bool:
        return self.ours == ("pass" if self.theirs == "pass" else "fail")

    def row(self) -> dict[str, Any]:
        return {"task_id": self.task_id, "sample": self.sample, "split": self.split, "ours": self.ours,
                "official": self.theirs, "cause": self.cause, "evidence": self.evidence}


@dataclass(frozen=True)
class Agreement:
    """How our verdicts compare with one official results file."""

    path: str
    format: str
    comparisons: tuple[SplitComparison, ...]
    only_ours: tuple[tuple[str, int], ...]  # samples the results file does not have
    only_theirs: tuple[tuple[str, int], ...]  # results for samples we did not score (other tasks, more samples)
    release_note: str = ""
    text_mismatches: tuple[tuple[str, int], ...] = field(default_factory=tuple)

    @property
    def samples_compared(self) -> int:
        return len({(c.task_id, c.sample) for c in self.comparisons})

    def by_time(self) -> list[SplitComparison]:
        return [c for c in self.comparisons if c.decided_by_time]

    def disagreements(self) -> list[SplitComparison]:
        return [c for c in self.comparisons if not c.agrees]

    def deterministic_disagreements(self) -> list[SplitComparison]:
        return [c for c in self.disagreements() if not c.decided_by_time]

    def causes(self) -> dict[str, int]:
        """Disagreeing splits by cause."""
        counts: dict[str, int] = {}
        for comparison in self.disagreements():
            counts[str(comparison.cause)] = counts.get(str(comparison.cause), 0) + 1
        return counts

    def samples_agreeing(self) -> int:
        """Samples whose every compared split agrees."""
        disagreeing = {(c.task_id, c.sample) for c in self.disagreements()}
        return self.samples_compared - len(disagreeing)

    def summary(self) -> dict[str, Any]:
        splits_by_time = self.by_time()
        return {"file": self.path, "format": self.format, "samples_compared": self.samples_compared,
                "samples_agreeing": self.samples_agreeing(),
                "splits_compared": len(self.comparisons),
                "splits_agreeing": sum(1 for c in self.comparisons if c.agrees),
                "splits_decided_by_time": len(splits_by_time),
                "disagreeing_deterministic": len(self.deterministic_disagreements()),
                "disagreeing_by_time": sum(1 for c in splits_by_time if not c.agrees),
                "disagreement_causes": self.causes(),
                "only_in_samples": len(self.only_ours), "only_in_results": len(self.only_theirs),
                "text_mismatches": len(self.text_mismatches), "release_note": self.release_note}


def compare(verdicts: Sequence[SampleVerdict], official: OfficialResults, *, release_md5: str | None = None,
            release_name: str = "", texts: Mapping[tuple[str, int], str] | None = None) -> Agreement:
    """Compare every sample both sides have.

    `release_md5` (md5 of the scored release, as evalplus names it) tells a results file computed on another release;
    `texts` (key -> the program or completion as the harness read it) tells a results file that repeats other samples
    than these.
    """
    ours = {(v.task_id, v.sample): v for v in verdicts}
    release_note = ""
    other_release = bool(release_md5 and official.dataset_md5 and official.dataset_md5 != release_md5)
    if other_release:
        release_note = (f"the results name dataset md5 {official.dataset_md5}, not {release_name}'s {release_md5}: "
                        "they were computed on another release")
    comparisons: list[SplitComparison] = []
    mismatched = []
    for key, theirs in official.verdicts.items():
        verdict = ours.get(key)
        if verdict is None:
            continue
        if texts is not None and theirs.text is not None and key in texts and texts[key] != theirs.text:
            mismatched.append(key)
        pairs = [("base", verdict.base, theirs.base)]
        if verdict.plus is not None and theirs.plus is not None:
            pairs.append(("plus", verdict.plus, theirs.plus))
        for split, mine, their_status in pairs:
            comparisons.append(_compared(key, split, mine, their_status, theirs.detail, other_release))
    return Agreement(official.path, official.format, tuple(comparisons),
                     tuple(key for key in ours if key not in official.verdicts),
                     tuple(key for key in official.verdicts if key not in ours), release_note, tuple(mismatched))


def _compared(key: tuple[str, int], split: str, mine: SplitVerdict, theirs: str, detail: str,
              other_release: bool) -> SplitComparison:
    by_time = mine.cause == "timing" or theirs == "timeout"
    agrees = mine.status == ("pass" if theirs == "pass" else "fail")
    if agrees:
        cause = None
    elif by_time:
        cause = "timing"
    elif other_release:
        cause = "release"
    elif mine.kind == "syntax" and theirs == "pass":
        cause = "edited_text"  # no harness passes a program that does not compile: it ran different text
    else:
        cause = "deterministic"
    evidence = _evidence(mine, detail) if (by_time or not agrees) else ""
    return SplitComparison(key[0], key[1], split, mine.status, theirs, by_time, cause, evidence)


def _evidence(mine: SplitVerdict, detail: str) -> str:
    parts = []
    if mine.cpu_s is not None and mine.limit_s is not None:
        parts.append(f"ours: {mine.cpu_s:.3f} s of CPU alone against a {mine.limit_s:g} s limit "
                     f"({mine.timing_state})")
    elif mine.status == "pass":
        parts.append("ours: every input passed" if mine.cause is None else "ours: passed")
    else:
        where = "" if mine.input_index is None else f" input {mine.input_index} {mine.input}"
        parts.append(f"ours: {mine.kind}{where}: got {mine.got}" + (f", expected {mine.expected}"
                                                                    if mine.expected else ""))
    if detail:
        parts.append(f"official: {detail}")
    return "; ".join(parts)[:500]


__all__ = ["Agreement", "SplitComparison", "compare"]
