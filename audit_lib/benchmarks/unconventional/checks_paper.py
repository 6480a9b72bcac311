"""phi-1 unconventional problems: the checks of what was published (artefacts, Table 2, the example problem).

Nothing but Table 2 and one example problem was ever published (arXiv 2306.11644v2, §4), so these checks audit
what can be audited; `checks_grades.py` runs the rest on grades a user supplies.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from audit_lib.benchmarks.unconventional import readings, scoring, table2
from audit_lib.benchmarks.unconventional.audit import Inputs, Params
from audit_lib.benchmarks.unconventional.timing_split import split_observed
from audit_lib.findings import Result

if TYPE_CHECKING:
    from matplotlib.figure import Figure

PAPER = "arXiv 2306.11644v2"
EXAMPLE_GENERATED_INPUTS = 300


@dataclass(frozen=True)
class Artefact:
    """Something a rerun of the benchmark needs, whether it is public, and where the paper says so."""

    name: str
    needed_for: str
    public: bool
    citation: str


ARTEFACTS: tuple[Artefact, ...] = (
    Artefact("Table 2 scores (7 models, Score and HumanEval %)", "comparison target", True,
             f"{PAPER} §4, Table 2"),
    Artefact("example problem sort_concat_square_deduplicate (signature and docstring)", "one problem statement",
             True, f"{PAPER} §4 (printed in the text; the only problem shown)"),
    Artefact("the other 49 problem statements", "rerunning any model", False,
             f"{PAPER} §4: '50 new problems'; only one is printed"),
    Artefact("reference solutions", "the grader compares each candidate with the reference", False,
             f"{PAPER} §4: GPT-4 grades against a reference solution that is not published"),
    Artefact("GPT-4 grading prompt", "reproducing the grades", False,
             f"{PAPER} §4: the prompt is described in prose (short verbal evaluation, then a grade 0-10), not given"),
    Artefact("per-problem grades / grader transcripts", "recomputing Table 2, intervals", False,
             f"{PAPER} §4, Table 2: only the aggregate percentages are printed"),
    Artefact("samples drawn per problem and decoding settings", "regenerating the candidate solutions", False,
             f"{PAPER} §4: the number of samples per problem is not stated"),
    Artefact("aggregation from grades to the Table 2 percentage", "computing the score", False,
             f"{PAPER} §4, Table 2: percentages are printed, the aggregation is not defined"),
)


def reproducibility(inputs: Inputs, params: Params) -> Result:
    """Which artefacts a rerun needs and which are public; each missing one is a defect with its citation."""
    rows = [{"artefact": a.name, "needed_for": a.needed_for, "public": a.public,
             "status": "available" if a.public else "defect", "citation": a.citation} for a in ARTEFACTS]
    missing = [a.name for a in ARTEFACTS if not a.public]
    status = "defect" if missing else "pass"
    summary = (f"{len(missing)} of {len(ARTEFACTS)} artefacts needed to rerun or recompute the benchmark are not "
               f"public ({'; '.join(missing)}). Only Table 2 and one example problem can be audited directly.")
    return Result(status,
                  observed={"needed": len(ARTEFACTS), "public": len(ARTEFACTS) - len(missing), "missing": len(missing)},
                  expected={"missing": 0}, summary=summary, details=rows)


def table2_analysis(inputs: Inputs, params: Params) -> Result:
    """Rank agreement of the LLM-graded score with HumanEval over Table 2's seven rows, stated for n = 7."""
    correlation = table2.rank_correlation()
    pairs = table2.pair_orders()
    discordant = [p for p in pairs if p.relation == "discordant"]
    tied = [p for p in pairs if p.relation == "tied"]
    rows: list[dict[str, Any]] = [
        {"row_kind": "model", "model": r.model, "size": r.size, "train_tokens": r.train_tokens,
         "score_pct": r.score_pct, "humaneval_pct": r.humaneval_pct, "gap_pct": r.gap_pct}
        for r in table2.TABLE2]
    rows += [{"row_kind": f"pair_{p.relation}", "model": f"{p.model_a} vs {p.model_b}",
              "score_diff_pct": p.score_diff, "humaneval_diff_pct": p.humaneval_diff}
             for p in discordant + tied]
    gaps = {r.model: r.gap_pct for r in table2.TABLE2}
    if discordant:
        opposite = "; ".join(f"{p.model_a} vs {p.model_b} (score {p.score_diff:+g} points, HumanEval "
                             f"{p.humaneval_diff:+g})" for p in discordant)
        finding = (f"The LLM-graded score and HumanEval pass@1 rank {len(discordant)} of Table 2's {len(pairs)} model "
                   f"pairs oppositely: {opposite}.")
    else:
        finding = (f"The LLM-graded score and HumanEval pass@1 rank all {len(pairs)} model pairs of Table 2 the same "
                   "way.")
    summary = (f"{finding} {len(tied)} more pair{'s are' if len(tied) != 1 else ' is'} tied on one of the two. "
               f"Kendall tau-b = {correlation.kendall_tau:.2f} (scipy p = {correlation.kendall_p_scipy:.3f}), "
               f"Spearman rho = {correlation.spearman_rho:.2f} (scipy p = {correlation.spearman_p_scipy:.3f}). "
               f"Score minus HumanEval ranges from {min(gaps.values()):+g} "
               f"({min(gaps, key=gaps.get)}) to {max(gaps.values()):+g} ({max(gaps, key=gaps.get)}) points. "
               + table2.sample_size_statement(correlation) + f" Source: {table2.TABLE2_CITATION}.")
    return Result("quirk" if discordant else "pass",
                  observed={"kendall_tau_b": correlation.kendall_tau, "spearman_rho": correlation.spearman_rho,
                            "kendall_p_scipy": correlation.kendall_p_scipy,
                            "spearman_p_scipy": correlation.spearman_p_scipy,
                            "kendall_p_exact_permutation": correlation.kendall_p_exact_permutation,
                            "spearman_p_exact_permutation": correlation.spearman_p_exact_permutation,
                            "discordant_pairs": len(discordant), "pairs": len(pairs), "n_models": correlation.n},
                  expected={"discordant_pairs": 0}, summary=summary, finding=finding, details=rows,
                  meta={"citation": table2.TABLE2_CITATION,
                        "kendall_tau_leave_one_out": correlation.kendall_tau_leave_one_out,
                        "spearman_rho_leave_one_out": correlation.spearman_rho_leave_one_out})


def table2_worst_case_half_widths() -> dict[str, float]:
    """Each published score's worst-case 95% half-width at the paper's 50 problems (Bhatia-Davis bound)."""
    return {r.model: scoring.worst_case_half_width(r.score_pct, table2.TABLE2_PROBLEM_COUNT) for r in table2.TABLE2}


def table2_figure() -> Figure:
    """The Table 2 scatter plot (score vs HumanEval): correlation in the title, worst-case half-widths as bars."""
    return table2.scatter_figure(correlation=table2.rank_correlation(), half_widths=table2_worst_case_half_widths())


def example_ambiguity(inputs: Inputs, params: Params) -> Result:
    """Run every reading of the published example in the sandbox on the same inputs; list where they disagree."""
    return example_ambiguity_from(seed=params.seed, executor=params.executor)


def example_ambiguity_from(*, seed: int, executor: Any = None, n_generated: int = EXAMPLE_GENERATED_INPUTS) -> Result:
    """Run every reading of the published example in the sandbox on the same inputs; list where they disagree."""
    inputs = list(readings.FIXED_INPUTS) + readings.generated_inputs(seed, n_generated)
    report = readings.run_readings(inputs, executor=executor)
    broken = {name: status for name, status in report.sandbox_statuses.items() if status != "pass"}
    if broken:
        return Result.errored(f"sandbox runs did not complete for {broken}; outputs cannot be compared")
    timing_observed, timing_meta, split = split_observed(report)
    rows = [{"reading": c.reading, "choice": c.choice, "disagrees_on": f"{c.disagreements}/{c.inputs}",
             "list1": list(c.list1), "list2": list(c.list2), "my_threshold": c.my_threshold,
             "literal_output": c.literal_output, "reading_output": c.reading_output} for c in report.counterexamples]
    agreeing = [r.name for r in readings.READINGS
                if r.name != readings.LITERAL_READING and r.name not in {c.reading for c in report.counterexamples}]
    n_inputs = len(report.inputs)
    summary = (
        f"On {report.inputs_with_any_disagreement} of {n_inputs} inputs at least two of {len(readings.READINGS)} "
        f"readings of the example problem's docstring return different lists. The readings of "
        f"`{readings.EXAMPLE_SIGNATURE}` ({readings.EXAMPLE_CITATION}; built from a paraphrase of its docstring) ran "
        f"in the sandbox on {n_inputs} inputs ({len(readings.FIXED_INPUTS)} fixed, {n_generated} generated with "
        f"seed {seed}); at most {max(report.distinct_outputs_per_input)} distinct outputs for "
        f"one input. {len(report.counterexamples)} of {len(readings.READINGS) - 1} alternative readings differ from "
        "the literal one (smallest counterexample each below)"
        + (f"; {', '.join(agreeing)} never differ on these inputs" if agreeing else "")
        + ". A grader comparing each candidate with one reference solution must judge these choices without "
          f"a test to settle them; unit tests would pin the intended reading. Calls without a value: "
          f"{split.headline()}.")
    return Result(
                  "quirk" if report.inputs_with_any_disagreement else "pass",
                  observed={"readings": len(readings.READINGS), "inputs": n_inputs,
                            "inputs_with_disagreement": report.inputs_with_any_disagreement,
                            "disagreement_with_literal": {c.reading: c.disagreements for c in report.counterexamples},
                            **timing_observed},
                  expected={"inputs_with_disagreement": 0}, summary=summary, details=rows,
                  meta={"seed": seed, "readings": {r.name: r.choice for r in readings.READINGS}, **timing_meta})
