"""phi-1 unconventional problems: the checks of graded samples (the user's file, or the SYNTHETIC set)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from audit_lib.benchmarks.unconventional import scoring, table2
from audit_lib.benchmarks.unconventional.audit import Inputs, Params
from audit_lib.benchmarks.unconventional.checks_paper import table2_worst_case_half_widths
from audit_lib.benchmarks.unconventional.grading import GRADE_FORMS, NO_GRADE_REASONS
from audit_lib.benchmarks.unconventional.user_grades import GradeSet
from audit_lib.findings import Result

GRADES_PARAM = "param:grades_path"  # what a skip lacks: grades only the user can supply


def grade_parsing(inputs: Inputs, params: Params) -> Result:
    """Parse every transcript; count each parser branch and list every transcript that yields no grade."""
    grades = inputs.grades
    transcripts = grades.transcripts()
    if not transcripts:
        return Result.skipped(f"{grades.path} has no transcript rows (only grade fields), so there is nothing to "
                              "parse", missing=[GRADES_PARAM], synthetic=grades.synthetic, meta={"file": grades.path})
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
    return Result("quirk" if without_grade else "pass", observed=observed,
                  expected={"no_grade": 0}, summary=summary, details=rows, synthetic=grades.synthetic,
                  meta={"file": grades.path})


def model_summaries(grades: GradeSet, *, seed: int, n_resamples: int) -> list[scoring.ModelScoreSummary]:
    return [scoring.summarise_model(model, grades.grades_by_problem(model), seed=seed, n_resamples=n_resamples)
            for model in grades.models()]


def score_aggregation(inputs: Inputs, params: Params) -> Result:
    """Mean grade x 10 under each unstated choice, the bootstrap interval, and its width at Table 2's n = 50."""
    grades, seed, n_resamples = inputs.grades, params.seed, params.n_resamples
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
    return Result(status,
                  observed={"choice_spread_pct_max": max(spreads.values(), default=0.0),
                            "bootstrap_width_pct": widths,
                            "table2_worst_case_half_width_pct": {m: round(v, 2) for m, v in half_widths.items()},
                            "table2_pairs_within_half_width": len(close_pairs), "table2_pairs": pairs_total},
                  expected={"choice_spread_pct_max": 0.0}, summary=summary, details=rows + [
                      {"row_kind": "table2_close_pair", **pair} for pair in close_pairs],
                  synthetic=grades.synthetic,
                  meta={"seed": seed, "n_resamples": n_resamples, "confidence": 0.95, "interval": "percentile",
                        "bias_and_rounding_on": "drop policy"})


def user_grades(inputs: Inputs, params: Params) -> Result:
    """Scores recomputed from supplied grades, compared with Table 2 for the models whose names match."""
    grades, seed, n_resamples = inputs.grades, params.seed, params.n_resamples
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
        return Result.skipped(
            f"{label}no model in {grades.path} is named as in Table 2 ({names}), so nothing can be compared with "
            f"the published scores. Recomputed: {scores_text}. {excluded_text} Supply real grades with "
            "grades_path to make the comparison.",
            missing=[GRADES_PARAM], synthetic=grades.synthetic, details=rows,
            observed={"models": len(summaries), "matched_table2": 0}, meta={"file": grades.path})
    unscorable_text = (f" {len(unscorable)} matched model(s) have no usable grade, so their score cannot be "
                       f"recomputed ({', '.join(unscorable)})." if unscorable else "")
    summary = (f"{label}{matched} model(s) match Table 2; the published score lies outside the recomputed 95% "
               f"interval for {len(outside)} ({', '.join(outside) or 'none'}).{unscorable_text} Recomputed: "
               f"{scores_text}. {excluded_text}")
    return Result("quirk" if outside or unscorable else "pass",
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
