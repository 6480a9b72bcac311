"""`--junit FILE`: one JUnit testsuite per audit and one testcase per check, so CI shows findings natively."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from audit_lib.atomic_files import atomic_write_text
from audit_lib.check_cost import CheckCost
from audit_lib.runner.gate import FINDING_STATUSES, is_synthetic

# defect = failure, error = error, skipped = skipped; pass and quirk pass (a quirk is documented behaviour gone
# different, reported in the testcase's output so CI still shows it). A finding on synthetic data is not a failure
# unless `include_synthetic`; its testcase carries the property synthetic=true and says so in its output.
FAILING = {"defect": "failure", "error": "error"}


def junit_xml(outcomes: Sequence[Mapping[str, Any]], checks: Mapping[str, Sequence[Mapping[str, Any]]], *,
              include_synthetic: bool = False) -> str:
    """The JUnit XML of a batch: outcomes as `outcome_to_json` dicts, checks as the index digested them."""
    root = ET.Element("testsuites", name="benchaudit")
    for outcome in outcomes:
        audit = str(outcome["audit"])
        suite = ET.SubElement(root, "testsuite", name=audit, time=f"{float(outcome.get('duration_s', 0)):.2f}")
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        if outcome.get("status") == "failed":
            case = ET.SubElement(suite, "testcase", classname=audit, name="notebook")
            failure = outcome.get("failure") or {}
            error = ET.SubElement(case, "error", type=str(failure.get("error_type", "NotebookFailed")),
                                  message=str(failure.get("message", ""))[:500])
            error.text = str(failure.get("cell_source", ""))
            counts["tests"] += 1
            counts["errors"] += 1
        for check in checks.get(audit, ()):
            counts["tests"] += 1
            kind = _add_testcase(suite, audit, check, include_synthetic=include_synthetic)
            if kind is not None:
                counts[kind] += 1
        for key, value in counts.items():
            suite.set(key, str(value))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def _add_testcase(suite: ET.Element, audit: str, check: Mapping[str, Any], *, include_synthetic: bool) -> str | None:
    """One check's testcase; returns the suite counter it adds to (`failures`, `errors`, `skipped`) or None."""
    status = str(check.get("status"))
    case = ET.SubElement(suite, "testcase", classname=audit, name=str(check.get("id")))
    cost = CheckCost.from_meta({"cost": check.get("cost")})
    if cost is not None:  # this run's wall time on this machine, as JUnit readers expect of a testcase
        case.set("time", f"{cost.wall_s:.3f}")
    text = str(check.get("finding") or check.get("summary") or "")
    synthetic = is_synthetic(check)
    if synthetic:
        ET.SubElement(ET.SubElement(case, "properties"), "property", name="synthetic", value="true")
        text = f"[synthetic data] {text}"
    if synthetic and status in FINDING_STATUSES and not include_synthetic:
        ET.SubElement(case, "system-out").text = (f"{status.upper()} on synthetic data, not a failure "
                                                  f"(--include-synthetic makes it one): {text}")
        return None
    if status in FAILING:
        element = ET.SubElement(case, FAILING[status], type=status, message=text[:500])
        element.text = text
        return "failures" if status == "defect" else "errors"
    if status == "skipped":
        missing = ", ".join(map(str, check.get("missing") or []))
        ET.SubElement(case, "skipped", message=(f"missing: {missing}. " if missing else "") + text[:400])
        return "skipped"
    if status == "quirk":
        ET.SubElement(case, "system-out").text = f"QUIRK: {text}"
    elif synthetic:
        ET.SubElement(case, "system-out").text = text
    return None


def write_junit(path: Path, outcomes: Sequence[Mapping[str, Any]],
                checks: Mapping[str, Sequence[Mapping[str, Any]]], *, include_synthetic: bool = False) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, junit_xml(outcomes, checks, include_synthetic=include_synthetic))
    return path
