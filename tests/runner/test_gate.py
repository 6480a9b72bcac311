"""The CI gate: `--fail-on` as a set of statuses, synthetic findings apart, JUnit's mapping, exit-code precedence."""

from __future__ import annotations

import argparse
import io
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from notebook_factory import plugin_for, write_notebook

from audit_lib import cli, runner
from audit_lib.runner.gate import Gate, parse_fail_on
from audit_lib.runner.junit import junit_xml


def check(check_id: str, status: str, *, synthetic: bool = False) -> dict:
    return {"id": check_id, "status": status, "finding": f"{check_id} is {status}", "synthetic": synthetic}


@pytest.mark.parametrize(("text", "statuses"), [
    ("defect", {"defect"}),
    ("skipped,error", {"skipped", "error"}),
    (" quirk , defect ", {"quirk", "defect"}),
    ("skipped,quirk,error,defect", {"skipped", "quirk", "error", "defect"}),
])
def test_fail_on_parses_a_comma_list(text: str, statuses: set[str]) -> None:
    assert parse_fail_on(text) == statuses


@pytest.mark.parametrize("text", ["pass", "", "defect,", "defects", "skipped;error"])
def test_fail_on_refuses_what_is_not_a_gated_status(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="choose from skipped, quirk, error, defect"):
        parse_fail_on(text)


@pytest.mark.parametrize("status", ["skipped", "quirk", "error", "defect"])
def test_each_status_alone_fails_exactly_at_itself(status: str) -> None:
    """`--fail-on LEVEL` catches checks exactly at LEVEL and nothing else (no threshold in either direction)."""
    gate = Gate(parse_fail_on(status))
    statuses = ("pass", "skipped", "quirk", "error", "defect")
    assert {s: gate.fails(check("c", s)) for s in statuses} == {s: s == status for s in statuses}


def test_findings_on_synthetic_data_do_not_fail_the_gate_unless_included() -> None:
    checks = {"real": (check("a", "pass"),),
              "fake": (check("d", "defect", synthetic=True), check("q", "quirk", synthetic=True))}
    gate = Gate(frozenset({"quirk", "defect"}))
    assert gate.hits(checks) == {} and gate.exempted(checks) == {"fake": 2}
    included = Gate(frozenset({"quirk", "defect"}), include_synthetic=True)
    assert included.hits(checks) == {"fake": 2} and included.exempted(checks) == {}
    # a broken check or a missing input is one on any data
    broken = {"fake": (check("e", "error", synthetic=True), check("s", "skipped", synthetic=True))}
    assert Gate(frozenset({"error", "skipped"})).hits(broken) == {"fake": 2}


def test_a_real_defect_beside_a_synthetic_one_still_fails() -> None:
    checks = {"mixed": (check("d", "defect", synthetic=True), check("r", "defect"))}
    assert Gate(frozenset({"defect"})).hits(checks) == {"mixed": 1}


def junit_cases(checks: list[dict], **kwargs: bool) -> tuple[ET.Element, dict[str, ET.Element]]:
    xml = junit_xml([{"audit": "a", "status": "ok", "duration_s": 1.0}], {"a": checks}, **kwargs)
    suite = ET.fromstring(xml.split("?>", 1)[1]).find("testsuite")
    assert suite is not None
    return suite, {case.get("name", ""): case for case in suite.iter("testcase")}


def test_a_junit_testcase_carries_its_checks_wall_time_when_it_recorded_one() -> None:
    timed = dict(check("t", "pass"), cost={"wall_s": 12.3456, "cpu_s": 1.0, "children_cpu_s": 2.0,
                                           "sandbox_jobs": 3, "machine_dependent": True})
    _, cases = junit_cases([timed, check("old", "pass")])
    assert cases["t"].get("time") == "12.346" and cases["old"].get("time") is None


def test_junit_maps_defect_to_failure_error_to_error_skipped_to_skipped_and_quirk_passes() -> None:
    suite, cases = junit_cases([check("d", "defect"), check("e", "error"), check("s", "skipped"),
                                check("q", "quirk"), check("p", "pass")])
    assert {k: suite.get(k) for k in ("tests", "failures", "errors", "skipped")} == {
        "tests": "5", "failures": "1", "errors": "1", "skipped": "1"}
    assert [child.tag for child in cases["d"]] == ["failure"]
    assert [child.tag for child in cases["e"]] == ["error"]
    assert [child.tag for child in cases["s"]] == ["skipped"]
    assert [child.tag for child in cases["q"]] == ["system-out"] and "QUIRK" in (cases["q"][0].text or "")
    assert list(cases["p"]) == []


def test_junit_marks_synthetic_checks_and_does_not_fail_their_findings() -> None:
    checks = [check("d", "defect", synthetic=True), check("q", "quirk", synthetic=True),
              check("e", "error", synthetic=True), check("r", "pass")]
    suite, cases = junit_cases(checks)
    assert (suite.get("failures"), suite.get("errors")) == ("0", "1")
    for name in ("d", "q", "e"):
        prop = cases[name].find("properties/property")
        assert prop is not None and (prop.get("name"), prop.get("value")) == ("synthetic", "true")
        assert "synthetic" in ET.tostring(cases[name], encoding="unicode").replace('name="synthetic"', "")
    assert cases["d"].find("failure") is None and "DEFECT on synthetic data" in (cases["d"].findtext("system-out") or "")
    assert cases["r"].find("properties") is None
    suite, cases = junit_cases(checks, include_synthetic=True)
    assert (suite.get("failures"), suite.get("errors")) == ("1", "1")
    failure = cases["d"].find("failure")
    assert failure is not None and "[synthetic data]" in failure.get("message", "")


CELLS = [
    "from audit_lib.findings import Check, FindingsBuilder\n"
    "if fail:\n    raise RuntimeError('this run fails')\n"
    "builder = FindingsBuilder('gated', {'fail': fail, 'synthetic': synthetic})\n"
    "builder.add(Check('count', 'count', 'defect', observed=3, synthetic=synthetic))\n"
    "builder.add(Check('fine', 'fine', 'pass'))\n"
    "builder.write()",
]


@pytest.fixture()
def plugins(tmp_path: Path) -> dict:
    return {"gated": plugin_for(write_notebook(tmp_path / "nb", "gated", "fail = False\nsynthetic = False\n", CELLS))}


def test_a_synthetic_defect_passes_the_gate_and_a_real_one_fails_it(plugins: dict, tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    synthetic = runner.run_audits(["gated"], [("synthetic", "true")], reports_dir=tmp_path / "r", plugins=plugins,
                                  progress=io.StringIO(), junit=junit)
    assert synthetic.exit_code("defect") == runner.EXIT_OK
    assert synthetic.exit_code("defect", include_synthetic=True) == runner.EXIT_GATE
    assert ET.parse(junit).getroot().find("testsuite").get("failures") == "0"  # type: ignore[union-attr]
    real = runner.run_audits(["gated"], reports_dir=tmp_path / "r", plugins=plugins, progress=io.StringIO())
    assert real.exit_code("defect") == runner.EXIT_GATE


def test_a_failed_notebook_is_exit_1_even_when_the_gate_would_trip(plugins: dict, tmp_path: Path) -> None:
    """The last good findings hold a defect; the notebook then fails: 1, never 3."""
    reports = tmp_path / "r"
    assert runner.run_audits(["gated"], reports_dir=reports, plugins=plugins,
                             progress=io.StringIO()).exit_code("defect") == runner.EXIT_GATE
    failed = runner.run_audits(["gated"], [("fail", "true")], reports_dir=reports, plugins=plugins,
                               progress=io.StringIO())
    assert failed.exit_code("defect") == runner.EXIT_NOTEBOOK_FAILED
    assert failed.gate_hits("defect") == {}  # the stale findings are not this run's result


def test_a_failed_notebook_wins_over_another_audits_gated_finding() -> None:
    outcomes = (runner.AuditOutcome("broken", "broken", {}, False, 1.0, runner.NotebookFailure(2, 3, "E", "m")),
                runner.AuditOutcome("fine", "fine", {}, True, 1.0))
    summary = runner.RunSummary(outcomes, Path("r"), Path("r/index.html"), Path("r/summary.json"),
                                {"broken": (), "fine": (check("d", "defect"),)})
    assert summary.gate_hits("defect") == {"fine": 1}
    assert summary.exit_code("defect") == runner.EXIT_NOTEBOOK_FAILED
    finished = runner.RunSummary(outcomes[1:], Path("r"), Path("r/index.html"), Path("r/summary.json"),
                                 {"fine": (check("d", "defect"),)})
    assert finished.exit_code("defect") == runner.EXIT_GATE


def test_cli_prints_the_gate_and_the_synthetic_exemption(plugins: dict, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    real_run = runner.run_audits

    def run_with_plugins(*args: object, **kwargs: object) -> runner.RunSummary:
        return real_run(*args, plugins=plugins, progress=io.StringIO(), **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(cli, "run_audits", run_with_plugins)
    argv = ["run", "gated", "--reports-dir", str(tmp_path / "r"), "-p", "synthetic", "true", "--fail-on", "defect"]
    assert cli.main(argv) == runner.EXIT_OK
    assert "1 finding(s) on SYNTHETIC data, not gated" in capsys.readouterr().out
    assert cli.main([*argv, "--include-synthetic"]) == runner.EXIT_GATE
    assert "--fail-on defect: gated has 1 check(s) with status defect" in capsys.readouterr().out
    assert cli.main(["run", "gated", "--reports-dir", str(tmp_path / "r"), "--fail-on", "skipped,error"]) == 0


@pytest.mark.parametrize(("text", "shown"), [
    ("pass", "'pass'"), ("", "''"), ("  ", "''"), ("defect,", "''"), ("quirks,errors", "'quirks', 'errors'"),
])
def test_fail_on_refusal_names_each_bad_status_and_every_choice(text: str, shown: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError) as refused:
        parse_fail_on(text)
    assert str(refused.value) == f"invalid choice: {shown} (choose from skipped, quirk, error, defect, comma-separated)"


def test_gate_of_accepts_a_gate_a_comma_list_a_set_or_no_gate() -> None:
    assert Gate.of(None) is None and Gate.of(None, include_synthetic=True) is None
    gate = Gate(frozenset({"error"}), include_synthetic=True)
    assert Gate.of(gate) is gate
    assert Gate.of("skipped,error") == Gate(frozenset({"skipped", "error"}), include_synthetic=False)
    assert Gate.of("defect", include_synthetic=True) == Gate(frozenset({"defect"}), include_synthetic=True)
    assert Gate.of(frozenset({"quirk"})) == Gate(frozenset({"quirk"}))
    with pytest.raises(argparse.ArgumentTypeError):
        Gate.of("defects")


@pytest.mark.parametrize(("status", "synthetic", "include", "exempt"), [
    ("defect", True, False, True), ("quirk", True, False, True),
    ("defect", True, True, False), ("defect", False, False, False),
    ("error", True, False, False), ("skipped", True, False, False), ("pass", True, False, False),
])
def test_only_a_finding_on_synthetic_data_is_exempt(status: str, synthetic: bool, include: bool, exempt: bool) -> None:
    gate = Gate(frozenset(("skipped", "quirk", "error", "defect")), include_synthetic=include)
    assert gate.exempt(check("c", status, synthetic=synthetic)) is exempt
    assert gate.fails(check("c", status, synthetic=synthetic)) is (status != "pass" and not exempt)


def test_gate_counts_per_audit_and_leaves_out_audits_with_none() -> None:
    checks = {"two": (check("a", "defect"), check("b", "defect"), check("c", "quirk"), check("p", "pass")),
              "none": (check("p", "pass"), check("q", "quirk")),
              "exempt": (check("d", "defect", synthetic=True), check("e", "defect", synthetic=True),
                         check("f", "error", synthetic=True))}
    gate = Gate(frozenset({"defect"}))
    assert gate.hits(checks) == {"two": 2}
    assert gate.exempted(checks) == {"exempt": 2}
    assert Gate(frozenset({"defect", "error"})).hits(checks) == {"two": 2, "exempt": 1}


def xml_tree(element: ET.Element) -> tuple:
    """(tag, attributes, text, children) all the way down: the whole of what a JUnit reader sees."""
    return (element.tag, dict(element.attrib), (element.text or "").strip(), [xml_tree(child) for child in element])


def test_junit_xml_is_exactly_what_ci_reads() -> None:
    """Every element, attribute, count and message of a batch with a failed notebook and one check per branch."""
    long = "x" * 600
    outcomes = [{"audit": "broken", "status": "failed", "duration_s": 2.345,
                 "failure": {"error_type": "ValueError", "message": "m" * 600, "cell_source": "raise ValueError"}},
                {"audit": "bare", "status": "failed"},
                {"audit": "mixed", "status": "ok", "duration_s": 1}]
    checks = {"broken": [check("d0", "defect")],
              "mixed": [check("d", "defect"), check("e", "error"), {"id": "s", "status": "skipped",
                                                                     "summary": long, "missing": ["a.csv", "b.csv"]},
                        {"id": "s2", "status": "skipped", "summary": "no input named"},
                        check("q", "quirk"), {"id": "p", "status": "pass"},
                        {"id": "sp", "status": "pass", "summary": "ok", "synthetic": True},
                        {"id": "sd", "status": "defect", "finding": "", "summary": "3 wrong", "synthetic": True},
                        {"id": "se", "status": "error", "finding": long, "synthetic": True}]}
    xml = junit_xml(outcomes, checks)
    assert xml.startswith("<?xml version='1.0' encoding='utf-8'?>\n<testsuites") and xml.endswith("</testsuites>\n")
    root = ET.fromstring(xml.split("?>", 1)[1])
    counts = ("tests", "failures", "errors", "skipped")

    def suite(name: str, time: str, numbers: tuple[int, ...], cases: list) -> tuple:
        return ("testsuite", {"name": name, "time": time, **{k: str(n) for k, n in zip(counts, numbers)}}, "", cases)

    def case(audit: str, name: str, *children: tuple) -> tuple:
        return ("testcase", {"classname": audit, "name": name}, "", list(children))

    synthetic = ("properties", {}, "", [("property", {"name": "synthetic", "value": "true"}, "", [])])
    assert xml_tree(root) == ("testsuites", {"name": "benchaudit"}, "", [
        suite("broken", "2.35", (2, 1, 1, 0), [
            case("broken", "notebook", ("error", {"type": "ValueError", "message": "m" * 500}, "raise ValueError", [])),
            case("broken", "d0", ("failure", {"type": "defect", "message": "d0 is defect"}, "d0 is defect", []))]),
        suite("bare", "0.00", (1, 0, 1, 0), [
            case("bare", "notebook", ("error", {"type": "NotebookFailed", "message": ""}, "", []))]),
        suite("mixed", "1.00", (9, 1, 2, 2), [
            case("mixed", "d", ("failure", {"type": "defect", "message": "d is defect"}, "d is defect", [])),
            case("mixed", "e", ("error", {"type": "error", "message": "e is error"}, "e is error", [])),
            case("mixed", "s", ("skipped", {"message": "missing: a.csv, b.csv. " + "x" * 400}, "", [])),
            case("mixed", "s2", ("skipped", {"message": "no input named"}, "", [])),
            case("mixed", "q", ("system-out", {}, "QUIRK: q is quirk", [])),
            case("mixed", "p"),
            case("mixed", "sp", synthetic, ("system-out", {}, "[synthetic data] ok", [])),
            case("mixed", "sd", synthetic, ("system-out", {}, "DEFECT on synthetic data, not a failure "
                                            "(--include-synthetic makes it one): [synthetic data] 3 wrong", [])),
            case("mixed", "se", synthetic, ("error", {"type": "error", "message": ("[synthetic data] " + long)[:500]},
                                            "[synthetic data] " + long, []))])])


def test_a_check_with_neither_finding_nor_summary_has_an_empty_message() -> None:
    _, cases = junit_cases([{"id": "d", "status": "defect"}, {"id": "s", "status": "skipped", "missing": []}])
    assert cases["d"].find("failure").attrib == {"type": "defect", "message": ""}  # type: ignore[union-attr]
    assert cases["s"].find("skipped").attrib == {"message": ""}  # type: ignore[union-attr]


def test_write_junit_creates_the_folder_replaces_the_file_and_leaves_synthetic_findings_out(tmp_path: Path) -> None:
    from audit_lib.runner.junit import write_junit

    path = tmp_path / "ci" / "out" / "junit.xml"
    outcomes = [{"audit": "a", "status": "ok", "duration_s": 1.0}]
    synthetic_defect = {"a": [check("d", "defect", synthetic=True)]}
    assert write_junit(path, outcomes, synthetic_defect) == path
    assert ET.parse(path).getroot().find("testsuite").get("failures") == "0"  # type: ignore[union-attr]
    write_junit(path, outcomes, synthetic_defect, include_synthetic=True)
    assert ET.parse(path).getroot().find("testsuite").get("failures") == "1"  # type: ignore[union-attr]
    assert path.read_text(encoding="utf-8") == junit_xml(outcomes, synthetic_defect, include_synthetic=True)
