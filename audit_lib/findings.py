"""The check model and `<audit>.findings.json` (plus full evidence tables as CSV beside it)."""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from audit_lib import paths
from audit_lib.atomic_files import atomic_output, atomic_write_text
from audit_lib.sandbox import printable_int

Status = Literal["pass", "quirk", "defect", "error", "skipped"]
STATUSES: tuple[str, ...] = ("pass", "quirk", "defect", "error", "skipped")
# Severity order used by `--fail-on` and by the index page's sort.
SEVERITY: dict[str, int] = {"pass": 0, "skipped": 1, "quirk": 2, "error": 3, "defect": 4}
DETAILS_CAP_IN_JSON = 50
# A summary may open with a qualifier that is not the finding ("[depth: rows, 2 tasks] ...",
# "SYNTHETIC data — ..."); the synthetic flag and `meta` carry those facts, so `finding` leaves them out.
_LEADING_QUALIFIER = re.compile(r"^\s*(?:\[[^\]]*\]\s*|SYNTHETIC\b[^.:—]*?(?:\([^)]*\))?\s*[—:]\s*)+")
_ABBREVIATIONS = ("e.g.", "i.e.", "vs.", "etc.", "cf.", "approx.", "no.", "fig.")


@dataclass(frozen=True)
class Result:
    """What a check function returns: its verdict, the figure observed vs expected, and evidence rows.

    The session adds the check's declared id and title (`Check.of`), so a check function never repeats them.
    """

    status: Status
    observed: Any = None
    expected: Any = None
    summary: str = ""
    details: tuple[Mapping[str, Any], ...] = ()
    synthetic: bool = False
    meta: Mapping[str, Any] = field(default_factory=dict)
    finding: str = ""  # what was found, one sentence with its numbers; defaults to the summary's first sentence

    def __post_init__(self) -> None:
        if not self.finding:
            object.__setattr__(self, "finding", first_sentence(self.summary))
        if self.status not in STATUSES:
            raise ValueError(f"status {self.status!r} is not one of {STATUSES}")
        object.__setattr__(self, "details", tuple(dict(row) for row in self.details))

    @classmethod
    def skipped(cls, reason: str, *, missing: Sequence[str] = (), **kwargs: Any) -> Result:
        """An input is absent: `reason` says how to supply it, `missing` names it (`meta.missing`)."""
        meta = dict(kwargs.pop("meta", {}))
        if missing:
            meta["missing"] = list(missing)
        return cls(status="skipped", summary=reason, meta=meta, **kwargs)

    @classmethod
    def errored(cls, error: BaseException | str, **kwargs: Any) -> Result:
        """The check could not run; the error is kept as its summary."""
        text = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
        return cls(status="error", summary=text, **kwargs)


@dataclass(frozen=True)
class Check:
    """One audited property with its verdict, the figure observed vs expected, and evidence rows."""

    id: str
    title: str
    status: Status
    observed: Any = None
    expected: Any = None
    summary: str = ""
    details: tuple[Mapping[str, Any], ...] = ()
    synthetic: bool = False
    meta: Mapping[str, Any] = field(default_factory=dict)
    finding: str = ""  # what was found, one sentence with its numbers; defaults to the summary's first sentence

    def __post_init__(self) -> None:
        if not self.finding:
            object.__setattr__(self, "finding", first_sentence(self.summary))
        if self.status not in STATUSES:
            raise ValueError(f"check {self.id!r}: status {self.status!r} is not one of {STATUSES}")
        if not self.id or not self.id.replace("_", "").replace(".", "").replace("-", "").isalnum():
            raise ValueError(f"check id {self.id!r} must be a non-empty identifier")
        object.__setattr__(self, "details", tuple(dict(row) for row in self.details))

    @classmethod
    def of(cls, id: str, title: str, result: Result) -> Check:
        """The declared check's id and title stamped onto what its function returned."""
        return cls(id, title, **{f.name: getattr(result, f.name) for f in dataclasses.fields(result)})

    def to_json(self, *, details_cap: int = DETAILS_CAP_IN_JSON) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "id": self.id,
            "title": self.title,
            "finding": self.finding,
            "status": self.status,
            "observed": to_jsonable(self.observed),
            "expected": to_jsonable(self.expected),
            "summary": self.summary,
            "synthetic": self.synthetic,
            "details": [to_jsonable(row) for row in self.details[:details_cap]],
            "details_total": len(self.details),
        }
        if self.meta:
            payload["meta"] = to_jsonable(dict(self.meta))
        return payload


@dataclass(frozen=True)
class Findings:
    """Everything one audit run concluded: its parameters, the data it used, and its checks."""

    audit: str
    params: Mapping[str, Any]
    provenance: tuple[Mapping[str, Any], ...]
    checks: tuple[Check, ...]
    stamp: Mapping[str, Any] | None = None  # audit_lib.stamp.RunStamp.to_json(): code, machine, load
    # What loading the inputs cost on this machine (check_cost.CheckCost.to_meta()); machine-dependent, never pinned.
    load_cost: Mapping[str, Any] | None = None

    def check(self, check_id: str) -> Check:
        for candidate in self.checks:
            if candidate.id == check_id:
                return candidate
        raise KeyError(f"audit {self.audit!r} has no check {check_id!r}")

    def status_counts(self) -> dict[str, int]:
        counts = {status: 0 for status in STATUSES}
        for item in self.checks:
            counts[item.status] += 1
        return counts

    @property
    def uses_synthetic_data(self) -> bool:
        return any(p.get("synthetic") for p in self.provenance) or any(c.synthetic for c in self.checks)

    def to_json(self) -> dict[str, Any]:
        return {
            "audit": self.audit,
            "params": to_jsonable(dict(self.params)),
            "provenance": [to_jsonable(dict(p)) for p in self.provenance],
            "synthetic": self.uses_synthetic_data,
            "status_counts": self.status_counts(),
            "stamp": to_jsonable(dict(self.stamp)) if self.stamp else None,
            **({"load_cost": to_jsonable(dict(self.load_cost))} if self.load_cost else {}),
            "checks": [c.to_json() for c in self.checks],
        }

    def write(self, out_dir: str | os.PathLike[str] | None = None) -> Path:
        """Write `<audit>.findings.json` and one `<audit>/<check>.csv` per check with evidence rows.

        See `evidence_csv_path`; CSVs of checks that no longer have evidence are removed."""
        target_dir = Path(out_dir) if out_dir is not None else paths.reports_dir()
        target_dir.mkdir(parents=True, exist_ok=True)
        written = set()
        for item in self.checks:
            if item.details:
                path = evidence_csv_path(target_dir, self.audit, item.id)
                path.parent.mkdir(exist_ok=True)
                write_rows_csv(path, item.details)
                written.add(path.name)
        evidence_dir = target_dir / self.audit
        if evidence_dir.is_dir():
            for stale in evidence_dir.glob("*.csv"):
                if stale.name not in written:
                    stale.unlink(missing_ok=True)
        json_path = target_dir / f"{self.audit}.findings.json"
        atomic_write_text(json_path, json.dumps(self.to_json(), indent=2, sort_keys=False) + "\n")
        return json_path


class FindingsBuilder:
    """Collects provenance and checks while a notebook runs; `findings()` freezes them."""

    def __init__(self, audit: str, params: Mapping[str, Any] | None = None) -> None:
        self.audit = audit
        self.params = dict(params or {})
        self._provenance: list[Mapping[str, Any]] = []
        self._checks: list[Check] = []
        self.stamp: Mapping[str, Any] | None = None
        self.load_cost: Mapping[str, Any] | None = None

    def add_provenance(self, *records: Any) -> None:
        """Accept `fetch.Provenance` objects (or plain mappings); duplicates are kept once."""
        for record in records:
            as_mapping = dataclasses.asdict(record) if dataclasses.is_dataclass(record) else dict(record)
            if as_mapping not in self._provenance:
                self._provenance.append(as_mapping)

    def add(self, check: Check) -> Check:
        if any(existing.id == check.id for existing in self._checks):
            raise ValueError(f"audit {self.audit!r}: check id {check.id!r} was added twice")
        self._checks.append(check)
        return check

    @property
    def provenance(self) -> tuple[Mapping[str, Any], ...]:
        return tuple(self._provenance)

    @property
    def checks(self) -> tuple[Check, ...]:
        return tuple(self._checks)

    def findings(self) -> Findings:
        return Findings(self.audit, dict(self.params), tuple(self._provenance), tuple(self._checks), self.stamp,
                        self.load_cost)

    def write(self, out_dir: str | os.PathLike[str] | None = None) -> Path:
        return self.findings().write(out_dir)


def load_findings(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read a findings file back as plain JSON (the runner and index page use this)."""
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def worst_status(statuses: Iterable[str]) -> str:
    ordered = sorted(statuses, key=lambda s: SEVERITY.get(s, 0))
    return ordered[-1] if ordered else "pass"


def first_sentence(text: str) -> str:
    """The first sentence of `text`, without a leading qualifier.

    Dots inside brackets, numbers (`0.5`, `v0.1.9`) and abbreviations (`e.g.`) do not end it."""
    text = _LEADING_QUALIFIER.sub("", " ".join(str(text or "").split()), count=1)
    depth = 0
    for index, char in enumerate(text):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(0, depth - 1)
        elif char in ".!?" and depth == 0 and (index + 1 == len(text) or text[index + 1] == " "):
            if not text[: index + 1].lower().endswith(_ABBREVIATIONS):
                return text[: index + 1]
    return text


def to_jsonable(value: Any) -> Any:
    """Plain JSON for observed values and evidence: NaN/inf become strings, tuples/sets lists."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return printable_int(value)  # json.dumps raises on ints past the 4,300-digit str() limit
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return repr(float(value))  # numpy's float64 is a float whose repr is "np.float64(nan)"
        return value
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((to_jsonable(v) for v in value), key=repr)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_jsonable(dataclasses.asdict(value))
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        try:
            return to_jsonable(value.item())
        except (TypeError, ValueError):
            pass
    if hasattr(value, "tolist") and callable(value.tolist):  # numpy arrays
        return to_jsonable(value.tolist())
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return repr(value)


def evidence_csv_path(folder: Path, audit: str, check_id: str) -> Path:
    """Where a check's full evidence lives: a per-audit folder beside the findings (`<audit>/<check>.csv`)."""
    return folder / audit / f"{check_id}.csv"


def write_rows_csv(path: Path, rows: Sequence[Mapping[str, Any]]) -> None:
    columns: list[str] = []
    for row in rows:
        for key in row:
            if key not in columns:
                columns.append(str(key))
    with atomic_output(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: _csv_cell(v) for k, v in row.items()})


def _csv_cell(value: Any) -> Any:
    plain = to_jsonable(value)
    return json.dumps(plain) if isinstance(plain, (list, dict)) else plain
