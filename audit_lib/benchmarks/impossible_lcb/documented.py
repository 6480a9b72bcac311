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

