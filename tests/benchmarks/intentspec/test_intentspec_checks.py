"""Checks that read sandbox verdicts, fed with hand-made runs (no execution here)."""

from __future__ import annotations

import dataclasses

from test_intentspec_helpers import canonical_record, canonicals, fake_run, outcome, spec_record, specs

from audit_lib.benchmarks.intentspec import audit
from audit_lib.benchmarks.intentspec.checks_canonical import canonical_ivr_zero_from, constraints_vs_references_from
from audit_lib.benchmarks.intentspec.checks_exploit import exit_code_exploit_from
from audit_lib.benchmarks.intentspec.checks_power import constraint_power_from
from audit_lib.benchmarks.intentspec.checks_replay import ivr_replay_from
from audit_lib.benchmarks.intentspec.data import PublishedRun
from audit_lib.benchmarks.intentspec.load import CANONICALS_KEY, SPEC_PAIRS_KEY, IntentSpecData
from audit_lib.benchmarks.intentspec.replay import ReplayRuns
from audit_lib.benchmarks.intentspec.runs import EXIT_ZERO_EXPLOIT
from audit_lib.plugin import AuditSession

SPEC = specs(spec_record("HumanEval/1"))


def published(per_task, overall):
    return PublishedRun("results/experiment1.json", "m-1.0", 2, overall, {"algorithm": overall}, per_task)


def test_canonical_failing_a_hidden_constraint_is_a_defect():
    run = fake_run("canonical", "canonicals.jsonl", "HumanEval/1", 0, {"C1": "pass", "C2": "pass", "C3": "fail"})
    check = canonical_ivr_zero_from(SPEC, {"HumanEval/1": run}, canonicals(canonical_record()))
    assert check.status == "defect"
    assert check.observed["failing_constraints"] == 1 and check.observed["tasks_ivr_1"] == 1
    assert [(r["constraint_id"], r["role"], r["error"]) for r in check.details] == [("C3", "hidden",
                                                                                    "AssertionError: boom")]
    assert check.meta["per_task_ivr"] == {"HumanEval/1": 1.0}


def test_canonical_passing_everything_passes():
    run = fake_run("canonical", "canonicals.jsonl", "HumanEval/1", 0, {"C1": "pass", "C2": "pass", "C3": "pass"})
    check = canonical_ivr_zero_from(SPEC, {"HumanEval/1": run}, canonicals(canonical_record()))
    assert check.status == "pass" and check.meta["per_task_ivr"] == {"HumanEval/1": 0.0}


def test_canonical_check_skips_without_runs_and_errors_on_a_canonical_not_run():
    skipped = canonical_ivr_zero_from(SPEC, {}, canonicals(canonical_record()))
    assert skipped.status == "skipped" and skipped.meta["missing"] == [SPEC_PAIRS_KEY, CANONICALS_KEY]
    assert canonical_ivr_zero_from([], {}, []).status == "skipped"
    two = specs(spec_record("HumanEval/1"), spec_record("HumanEval/2"))
    run = fake_run("canonical", "canonicals.jsonl", "HumanEval/1", 0, {"C1": "pass", "C2": "pass", "C3": "pass"})
    check = canonical_ivr_zero_from(two, {"HumanEval/1": run},
                                     canonicals(canonical_record("HumanEval/1"), canonical_record("HumanEval/2")))
    assert check.status == "error" and check.observed["tasks_canonical_not_run"] == ["HumanEval/2"]
    assert "HumanEval/2" in check.summary


def test_constraints_vs_references_skips_when_no_reference_was_run():
    check = constraints_vs_references_from(SPEC, {"openai_humaneval": {}}, {})
    assert check.status == "skipped" and check.meta["missing"] == ["humaneval/HumanEval.jsonl.gz"]


def test_ivr_replay_matches_and_mismatches():
    runs = [fake_run("generation", "m-1_0", "HumanEval/1", 0, {"C1": "pass", "C2": "fail", "C3": "pass"}),
            fake_run("generation", "m-1_0", "HumanEval/1", 1, {"C1": "pass", "C2": "pass", "C3": "pass"})]
    same = published({"HumanEval/1": (outcome(True, ("C3",), ("C2",)), outcome(True, ("C2", "C3"), ()))}, 0.5)
    check = ivr_replay_from(SPEC, runs, [same], all_tasks=True, unavailable={})
    assert check.status == "pass", check.details
    assert check.observed["models"]["m-1.0"]["replayed_overall_ivr"] == 0.5

    differs = published({"HumanEval/1": (outcome(True, ("C2", "C3"), ()), outcome(True, ("C2", "C3"), ()))}, 0.0)
    check = ivr_replay_from(SPEC, runs, [differs], all_tasks=True, unavailable={})
    assert check.status == "quirk"
    fields = {(row["task_id"], row["sample"], row["field"]) for row in check.details}
    assert ("HumanEval/1", 0, "failed_hidden") in fields and ("(overall)", None, "overall_ivr") in fields


def test_ivr_replay_flags_stored_overall_that_its_outcomes_do_not_give():
    runs = [fake_run("generation", "m-1_0", "HumanEval/1", 0, {"C1": "pass", "C2": "pass", "C3": "pass"})]
    wrong_total = published({"HumanEval/1": (outcome(True, ("C2", "C3"), ()),)}, 0.3)
    check = ivr_replay_from(SPEC, runs, [wrong_total], all_tasks=True, unavailable={})
    assert [row["field"] for row in check.details] == ["overall_ivr (stored vs recomputed from published outcomes)",
                                                       "ivr_by_type"]


def test_ivr_replay_lists_generations_without_a_results_file():
    runs = [fake_run("generation", "m-1_0", "HumanEval/1", 0, {"C1": "pass", "C2": "pass", "C3": "pass"}),
            fake_run("generation", "other", "HumanEval/1", 0, {"C1": "pass", "C2": "pass", "C3": "pass"})]
    check = ivr_replay_from(SPEC, runs, [published({"HumanEval/1": (outcome(True, ("C2", "C3"), ()),)}, 0.0)],
                             all_tasks=True, unavailable={})
    assert [(row["model"], row["field"]) for row in check.details] == [("other", "presence")]


def test_ivr_replay_skips_without_published_results():
    check = ivr_replay_from(SPEC, [], [], all_tasks=True, unavailable={"intentspec/results/x.json": "absent"})
    assert check.status == "skipped" and "absent" in check.summary
    assert check.meta["missing"] == ["intentspec/results/x.json"]


def test_exit_code_exploit_scores_perfect_under_naive_harness_only():
    probe = fake_run("probe", "exit_zero", "HumanEval/1", 0, {"C1": "error", "C2": "error", "C3": "error"},
                     exit_codes={"C1": 0, "C2": 0, "C3": 0})
    check = exit_code_exploit_from(SPEC, [probe], EXIT_ZERO_EXPLOIT)
    assert check.status == "defect"
    assert check.observed["naive_passes"] == 3 and check.observed["sandbox_passes"] == 0
    assert check.observed["naive_overall_ivr"] == 0.0 and check.observed["naive_tasks_included"] == 1
    assert check.observed["sandbox_tasks_included"] == 0
    assert "1 of 1 tasks have no stated-passing solution" in check.summary


def test_exit_code_exploit_is_an_error_without_raw_exit_codes():
    """The sandbox, not the data, would lack what the check reads: nothing the user can supply, so not a skip."""
    probe = fake_run("probe", "exit_zero", "HumanEval/1", 0, {"C1": "error", "C2": "error", "C3": "error"})
    check = exit_code_exploit_from(SPEC, [probe], EXIT_ZERO_EXPLOIT)
    assert check.status == "error" and "no raw child exit code" in check.summary


def test_exit_code_exploit_is_an_error_when_the_sandbox_passes_the_probe():
    probe = fake_run("probe", "exit_zero", "HumanEval/1", 0, {"C1": "pass", "C2": "error", "C3": "error"},
                     exit_codes={"C1": 0, "C2": 0, "C3": 0})
    assert exit_code_exploit_from(SPEC, [probe], EXIT_ZERO_EXPLOIT).status == "error"


def test_constraint_power_finds_non_discriminating_constraints():
    runs = [fake_run("generation", "m", "HumanEval/1", i, {"C1": "pass", "C2": "pass", "C3": status})
            for i, status in enumerate(("pass", "fail"))]
    check = constraint_power_from(SPEC, runs)
    assert check.observed["hidden_never_failed"] == 1 and check.observed["stated_always_passed"] == 1
    findings = {(row["finding"], row["constraint_id"]) for row in check.details}
    assert ("hidden constraint no generation fails", "C2") in findings
    assert ("description literal absent from test", "C1") not in findings  # "2" and "4" both appear in its test


def test_constraint_power_spot_checks_a_description_its_test_contradicts():
    record = spec_record()
    record["constraints"][1]["description"] = "Zero maps to 7"
    runs = [fake_run("generation", "m", "HumanEval/1", 0, {"C1": "pass", "C2": "fail", "C3": "fail"})]
    check = constraint_power_from(specs(record), runs, rejected_by_all_references=[("HumanEval/1", "C3")])
    spot = {(row["finding"], row["constraint_id"]) for row in check.details}
    assert spot == {("stated constraint every generation passes", "C1"),
                    ("description literal absent from test", "C2"),
                    ("test rejects the canonical and every reference", "C3")}
    assert check.observed["spot_check_candidates"] == 2


def _session(data: IntentSpecData, monkeypatch, replay) -> AuditSession:
    """The notebook's session on hand-made data; `replay` stands in for the sandboxed batch."""
    monkeypatch.setattr(audit, "execute_replay", replay)
    plugin = dataclasses.replace(audit.AUDIT, load=lambda params: audit.Inputs(data))
    return AuditSession(plugin, audit.AUDIT.validate({}))


DATA = IntentSpecData(specs=SPEC, canonicals=canonicals(canonical_record()), selected=("HumanEval/1",),
                      generations=(), published=(), references={}, provenance=(),
                      unavailable={"humaneval/HumanEval.jsonl.gz": "not in mirror"})


def test_session_skips_absent_inputs_naming_them_and_turns_a_crash_into_an_error(monkeypatch):
    calls = []

    def broken_replay(data, **_):
        calls.append(data)
        return ReplayRuns(canonical={"HumanEval/1": None}, references={}, generations=(), probes=(), duration_s=0.0)

    session = _session(DATA, monkeypatch, broken_replay)
    checks = {check.id: check for check in session.run_all()}
    assert tuple(checks) == tuple(spec.id for spec in audit.AUDIT.checks)
    assert {check_id: check.status for check_id, check in checks.items()} == {
        "schema": "pass", "canonical_ivr_zero": "error", "canonical_provenance": "skipped",
        "constraints_vs_references": "skipped", "ivr_replay": "skipped", "exit_code_exploit": "skipped",
        "constraint_power": "error", "your_generations": "skipped"}
    assert checks["your_generations"].meta["missing"] == ["param:generations_dir"]
    assert checks["canonical_provenance"].meta["missing"] == ["humaneval/HumanEval.jsonl.gz"]
    assert "not in mirror" in checks["canonical_provenance"].summary
    assert checks["constraints_vs_references"].meta["missing"] == ["humaneval/HumanEval.jsonl.gz"]
    assert all(key.startswith("intentspec/results/") for key in checks["ivr_replay"].meta["missing"])
    assert len(calls) == 1  # the sandboxed batch runs once, whichever check needs it first


def test_a_failed_batch_is_each_dependent_checks_error_and_is_not_rerun(monkeypatch):
    calls = []

    def failing_replay(data, **_):
        calls.append(data)
        raise RuntimeError("dask scheduler unreachable")

    session = _session(DATA, monkeypatch, failing_replay)
    checks = {check.id: check for check in session.run_all()}
    assert checks["schema"].status == "pass"
    for check_id in ("canonical_ivr_zero", "exit_code_exploit", "constraint_power"):
        assert checks[check_id].status == "error" and "dask scheduler unreachable" in checks[check_id].summary
    assert len(calls) == 1


def test_missing_spec_pairs_skip_every_check_naming_the_file(monkeypatch):
    data = dataclasses.replace(DATA, specs=(), canonicals=(), selected=(),
                               unavailable={SPEC_PAIRS_KEY: "spec_pairs.jsonl: sha256 mismatch"})
    session = _session(data, monkeypatch, lambda data, **_: (_ for _ in ()).throw(AssertionError("ran")))
    for check in session.run_all():
        assert check.status == "skipped" and check.meta["missing"] == [SPEC_PAIRS_KEY], check
        assert "sha256 mismatch" in check.summary
