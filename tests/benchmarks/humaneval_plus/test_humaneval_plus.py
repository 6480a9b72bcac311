"""HumanEval+ audit pieces on hand-made tasks, executed through the real sandbox."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from audit_lib.benchmarks.humaneval_plus.checks_canonical import ground_truth_from, time_limit_sensitivity_from
from audit_lib.benchmarks.humaneval_plus.compare import ValueDigest, digest_of
from audit_lib.benchmarks.humaneval_plus.checks_contracts import contract_violations_from, run_contracts
from audit_lib.benchmarks.humaneval_plus.data import PlusTask, mbpp_deserialize_inputs, parse_plus_rows
from audit_lib.benchmarks.humaneval_plus.groundtruth import (CACHE_FORMAT, GroundTruth, compute_ground_truth, read_cache,
                                                            write_cache)
from audit_lib.benchmarks.humaneval_plus.checks_original import original_canonical_vs_plus_from
from audit_lib.benchmarks.humaneval_plus.programs import contract_program
from audit_lib.benchmarks.humaneval_plus.replay import run_candidate, time_limits
from audit_lib.benchmarks.humaneval_plus.runs import InputOutcome, SplitRun
from audit_lib.errors import SchemaError


def make_task(task_id: str, entry: str, body: str, base: list, plus: list, *, contract: str = "",
              atol: float = 0.0, prompt_extra: str = "") -> PlusTask:
    prompt = f"{prompt_extra}def {entry}(x):\n    \"\"\"doc\"\"\"\n"
    return PlusTask(task_id, prompt, entry, body, contract, tuple(base), tuple(plus), atol, None, 1)


SQUARE = make_task("T/0", "square", "    return x * x\n", [[2]], [[3], [-4], [10]],
                   contract='    assert isinstance(x, int), "invalid inputs" # $_CONTRACT_$\n'
                            '    assert x >= 0, "invalid inputs" # $_CONTRACT_$\n')
HALF = make_task("T/1", "half", "    return x / 3\n", [[1]], [[2], [3]])
FIND_ZERO = PlusTask(
    "HumanEval/32", "import math\n\ndef poly(xs, x):\n    return sum(c * math.pow(x, i) for i, c in enumerate(xs))\n\n"
    "def find_zero(xs):\n    \"\"\"doc\"\"\"\n", "find_zero",
    "    lo, hi = -100.0, 100.0\n    for _ in range(200):\n        mid = (lo + hi) / 2\n"
    "        if poly(xs, lo) * poly(xs, mid) <= 0:\n            hi = mid\n        else:\n            lo = mid\n"
    "    return lo\n", "", ((([-6, 11, -6, 1]),),), ((([-2, 1]),),), 1e-4, None, 1)
TASKS = (SQUARE, HALF, FIND_ZERO)


@pytest.fixture(scope="module")
def ground_truth() -> GroundTruth:
    runs = compute_ground_truth(TASKS, "humaneval")
    return GroundTruth("humaneval", "test", runs, Path("unused.json.gz"), 0, len(TASKS))


def test_ground_truth_values_and_times(ground_truth: GroundTruth) -> None:
    assert [o.value for o in ground_truth.run("T/0", "plus").outcomes] == [9, 16, 100]
    assert all(o.duration_s >= 0 for o in ground_truth.run("T/0", "plus").outcomes)
    check = ground_truth_from(TASKS, "humaneval", ground_truth, compute_ground_truth(TASKS, "humaneval"))
    assert check.status == "pass" and check.observed["canonical_failures"] == 0


def test_canonical_that_raises_is_a_ground_truth_defect() -> None:
    broken = make_task("T/9", "inv", "    return 1 / x\n", [[1]], [[0], [2]])
    runs = compute_ground_truth([broken], "humaneval")
    gt = GroundTruth("humaneval", "t", runs, Path("x"), 0, 1)
    check = ground_truth_from([broken], "humaneval", gt, runs)
    assert check.status == "defect"
    assert check.details[0]["kind"] == "exception" and "ZeroDivisionError" in check.details[0]["detail"]


def test_a_canonical_beyond_the_sandbox_limits_is_a_quirk_not_a_benchmark_defect() -> None:
    # EvalPlus keeps any output of its in-process canonical; here one output is too slow to record at all.
    slow = make_task("T/8", "slow", "    while x:\n        pass\n    return 1\n", [[0]], [[1], [0]])
    runs = compute_ground_truth([slow], "humaneval", input_timeout_s=0.5)
    gt = GroundTruth("humaneval", "t", runs, Path("x"), 0, 1)
    check = ground_truth_from([slow], "humaneval", gt, runs, input_timeout_s=0.5)
    assert check.status == "quirk"
    assert check.observed["canonical_failures"] == 0 and check.observed["exceeds_sandbox_limits"] == 1
    assert check.details[0]["problem"] == "exceeds_sandbox_limits" and check.details[0]["kind"] == "timeout"


def test_original_canonical_differing_on_one_input(ground_truth: GroundTruth) -> None:
    solutions = {"T/0": SQUARE.prompt + "    return x * x if x != 10 else 99\n",
                 "T/1": HALF.prompt + "    return x / 3 + 1e-9\n",  # inside EvalPlus's default float atol
                 "HumanEval/32": FIND_ZERO.prompt + "    return 3.0 if len(xs) == 4 else 2.0\n"}
    runs = run_candidate(TASKS, solutions, "humaneval", ground_truth)
    check = original_canonical_vs_plus_from(TASKS, "humaneval", runs, ground_truth)
    assert check.observed["tasks_disagreeing"] == 1
    row = check.details[0]
    assert row["task_id"] == "T/0" and row["failing_inputs"] == 1 and row["plus_failing"] == 1
    assert row["failure_kinds"] == {"wrong_value": 1} and row["first_input"] == "[10]"


def test_float_tolerance_rejects_a_visible_error(ground_truth: GroundTruth) -> None:
    runs = run_candidate([HALF], {"T/1": HALF.prompt + "    return round(x / 3, 3)\n"}, "humaneval", ground_truth)
    check = original_canonical_vs_plus_from([HALF], "humaneval", runs, ground_truth)
    assert check.details[0]["failing_inputs"] == 2  # x=1 and x=2; x=3 gives 1.0 exactly


def test_find_zero_oracle_accepts_any_root(ground_truth: GroundTruth) -> None:
    # the canonical finds one root of (x-1)(x-2)(x-3); a candidate returning another root still passes
    runs = run_candidate([FIND_ZERO], {"HumanEval/32": FIND_ZERO.prompt + "    return 3.0 if len(xs) == 4 else 2.0\n"},
                         "humaneval", ground_truth)
    assert original_canonical_vs_plus_from([FIND_ZERO], "humaneval", runs, ground_truth).status == "pass"
    wrong = run_candidate([FIND_ZERO], {"HumanEval/32": FIND_ZERO.prompt + "    return 2.5\n"}, "humaneval",
                          ground_truth)
    assert original_canonical_vs_plus_from([FIND_ZERO], "humaneval", wrong, ground_truth).status == "quirk"


def test_timeout_is_reported_with_its_kind(ground_truth: GroundTruth) -> None:
    slow = {"T/0": SQUARE.prompt + "    if x == 3:\n        while True:\n            pass\n    return x * x\n"}
    runs = run_candidate([SQUARE], slow, "humaneval", ground_truth, min_time_limit=0.5)
    row = original_canonical_vs_plus_from([SQUARE], "humaneval", runs, ground_truth).details[0]
    assert row["failure_kinds"] == {"timeout": 1} and row["first_input"] == "[3]"


def test_contract_violation_found() -> None:
    task = make_task("T/5", "square", "    return x * x\n", [[2]], [[3], [-4], ["a"]], contract=SQUARE.contract)
    check = contract_violations_from([task], run_contracts([task]))
    assert check.status == "defect" and check.observed["violations"] == 2
    assert {row["input"] for row in check.details} == {"[-4]", "['a']"}
    assert all(row["kind"] == "invalid_inputs" for row in check.details)
    assert "return None" in contract_program(task).source


def test_time_limits_and_sensitivity(ground_truth: GroundTruth) -> None:
    assert time_limits([0.1, 2.0], min_time_limit=4.0) == [4.0, 8.0]
    check = time_limit_sensitivity_from(TASKS, ground_truth, min_time_limit=4.0)
    assert check.status == "pass" and check.observed["inputs_timed"] == 9
    # a canonical that burns ~10 ms of CPU per input: its limit (4 x its CPU time) is over a 1 ms floor on any
    # machine (CPU time, so a canonical that sleeps would not count: sleeping costs no CPU)
    slow = make_task("T/5", "slow", "    s = 0\n    for i in range(300_000):\n        s += i\n    return x\n",
                     [[1]], [[2], [3]])
    slow_truth = GroundTruth("humaneval", "t", compute_ground_truth([slow], "humaneval"), Path("x"), 0, 1)
    tiny_floor = time_limit_sensitivity_from([slow], slow_truth, min_time_limit=0.001)
    assert tiny_floor.status == "quirk" and tiny_floor.observed["inputs_over_floor"] > 0


def test_cache_round_trip(tmp_path: Path, ground_truth: GroundTruth) -> None:
    path = tmp_path / "gt.json.gz"
    write_cache(path, "abc", "humaneval", ground_truth.runs)
    again = read_cache(path, "abc")
    assert again[("T/1", "plus")].outcomes[0].value == pytest.approx(2 / 3)
    with pytest.raises(Exception, match="sha256"):
        read_cache(path, "other")


def test_a_cache_of_an_older_format_is_recomputed_and_a_newer_one_refused(tmp_path: Path) -> None:
    """Format 1 held digests of encodings in insertion order: read as no cache (recomputed), never compared."""
    runs = {("T/0", "base"): SplitRun("T/0", "base", (InputOutcome("value", 4, 0.5, cpu_s=0.25),))}
    path = tmp_path / "gt.json.gz"
    write_cache(path, "abc", "humaneval", runs)
    with gzip.open(path, "rt") as handle:
        payload = json.load(handle)
    for older_or_newer, expected in ((CACHE_FORMAT - 1, {}), (CACHE_FORMAT + 1, None)):
        payload["format"] = older_or_newer
        with gzip.open(path, "wt") as handle:
            json.dump(payload, handle)
        if expected is None:
            with pytest.raises(Exception, match="format"):
                read_cache(path, "abc")
        else:
            assert read_cache(path, "abc") == expected


def test_bad_rows_name_file_row_and_field() -> None:
    with pytest.raises(SchemaError) as raised:
        parse_plus_rows([{"task_id": "T/0", "prompt": "", "entry_point": "f", "canonical_solution": "",
                          "contract": "", "base_input": [[1]], "plus_input": "oops", "atol": 0}],
                        dataset="humaneval", file="x.jsonl")
    assert raised.value.fields == {"file": "x.jsonl", "row": 1, "field": "plus_input"}


def test_mbpp_deserialisation_restores_tuples_and_quirks() -> None:
    assert mbpp_deserialize_inputs("Mbpp/2", [[[1, 2], [3]]]) == [[(1, 2), (3,)]]
    assert mbpp_deserialize_inputs("Mbpp/115", [[[[1], []]]]) == [[[{1}, {}]]]
    assert mbpp_deserialize_inputs("Mbpp/124", [[1, "1j"]]) == [(1.0, 1j)]
    assert mbpp_deserialize_inputs("Mbpp/1", [[[1, 2]]]) == [[[1, 2]]]


def test_cache_keeps_huge_outputs_as_digests(tmp_path: Path) -> None:
    big = make_task("T/7", "count", "    return list(range(x))\n", [[3]], [[100_000]])
    runs = compute_ground_truth([big], "humaneval")
    path = tmp_path / "gt.json.gz"
    write_cache(path, "abc", "humaneval", runs)
    cached = read_cache(path, "abc")
    assert cached[("T/7", "base")].outcomes[0].value == [0, 1, 2]
    digest = cached[("T/7", "plus")].outcomes[0].value
    assert isinstance(digest, ValueDigest) and digest.sha256 == digest_of(list(range(100_000))).sha256
    first = GroundTruth("humaneval", "abc", cached, path, 1, 0)
    assert ground_truth_from([big], "humaneval", first, runs).observed["nondeterministic_inputs"] == 0


def test_mbpp_not_none_task_compares_presence_of_a_match() -> None:
    task = PlusTask("Mbpp/737", '"""doc"""\n', "check_str",
                    "\nimport re\ndef check_str(s):\n    return re.search('^[aeiou]', s)\n", "",
                    (["apple"],), (["banana"], ["egg"]), 0.0, None, 1)
    runs = compute_ground_truth([task], "mbpp")
    assert [o.value for o in runs[("Mbpp/737", "plus")].outcomes] == [False, True]  # `out is not None`
    gt = GroundTruth("mbpp", "t", runs, Path("x"), 0, 1)
    candidate = {"Mbpp/737": "import re\ndef check_str(s):\n    return re.match('[aeiou]', s)\n"}
    assert original_canonical_vs_plus_from([task], "mbpp", run_candidate([task], candidate, "mbpp", gt),
                                            gt).status == "pass"
    always = {"Mbpp/737": "def check_str(s):\n    return True\n"}
    row = original_canonical_vs_plus_from([task], "mbpp", run_candidate([task], always, "mbpp", gt), gt).details[0]
    assert row["failing_inputs"] == 1 and row["first_input"] == "['banana']"


def test_mbpp_not_none_mapping_looks_up_no_name_the_candidate_binds() -> None:
    """The mapping runs in the candidate's globals: a module-level `isinstance` (or a later rebinding of the entry
    point) must not change it. EvalPlus maps this 0/1 answer to `0 is not None` = True and fails `banana`."""
    task = PlusTask("Mbpp/737", '"""doc"""\n', "check_str",
                    "\nimport re\ndef check_str(s):\n    return re.search('^[aeiou]', s)\n", "",
                    (["apple"],), (["banana"], ["egg"]), 0.0, None, 1)
    runs = compute_ground_truth([task], "mbpp")
    gt = GroundTruth("mbpp", "t", runs, Path("x"), 0, 1)
    shadowed = {"Mbpp/737": "import re\ndef isinstance(obj, cls):\n    return True\n"
                            "def check_str(s):\n    return 1 if re.match('[aeiou]', s) else 0\n"}
    row = original_canonical_vs_plus_from([task], "mbpp", run_candidate([task], shadowed, "mbpp", gt), gt).details[0]
    assert row["failing_inputs"] == 1 and row["first_input"] == "['banana']"
    rebinding = {"Mbpp/737": "import re\ndef check_str(s):\n    global check_str\n    check_str = lambda s: True\n"
                             "    return re.match('[aeiou]', s)\n"}
    ran = run_candidate([task], rebinding, "mbpp", gt)  # EvalPlus keeps calling the function the module defined
    assert original_canonical_vs_plus_from([task], "mbpp", ran, gt).status == "pass"


def test_candidates_run_under_evalplus_reliability_guard(ground_truth: GroundTruth) -> None:
    """EvalPlus loads a sample after `reliability_guard` (os.putenv, open, exit... set to None): a sample that calls
    one fails every input there, so it must here too; the guard binds no name in the program's globals and keeps a
    `from __future__` import first. The ground truth runs without it, as in EvalPlus."""
    def failing(solution: str) -> int:
        runs = run_candidate([SQUARE], {"T/0": solution}, "humaneval", ground_truth)
        return sum(not o.kind == "value" for split in ("base", "plus") for o in runs[("T/0", split)].outcomes) \
            + sum(runs[("T/0", split)].load_error is not None for split in ("base", "plus"))
    honest = SQUARE.prompt + "    return x * x\n"
    assert failing('"""doc"""\nfrom __future__ import annotations\n' + honest) == 0
    assert failing("import os\n" + SQUARE.prompt + "    os.putenv('A', 'B')\n    return x * x\n") == 4
    assert failing(SQUARE.prompt + "    open('/dev/null').close()\n    return x * x\n") == 4
    assert failing(SQUARE.prompt + "    exit.__call__, help.__call__\n    return x * x\n") == 4
    assert failing(SQUARE.prompt + "    return x * x if os else 0\n") == 4  # the guard's `import os` is its own
    assert failing("import resource\n" + honest) == 6  # unimportable: the load fails, every input with it


def test_checks_skip_or_list_what_they_could_not_judge(ground_truth: GroundTruth) -> None:
    assert ground_truth_from([], "humaneval", ground_truth, {}).status == "skipped"
    assert contract_violations_from([], {}).status == "skipped"
    assert contract_violations_from([HALF], run_contracts([HALF])).status == "skipped"  # HALF has no contract
    mixed = contract_violations_from([SQUARE, HALF], run_contracts([SQUARE, HALF]))
    assert mixed.status == "defect" and mixed.observed["tasks_without_contract"] == ["T/1"]  # SQUARE: -4
    assert original_canonical_vs_plus_from(TASKS, "humaneval", {}, ground_truth).status == "skipped"
    only_half = run_candidate([HALF], {"T/1": HALF.prompt + "    return x / 3\n"}, "humaneval", ground_truth)
    partial = original_canonical_vs_plus_from([SQUARE, HALF], "humaneval", only_half, ground_truth)
    assert partial.status == "pass" and partial.observed["tasks_not_scored"] == ["T/0"]


def test_sample_jobs_get_evalplus_whole_sample_budget_and_ground_truth_gets_more_room():
    from audit_lib.benchmarks.humaneval_plus.runs import EVALPLUS_SAMPLE_BUDGET, job_limits

    assert job_limits([4.0] * 3, budget=EVALPLUS_SAMPLE_BUDGET).total_timeout_s == 12.0 + 1.0 + 2.0
    assert job_limits([4.0] * 30, budget=EVALPLUS_SAMPLE_BUDGET).total_timeout_s == 60.0 + 1.0 + 2.0
    assert job_limits([30.0] * 2).total_timeout_s == 60.0 + 1.0 + 10.0


def test_fast_check_stops_at_the_first_wrong_value_where_equality_decides(ground_truth: GroundTruth) -> None:
    from audit_lib.benchmarks.humaneval_plus.replay import score_split

    wrong_square = SQUARE.prompt + "    return x * x if x != 3 else 0\n"  # wrong on plus input 0 of 3
    wrong_half = HALF.prompt + "    return x / 3 + 1e-9 if x == 2 else x / 2\n"  # within atol on input 0, then wrong
    solutions = {"T/0": wrong_square, "T/1": wrong_half}
    full = run_candidate(TASKS[:2], solutions, "humaneval", ground_truth)
    fast = run_candidate(TASKS[:2], solutions, "humaneval", ground_truth, fast_check=True)
    assert [o.kind for o in full[("T/0", "plus")].outcomes] == ["value"] * 3
    assert [o.kind for o in fast[("T/0", "plus")].outcomes] == ["value", "not_run", "not_run"]
    # Floats compare with a tolerance, so a wrong float never stops the run early; both inputs are scored.
    assert [o.kind for o in fast[("T/1", "plus")].outcomes] == ["value", "value"]
    for key in fast:
        task = {t.task_id: t for t in TASKS}[key[0]]
        verdict_full = all(v.passed for v in score_split(task, "humaneval", full[key], ground_truth.run(*key)))
        verdict_fast = all(v.passed for v in score_split(task, "humaneval", fast[key], ground_truth.run(*key)))
        assert verdict_full == verdict_fast, key


def test_cache_keeps_cpu_times_and_reads_old_five_field_outcomes(tmp_path: Path) -> None:
    runs = {("T/0", "base"): SplitRun("T/0", "base", (InputOutcome("value", 4, 0.5, cpu_s=0.25),))}
    path = tmp_path / "gt.json.gz"
    write_cache(path, "abc", "humaneval", runs)
    assert read_cache(path, "abc")[("T/0", "base")].outcomes[0].cpu_s == 0.25
    with gzip.open(path, "rt") as handle:
        payload = json.load(handle)
    payload["tasks"]["T/0"]["base"]["outcomes"][0] = payload["tasks"]["T/0"]["base"]["outcomes"][0][:5]
    with gzip.open(path, "wt") as handle:
        json.dump(payload, handle)
    old = read_cache(path, "abc")[("T/0", "base")].outcomes[0]
    assert (old.value, old.duration_s, old.cpu_s) == (4, 0.5, 0.0)
