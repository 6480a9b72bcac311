"""`codeinsights_edge_case` checks on what HELM builds from the labels: prompts, lookups, the metric's ceiling."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from audit_lib.benchmarks.codeinsights import replay
from audit_lib.benchmarks.codeinsights.audit import Inputs, Params
from audit_lib.benchmarks.codeinsights.checks_labels import instance_row, result
from audit_lib.benchmarks.codeinsights.facts import EdgeCaseAudit, instance_counts, skipped_rows
from audit_lib.findings import Result

RANDOM_REPEATS = 200
RUN_SPEC = {"instructions": ("You are a student studying C++ with a consistent personal style, conventions, and "
                             "proficiency level.\nYour task is to identify which test case you would likely to fail "
                             "for a given question with unit tests.\nRespond only with integer of the unittest "
                             "number\n\n"),
            "output_noun": "Your code", "max_tokens": 4000, "temperature": 0.0, "num_testcases_default": 1,
            "stop_sequences": []}


def alignment_ceiling(inputs: Inputs, params: Params) -> Result:
    audit = inputs.replay
    details = []
    for instance in audit.shipped.instances:
        truth = audit.row(instance.record).pattern_true
        gold, gold_true = replay.single_failure_index(instance.pattern), replay.single_failure_index(truth)
        details.append({**instance_row(audit, instance), "gold_helm": gold, "gold_true": gold_true,
                        "reachable_as_shipped": gold is not None, "reachable_true": gold_true is not None,
                        "true_gold_visible": gold_true is not None and gold_true < len(instance.tests_shown)})
    count = len(details)
    fixed = audit.fixed.instances
    observed = {"as_shipped": sum(d["reachable_as_shipped"] for d in details) / count,
                "true_patterns": sum(d["reachable_true"] for d in details) / count,
                "true_patterns_gold_visible": sum(d["true_gold_visible"] for d in details) / count,
                "as_fixed": (sum(replay.single_failure_index(i.pattern) is not None for i in fixed) / len(fixed)
                             if fixed else None),
                "instances_as_shipped": count, "instances_as_fixed": len(fixed)}
    differs = any(d["gold_helm"] != d["gold_true"] for d in details)
    status = "defect" if differs else "quirk" if observed["as_shipped"] < 1 else "pass"
    return result(audit, status,
                  f"An oracle of HELM's gold scores at most {observed['as_shipped']:.3f} as shipped; with the pass "
                  f"strings as written the ceiling is {observed['true_patterns']:.3f} (as fixed: "
                  f"{_scores_text({'ceiling': observed['as_fixed']})}). Instances without exactly one 0 score 0 for every model.",
                  observed=observed, expected={"as_shipped": observed["true_patterns"]}, details=details)


def gold_index_hidden_by_truncation(inputs: Inputs, params: Params) -> Result:
    audit = inputs.replay
    details = []
    for instance in audit.shipped.instances:
        gold = replay.single_failure_index(instance.pattern)
        gold_true = replay.single_failure_index(audit.row(instance.record).pattern_true)
        shown = len(instance.tests_shown)
        if (gold is not None and gold >= shown) or (gold_true is not None and gold_true >= shown):
            details.append({**instance_row(audit, instance), "gold_helm": gold, "gold_true": gold_true,
                            "helm_gold_hidden": gold is not None and gold >= shown})
    hidden = sum(d["helm_gold_hidden"] for d in details)
    with_gold = sum(replay.single_failure_index(i.pattern) is not None for i in audit.shipped.instances)
    return result(audit, "defect" if hidden else "pass",
                  f"At num_testcases={audit.num_testcases}, {hidden} of {with_gold} instances with a HELM gold index "
                  "ask for a test the prompt does not show (the pattern is not truncated with the tests).",
                  observed={"helm_gold_hidden": hidden, "instances_with_helm_gold": with_gold,
                            "num_testcases": audit.num_testcases}, expected={"helm_gold_hidden": 0}, details=details)


def _normalised_id(value: Any) -> str | None:
    try:
        number = float(str(value))
    except ValueError:
        return None
    return str(int(number)) if number == number and number == int(number) else None


def qid_lookup(inputs: Inputs, params: Params) -> Result:
    audit = inputs.replay
    data = audit.data
    keys = set(data.test_case_keys)
    first = list(replay.first_rows(data.submissions))
    format_only = [(sid, t) for sid, t in first if str(t.get("question_unittest_id")) not in keys
                   and _normalised_id(t.get("question_unittest_id")) in keys]
    by_question_id = (sum(str(t.get("question_id")) in keys for _, t in first)
                      if "question_id" in data.submissions.columns else None)
    skips = skipped_rows(audit)
    uncounted = [s for s in skips if not s["counted_by_helm"]]
    aborts = [s for s in skips if s["aborts_helm_run"]]
    examples = {"question_unittest_id": [str(v) for v in data.submissions["question_unittest_id"].head(3)],
                "json_keys": sorted(keys)[:3]}
    if "question_id" in data.submissions.columns:
        examples["question_id"] = [str(v) for v in data.submissions["question_id"].head(3)]
    observed = {"question_unittest_id_dtype": str(data.submissions["question_unittest_id"].dtype),
                "question_id_dtype": (str(data.submissions["question_id"].dtype)
                                      if "question_id" in data.submissions.columns else None),
                "str_examples": examples, "students": len(first),
                "first_rows_missed_only_by_id_format": len(format_only),
                "first_rows_found_if_looked_up_by_question_id": by_question_id,
                "skipped_as_shipped": audit.shipped.skip_counts(), "skipped_as_fixed": audit.fixed.skip_counts(),
                "skips_not_counted_by_helm": len(uncounted), "helm_run_aborts": bool(aborts)}
    status = "defect" if format_only or aborts else "quirk" if skips else "pass"
    shipped_counts = ", ".join(f"{k} {v}" for k, v in audit.shipped.skip_counts().items()) or "none"
    return result(audit, status,
                  f"{_students(len(first))}; as shipped {len(audit.shipped.skipped)} skipped ({shipped_counts}), as "
                  f"fixed {len(audit.fixed.skipped)}; {len(uncounted)} "
                  f"{'skip is' if len(uncounted) == 1 else 'skips are'} not in HELM's printed counts; "
                  f"{len(format_only)} missed only because str() of a float id ends in '.0'."
                  + (" HELM would raise and emit no instance at all." if aborts else ""),
                  observed=observed, expected={"first_rows_missed_only_by_id_format": 0, "helm_run_aborts": False},
                  details=skips, meta={"instance_counts": instance_counts(data)})


def _students(count: int) -> str:
    return f"{count} student" + ("" if count == 1 else "s")


def timestamp_ties(inputs: Inputs, params: Params) -> Result:
    audit = inputs.replay
    frame = audit.data.submissions
    chosen = {record_id for record_id in (int(t.name) for _, t in replay.first_rows(frame))}
    parsed_time = pd.to_datetime(frame["timestamp"], errors="coerce", format="mixed")
    details, tied, tied_differs, order_differs = [], 0, 0, 0
    key_columns = frame[["student_id", "timestamp", "question_unittest_id", "pass"]]
    for student_id, group in key_columns.groupby("student_id"):
        earliest = group["timestamp"].min()
        ties = group[group["timestamp"] == earliest]
        if len(ties) > 1:
            tied += 1
            differs = ties[["question_unittest_id", "pass"]].astype(str).drop_duplicates().shape[0] > 1
            tied_differs += differs
            details += [{"kind": "tie", "student_id": student_id, "record": int(i) + 1, "timestamp": row["timestamp"],
                         "question_unittest_id": row["question_unittest_id"], "pass": str(row["pass"]),
                         "chosen_by_helm": int(i) in chosen, "candidates_differ": differs}
                        for i, row in ties.iterrows()]
        times = parsed_time.loc[group.index]
        if times.notna().all():
            by_time = times.idxmin()
            helm_pick = next(i for i in group.index if i in chosen)
            if times[by_time] < times[helm_pick]:
                order_differs += 1
                details += [{"kind": "text_order_differs", "student_id": student_id, "record": int(i) + 1,
                             "timestamp": frame.at[i, "timestamp"], "question_unittest_id":
                             frame.at[i, "question_unittest_id"], "pass": str(frame.at[i, "pass"]),
                             "chosen_by_helm": i == helm_pick, "candidates_differ": True}
                            for i in (helm_pick, by_time)]
    status = "defect" if tied_differs or order_differs else "quirk" if tied else "pass"
    return result(audit, status,
                  f"{_students(tied)} {'shares' if tied == 1 else 'share'} their earliest timestamp between rows "
                  f"({tied_differs} with different question or pass); {order_differs} "
                  f"{'student' if order_differs == 1 else 'students'}' first row by text is not their earliest by "
                  "time. "
                  f"Which tied row wins depends on pandas' unstable default sort (pandas {pd.__version__} here).",
                  observed={"tied_students": tied, "tied_with_different_target": tied_differs,
                            "text_order_differs_from_time_order": order_differs},
                  expected={"tied_students": 0, "text_order_differs_from_time_order": 0}, details=details)


def prompt_as_built(inputs: Inputs, params: Params) -> Result:
    audit = inputs.replay
    details = []
    for instance in audit.shipped.instances:
        built, intended = instance.prompt, instance.intended_prompt
        missing = intended.replace(built, "", 1) if built in intended else intended
        details.append({"instance_id": instance.instance_id, "tests_shown": len(instance.tests_shown),
                        "built_chars": len(built), "intended_chars": len(intended),
                        "has_question": "Question: " in built,
                        "has_answer_format": replay.SHIPPED_ANSWER_FORMAT in built,
                        "differs": built != intended, "missing_text": missing[:300]})
    differs = sum(d["differs"] for d in details)
    no_format = sum(not d["has_answer_format"] for d in details)
    no_question = sum(not d["has_question"] for d in details)
    first = audit.shipped.instances[0]
    tail_only = next((i.prompt for i in audit.shipped.instances if not i.tests_shown), None)
    return result(audit, "defect" if differs else "pass",
                  f"{differs} of {len(details)} prompts differ from the intended text: adjacent literals bind before "
                  f"`if target_test_cases else \"\"`, so {no_format} prompts end at the test list (no 'Think "
                  f"silently' block, no answer format) and {no_question} hold only that closing block.",
                  observed={"instances": len(details), "differs_from_intended": differs,
                            "missing_answer_format": no_format, "missing_question": no_question},
                  expected={"differs_from_intended": 0}, details=details,
                  meta={"example_as_built": first.prompt, "example_intended": first.intended_prompt,
                        "example_without_tests": tail_only, "run_spec": RUN_SPEC,
                        "upstream": replay.HELM_AS_SHIPPED})


def _mean_score(predict: Callable[[replay.EdgeCaseInstance], int],
                instances: Sequence[replay.EdgeCaseInstance]) -> float | None:
    if not instances:
        return None
    return float(np.mean([replay.unittest_alignment(str(predict(i)), i.pattern) for i in instances]))


def _scores_text(scores: dict[str, float | None]) -> str:
    return ", ".join(f"{name} {'n/a' if value is None else f'{value:.3f}'}" for name, value in scores.items())


def baseline_scores(inputs: Inputs, params: Params) -> Result:
    audit = inputs.replay

    def oracle(instance: replay.EdgeCaseInstance) -> int:
        failed = replay.failing_indices(audit.row(instance.record).pattern_true or ())
        return failed[0] if failed else 0

    details, observed = [], {}
    for replayed in (audit.shipped, audit.fixed):
        rng = np.random.default_rng(audit.seed)
        draws = [_mean_score(lambda i: int(rng.integers(0, max(1, len(i.tests_shown)))), replayed.instances)
                 for _ in range(RANDOM_REPEATS)]
        scores = {"always_0": _mean_score(lambda i: 0, replayed.instances),
                  "random_uniform_over_shown_tests": None if draws[0] is None else float(np.mean(draws)),
                  "oracle_true_first_failure": _mean_score(oracle, replayed.instances),
                  "ceiling_metric_gold": _mean_score(lambda i: replay.single_failure_index(i.pattern) or 0,
                                                     replayed.instances)}
        observed[replayed.variant] = scores
        details += [{"variant": replayed.variant, "predictor": name, "mean_unittest_alignment": value,
                     "instances": len(replayed.instances), "random_repeats": RANDOM_REPEATS if "random" in name else 1}
                    for name, value in scores.items()]
    shipped = observed["as_shipped"]
    penalised = shipped["oracle_true_first_failure"] < shipped["ceiling_metric_gold"]
    differ = observed["as_shipped"] != observed["as_fixed"]
    degenerate = [variant for variant, scores in observed.items()
                  if scores["always_0"] is not None and scores["always_0"] >= scores["ceiling_metric_gold"]]
    note = (f" Always answering 0 already reaches the ceiling {', '.join(degenerate)}." if degenerate else "")
    return result(audit, "defect" if penalised else "quirk" if differ else "pass",
                  f"As shipped: {_scores_text(shipped)}; as fixed: {_scores_text(observed['as_fixed'])}. Random is "
                  f"seeded ({audit.seed}) and averaged over {RANDOM_REPEATS} draws." + note, observed=observed,
                  expected="an oracle that knows the real failing test reaches the ceiling", details=details)


def prompt_comparison(audit: EdgeCaseAudit) -> list[dict[str, Any]]:
    """The first instance's prompt line by line: as HELM builds it, as it reads as intended, and as fixed."""
    if not audit.shipped.instances:
        return []
    first = audit.shipped.instances[0]
    fixed = next((i for i in audit.fixed.instances if i.student_id == first.student_id), None)
    columns = {"as_built": first.prompt.split("\n"), "intended": first.intended_prompt.split("\n"),
               "as_fixed": fixed.prompt.split("\n") if fixed else []}
    length = max(len(lines) for lines in columns.values())
    return [{"line": n + 1, **{name: lines[n] if n < len(lines) else "(absent)" for name, lines in columns.items()}}
            for n in range(length)]
