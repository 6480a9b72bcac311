"""`codeinsights_edge_case` checks on the gold labels: `pass` as read, as written, and after `int()`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from audit_lib.benchmarks.codeinsights import replay
from audit_lib.benchmarks.codeinsights.audit import SUBMISSIONS_KEY, Inputs, Params
from audit_lib.benchmarks.codeinsights.facts import EdgeCaseAudit
from audit_lib.findings import Result


def bits(pattern: Sequence[int] | None) -> str | None:
    return None if pattern is None else "".join(str(bit) for bit in pattern)


def result(audit: EdgeCaseAudit, status: str, summary: str, **kwargs: Any) -> Result:
    """A check's result, marked (and its summary opened) as SYNTHETIC when the data is."""
    prefix = "SYNTHETIC data — " if audit.data.synthetic else ""
    return Result(status=status, summary=prefix + summary, synthetic=audit.data.synthetic,  # type: ignore[arg-type]
                  **kwargs)


def instance_row(audit: EdgeCaseAudit, instance: replay.EdgeCaseInstance) -> dict[str, Any]:
    facts = audit.row(instance.record)
    return {"instance_id": instance.instance_id, "student_id": instance.student_id, "record": instance.record,
            "pass_text": facts.pass_text, "pattern_true": bits(facts.pattern_true),
            "pattern_helm": bits(instance.pattern), "tests_parsed": instance.tests_parsed,
            "tests_shown": len(instance.tests_shown)}


def pass_read_dtype(inputs: Inputs, params: Params) -> Result:
    audit = inputs.replay
    dtype = str(audit.data.submissions["pass"].dtype)
    differing = [{"record": r.record, "student_id": r.student_id, "pass_text": r.pass_text,
                  "pandas_value": repr(r.pass_value), "str_of_pandas_value": str(r.pass_value)}
                 for r in audit.rows if str(r.pass_value) != (r.pass_text if r.pass_text is not None else "nan")]
    numeric = pd.api.types.is_numeric_dtype(audit.data.submissions["pass"])
    observed = {"pandas_dtype": dtype, "text_dtype": str(audit.data.submissions_text["pass"].dtype),
                "rows": len(audit.rows), "rows_whose_value_differs_from_text": len(differing)}
    status = "quirk" if numeric or differing else "pass"
    return result(audit, status,
                  f"pandas reads `pass` as {dtype}; {len(differing)} of {len(audit.rows)} rows no longer print as "
                  "written (leading zeros, float formatting, NaN).", observed=observed,
                  expected={"pandas_dtype": "a string dtype", "rows_whose_value_differs_from_text": 0},
                  details=differing)


def leading_zero_loss(inputs: Inputs, params: Params) -> Result:
    audit = inputs.replay
    rows = [r for r in audit.rows if r.pass_text and r.pass_text.startswith("0") and r.pattern_true is not None
            and r.pattern_after_int != r.pattern_true]
    details = [{"scope": "row", "record": r.record, "student_id": r.student_id, "pass_text": r.pass_text,
                "pattern_before_int": bits(r.pattern_true), "pattern_after_int": bits(r.pattern_after_int),
                "gold_before": replay.single_failure_index(r.pattern_true),
                "gold_after": replay.single_failure_index(r.pattern_after_int)} for r in rows]
    affected = {r.record for r in rows}
    instances = [i for i in audit.shipped.instances if i.record in affected]
    gold_changed = [i for i in instances if replay.single_failure_index(i.pattern)
                    != replay.single_failure_index(audit.row(i.record).pattern_true)]
    details += [{"scope": "instance", **instance_row(audit, i), "gold_before":
                 replay.single_failure_index(audit.row(i.record).pattern_true),
                 "gold_after": replay.single_failure_index(i.pattern)} for i in instances]
    status = "defect" if instances else "quirk" if rows else "pass"
    return result(audit, status,
                  f"{len(rows)} rows start with 0 and lose bits under int(); {len(instances)} of "
                  f"{len(audit.shipped.instances)} instances are among them, {len(gold_changed)} with a changed gold.",
                  observed={"rows": len(rows), "instances": len(instances), "instances_gold_changed":
                            len(gold_changed)}, expected={"rows": 0, "instances": 0}, details=details)


def single_failure_after_int(inputs: Inputs, params: Params) -> Result:
    audit = inputs.replay
    details = []
    for instance in audit.shipped.instances:
        gold = replay.single_failure_index(instance.pattern)
        if gold is None:
            continue
        truth = replay.single_failure_index(audit.row(instance.record).pattern_true)
        details.append({**instance_row(audit, instance), "gold_after_int": gold, "gold_true": truth,
                        "agrees_with_truth": gold == truth})
    wrong = [d for d in details if not d["agrees_with_truth"]]
    return result(audit, "defect" if wrong else "pass",
                  f"{len(details)} instances have exactly one 0 after int(); {len(wrong)} of them are not that "
                  "single failure in the pass string as written (e.g. '0000' becomes [0]).",
                  observed={"instances": len(details), "not_a_true_single_failure_there": len(wrong)},
                  expected={"not_a_true_single_failure_there": 0}, details=details)


def single_failure_true(inputs: Inputs, params: Params) -> Result:
    audit = inputs.replay
    details = []
    for instance in audit.shipped.instances:
        truth = replay.single_failure_index(audit.row(instance.record).pattern_true)
        if truth is None:
            continue
        gold = replay.single_failure_index(instance.pattern)
        details.append({**instance_row(audit, instance), "gold_true": truth, "gold_after_int": gold,
                        "kept_by_helm": gold == truth})
    lost = [d for d in details if not d["kept_by_helm"]]
    return result(audit, "defect" if lost else "pass",
                  f"{len(details)} instances truly fail exactly one test; HELM's int() loses or moves {len(lost)} "
                  "of those gold indices (e.g. '0111' becomes [1, 1, 1]).",
                  observed={"instances": len(details), "lost_or_moved_by_int": len(lost)},
                  expected={"lost_or_moved_by_int": 0}, details=details)


def _flag(text: str | None) -> bool | None:
    lowered = (text or "").strip().lower()
    return True if lowered in ("true", "1", "1.0") else False if lowered in ("false", "0", "0.0") else None


def is_single_failure_column(inputs: Inputs, params: Params) -> Result:
    audit = inputs.replay
    if "is_single_failure" not in audit.data.submissions_text.columns:
        return Result.skipped("Scenario5_data.csv has no is_single_failure column", missing=[SUBMISSIONS_KEY],
                              synthetic=audit.data.synthetic)
    confusion: dict[tuple[Any, Any, Any], int] = {}
    details = []
    for r in audit.rows:
        column = _flag(r.single_failure_column)
        true_rule = None if r.pattern_true is None else r.pattern_true.count(0) == 1
        after_int = None if r.pattern_after_int is None else r.pattern_after_int.count(0) == 1
        key = (column, true_rule, after_int)
        confusion[key] = confusion.get(key, 0) + 1
        if column != true_rule:
            details.append({"record": r.record, "student_id": r.student_id, "pass_text": r.pass_text,
                            "column_text": r.single_failure_column, "column": column, "true_rule": true_rule,
                            "after_int_rule": after_int})
    table = [{"column": c, "true_rule": t, "after_int_rule": a, "rows": n}
             for (c, t, a), n in sorted(confusion.items(), key=repr)]
    agrees_after = sum(n for (c, _, a), n in confusion.items() if c == a)
    return result(audit, "quirk" if details else "pass",
                  f"The column disagrees with 'exactly one 0 in the pass string' on {len(details)} of "
                  f"{len(audit.rows)} rows; it agrees with the after-int() rule on {agrees_after}. HELM does not "
                  "read this column.", observed=table, expected="column == true rule on every row",
                  details=details)


def pattern_length_mismatch(inputs: Inputs, params: Params) -> Result:
    audit = inputs.replay
    rows = [r for r in audit.rows if r.tests_parsed is not None and r.pattern_true is not None
            and len(r.pattern_true) != r.tests_parsed]
    details = [{"scope": "row", "record": r.record, "student_id": r.student_id, "pass_text": r.pass_text,
                "length_true": len(r.pattern_true), "tests_parsed": r.tests_parsed,
                "length_after_int": None if r.pattern_after_int is None else len(r.pattern_after_int)}
               for r in rows if r.pattern_true is not None]
    true_mismatch, int_mismatch = 0, 0
    for instance in audit.shipped.instances:
        truth = audit.row(instance.record).pattern_true
        length_true = None if truth is None else len(truth)
        if length_true != instance.tests_parsed or len(instance.pattern) != instance.tests_parsed:
            true_mismatch += length_true != instance.tests_parsed
            int_mismatch += len(instance.pattern) != instance.tests_parsed
            details.append({"scope": "instance", **instance_row(audit, instance), "length_true": length_true,
                            "length_after_int": len(instance.pattern)})
    status = "defect" if true_mismatch or int_mismatch else "quirk" if rows else "pass"
    return result(audit, status,
                  f"{len(rows)} rows have a pass string whose length differs from the parsed test count; among "
                  f"instances, {true_mismatch} as written and {int_mismatch} after int(). The fix drops these at "
                  "num_testcases=-1 only.",
                  observed={"rows": len(rows), "instances_true_length": true_mismatch,
                            "instances_after_int_length": int_mismatch},
                  expected={"rows": 0, "instances_true_length": 0, "instances_after_int_length": 0}, details=details)


def float_precision(inputs: Inputs, params: Params) -> Result:
    audit = inputs.replay
    dtype = audit.data.submissions["pass"].dtype
    is_float = pd.api.types.is_float_dtype(dtype)
    lengths = [len(r.pattern_true) for r in audit.rows if r.pattern_true is not None]
    at_risk = sum(length > 15 for length in lengths)
    rows = [r for r in audit.rows if is_float and r.pattern_true is not None and r.pattern_after_int is not None
            and bits(r.pattern_after_int) != (r.pass_text.lstrip("0") or "0")]
    details = [{"scope": "row", "record": r.record, "student_id": r.student_id, "pass_text": r.pass_text,
                "float_value": repr(r.pass_value), "pattern_after_int": bits(r.pattern_after_int),
                "gold_true": replay.single_failure_index(r.pattern_true),
                "gold_after_int": replay.single_failure_index(r.pattern_after_int)} for r in rows]
    affected = {r.record for r in rows}
    instances = [i for i in audit.shipped.instances if i.record in affected]
    details += [{"scope": "instance", **instance_row(audit, i)} for i in instances]
    status = "defect" if instances else "quirk" if rows else "pass"
    return result(audit, status,
                  f"pandas reads `pass` as {dtype}; {len(rows)} rows change digits beyond leading zeros "
                  f"(float64 keeps about 15-16 digits; {at_risk} patterns are longer than 15), {len(instances)} "
                  "of them instances.", observed={"dtype": str(dtype), "rows_digits_changed": len(rows),
                                                  "instances_digits_changed": len(instances),
                                                  "patterns_longer_than_15": at_risk,
                                                  "longest_pattern": max(lengths, default=0)},
                  expected={"rows_digits_changed": 0}, details=details)
