"""The leaderboard statistics on eval-arena's real files, against the figures eval-arena itself publishes."""

from __future__ import annotations

import numpy as np
import pytest

from audit_lib.leaderboard.impact import compare_leaderboards
from audit_lib.leaderboard.results import read_model_results
from audit_lib.leaderboard.stats import compare_pair, noise_floor

pytestmark = pytest.mark.mirror


@pytest.fixture(scope="module")
def humaneval_plus(mirror_dir):
    return read_model_results(mirror_dir / "model_results" / "humaneval+.jsonl",
                              label="model_results/humaneval+.jsonl")


@pytest.fixture(scope="module")
def mbpp_plus(mirror_dir):
    return read_model_results(mirror_dir / "model_results" / "mbpp+.jsonl", label="model_results/mbpp+.jsonl")


def test_the_files_hold_49_and_59_models_on_every_task(humaneval_plus, mbpp_plus):
    assert humaneval_plus.outcomes.shape == (49, 164) and mbpp_plus.outcomes.shape == (59, 378)
    assert humaneval_plus.tasks[:2] == ("HumanEval/0", "HumanEval/1") and mbpp_plus.tasks[0] == "Mbpp/2"
    assert set(np.unique(humaneval_plus.outcomes)) == {0.0, 1.0}


def test_noise_floor_is_eval_arenas_published_p5_min(humaneval_plus, mbpp_plus):
    # eval-arena's README: "a difference of 6.7% is the minimum required" on HumanEval+, "MBPP+ needs at least 4.2%"
    assert noise_floor(humaneval_plus.models, humaneval_plus.outcomes).p5_min == pytest.approx(11 / 164)
    assert noise_floor(mbpp_plus.models, mbpp_plus.outcomes).p5_min == pytest.approx(16 / 378)


def test_a_pairs_sign_test_matches_eval_arenas_summary_table(humaneval_plus):
    # eval-arena's data/humaneval+/summary.csv: starchat2-15b vs Qwen1.5-72B-Chat, sum 40, diff 20, p 0.00222143...
    index = {model: i for i, model in enumerate(humaneval_plus.models)}
    a, b = "HuggingFaceH4--starchat2-15b-v0.1", "Qwen--Qwen1.5-72B-Chat"
    pair = compare_pair(a, b, humaneval_plus.outcomes[index[a]], humaneval_plus.outcomes[index[b]])
    assert (pair.wins_a + pair.wins_b, pair.wins_a - pair.wins_b) == (40, 20)
    assert pair.p_value == pytest.approx(0.0022214337732293643, rel=1e-9)


def test_the_impact_of_removing_tasks_runs_on_the_whole_leaderboard(humaneval_plus):
    impact = compare_leaderboards(humaneval_plus, {"HumanEval/32": ("contract_violations",)}, resamples=500, seed=1)
    assert len(impact.models) == 49 and impact.tasks == 164 and impact.flawed_tasks == ("HumanEval/32",)
    assert "HumanEval/32" in {task.task_id for task in impact.unsolved}  # no model solves HumanEval/32
