"""The six checks of phi-1's 50 "unconventional" problems (arXiv 2306.11644v2, §4, Table 2).

Nothing but Table 2 and one example problem was ever published, so the checks audit what can be audited (the
published table, the score recipe, the example's ambiguity) and run the rest on grades a user supplies, or on a
seeded SYNTHETIC set that is labelled as such in every check that uses it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from audit_lib.benchmarks.unconventional import readings, scoring, table2
from audit_lib.benchmarks.unconventional.grading import GRADE_FORMS, NO_GRADE_REASONS
from audit_lib.benchmarks.unconventional.timing_split import split_observed
from audit_lib.benchmarks.unconventional.user_grades import GradeSet
from audit_lib.findings import Check

if TYPE_CHECKING:
    from matplotlib.figure import Figure

PAPER = "arXiv 2306.11644v2"
EXAMPLE_GENERATED_INPUTS = 300
GRADES_PARAM = "param:grades_path"  # what a skip lacks: grades only the user can supply


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


# ----------------------------------------------------------------------------------------------- checks


def check_reproducibility() -> Check:
    """Which artefacts a rerun needs and which are public; each missing one is a defect with its citation."""
    title = "Artefacts needed to reproduce the unconventional-problems score"
    rows = [{"artefact": a.name, "needed_for": a.needed_for, "public": a.public,
             "status": "available" if a.public else "defect", "citation": a.citation} for a in ARTEFACTS]
    missing = [a.name for a in ARTEFACTS if not a.public]
    status = "defect" if missing else "pass"
    summary = (f"{len(missing)} of {len(ARTEFACTS)} artefacts needed to rerun or recompute the benchmark are not "
               f"public ({'; '.join(missing)}). Only Table 2 and one example problem can be audited directly.")
    return Check(id="reproducibility", title=title, status=status,
                 observed={"needed": len(ARTEFACTS), "public": len(ARTEFACTS) - len(missing), "missing": len(missing)},
                 expected={"missing": 0}, summary=summary, details=rows)


def check_table2_analysis() -> Check:
    """Rank agreement of the LLM-graded score with HumanEval over Table 2's seven rows, stated for n = 7."""
    title = "Table 2: LLM-graded score vs HumanEval pass@1 (rank correlation, gaps)"
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
    summary = (f"Kendall tau-b = {correlation.kendall_tau:.2f} (scipy p = {correlation.kendall_p_scipy:.3f}), "
               f"Spearman rho = {correlation.spearman_rho:.2f} (scipy p = {correlation.spearman_p_scipy:.3f}). "
               f"{len(discordant)} of {len(pairs)} model pairs are ordered oppositely by the two metrics and "
               f"{len(tied)} are tied on one of them. Score minus HumanEval ranges from {min(gaps.values()):+g} "
               f"({min(gaps, key=gaps.get)}) to {max(gaps.values()):+g} ({max(gaps, key=gaps.get)}) points. "
               + table2.sample_size_statement(correlation) + f" Source: {table2.TABLE2_CITATION}.")
    return Check(id="table2_analysis", title=title, status="quirk" if discordant else "pass",
                 observed={"kendall_tau_b": correlation.kendall_tau, "spearman_rho": correlation.spearman_rho,
                           "kendall_p_scipy": correlation.kendall_p_scipy,
                           "spearman_p_scipy": correlation.spearman_p_scipy,
                           "kendall_p_exact_permutation": correlation.kendall_p_exact_permutation,
                           "spearman_p_exact_permutation": correlation.spearman_p_exact_permutation,
                           "discordant_pairs": len(discordant), "pairs": len(pairs), "n_models": correlation.n},
                 expected={"discordant_pairs": 0}, summary=summary, details=rows,
                 meta={"citation": table2.TABLE2_CITATION,
                       "kendall_tau_leave_one_out": correlation.kendall_tau_leave_one_out,
                       "spearman_rho_leave_one_out": correlation.spearman_rho_leave_one_out})


def table2_worst_case_half_widths() -> dict[str, float]:
    """Each published score's worst-case 95% half-width at the paper's 50 problems (Bhatia-Davis bound)."""
    return {r.model: scoring.worst_case_half_width(r.score_pct, table2.TABLE2_PROBLEM_COUNT) for r in table2.TABLE2}


def table2_figure() -> Figure:
    """The Table 2 scatter plot (score vs HumanEval): correlation in the title, worst-case half-widths as bars."""
    return table2.scatter_figure(correlation=table2.rank_correlation(), half_widths=table2_worst_case_half_widths())


def check_grade_parsing(grades: GradeSet) -> Check:
    """Parse every transcript; count each parser branch and list every transcript that yields no grade."""
    title = "Grader transcripts: grade found, or typed reason why not"
    transcripts = grades.transcripts()
    if not transcripts:
        return Check.skipped("grade_parsing", title, f"{grades.path} has no transcript rows (only grade fields), "
                             "so there is nothing to parse", synthetic=grades.synthetic,
                             meta={"missing": [GRADES_PARAM], "file": grades.path})
    outcomes = Counter(r.outcome for r in transcripts)
    without_grade = [r for r in transcripts if r.grade is None]
    fractional = [r for r in transcripts if r.parsed is not None and r.parsed.is_fractional]
    with_verbal_numbers = [r for r in transcripts if r.grade is not None and r.parsed and r.parsed.verbal_numbers]
    rows = [{"line": r.line, "model": r.model, "problem_id": r.problem_id, "outcome": r.outcome,
             "grade": r.grade, "evidence": r.parsed.evidence if r.parsed else ""}
            for r in without_grade + fractional]
    label = _data_label(grades)
    summary = (f"{label}{len(transcripts)} transcripts: {len(transcripts) - len(without_grade)} yield a grade, "
               f"{len(without_grade)} do not and are excluded from scores (listed with their reason). "
               f"{len(fractional)} grades are fractional (e.g. 'Grade: 7.5'); {len(with_verbal_numbers)} transcripts "
               "have numbers in the verbal part that were not taken as the grade. Per branch: "
               + ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items())) + ".")
    observed = {"transcripts": len(transcripts), "graded": len(transcripts) - len(without_grade),
                "no_grade": len(without_grade), "fractional": len(fractional),
                "by_outcome": {k: outcomes.get(k, 0) for k in GRADE_FORMS + NO_GRADE_REASONS}}
    return Check(id="grade_parsing", title=title, status="quirk" if without_grade else "pass", observed=observed,
                 expected={"no_grade": 0}, summary=summary, details=rows, synthetic=grades.synthetic,
                 meta={"file": grades.path})


def model_summaries(grades: GradeSet, *, seed: int, n_resamples: int) -> list[scoring.ModelScoreSummary]:
    return [scoring.summarise_model(model, grades.grades_by_problem(model), seed=seed, n_resamples=n_resamples)
            for model in grades.models()]


def check_score_aggregation(grades: GradeSet, *, seed: int, n_resamples: int) -> Check:
    """Mean grade x 10 under each unstated choice, the bootstrap interval, and its width at Table 2's n = 50."""
    title = "Score recipe: missing grades, bootstrap interval, grader bias and rounding"
    summaries = model_summaries(grades, seed=seed, n_resamples=n_resamples)
    rows: list[dict[str, Any]] = [_summary_row(s) for s in summaries]
    half_widths = table2_worst_case_half_widths()
    rows += [{"row_kind": "table2_worst_case", "model": r.model, "score_drop": r.score_pct,
              "worst_case_half_width_pct": round(half_widths[r.model], 2)} for r in table2.TABLE2]
    close_pairs = table2.pairs_closer_than(half_widths)
    pairs_total = len(table2.pair_orders())
    spreads = {s.model: s.choice_spread for s in summaries}
    widths = {s.model: s.interval.width for s in summaries if s.interval is not None}
    bias = {s.model: (s.bias_minus_one, s.bias_plus_one, s.score_drop) for s in summaries if s.score_drop is not None}
    label = _data_label(grades)
    per_grade_point = scoring.PERCENT_PER_GRADE_POINT / table2.TABLE2_PROBLEM_COUNT
    width_text = ", ".join(f"{m} {w:.1f} points" for m, w in widths.items()) or "none (no model has a usable grade)"
    bias_text = ", ".join(f"{m} {lo:.1f}/{hi:.1f} (from {mid:.1f})" for m, (lo, hi, mid) in bias.items()) or "n/a"
    summary = (
        f"{label}The unstated choices of the score recipe (missing grade dropped vs counted as 0, rounding "
        f"half-up/half-even/floor/ceil) move a score by up to {max(spreads.values(), default=0.0):.2f} points; "
        f"{len(close_pairs)} of {pairs_total} Table 2 model pairs differ by less than the worst-case 95% "
        f"half-width at n = {table2.TABLE2_PROBLEM_COUNT}. Score = 10 x mean per-problem grade. 95% percentile "
        f"bootstrap width ({n_resamples} resamples, seed {seed}): {width_text}. A constant grader bias of -1/+1 "
        f"moves the score to {bias_text}. "
        f"At n = {table2.TABLE2_PROBLEM_COUNT} one grade point on one problem moves the score by "
        f"{per_grade_point:.1f} points, and the worst-case 95% half-width from each published score is "
        f"{min(half_widths.values()):.1f}-{max(half_widths.values()):.1f} points (Bhatia-Davis bound; grades that "
        f"cluster give narrower intervals): {len(close_pairs)} of {pairs_total} Table 2 model pairs differ by less "
        "than that.")
    status = "quirk" if close_pairs or any(v > 0 for v in spreads.values()) else "pass"
    return Check(id="score_aggregation", title=title, status=status,
                 observed={"choice_spread_pct_max": max(spreads.values(), default=0.0),
                           "bootstrap_width_pct": widths,
                           "table2_worst_case_half_width_pct": {m: round(v, 2) for m, v in half_widths.items()},
                           "table2_pairs_within_half_width": len(close_pairs), "table2_pairs": pairs_total},
                 expected={"choice_spread_pct_max": 0.0}, summary=summary, details=rows + [
                     {"row_kind": "table2_close_pair", **pair} for pair in close_pairs],
                 synthetic=grades.synthetic,
                 meta={"seed": seed, "n_resamples": n_resamples, "confidence": 0.95, "interval": "percentile",
                       "bias_and_rounding_on": "drop policy"})


def check_example_ambiguity(*, seed: int, executor: Any = None,
                            n_generated: int = EXAMPLE_GENERATED_INPUTS) -> Check:
    """Run every reading of the published example in the sandbox on the same inputs; list where they disagree."""
    title = "Example problem: readings of the docstring disagree (sandboxed)"
    inputs = list(readings.FIXED_INPUTS) + readings.generated_inputs(seed, n_generated)
    report = readings.run_readings(inputs, executor=executor)
    broken = {name: status for name, status in report.sandbox_statuses.items() if status != "pass"}
    if broken:
        return Check.errored("example_ambiguity", title,
                             f"sandbox runs did not complete for {broken}; outputs cannot be compared")
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
    return Check(id="example_ambiguity", title=title,
                 status="quirk" if report.inputs_with_any_disagreement else "pass",
                 observed={"readings": len(readings.READINGS), "inputs": n_inputs,
                           "inputs_with_disagreement": report.inputs_with_any_disagreement,
                           "disagreement_with_literal": {c.reading: c.disagreements for c in report.counterexamples},
                           **timing_observed},
                 expected={"inputs_with_disagreement": 0}, summary=summary, details=rows,
                 meta={"seed": seed, "readings": {r.name: r.choice for r in readings.READINGS}, **timing_meta})


def check_user_grades(grades: GradeSet, *, seed: int, n_resamples: int) -> Check:
    """Scores recomputed from supplied grades, compared with Table 2 for the models whose names match."""
    title = "Supplied grades: recomputed scores vs Table 2"
    summaries = model_summaries(grades, seed=seed, n_resamples=n_resamples)
    published = {r.model.casefold(): r for r in table2.TABLE2}
    rows = []
    matched = 0
    outside: list[str] = []
    unscorable: list[str] = []
    for s in summaries:
        row = _summary_row(s)
        published_row = published.get(s.model.casefold())
        if published_row is not None:
            matched += 1
            inside = s.interval is not None and s.interval.low <= published_row.score_pct <= s.interval.high
            row.update({"table2_score_pct": published_row.score_pct,
                        "diff_drop_pct": None if s.score_drop is None else s.score_drop - published_row.score_pct,
                        "table2_inside_interval": inside if s.interval is not None else None})
            if s.interval is None:
                unscorable.append(s.model)
            elif not inside:
                outside.append(s.model)
        rows.append(row)
    excluded = [r for r in grades.records if r.grade is None]
    excluded_counts = ", ".join(f"{k} {v}" for k, v in sorted(Counter(r.outcome for r in excluded).items()))
    excluded_text = (f"{len(excluded)} of {len(grades.records)} graded samples have no grade "
                     f"({excluded_counts or 'none'}).")
    rows += [{"row_kind": "excluded_sample", "line": r.line, "model": r.model, "problem_id": r.problem_id,
              "outcome": r.outcome} for r in excluded]
    label = _data_label(grades)
    scores_text = "; ".join(f"{s.model}: {_pct(s.score_drop)} (drop) / {_pct(s.score_zero)} (zero), "
                            f"{_interval_text(s.interval)}" for s in summaries)
    if matched == 0:
        names = ", ".join(r.model for r in table2.TABLE2)
        return Check.skipped(
            "user_grades", title,
            f"{label}no model in {grades.path} is named as in Table 2 ({names}), so nothing can be compared with "
            f"the published scores. Recomputed: {scores_text}. {excluded_text} Supply real grades with "
            "grades_path to make the comparison.",
            synthetic=grades.synthetic, details=rows, observed={"models": len(summaries), "matched_table2": 0},
            meta={"missing": [GRADES_PARAM], "file": grades.path})
    unscorable_text = (f" {len(unscorable)} matched model(s) have no usable grade, so their score cannot be "
                       f"recomputed ({', '.join(unscorable)})." if unscorable else "")
    summary = (f"{label}{matched} model(s) match Table 2; the published score lies outside the recomputed 95% "
               f"interval for {len(outside)} ({', '.join(outside) or 'none'}).{unscorable_text} Recomputed: "
               f"{scores_text}. {excluded_text}")
    return Check(id="user_grades", title=title, status="quirk" if outside or unscorable else "pass",
                 observed={"models": len(summaries), "matched_table2": matched, "outside_interval": outside,
                           "without_usable_grade": unscorable, "samples_without_grade": len(excluded)},
                 expected={"outside_interval": []}, summary=summary, details=rows, synthetic=grades.synthetic,
                 meta={"file": grades.path, "seed": seed, "n_resamples": n_resamples})


def _summary_row(summary: scoring.ModelScoreSummary) -> dict[str, Any]:
    interval = summary.interval
    return {"row_kind": "model_score", "model": summary.model, "problems": summary.n_problems,
            "samples_without_grade": summary.missing_samples,
            "problems_dropped": len(summary.dropped_problems),
            "score_drop": _rounded(summary.score_drop), "score_zero": _rounded(summary.score_zero),
            "ci_low": _rounded(interval.low if interval else None),
            "ci_high": _rounded(interval.high if interval else None),
            "ci_width": _rounded(interval.width if interval else None),
            "bias_minus_one": _rounded(summary.bias_minus_one), "bias_plus_one": _rounded(summary.bias_plus_one),
            **{f"rounded_{name}": _rounded(value) for name, value in summary.rounded.items() if name != "as_given"}}


def _data_label(grades: GradeSet) -> str:
    return "SYNTHETIC grades (not the paper's): " if grades.synthetic else ""


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f}%"


def _interval_text(interval: scoring.BootstrapInterval | None) -> str:
    return "no interval" if interval is None else f"95% CI {interval.low:.1f}-{interval.high:.1f}"
