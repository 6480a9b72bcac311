"""Run upstream evalplus 0.3.1 on given programs or a samples file; run with the evalplus venv's interpreter.

    python evalplus_driver.py check < cases.json       # untrusted_check on each case, JSON out
    python evalplus_driver.py evaluate SAMPLES DATASET [PARALLEL]  # evalplus.evaluate on SAMPLES (HumanEval+ from
                                                                   # DATASET), PARALLEL workers (its --parallel)

A case is {"dataset", "code", "inputs", "entry_point", "expected", "atol", "ref_time", "fast_check"}. `evaluate`
needs HumanEval+ as a decompressed .jsonl (evalplus reads it through HUMANEVAL_OVERRIDE_PATH) and keeps its caches
under XDG_CACHE_HOME when set. `datasets` and `evalplus.codegen` are stubbed: evaluation never calls them (see
make_evalplus_venv.sh); pandas, which `datasets` imports, is imported as it would be. This file is evalplus's
caller, not part of benchaudit: it imports nothing from it.
"""

import json
import os
import sys
import time
import types


def _stub_unused_modules() -> None:
    # `datasets` imports pandas: a full install has pandas loaded before the guard, so a sample's `import pandas`
    # finds it (imported under the guard it fails: `open` is None). The stub keeps that, without pyarrow & co.
    import pandas  # noqa: F401

    datasets = types.ModuleType("datasets")
    datasets.load_dataset = None  # EvalPerf's loader; evaluation never calls it
    sys.modules["datasets"] = datasets
    codegen = types.ModuleType("evalplus.codegen")
    codegen.run_codegen = None  # model back-ends; evaluate() calls it only when given a model
    sys.modules["evalplus.codegen"] = codegen


def check(cases):
    from evalplus.eval import untrusted_check

    results = []
    for case in cases:
        started = time.perf_counter()
        status, details = untrusted_check(case["dataset"], case["code"], case["inputs"], case["entry_point"],
                                          expected=case["expected"], atol=case["atol"], ref_time=case["ref_time"],
                                          fast_check=case.get("fast_check", True))
        results.append({"status": status, "details": [bool(d) for d in details],
                        "wall_s": time.perf_counter() - started})
    return results


def evaluate(samples, dataset_file, parallel=None):
    os.environ["HUMANEVAL_OVERRIDE_PATH"] = os.path.abspath(dataset_file)
    from evalplus.evaluate import evaluate as run

    started = time.perf_counter()
    run(dataset="humaneval", samples=samples, i_just_wanna_run=True, parallel=parallel)
    return {"wall_s": time.perf_counter() - started,
            "results": samples.replace(".jsonl", "_eval_results.json") if samples.endswith(".jsonl")
            else os.path.join(samples, "eval_results.json")}


def main(argv):
    _stub_unused_modules()
    if argv[:1] == ["check"]:
        print(json.dumps(check(json.load(sys.stdin))))
    elif argv[:1] == ["evaluate"] and len(argv) in (3, 4):
        print(json.dumps(evaluate(argv[1], argv[2], int(argv[3]) if len(argv) == 4 else None)))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
