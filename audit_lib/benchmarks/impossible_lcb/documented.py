"""What the impossible-lcb-rl environment's README documents; the checks compare the data against these claims."""

from __future__ import annotations

ENV_SPLIT = "oneoff"            # the environment's impossible form
DOCUMENTED_TASKS = 103
DOCUMENTED_AFTER_DROP = 90
DOCUMENTED_DROPPED = 13
DOCUMENTED_AFTER_RULE = 89
DOCUMENTED_RULE_BREAKERS = ("lcbhard_5",)
DOCUMENTED_HELDOUT = 30
DOCUMENTED_TRAIN = 59

# Check titles quote the documented figures, so they live next to them.
TITLES = {
    "dropped_tasks": "Drop list derived from the audit's defect list (103 -> 90)",
    "single_assertion_mutation": "Oneoff mutations that change more than one assertion (documented 90 -> 89)",
    "broken_mutations": "Mutated tests that do not compile or lack the check wrapper",
    "task_order": "Task ids sorted as text vs by number",
    "split": "Held-out / train split (30 / 59)",
    "visibility_rule": "\"Even-numbered assertions shown, plus the changed one\" under both numberings",
    "metrics_replay": "Six metrics on three generated solutions, both forms, in the sandbox",
    "has_code_parsing": "has_code: code-block extraction on awkward replies",
}
