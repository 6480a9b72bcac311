"""Seeded SYNTHETIC stand-in for HELM CodeInsights' three input files (the real rows are not public offline).

Shaped like the published card (about 541 rows, 50 students, 93 question ids, weeks and topics, Vietnamese and
English text, C++ responses) and built so that every quirk the audit looks for occurs at least once, whatever the
seed. Nothing here describes the real data; reports that use it say SYNTHETIC.
"""

from __future__ import annotations

import csv
import io
import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from audit_lib import paths
from audit_lib.data import fetch

DATASET = "codeinsights"
SUBMISSIONS_FILE = "Scenario5_data.csv"
TOPICS_FILE = "student_performace_by_topic.csv"
TEST_CASES_FILE = "test_cases_by_qid.json"
FILES = (SUBMISSIONS_FILE, TOPICS_FILE, TEST_CASES_FILE)
GENERATOR = "audit_lib.benchmarks.codeinsights.synthetic"

TOTAL_ROWS = 541
STUDENTS = 50
QUESTIONS = 93
SUBMISSION_COLUMNS = ("student_id", "timestamp", "question_unittest_id", "question_unittests", "pass", "week",
                      "topic", "question_name", "question_text", "question_template", "response",
                      "is_single_failure", "question_id", "attempt_id")
TOPICS_BY_WEEK = ("Function", "Array", "String", "Pointer", "Struct", "Linked List", "Recursion", "OOP",
                  "Stack and Queue", "Sorting", "Tree", "Hashing")
START = datetime(2023, 9, 4, 8, 0, 0)
TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S"

# One student per quirk; each quirk sits on that student's first (HELM target) row unless noted.
QUIRK_ROLES = (
    "leading_zero_single_failure",   # "0111": the only failure is lost by int()
    "all_zero",                      # "0000": int() leaves [0], a fake single failure
    "plain_single_failure",          # "1011": survives int()
    "float_digits",                  # 18 passes: float64 rounding invents a 0 (all values fit int64)
    "qid_missing_from_json",         # question id absent from test_cases_by_qid.json
    "unittest_in_code",              # the word "Unittest" inside a test's code breaks the split
    "length_mismatch",               # 5 bits for 4 tests
    "timestamp_tie",                 # two rows share the earliest timestamp
    "timestamp_text_order",          # unpadded hour: text order differs from time order
    "no_tests",                      # question text holds no "Unittest" section at all
    "column_after_int",              # "0110" with is_single_failure computed after int()
    "nan_pass_later",                # an empty `pass` on a later row turns the column into float64
)

NAMES_AND_TEXTS = (
    ("Tính tổng mảng", "Viết hàm int sumArray(int* a, int n) trả về tổng các phần tử của mảng."),
    ("Reverse a string", "Implement void reverse(char* s) that reverses the C-string s in place."),
    ("Đếm số nguyên tố", "Viết hàm int countPrimes(int n) đếm số nguyên tố nhỏ hơn hoặc bằng n."),
    ("Linked list insert", "Implement Node* insertTail(Node* head, int value) for a singly linked list."),
    ("Tìm phần tử lớn nhất", "Viết hàm int findMax(int* a, int n) trả về giá trị lớn nhất trong mảng."),
    ("Recursive power", "Implement long long power(int base, int exp) recursively without loops."),
    ("Sắp xếp nổi bọt", "Hiện thực hàm void bubbleSort(int* a, int n) sắp xếp tăng dần."),
    ("Point class", "Define class Point with a constructor, getters and double distance(const Point&)."),
)
TEMPLATE = ("#include <iostream>\n#include <cstring>\nusing namespace std;\n\n{{ STUDENT_ANSWER }}\n\n"
            "int main() {\n{% for TEST in TESTCASES %}\n   {\n    {{ TEST.testcode }};\n   }\n{% endfor %}\n"
            "    return 0;\n}\n")


@dataclass(frozen=True)
class SyntheticQuestion:
    """One generated question: id, week/topic, text and its unit tests as (code, std input, output)."""

    qid: int
    week: int
    name: str
    text: str
    tests: tuple[tuple[str, str, str], ...]
    unittests_text: str
    in_json: bool

    @property
    def topic(self) -> str:
        return TOPICS_BY_WEEK[(self.week - 1) % len(TOPICS_BY_WEEK)]


@dataclass(frozen=True)
class SyntheticFixture:
    """The three written files and their (synthetic) provenance."""

    directory: Path
    paths: Mapping[str, Path]
    provenance: tuple[fetch.Provenance, ...]
    seed: int


def fixture_dir(seed: int) -> Path:
    return paths.data_cache_dir() / "synthetic" / DATASET / f"seed_{seed}"


def generate(seed: int = 0, out_dir: str | Path | None = None) -> SyntheticFixture:
    """Write the three files for `seed` (same bytes for the same seed) and return them with provenance."""
    directory = Path(out_dir) if out_dir is not None else fixture_dir(seed)
    directory.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    questions = _questions(rng)
    rows = _submission_rows(rng, questions)
    contents = {SUBMISSIONS_FILE: _csv_text(SUBMISSION_COLUMNS, rows),
                TOPICS_FILE: _csv_text(("student_id", "topic", "pass_rate", "perfect"), _topic_rows(rows)),
                TEST_CASES_FILE: json.dumps(_test_cases_json(questions), ensure_ascii=False, indent=1)}
    written: dict[str, Path] = {}
    for name, text in contents.items():
        target = directory / name
        target.write_text(text, encoding="utf-8", newline="")
        written[name] = target
    provenance = tuple(fetch.synthetic_provenance(DATASET, name, generator=GENERATOR, seed=seed, path=path)
                       for name, path in written.items())
    return SyntheticFixture(directory, written, provenance, seed)


# ---------------------------------------------------------------------------------------------- questions


def _unittests_text(tests: Sequence[tuple[str, str, str]]) -> str:
    return "\n".join(f"Unittest {index}:\nInput:\n{code}\nSTD input:\n{std_in}\nOutput:\n{output}\n"
                     for index, (code, std_in, output) in enumerate(tests))


def _random_tests(rng: random.Random, count: int) -> tuple[tuple[str, str, str], ...]:
    tests = []
    for _ in range(count):
        values = [rng.randint(-50, 99) for _ in range(rng.randint(1, 6))]
        code = f"int a[] = {{{', '.join(map(str, values))}}};\ncout << sumArray(a, {len(values)});"
        tests.append((code, "", str(sum(values))))
    return tuple(tests)


def _question(qid: int, week: int, rng: random.Random, tests: tuple[tuple[str, str, str], ...],
              unittests_text: str | None = None, in_json: bool = True) -> SyntheticQuestion:
    name, text = rng.choice(NAMES_AND_TEXTS)
    return SyntheticQuestion(qid, week, name, text, tests,
                             unittests_text if unittests_text is not None else _unittests_text(tests), in_json)


def _questions(rng: random.Random) -> dict[str, SyntheticQuestion]:
    """Named special questions (keys like 'four_tests') plus random ones keyed by their id."""
    qids = rng.sample(range(100, 700), QUESTIONS)
    special: dict[str, SyntheticQuestion] = {
        "four_tests": _question(qids[0], 1, rng, _random_tests(rng, 4)),
        "eighteen_tests": _question(qids[1], 1, rng, _random_tests(rng, 18)),
        "missing_from_json": _question(qids[2], 1, rng, _random_tests(rng, 3), in_json=False),
        "no_tests": _question(qids[4], 1, rng, (), unittests_text="(no unit tests were recorded)"),
    }
    broken_tests = _random_tests(rng, 3)
    code_with_word = broken_tests[1][0] + "\n// Unittest helper: in ket qua ra man hinh"
    broken_tests = (broken_tests[0], (code_with_word, "", broken_tests[1][2]), broken_tests[2])
    special["unittest_in_code"] = _question(qids[3], 1, rng, broken_tests)
    randoms = {}
    for position, qid in enumerate(qids[5:]):
        week = 1 + position % len(TOPICS_BY_WEEK)
        count = rng.choice((1, 2, 3, 3, 4, 4, 5, 5, 6, 7, 8, 10, 12, 17))
        randoms[str(qid)] = _question(qid, week, rng, _random_tests(rng, count))
    return {**special, **randoms}


def _test_cases_json(questions: Mapping[str, SyntheticQuestion]) -> dict[str, list[dict[str, str]]]:
    return {str(q.qid): [{"unittest": str(i), "input": code, "output": output}
                         for i, (code, _std_in, output) in enumerate(q.tests)]
            for q in sorted(questions.values(), key=lambda q: q.qid) if q.in_json}


# ---------------------------------------------------------------------------------------------- submissions


def _bits(rng: random.Random, length: int) -> str:
    if rng.random() < 0.3:
        return "1" * length
    return "".join("1" if rng.random() < 0.72 else "0" for _ in range(length))


def _single_failure(bits: str) -> bool:
    return bits.count("0") == 1


def _row(rng: random.Random, student_id: int, when: datetime | str, question: SyntheticQuestion, bits: str,
         attempt: int, *, single_failure_from_int: bool = False) -> dict[str, str]:
    after_int = str(int(bits)) if bits else ""
    flag = _single_failure(after_int if single_failure_from_int else bits)
    variable = rng.choice(("i", "idx", "k", "j"))
    response = (f"int sumArray(int* a, int n) {{\n    int s = 0;\n    for (int {variable} = 0; {variable} < n; "
                f"{variable}++) s += a[{variable}];\n    return s;\n}}")
    return {"student_id": str(student_id),
            "timestamp": when if isinstance(when, str) else when.strftime(TIMESTAMP_FORMAT),
            "question_unittest_id": str(question.qid), "question_unittests": question.unittests_text,
            "pass": bits, "week": str(question.week), "topic": question.topic, "question_name": question.name,
            "question_text": question.text, "question_template": TEMPLATE, "response": response,
            "is_single_failure": str(flag), "question_id": f"{question.qid}.0", "attempt_id": str(attempt)}


def _submission_rows(rng: random.Random, questions: Mapping[str, SyntheticQuestion]) -> list[dict[str, str]]:
    student_ids = sorted(rng.sample(range(1000, 9999), STUDENTS))
    ordinary = [q for key, q in questions.items() if key.isdigit()]
    week_one = [q for q in ordinary if q.week == 1] + [questions["four_tests"]]
    extra_rows = _spread(rng, TOTAL_ROWS - STUDENTS - 2, STUDENTS)  # the tie and text-order roles add one each
    rows: list[dict[str, str]] = []
    attempt = 0
    for position, student_id in enumerate(student_ids):
        role = QUIRK_ROLES[position] if position < len(QUIRK_ROLES) else None
        first_time = START + timedelta(minutes=3 * position)
        for row in _first_rows(rng, role, student_id, first_time, questions, week_one, attempt):
            rows.append(row)
            attempt += 1
        for extra in range(extra_rows[position]):
            question = rng.choice(ordinary)
            when = START + timedelta(days=7 * (question.week - 1) + 1 + rng.randint(0, 5),
                                     minutes=rng.randint(0, 900), seconds=rng.randint(0, 59))
            bits = _bits(rng, len(question.tests))
            if role == "nan_pass_later" and extra == 0:
                bits = ""
            wrong_flag = role is None and rng.random() < 0.02
            rows.append(_row(rng, student_id, when, question, bits, attempt, single_failure_from_int=wrong_flag))
            attempt += 1
    return rows


def _first_rows(rng: random.Random, role: str | None, student_id: int, when: datetime,
                questions: Mapping[str, SyntheticQuestion], week_one: Sequence[SyntheticQuestion],
                attempt: int) -> list[dict[str, str]]:
    four = questions["four_tests"]
    fixed_bits = {"leading_zero_single_failure": (four, "0111"), "all_zero": (four, "0000"),
                  "plain_single_failure": (four, "1011"), "length_mismatch": (four, "11011"),
                  "float_digits": (questions["eighteen_tests"], "1" * 18),
                  "qid_missing_from_json": (questions["missing_from_json"], "101"),
                  "unittest_in_code": (questions["unittest_in_code"], "110"),
                  "no_tests": (questions["no_tests"], "1")}
    if role in fixed_bits:
        question, bits = fixed_bits[role]
        return [_row(rng, student_id, when, question, bits, attempt)]
    if role == "column_after_int":
        return [_row(rng, student_id, when, four, "0110", attempt, single_failure_from_int=True)]
    if role == "timestamp_tie":
        return [_row(rng, student_id, when, four, "1101", attempt),
                _row(rng, student_id, when, four, "0111", attempt + 1)]
    if role == "timestamp_text_order":
        later = when.replace(hour=10, minute=20)
        earlier = f"{when:%Y-%m-%d} 9:05:00"  # unpadded hour sorts after "10:20" as text
        return [_row(rng, student_id, later, four, "1110", attempt),
                _row(rng, student_id, earlier, four, "1011", attempt + 1)]
    question = rng.choice(week_one)
    return [_row(rng, student_id, when, question, _bits(rng, len(question.tests)), attempt)]


def _spread(rng: random.Random, total: int, buckets: int) -> list[int]:
    """Split `total` rows over `buckets` students, at least 3 each, the rest at random."""
    counts = [3] * buckets
    for _ in range(total - 3 * buckets):
        counts[rng.randrange(buckets)] += 1
    return counts


def _topic_rows(rows: Sequence[Mapping[str, str]]) -> list[dict[str, str]]:
    """Per student and topic: mean unit-test pass rate and share of all-pass submissions (from the bits)."""
    stats: dict[tuple[str, str], list[str]] = {}
    for row in rows:
        if row["pass"]:
            stats.setdefault((row["student_id"], row["topic"]), []).append(row["pass"])
    out = []
    for (student_id, topic), patterns in sorted(stats.items(), key=lambda item: (int(item[0][0]), item[0][1])):
        bits = "".join(patterns)
        out.append({"student_id": student_id, "topic": topic,
                    "pass_rate": repr(bits.count("1") / len(bits)),
                    "perfect": repr(sum("0" not in p for p in patterns) / len(patterns))})
    return out


def _csv_text(columns: Sequence[str], rows: Sequence[Mapping[str, str]]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(columns), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()
