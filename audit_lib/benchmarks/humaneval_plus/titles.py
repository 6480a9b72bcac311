"""Each check's neutral title, in one light module (the plugin declares them before any heavy import)."""

from __future__ import annotations

GROUND_TRUTH_TITLE = "Expected outputs from the canonical solutions, and a second run for nondeterminism"
AMPLIFICATION_TITLE = "Base vs plus input counts (the amplification claim)"
DUPLICATES_TITLE = "Plus inputs that repeat a base input or each other"
CONTRACT_TITLE = "Inputs that violate the task's own input contract"
ORIGINAL_CANONICAL_TITLE = "OpenAI's original canonical solutions scored on HumanEval+ with EvalPlus's rules"
VARIANTS_TITLE = "Reduced variants (-Mini, -NoExtreme) vs the full dataset, and the wrong solutions they let pass"
ORIGINAL_TESTS_TITLE = "Canonical solutions against the original check tests"
VERSION_DIFF_TITLE = "HumanEval+ v0.1.9 -> v0.1.10, per task and field"
ERRATA_TITLE = "Tasks the community errata changes, and whether HumanEval+ inputs tell old from new"
TIME_LIMIT_TITLE = "Inputs whose time limit is set by 4x the canonical time rather than the floor"
PASS_AT_K_TITLE = "Unbiased pass@k: stable formula vs exact binomials, and the naive shortcut's error"

__all__ = ["AMPLIFICATION_TITLE", "CONTRACT_TITLE", "DUPLICATES_TITLE", "ERRATA_TITLE", "GROUND_TRUTH_TITLE",
           "ORIGINAL_CANONICAL_TITLE", "ORIGINAL_TESTS_TITLE", "PASS_AT_K_TITLE", "TIME_LIMIT_TITLE",
           "VARIANTS_TITLE", "VERSION_DIFF_TITLE"]
