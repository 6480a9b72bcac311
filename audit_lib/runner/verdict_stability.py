"""Do two runs agree on which failures are deterministic and which are confirmed timing failures?

Every check that classifies failing verdicts carries `meta.failure_split` (`unit`, the four counts, and
`deterministic_key` / `timing_key`: the observed fields holding the deterministic ids and the timing rows with
their `state`). Two runs of the same audits (say one on an idle machine, one with every core busy) are stable
when, check by check, the deterministic ids and the confirmed timing ids are the same sets. Borderline and
not-failing timing verdicts are shown but never decide: by definition they move with the machine. So does an id
confirmed in one run and borderline in the other whose two flip factors agree within the borderline margin (one
measurement each side of the band's upper edge): it is shown apart, as a move across the band. ("idle" and "hog"
name the two runs: the reference run and the one compared with it.)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from audit_lib.errors import SchemaError
from audit_lib.runner.history import load_findings_by_audit
from audit_lib.timing import BORDERLINE_MARGIN

TIMING_STATES = ("confirmed", "borderline", "not_failing", "unmeasured")
STATE_ALIASES = {"not_a_failure": "not_failing"}  # timing.TimingState's spelling
# Checks that classified failures before `meta.failure_split` existed: their keys are known.
KNOWN_SPLITS: dict[str, dict[str, str]] = {
    "original_canonical_vs_plus": {"unit": "tasks", "deterministic_key": "tasks_failing_deterministic",
                                   "timing_key": "tasks_failing_timing"},
}
NOT_COMPARABLE_STATUSES = ("skipped", "error")
Agreement = Literal["identical", "differs", "not_comparable"]


@dataclass(frozen=True)
class ObservedSplit:
    """One check's failing ids in one run: deterministic, and timing ids by state."""

    unit: str
    deterministic: frozenset[str]
    timing: Mapping[str, frozenset[str]]  # state (TIMING_STATES) -> ids
    flip_factors: Mapping[str, float]  # timing id -> its flip factor, when the row gives one
    source: str  # "meta.failure_split" or "known keys" (findings from before the meta existed)

    @property
    def confirmed(self) -> frozenset[str]:
        return self.timing.get("confirmed", frozenset())

    def count(self, state: str) -> int:
        return len(self.timing.get(state, ()))


@dataclass(frozen=True)
class SetDifference:
    """Ids of one set found in only one of the two runs."""

    only_idle: tuple[str, ...] = ()
    only_hog: tuple[str, ...] = ()

    @property
    def identical(self) -> bool:
        return not self.only_idle and not self.only_hog


@dataclass(frozen=True)
class SplitComparison:
    """One classifying check of one audit, idle run against hog run."""

    audit: str
    check: str
    agreement: Agreement
    idle: ObservedSplit | None = None
    hog: ObservedSplit | None = None
    deterministic: SetDifference = field(default_factory=SetDifference)
    confirmed: SetDifference = field(default_factory=SetDifference)  # decisive: not borderline in the other run
    confirmed_at_band: SetDifference = field(default_factory=SetDifference)  # confirmed here, borderline there
    reason: str = ""  # why a comparison was not possible

    def to_json(self) -> dict[str, Any]:
        def split_json(split: ObservedSplit | None) -> dict[str, Any] | None:
            if split is None:
                return None
            return {"unit": split.unit, "source": split.source, "deterministic": sort_ids(split.deterministic),
                    **{f"timing_{state}": sort_ids(split.timing.get(state, ())) for state in TIMING_STATES},
                    "flip_factors": dict(sorted(split.flip_factors.items()))}

        return {"audit": self.audit, "check": self.check, "agreement": self.agreement, "reason": self.reason,
                "idle": split_json(self.idle), "hog": split_json(self.hog),
                "deterministic_only_idle": list(self.deterministic.only_idle),
                "deterministic_only_hog": list(self.deterministic.only_hog),
                "confirmed_only_idle": list(self.confirmed.only_idle),
                "confirmed_only_hog": list(self.confirmed.only_hog),
                "confirmed_at_band_only_idle": list(self.confirmed_at_band.only_idle),
                "confirmed_at_band_only_hog": list(self.confirmed_at_band.only_hog)}


def sort_ids(ids: Iterable[str]) -> list[str]:
    """Natural order: HumanEval/9 before HumanEval/10, Mbpp/2#9 before Mbpp/2#10."""
    def key(item: str) -> tuple[Any, ...]:
        head, _, tail = item.rpartition("/")
        return (head, *((0, int(part)) if part.isdigit() else (1, part) for part in tail.split("#")))

    return sorted(ids, key=key)


def _item_id(item: Any, unit: str, where: str) -> str:
    """A deterministic entry or a timing row as one id string; inputs are `task#index`."""
    if isinstance(item, str):
        return item
    if isinstance(item, int) and not isinstance(item, bool):
        return str(item)
    if isinstance(item, (list, tuple)) and item and all(isinstance(part, (str, int)) for part in item):
        return "#".join(str(part) for part in item)
    if isinstance(item, Mapping):
        if "id" in item:
            return str(item["id"])
        for name in ("task_id", "run_id"):
            if name in item:
                suffix = f"#{item['input_index']}" if unit == "inputs" and "input_index" in item else ""
                return f"{item[name]}{suffix}"
    raise SchemaError(f"{where}: {item!r} names no id (a string, or a row with id / task_id / run_id)",
                      field=where)


def _observed_field(observed: Mapping[str, Any], key: str, where: str) -> Any:
    """`observed[key]`, where a dotted key walks nested mappings (`Mini.tasks_detection_lost_deterministic`)."""
    value: Any = observed
    for part in key.split("."):
        if not isinstance(value, Mapping) or part not in value:
            raise SchemaError(f"{where}: observed has no field {key!r}", field=key)
        value = value[part]
    return value


def split_keys(check: Mapping[str, Any]) -> tuple[dict[str, Any], str] | None:
    """The check's failure-split declaration and its source, or None when it classifies nothing in this run."""
    declared = (check.get("meta") or {}).get("failure_split")
    if isinstance(declared, Mapping):
        return dict(declared), "meta.failure_split"
    known = KNOWN_SPLITS.get(str(check.get("id")))
    observed = check.get("observed")
    if known and isinstance(observed, Mapping) and all(observed.get(known[k]) is not None
                                                       for k in ("deterministic_key", "timing_key")):
        return dict(known), "known keys"
    return None


def read_failure_split(check: Mapping[str, Any], *, where: str) -> ObservedSplit | None:
    """The check's failure split, None when it declares none; a malformed declaration raises `SchemaError`."""
    found = split_keys(check)
    if found is None:
        return None
    declared, source = found
    for name in ("deterministic_key", "timing_key"):
        if not isinstance(declared.get(name), str):
            raise SchemaError(f"{where}: {source}.{name} must name an observed field, got {declared.get(name)!r}",
                              field=f"{source}.{name}")
    unit = str(declared.get("unit", "tasks"))
    observed = check.get("observed") or {}
    deterministic_items = _observed_field(observed, declared["deterministic_key"], where)
    timing_rows = _observed_field(observed, declared["timing_key"], where)
    for key, value in ((declared["deterministic_key"], deterministic_items), (declared["timing_key"], timing_rows)):
        if not isinstance(value, list):
            raise SchemaError(f"{where}: observed.{key} must be a list, got {type(value).__name__}", field=key)
    deterministic = frozenset(_item_id(item, unit, f"{where} observed.{declared['deterministic_key']}[{i}]")
                              for i, item in enumerate(deterministic_items))
    timing: dict[str, set[str]] = {state: set() for state in TIMING_STATES}
    flip_factors: dict[str, float] = {}
    for index, row in enumerate(timing_rows):
        row_where = f"{where} observed.{declared['timing_key']}[{index}]"
        if not isinstance(row, Mapping) or "state" not in row:
            raise SchemaError(f"{row_where}: a timing row needs a `state` field, got {row!r}", field="state")
        state = STATE_ALIASES.get(str(row["state"]), str(row["state"]))
        if state not in timing:
            raise SchemaError(f"{row_where}: state {row['state']!r} is not one of {TIMING_STATES}", field="state")
        item_id = _item_id(row, unit, row_where)
        timing[state].add(item_id)
        if isinstance(row.get("flip_factor"), (int, float)):
            flip_factors[item_id] = float(row["flip_factor"])
    return ObservedSplit(unit, deterministic, {state: frozenset(ids) for state, ids in timing.items()},
                        flip_factors, source)


def _difference(idle: frozenset[str], hog: frozenset[str]) -> SetDifference:
    return SetDifference(tuple(sort_ids(idle - hog)), tuple(sort_ids(hog - idle)))


def moved_across_the_band(item: str, confirmed_in: ObservedSplit, other: ObservedSplit) -> bool:
    """Whether `item`, confirmed in one run, is borderline in the other with a flip factor within the margin.

    One measurement on either side of the band's upper edge, not a verdict that changed."""
    if item not in other.timing.get("borderline", frozenset()):
        return False
    factors = (confirmed_in.flip_factors.get(item), other.flip_factors.get(item))
    if factors[0] is None or factors[1] is None or min(factors) <= 0:
        return False
    return max(factors) / min(factors) <= 1 + BORDERLINE_MARGIN


def _confirmed_differences(idle: ObservedSplit, hog: ObservedSplit) -> tuple[SetDifference, SetDifference]:
    """Confirmed ids found in one run only: (those that decide, those that only moved across the band's edge)."""
    everything = _difference(idle.confirmed, hog.confirmed)
    at_idle = [i for i in everything.only_idle if moved_across_the_band(i, idle, hog)]
    at_hog = [i for i in everything.only_hog if moved_across_the_band(i, hog, idle)]
    decisive = SetDifference(tuple(i for i in everything.only_idle if i not in at_idle),
                             tuple(i for i in everything.only_hog if i not in at_hog))
    return decisive, SetDifference(tuple(at_idle), tuple(at_hog))


def _unusable(check: Mapping[str, Any] | None, run: str, audit_ran: bool) -> str:
    if not audit_ran:
        return f"the {run} run wrote no findings for this audit"
    if check is None:
        return f"check missing in the {run} run"
    status = check.get("status")
    if status in NOT_COMPARABLE_STATUSES:
        return f"{status} in the {run} run: {check.get('finding') or check.get('summary') or 'no reason given'}"
    return f"no failure split in the {run} run (status {status})"


def compare_audit(audit: str, idle: Mapping[str, Any] | None, hog: Mapping[str, Any] | None
                  ) -> list[SplitComparison]:
    """Every check of `audit` that classifies failures in either run, compared; `None` = the run has no findings."""
    idle_checks = {str(c.get("id")): c for c in (idle or {}).get("checks", [])}
    hog_checks = {str(c.get("id")): c for c in (hog or {}).get("checks", [])}
    splits: dict[str, dict[str, ObservedSplit | None]] = {}
    for run, checks in (("idle", idle_checks), ("hog", hog_checks)):
        for check_id, check in checks.items():
            if check.get("status") in NOT_COMPARABLE_STATUSES:
                continue
            split = read_failure_split(check, where=f"{audit} ({run} run) check {check_id}")
            if split is not None:
                splits.setdefault(check_id, {})[run] = split
    if not splits:
        missing_runs = [run for run, findings in (("idle", idle), ("hog", hog)) if findings is None]
        reason = (" and ".join(_unusable(None, run, False) for run in missing_runs) if missing_runs else
                  "no check classifies failures in either run: none has meta.failure_split or known keys")
        return [SplitComparison(audit, "*", "not_comparable", reason=reason)]
    comparisons = []
    for check_id in sorted(splits):
        idle_split, hog_split = splits[check_id].get("idle"), splits[check_id].get("hog")
        if idle_split is None or hog_split is None:
            reason = (_unusable(idle_checks.get(check_id), "idle", idle is not None) if idle_split is None
                      else _unusable(hog_checks.get(check_id), "hog", hog is not None))
            comparisons.append(SplitComparison(audit, check_id, "not_comparable", idle_split, hog_split,
                                               reason=reason))
            continue
        deterministic = _difference(idle_split.deterministic, hog_split.deterministic)
        confirmed, at_band = _confirmed_differences(idle_split, hog_split)
        agreement: Agreement = "identical" if deterministic.identical and confirmed.identical else "differs"
        comparisons.append(SplitComparison(audit, check_id, agreement, idle_split, hog_split, deterministic,
                                           confirmed, at_band))
    return comparisons


def compare_findings(idle: Mapping[str, Mapping[str, Any]], hog: Mapping[str, Mapping[str, Any]],
                     audits: Sequence[str] = ()) -> list[SplitComparison]:
    """Audit -> findings JSON of each run; `audits` (default: every audit in either run) are compared in order."""
    chosen = list(audits) or sorted(set(idle) | set(hog))
    return [comparison for audit in chosen for comparison in compare_audit(audit, idle.get(audit), hog.get(audit))]


def compare_folders(idle_dir: Path, hog_dir: Path, audits: Sequence[str] = ()) -> list[SplitComparison]:
    """`compare_findings` on two reports (or run) folders."""
    return compare_findings(load_findings_by_audit(idle_dir), load_findings_by_audit(hog_dir), audits)


def overall_agreement(comparisons: Sequence[SplitComparison]) -> Agreement:
    """`differs` if any check's sets differ, else `not_comparable` if any could not be compared, else `identical`."""
    agreements = {c.agreement for c in comparisons}
    if "differs" in agreements:
        return "differs"
    if "not_comparable" in agreements or not comparisons:
        return "not_comparable"
    return "identical"


__all__ = ["KNOWN_SPLITS", "TIMING_STATES", "ObservedSplit", "SetDifference", "SplitComparison", "compare_audit",
           "compare_findings", "compare_folders", "moved_across_the_band", "overall_agreement", "read_failure_split",
           "sort_ids"]
