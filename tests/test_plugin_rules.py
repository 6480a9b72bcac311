"""The session's rules, each pinned to what a user is told: refusals word for word, skips, errors and titles."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import pytest

from audit_lib.errors import ParameterError
from audit_lib.findings import Result
from audit_lib.plugin import ONLY_ENV, AuditPlugin, CheckCycleError, CheckSpec, Need, Unmet, param


@dataclass(frozen=True)
class Params:
    flag: bool = param(False)
    count: int = param(1)
    share: float = param(0.5)
    name: str = param("n")
    ids: list = param([])
    pair: tuple = param(())
    executor: str = param("local")


def plugin(*checks: CheckSpec, load: object = lambda p: None, **kwargs: object) -> AuditPlugin:
    return AuditPlugin("rules", "Rules", Params, load, checks, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(("raw", "message"), [
    ({"flag": 1}, "rules: parameter 'flag' must be true or false, got 1"),
    ({"count": 1.5}, "rules: parameter 'count' must be an integer, got 1.5"),
    ({"share": True}, "rules: parameter 'share' must be a number, got True"),
    ({"share": "0.5"}, "rules: parameter 'share' must be a number, got '0.5'"),
    ({"name": 3}, "rules: parameter 'name' must be a string, got 3"),
    ({"ids": "a,b"}, "rules: parameter 'ids' must be a list of strings, got 'a,b'"),
    ({"ids": ["a", 2]}, "rules: parameter 'ids' must be a list of strings, got ['a', 2]"),
    ({"pair": [1]}, "rules: parameter 'pair' must be a list of strings, got [1]"),
])
def test_each_type_rule_is_worded_with_the_audit_parameter_and_value(raw: dict, message: str) -> None:
    with pytest.raises(ParameterError) as refused:
        plugin().validate(raw)
    assert refused.value.message == message
    field = next(iter(raw))
    assert refused.value.fields == {"audit": "rules", "field": field, "value": repr(raw[field])}


def test_the_refused_value_is_recorded_cut_at_200_characters() -> None:
    with pytest.raises(ParameterError) as refused:
        plugin().validate({"name": list(range(100))})
    assert refused.value.fields["value"] == repr(list(range(100)))[:200]


def test_accepted_values_come_back_in_their_declared_type() -> None:
    typed = plugin().validate({"flag": True, "count": 3, "share": 1, "ids": ("a", "b"), "pair": ["x", "y"]})
    assert (typed.flag, typed.count, typed.share, typed.ids, typed.pair) == (True, 3, 1.0, ["a", "b"], ("x", "y"))
    assert isinstance(typed.share, float)


def test_an_unknown_parameter_is_named_with_the_declared_ones() -> None:
    with pytest.raises(ParameterError) as refused:
        plugin().validate({"zeta": 1, "alpha": 2})
    assert refused.value.message == ("rules: unknown parameter(s) alpha, zeta; declared: flag, count, share, name, "
                                     "ids, pair, executor")
    assert refused.value.fields == {"audit": "rules", "field": "alpha"}


def test_a_report_title_names_what_the_parameters_chose() -> None:
    titled = plugin(titled=lambda p: f"Rules on {p.name} x{p.count}")
    assert titled.title_for({"name": "mbpp", "count": 2, "recorded_by_an_older_version": 1}) == "Rules on mbpp x2"
    assert titled.title_for({"count": "not a number"}) == "Rules"  # findings of an older parameter set
    assert plugin().title_for({"name": "mbpp"}) == "Rules"


def test_a_check_left_out_by_its_condition_is_not_run(tmp_path: Path) -> None:
    only_when_flagged = CheckSpec("c", "c", lambda i, p: Result("pass"), when=lambda p: p.flag)
    assert plugin(only_when_flagged).check_specs(Params(flag=True)) == (only_when_flagged,)
    assert plugin(only_when_flagged).check_specs(Params(flag=False)) == ()


def test_an_undeclared_check_is_named_with_the_declared_ones(tmp_path: Path) -> None:
    session = plugin(CheckSpec("a", "a", lambda i, p: Result("pass")),
                     CheckSpec("b", "b", lambda i, p: Result("pass"))).session({}, out_dir=tmp_path)
    with pytest.raises(KeyError) as refused:
        session.run("z")
    assert refused.value.args == ("rules has no check 'z'; checks: a, b",)


def test_a_check_an_only_run_leaves_out_says_so_and_is_not_in_the_findings(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ONLY_ENV, "a,b")
    session = plugin(*(CheckSpec(name, f"title {name}", lambda i, p: Result("pass")) for name in "abc")).session(
        {}, out_dir=tmp_path)
    left_out = session.run("c")
    assert (left_out.id, left_out.title, left_out.status) == ("c", "title c", "skipped")
    assert left_out.summary == "not run: this run is --only a,b" and left_out.meta["missing"] == ["only:a,b"]
    assert [check.id for check in session.builder.checks] == []


def test_checks_that_need_each_other_are_refused_naming_them(tmp_path: Path) -> None:
    session = plugin(CheckSpec("a", "a", lambda i, p: Result("pass"), ("check:b",)),
                     CheckSpec("b", "b", lambda i, p: Result("pass"), ("check:a",))).session({}, out_dir=tmp_path)
    with pytest.raises(CheckCycleError) as refused:
        session.run("a")
    assert str(refused.value) == "rules: checks ['a', 'b'] need each other"
    assert session._running == set()  # each check stops counting as running, even when it raised


def test_a_skip_joins_every_unmet_reason_and_marks_synthetic_inputs(tmp_path: Path) -> None:
    @dataclass(frozen=True)
    class Inputs:
        missing: dict
        synthetic: bool = True

    no_rows = Need("rows", lambda inputs: Unmet(("d/a.csv", "d/b.csv"), "d/a.csv has no rows"))
    met = Need("met", lambda inputs: None)
    spec = CheckSpec("c", "Title", lambda i, p: Result("pass"), (met, "d/a.csv", no_rows, "d/present.csv"))
    inputs = Inputs({"d/a.csv": "d/a.csv is not published"})
    check = plugin(spec, load=lambda p: inputs).session({}, out_dir=tmp_path).run("c")
    assert (check.title, check.status, check.synthetic) == ("Title", "skipped", True)
    assert check.summary == "d/a.csv is not published; d/a.csv has no rows"
    assert check.meta["missing"] == ["d/a.csv", "d/b.csv"]
    real = plugin(spec, load=lambda p: Inputs({}, synthetic=False)).session({}, out_dir=tmp_path).run("c")
    assert real.status == "skipped" and real.synthetic is False and real.meta["missing"] == ["d/a.csv", "d/b.csv"]
    plain = plugin(spec, load=lambda p: object()).session({}, out_dir=tmp_path).run("c")
    assert plain.synthetic is False and plain.summary == "d/a.csv has no rows"  # inputs without `missing`


def test_a_need_that_is_met_lets_the_check_run_on_the_inputs_and_parameters(tmp_path: Path) -> None:
    seen: list = []

    def check(inputs: object, params: Params, needed: dict) -> Result:
        seen.append((inputs, params.count, sorted(needed)))
        return Result("pass")

    spec = CheckSpec("c", "c", check, (Need("n", lambda inputs: None), "check:first", "d/here.csv"))
    first = CheckSpec("first", "first", lambda i, p: Result("quirk"))
    session = plugin(first, spec, load=lambda p: "the inputs").session({"count": 4}, out_dir=tmp_path)
    assert session.run("c").status == "pass"
    assert seen == [("the inputs", 4, ["first"])]


def test_a_check_function_that_returns_no_result_is_an_error(tmp_path: Path) -> None:
    check = plugin(CheckSpec("c", "c", lambda i, p: {"status": "pass"})).session({}, out_dir=tmp_path).run("c")
    assert check.status == "error"
    assert check.summary == "the check function returned dict, not a findings.Result"


def test_each_check_records_its_cost_and_whether_it_counted_sandbox_jobs(tmp_path: Path) -> None:
    spec = CheckSpec("c", "Title", lambda i, p: Result("pass", meta={"kept": 1}))
    local = plugin(spec).session({}, out_dir=tmp_path).run("c")
    assert local.title == "Title" and local.meta["kept"] == 1
    assert local.meta["cost"]["sandbox_jobs"] == 0 and local.meta["cost"]["machine_dependent"] is True
    remote = plugin(spec).session({"executor": "dask://host:8786"}, out_dir=tmp_path).run("c")
    assert remote.meta["cost"]["sandbox_jobs"] is None  # jobs on a cluster are not seen from here


def test_a_check_named_by_module_and_function_is_imported_when_it_runs() -> None:
    assert CheckSpec("c", "c", "audit_lib.runner.gate:parse_fail_on").function()("defect") == {"defect"}
    assert CheckSpec("c", "c", ".gate:is_synthetic").function("audit_lib.runner")({"synthetic": 1}) is True


def test_a_parameterised_list_annotation_is_checked_like_a_bare_one() -> None:
    @dataclass(frozen=True)
    class Typed:
        ids: list[str] = param([])
        pair: tuple[str, ...] = param(())

    typed = AuditPlugin("typed", "Typed", Typed, lambda p: None, ())
    assert typed.validate({"ids": ("a",), "pair": ["b"]}) == Typed(ids=["a"], pair=("b",))
    with pytest.raises(ParameterError, match="^typed: parameter 'ids' must be a list of strings, got 'a,b'$"):
        typed.validate({"ids": "a,b"})


def test_a_need_is_judged_on_the_loaded_inputs(tmp_path: Path) -> None:
    has_rows = Need("rows", lambda inputs: None if inputs["rows"] else Unmet(("d/a.csv",), "d/a.csv has no rows"))
    spec = CheckSpec("c", "c", lambda i, p: Result("pass"), (has_rows,))
    assert plugin(spec, load=lambda p: {"rows": [1]}).session({}, out_dir=tmp_path).run("c").status == "pass"
    empty = plugin(spec, load=lambda p: {"rows": []}).session({}, out_dir=tmp_path).run("c")
    assert empty.status == "skipped" and empty.summary == "d/a.csv has no rows"
