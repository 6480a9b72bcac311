"""`compare_leaderboards` on a synthetic leaderboard whose every figure is worked out by hand below."""

from __future__ import annotations

import json

import numpy as np
import pytest

from audit_lib.errors import CorruptFileError, SchemaError
from audit_lib.leaderboard.impact import compare_leaderboards
from audit_lib.leaderboard.results import ModelResults, read_model_results, results_from_rows

TASKS = tuple(f"T/{n}" for n in range(7))
#            T/0 T/1 T/2 T/3 T/4 T/5 T/6       published  without T/4-T/6
OUTCOMES = {"m1": [1, 1, 1, 0, 1, 1, 0],     # 5/7 (1st)  3/4 (2nd)
            "m2": [1, 1, 1, 1, 0, 0, 0],     # 4/7 (2nd)  4/4 (1st)
            "m3": [1, 1, 0, 0, 0, 1, 0],     # 3/7 (3rd)  2/4 (3rd)
            "m4": [1, 0, 0, 1, 0, 0, 0]}     # 2/7 (4th)  2/4 (3rd, tied)
FLAWS = {"T/4": ("contract_violations",), "T/5": ("ground_truth",), "T/6": ("errata_diff",)}


def fixture_results() -> ModelResults:
    return ModelResults("toy", tuple(OUTCOMES), TASKS, np.array(list(OUTCOMES.values()), dtype=float))


def fixture_rows() -> list[dict]:
    return [{"benchmark_id": "toy", "model": model, "example_id": task, "pass1": value}
            for model, values in OUTCOMES.items() for task, value in zip(TASKS, values)]


def test_pass_at_1_and_ranks_before_and_after():
    impact = compare_leaderboards(fixture_results(), FLAWS, resamples=2000, seed=5)
    rows = {row.model: row for row in impact.models}
    assert rows["m1"].pass1_published == pytest.approx(5 / 7) and rows["m1"].pass1_without_flawed == 0.75
    assert [(rows[m].rank_published, rows[m].rank_without_flawed) for m in OUTCOMES] == [(1, 2), (2, 1), (3, 3),
                                                                                        (4, 3)]
    assert [(row.model, row.places_gained) for row in impact.rank_changes] == [("m1", -1), ("m2", 1), ("m4", 1)]
    assert impact.flawed_tasks == ("T/4", "T/5", "T/6")


def test_kendall_tau_between_the_two_rankings():
    # published 5/7 > 4/7 > 3/7 > 2/7; without: 3/4, 1, 1/2, 1/2. Pairs: m1-m2 discordant, m3-m4 tied after,
    # the other four concordant: (4 - 1) / sqrt(6 * 5)
    impact = compare_leaderboards(fixture_results(), FLAWS, resamples=2000, seed=5)
    assert impact.kendall_tau == pytest.approx(3 / np.sqrt(30))


def test_only_a_strict_reversal_is_a_flip_and_it_carries_its_bootstrap():
    impact = compare_leaderboards(fixture_results(), FLAWS, resamples=20_000, seed=5)
    assert [(pair.above, pair.below) for pair in impact.flips] == [("m1", "m2")]  # m3-m4 only tie: no flip
    flip = impact.flips[0]
    assert flip.difference_published == pytest.approx(1 / 7)
    assert flip.difference_without_flawed == pytest.approx(-0.25)
    # m1 - m2 on T/0..T/3 is [0, 0, 0, -1]: a resample shows no difference when T/3 is never drawn, (3/4)^4
    assert flip.bootstrap.difference == -0.25 and flip.bootstrap.ci_high == 0.0
    assert flip.bootstrap.p_value == pytest.approx(2 * 0.75**4, abs=0.02)
    assert not flip.bootstrap.significant


def test_unsolved_all_solved_and_suspect_tasks_are_cross_referenced():
    impact = compare_leaderboards(fixture_results(), FLAWS, resamples=200, seed=5)
    assert [(t.task_id, t.flaws) for t in impact.unsolved] == [("T/6", ("errata_diff",))]
    assert [(t.task_id, t.flawed) for t in impact.all_solved] == [("T/0", False)]
    # T/3 is solved by the 2nd and 4th models only: tau-b = (1 - 3) / sqrt(4 * 6)
    assert [t.task_id for t in impact.suspects] == ["T/3"]
    assert impact.suspects[0].tau == pytest.approx(-2 / np.sqrt(24))


def test_flawed_tasks_missing_from_the_results_are_named():
    impact = compare_leaderboards(fixture_results(), {**FLAWS, "T/99": ("ground_truth",)}, resamples=200, seed=5)
    assert impact.flawed_not_in_results == ("T/99",)


def test_nothing_flawed_changes_nothing():
    impact = compare_leaderboards(fixture_results(), {}, resamples=200, seed=5)
    assert impact.kendall_tau == pytest.approx(1.0) and not impact.rank_changes and not impact.flips
    assert impact.noise_floor_published == impact.noise_floor_without_flawed


def test_every_task_flawed_is_refused():
    with pytest.raises(ValueError, match="every one of the 7 tasks"):
        compare_leaderboards(fixture_results(), {task: ("x",) for task in TASKS})


# ---- the file reader -------------------------------------------------------------------------------------------

def write_rows(path, rows, *, raw_lines=()):
    path.write_text("".join(json.dumps(row) + "\n" for row in rows) + "".join(raw_lines))
    return path


def test_rows_build_the_matrix_in_task_number_order(tmp_path):
    rows = fixture_rows()
    rows.reverse()
    results = read_model_results(write_rows(tmp_path / "toy.jsonl", rows), label="model_results/toy.jsonl")
    assert results.tasks == TASKS and results.models == tuple(OUTCOMES)
    assert np.array_equal(results.outcomes, fixture_results().outcomes)


@pytest.mark.parametrize(("change", "line", "field", "message"), [
    (lambda rows: rows[3].pop("pass1"), 4, "pass1", "missing field 'pass1'"),
    (lambda rows: rows[5].update(pass1=2), 6, "pass1", "in [0, 1]"),
    (lambda rows: rows[5].update(pass1=True), 6, "pass1", "in [0, 1]"),
    (lambda rows: rows[2].update(model=""), 3, "model", "non-empty string"),
    (lambda rows: rows[9].update(benchmark_id="other"), 10, "benchmark_id", "one benchmark per file"),
    (lambda rows: rows.append(dict(rows[0])), 29, "example_id", "a second row for model 'm1' on 'T/0'"),
])
def test_bad_rows_are_refused_with_line_and_field(tmp_path, change, line, field, message):
    rows = fixture_rows()
    change(rows)
    path = write_rows(tmp_path / "toy.jsonl", rows)
    with pytest.raises(SchemaError) as caught:
        read_model_results(path, label="model_results/toy.jsonl")
    assert message in caught.value.message
    assert caught.value.fields["row"] == line and caught.value.fields["field"] == field
    assert caught.value.message.startswith("model_results/toy.jsonl")


def test_a_model_missing_a_task_is_refused(tmp_path):
    rows = [row for row in fixture_rows() if not (row["model"] == "m3" and row["example_id"] == "T/2")]
    with pytest.raises(SchemaError, match="model 'm3' has no row for 'T/2'"):
        results_from_rows(rows, file="toy.jsonl")


def test_a_malformed_line_names_its_line_with_blank_lines_counted(tmp_path):
    path = tmp_path / "toy.jsonl"
    path.write_text(json.dumps(fixture_rows()[0]) + "\n\n{not json\n")
    with pytest.raises(CorruptFileError) as caught:
        read_model_results(path, label="model_results/toy.jsonl")
    assert caught.value.fields["row"] == 3 and "model_results/toy.jsonl, line 3" in caught.value.message
