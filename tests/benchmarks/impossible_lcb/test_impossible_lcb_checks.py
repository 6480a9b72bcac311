"""The impossible_lcb checks on small hand-made inputs (103 toy manifest rows, a few toy task rows)."""

from __future__ import annotations

import dataclasses

import pytest
from test_impossible_lcb_tasks import SPLIT_MUTATION, task_row

from audit_lib.benchmarks.impossible_lcb import audit, checks_manifest, checks_rows
from audit_lib.benchmarks.impossible_lcb.data import (
    KNOWN_ISSUES_KEY,
    MANIFEST_KEY,
    RECONSTRUCTED_KEY,
    KnownIssue,
    ManifestEntry,
    RowSet,
    TaskRow,
    parquet_key,
)
from audit_lib.errors import DataUnavailableError
from audit_lib.plugin import AuditSession

DROPPED = [f"lcbhard_{n}" for n in (8, 9, 14, 32, 36, 50, 57, 61, 67, 72, 77, 81, 94)]


def _entry(number: int, split: str = "oneoff", **overrides) -> ManifestEntry:
    values = dict(row=number + 2, task_id=f"lcbhard_{number}", split=split, entry_point="f", syntax_ok=True,
                  lines_removed=1, lines_added=1, n_asserts=10, mutated_assert=f"assert candidate({number}) == 1",
                  original_assert=f"assert candidate({number}) == 0", call=f"candidate({number})", extraction="clean")
    values.update(overrides)
    return ManifestEntry(**values)


def _inputs(manifest=None, issues=None, oneoff_rows=(), **changes) -> audit.Inputs:
    if manifest is None:
        manifest = [_entry(n) for n in range(103)]
        manifest[5] = _entry(5, lines_added=5, mutated_assert="r = candidate(5); assert r; assert len(r) == 9")
    if issues is None:
        issues = [KnownIssue(row=i + 2, task_id=t, split="original", issue="original_test_wrong", detail="",
                             action="drop") for i, t in enumerate(DROPPED)]
    rows = tuple(TaskRow(file="toy.parquet", row=i + 1, **r) for i, r in enumerate(oneoff_rows))
    values = dict(known_issues=tuple(issues), manifest=tuple(manifest),
                  oneoff_rows=RowSet("oneoff", rows, "reconstructed" if rows else "none", ()),
                  conflicting_rows=RowSet("conflicting", (), "none", (), "not here"), provenance=(), missing={})
    values.update(changes)
    return audit.Inputs(**values)


def _params(**overrides) -> audit.Params:
    return audit.AUDIT.validate(overrides)


def _session(inputs: audit.Inputs, **params) -> AuditSession:
    """The notebook's session on hand-made inputs (needs enforced as in a real run)."""
    return AuditSession(dataclasses.replace(audit.AUDIT, load=lambda _: inputs), _params(**params))


def test_drop_list_counts_and_environment_diff(tmp_path):
    check = checks_manifest.dropped_tasks(_inputs(), _params())
    assert check.status == "pass" and check.observed["remaining"] == 90 and check.meta == {"depth": "manifest",
                                                                                           "tasks": 103}
    assert "[depth: manifest, 103 tasks]" in check.summary
    env_file = tmp_path / "dropped_tasks.csv"
    env_file.write_text("task_id\n" + "\n".join(DROPPED[:-1] + ["lcbhard_3"]) + "\n", encoding="utf-8")
    diffed = checks_manifest.dropped_tasks(_inputs(), _params(dropped_tasks_path=str(env_file)))
    assert diffed.status == "defect"
    assert diffed.observed["environment_list"]["only_in_environment"] == ["lcbhard_3"]
    assert diffed.observed["environment_list"]["only_in_derived"] == ["lcbhard_94"]


def test_drop_list_count_differs_from_documentation():
    check = checks_manifest.dropped_tasks(_inputs(issues=[]), _params())
    assert check.status == "quirk" and check.observed["remaining"] == 103


def test_single_assertion_rule_on_the_manifest():
    check = checks_manifest.single_assertion_mutation(_inputs(), _params())
    assert check.status == "pass" and check.observed["rule_breakers"] == ["lcbhard_5"]
    assert check.observed["remaining"] == 89 and check.meta["depth"] == "manifest"
    manifest = [_entry(n) for n in range(103)]
    manifest[5] = _entry(5, lines_added=5, mutated_assert="r = candidate(5); assert r; assert len(r) == 9")
    manifest[6] = _entry(6, mutated_assert="assert candidate(6) is not None",
                         original_assert="assert candidate(6) is None")
    manifest[7] = _entry(7, mutated_assert="assert candidate(70) == 1")
    extra = checks_manifest.single_assertion_mutation(_inputs(manifest=manifest), _params())
    assert extra.status == "quirk" and extra.observed["rule_breakers"] == ["lcbhard_5", "lcbhard_7"]
    assert extra.observed["operator_changes"] == ["lcbhard_6"]


def test_single_assertion_cross_check_on_rows():
    rows = [task_row(task_id="lcbhard_0"), task_row(test=SPLIT_MUTATION, task_id="lcbhard_5")]
    check = checks_manifest.single_assertion_mutation(_inputs(oneoff_rows=rows), _params())
    cross = [d for d in check.details if d.get("depth") == "rows"]
    assert [(d["task_id"], d["single_assertion"], d["agrees_with_manifest"]) for d in cross] == [
        ("lcbhard_0", True, True), ("lcbhard_5", False, True)]
    assert check.meta["row_level_tasks"] == 2


def test_broken_mutations_and_drop_list_coverage():
    manifest = [_entry(n) for n in range(103)] + [
        _entry(77, syntax_ok=False, extraction="syntax_error: x"),
        _entry(35, split="conflicting", extraction="broken: no check() wrapper in mutated test")]
    manifest = [m for m in manifest if not (m.task_id == "lcbhard_77" and m.syntax_ok)]
    issues = [KnownIssue(2, "lcbhard_77", "original", "original_test_wrong", "", "drop"),
              KnownIssue(3, "lcbhard_77", "oneoff", "broken_mutation", "", "exclude")]
    check = checks_manifest.broken_mutations(_inputs(manifest=manifest, issues=issues), _params())
    assert check.status == "quirk"
    found = {(d["task_id"], d["split"]): d for d in check.details}
    assert found[("lcbhard_77", "oneoff")]["covered_by_drop_list"]
    assert not found[("lcbhard_35", "conflicting")]["in_known_issues"]
    uncovered = checks_manifest.broken_mutations(_inputs(manifest=manifest, issues=issues[1:]), _params())
    assert uncovered.status == "defect" and uncovered.observed["uncovered_in_environment_split"] == ["lcbhard_77"]


def test_task_order_flips():
    check = checks_manifest.task_order(_inputs(), _params())
    assert check.status == "quirk" and check.observed["stored_order"] == "numeric"
    assert check.observed["split_flips"] == len(check.details) > 0


def test_split_is_skipped_without_a_heldout_list_and_checked_with_one(tmp_path):
    skipped = _session(_inputs()).run("split")
    assert skipped.status == "skipped" and skipped.meta["missing"] == ["param:heldout_ids"]
    eligible = _inputs().eligible_ids
    assert len(eligible) == 89
    good = checks_manifest.split(_inputs(), _params(heldout_ids=",".join(eligible[:30])))
    assert good.status == "pass" and (good.observed["heldout"], good.observed["train"]) == (30, 59)
    split_file = tmp_path / "split.csv"
    lines = [f"{t},heldout" for t in eligible[:30]] + [f"{t},train" for t in eligible[29:]] + ["lcbhard_8,train"]
    split_file.write_text("task_id,split\n" + "\n".join(lines) + "\n", encoding="utf-8")
    bad = checks_manifest.split(_inputs(), _params(heldout_path=str(split_file)))
    assert bad.status == "defect"
    assert bad.observed["overlap"] == [eligible[29]] and bad.observed["excluded_task_used"] == ["lcbhard_8"]


def test_row_level_checks_skip_without_rows_and_run_on_toy_rows():
    params = _params()
    session = _session(_inputs())
    for check_id in ("visibility_rule", "metrics_replay", "has_code_parsing"):
        check = session.run(check_id)
        assert check.status == "skipped"
        assert check.meta["missing"] == [parquet_key("oneoff"), RECONSTRUCTED_KEY]
    rows = [task_row(task_id="lcbhard_0"), task_row(test=SPLIT_MUTATION, task_id="lcbhard_5")]
    seen = checks_rows.visibility_rule(_inputs(oneoff_rows=rows), params)
    assert seen.status == "quirk" and seen.meta == {"depth": "rows", "tasks": 2, "row_source": "reconstructed",
                                                    "numbering": "zero_based"}
    assert seen.observed["numberings_disagree_on_changed"] == ["lcbhard_0"]
    assert seen.observed["tasks_with_setup_dependency"] == ["lcbhard_0", "lcbhard_5"]
    coded = checks_rows.has_code_parsing(_inputs(oneoff_rows=rows), _params())
    assert coded.status == "quirk" and "two_blocks" in coded.observed["ambiguous_cases"]
    assert "no_block" not in coded.observed["ambiguous_cases"]


def test_metrics_replay_check_on_a_toy_row():
    check = checks_rows.metrics_replay(_inputs(oneoff_rows=[task_row(task_id="lcbhard_0")]), _params())
    assert check.status == "pass" and check.observed["separation_holds"] == check.observed["separation_total"] == 5
    assert check.meta["depth"] == "rows" and check.meta["tasks"] == 1


def test_unparseable_rows_are_excluded_and_counted():
    rows = [task_row(task_id="lcbhard_0"), task_row(test="def check(candidate):\n    assert candidate('x) == 1\n",
                                                    task_id="lcbhard_77")]
    check = checks_rows.visibility_rule(_inputs(oneoff_rows=rows), _params())
    assert check.meta["tasks"] == 1 and "lcbhard_77" in check.summary


MANIFEST_CHECKS = ("dropped_tasks", "single_assertion_mutation", "broken_mutations", "task_order", "split")


def test_missing_manifest_skips_every_manifest_check_naming_it():
    inputs = dataclasses.replace(_inputs(), manifest=None, missing={MANIFEST_KEY: "lcb_manifest.csv: not here"})
    session = _session(inputs, heldout_ids="lcbhard_0")
    for check_id in MANIFEST_CHECKS:
        check = session.run(check_id)
        assert check.status == "skipped" and check.meta["missing"] == [MANIFEST_KEY], (check_id, check.meta)
        assert "not here" in check.summary


def test_missing_defect_list_skips_every_check_that_needs_the_drop_list():
    rows = [task_row(task_id="lcbhard_0")]
    inputs = dataclasses.replace(_inputs(oneoff_rows=rows), known_issues=None,
                                 missing={KNOWN_ISSUES_KEY: "known_issues.csv: sha256 mismatch"})
    session = _session(inputs, heldout_ids="lcbhard_0")
    for check_id in MANIFEST_CHECKS:
        check = session.run(check_id)
        assert check.status == "skipped" and check.meta["missing"] == [KNOWN_ISSUES_KEY], (check_id, check.meta)
        assert "sha256 mismatch" in check.summary
    assert session.run("visibility_rule").status == "quirk"  # the row-level checks do not need the drop list


def test_the_drop_list_is_never_derived_from_an_absent_defect_list():
    inputs = dataclasses.replace(_inputs(), known_issues=None, missing={KNOWN_ISSUES_KEY: "rejected"})
    with pytest.raises(DataUnavailableError, match="known_issues.csv is not loaded: rejected"):
        inputs.eligible_ids
    assert len(_inputs().eligible_ids) == 89


def test_rows_that_do_not_parse_are_an_error_not_a_skip():
    rows = [task_row(test="def check(candidate):\n    assert candidate('x) == 1\n", task_id="lcbhard_77")]
    check = _session(_inputs(oneoff_rows=rows)).run("visibility_rule")
    assert check.status == "error" and "lcbhard_77" in check.summary


def test_has_code_parsing_counts_excluded_rows():
    rows = [task_row(task_id="lcbhard_0"), task_row(test="def check(candidate):\n    assert candidate('x) == 1\n",
                                                    task_id="lcbhard_77")]
    check = checks_rows.has_code_parsing(_inputs(oneoff_rows=rows), _params())
    assert check.meta["tasks"] == 1 and check.meta["excluded"] == ["lcbhard_77"] and "lcbhard_77" in check.summary


def test_row_availability_table():
    table = audit.row_availability(_inputs(oneoff_rows=[task_row(task_id="lcbhard_0")]))
    assert [(r["split"], r["row_source"], r["rows"]) for r in table] == [
        ("oneoff", "reconstructed", 1), ("conflicting", "none", 0)]
    assert table[1]["note"] == "not here"
