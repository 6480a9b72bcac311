"""`--junit FILE`: one JUnit testsuite per audit and one testcase per check, so CI shows findings natively."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from audit_lib.atomic_files import atomic_write_text

# defect = failure, error = error, skipped = skipped; pass and quirk pass (a quirk is documented behaviour gone
# different, reported in the testcase's output so CI still shows it).
FAILING = {"defect": "failure", "error": "error"}


def junit_xml(outcomes: Sequence[Mapping[str, Any]], checks: Mapping[str, Sequence[Mapping[str, Any]]]) -> str:
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
            status = str(check.get("status"))
            case = ET.SubElement(suite, "testcase", classname=audit, name=str(check.get("id")))
            counts["tests"] += 1
            text = str(check.get("finding") or check.get("summary") or "")
            if status in FAILING:
                element = ET.SubElement(case, FAILING[status], type=status, message=text[:500])
                element.text = text
                counts["failures" if status == "defect" else "errors"] += 1
            elif status == "skipped":
                missing = ", ".join(map(str, check.get("missing") or []))
                ET.SubElement(case, "skipped", message=(f"missing: {missing}. " if missing else "") + text[:400])
                counts["skipped"] += 1
            elif status == "quirk":
                ET.SubElement(case, "system-out").text = f"QUIRK: {text}"
        for key, value in counts.items():
            suite.set(key, str(value))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def write_junit(path: Path, outcomes: Sequence[Mapping[str, Any]],
                checks: Mapping[str, Sequence[Mapping[str, Any]]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, junit_xml(outcomes, checks))
    return path
