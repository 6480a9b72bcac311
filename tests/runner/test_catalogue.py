"""The audit catalogue: parameters read from the tagged cell, and `-p KEY VALUE` validation."""

from __future__ import annotations

from pathlib import Path

import pytest
from notebook_factory import plugin_for, write_notebook

from audit_lib.errors import ParameterError, UnknownAuditError
from audit_lib.runner.catalogue import (
    NotebookParameter,
    coerce_value,
    discover_audits,
    read_parameters,
    resolve_parameters,
    select_audits,
)

PARAMS = (
    "limit = 10  # how many rows\n"
    "ratio = 0.5\n"
    "label = \"x\"  # a label\n"
    "verbose = False\n"
    "datasets = []  # which datasets\n"
    "executor = None  # where jobs run\n"
    "dataset = \"humaneval\"\n"
)


@pytest.fixture()
def notebooks(tmp_path: Path) -> dict:
    folder = tmp_path / "notebooks"
    alpha = write_notebook(folder, "alpha", PARAMS, ["print(limit)"], title="Alpha audit")
    beta = write_notebook(folder, "beta", "limit = 3\n", ["print(limit)"])
    return {"alpha": plugin_for(alpha), "beta": plugin_for(beta)}


def test_read_parameters_types_defaults_and_help(notebooks: dict) -> None:
    parameters = {p.name: p for p in read_parameters(notebooks["alpha"].notebook_path())}
    assert [(p.name, p.type_name, p.default) for p in parameters.values()] == [
        ("limit", "int", 10), ("ratio", "float", 0.5), ("label", "str", "x"), ("verbose", "bool", False),
        ("datasets", "list", []), ("executor", "None", None), ("dataset", "str", "humaneval")]
    assert parameters["limit"].help == "how many rows"
    assert parameters["ratio"].help == ""


def test_non_literal_parameter_is_rejected_with_its_line(tmp_path: Path) -> None:
    path = write_notebook(tmp_path, "bad", "a = 1\nb = len('xy')\n", [])
    with pytest.raises(ParameterError, match=r"'b' \(line 2\) must be a literal"):
        read_parameters(path)


def test_statement_that_is_not_an_assignment_is_rejected(tmp_path: Path) -> None:
    path = write_notebook(tmp_path, "bad", "import os\n", [])
    with pytest.raises(ParameterError, match="line 1 is not a simple"):
        read_parameters(path)


def test_notebook_without_parameters_cell_is_rejected(tmp_path: Path) -> None:
    import nbformat
    from nbformat.v4 import new_code_cell, new_notebook

    path = tmp_path / "untagged.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell("x = 1")]), str(path))
    with pytest.raises(ParameterError, match="no code cell tagged 'parameters'"):
        read_parameters(path)


def test_discover_lists_plugins_with_their_notebooks_and_titles(notebooks: dict) -> None:
    audits = discover_audits(notebooks)
    assert list(audits) == ["alpha", "beta"]
    assert audits["alpha"].title == "alpha (test notebook)"
    assert audits["beta"].notebook == notebooks["beta"].notebook_path()
    assert [p.name for p in audits["beta"].parameters] == ["limit"]


def test_every_registered_audit_is_discovered_from_the_registry() -> None:
    from audit_lib import benchmarks

    assert list(discover_audits()) == list(benchmarks.names())


def test_unknown_audit_names_the_known_ones(notebooks: dict) -> None:
    with pytest.raises(UnknownAuditError, match=r"unknown audit 'gamma'; known audits: alpha, beta"):
        select_audits(["alpha", "gamma"], discover_audits(notebooks))


def test_no_names_selects_every_audit(notebooks: dict) -> None:
    assert [a.name for a in select_audits([], discover_audits(notebooks))] == ["alpha", "beta"]


@pytest.mark.parametrize(("name", "raw", "expected"), [
    ("limit", "42", 42), ("ratio", "2", 2.0), ("ratio", "1e-3", 0.001), ("label", "42", "42"),
    ("verbose", "yes", True), ("verbose", "FALSE", False), ("datasets", '["a", "b"]', ["a", "b"]),
    ("datasets", "('a',)", ["a"]), ("executor", "dask-local", "dask-local"), ("executor", "none", None),
    ("executor", "3", 3),
])
def test_values_are_converted_to_the_declared_type(notebooks: dict, name: str, raw: str, expected: object) -> None:
    parameter = discover_audits(notebooks)["alpha"].parameter(name)
    assert parameter is not None
    value = coerce_value(parameter, raw)
    assert value == expected and type(value) is type(expected)


@pytest.mark.parametrize(("name", "raw", "message"), [
    ("limit", "ten", "'limit' expects an int, got 'ten'"), ("limit", "1.5", "expects an int"),
    ("ratio", "half", "expects a float"), ("verbose", "maybe", "expects a bool"),
    ("datasets", "humaneval", "expects a list"), ("datasets", '{"a": 1}', "expects a list"),
])
def test_wrong_types_are_rejected(notebooks: dict, name: str, raw: str, message: str) -> None:
    parameter = discover_audits(notebooks)["alpha"].parameter(name)
    assert parameter is not None
    with pytest.raises(ParameterError, match=message):
        coerce_value(parameter, raw, audit="alpha")


def test_resolve_applies_a_key_to_every_audit_that_declares_it(notebooks: dict) -> None:
    audits = list(discover_audits(notebooks).values())
    resolved = resolve_parameters(audits, [("limit", "5"), ("label", "y")])
    assert resolved == {"alpha": {"limit": 5, "label": "y"}, "beta": {"limit": 5}}


def test_resolve_targets_one_audit_with_a_prefix(notebooks: dict) -> None:
    audits = list(discover_audits(notebooks).values())
    assert resolve_parameters(audits, [("beta.limit", "7")]) == {"alpha": {}, "beta": {"limit": 7}}
    with pytest.raises(ParameterError, match="'gamma' is not one of the selected audits"):
        resolve_parameters(audits, [("gamma.limit", "7")])


def test_resolve_rejects_a_parameter_no_selected_audit_declares(notebooks: dict) -> None:
    audits = [discover_audits(notebooks)["beta"]]
    with pytest.raises(ParameterError, match=r"unknown parameter 'label'.*known: limit"):
        resolve_parameters(audits, [("label", "y")])


def test_injected_values_reach_only_notebooks_that_declare_them(notebooks: dict) -> None:
    audits = list(discover_audits(notebooks).values())
    resolved = resolve_parameters(audits, [], {"executor": "dask-local", "mirror": None})
    assert resolved == {"alpha": {"executor": "dask-local"}, "beta": {}}


def test_alias_keeps_its_fixed_parameter(tmp_path: Path) -> None:
    shared = write_notebook(tmp_path / "nb", "humaneval_plus", "dataset = \"humaneval\"\nlimit = 1\n", [])
    catalogue = discover_audits({"humaneval_plus": plugin_for(shared),
                                 "mbpp_plus": plugin_for(shared, name="mbpp_plus", fixed_params={"dataset": "mbpp"})})
    audits = select_audits(["humaneval_plus", "mbpp_plus"], catalogue)
    resolved = resolve_parameters(audits, [("dataset", "humaneval"), ("limit", "2")])
    assert resolved == {"humaneval_plus": {"dataset": "humaneval", "limit": 2},
                        "mbpp_plus": {"dataset": "mbpp", "limit": 2}}
    with pytest.raises(ParameterError, match="mbpp_plus fixes dataset='mbpp'"):
        resolve_parameters(audits, [("mbpp_plus.dataset", "humaneval")])


def _raised(error: type[Exception], call: object, *args: object, **kwargs: object) -> ParameterError:
    with pytest.raises(error) as caught:
        call(*args, **kwargs)  # type: ignore[operator]
    return caught.value


def test_a_bad_parameters_cell_error_names_the_file_line_and_parameter(tmp_path: Path) -> None:
    broken = write_notebook(tmp_path, "broken", "a = 1\nb = (\n", [])
    error = _raised(ParameterError, read_parameters, broken)
    assert str(error).startswith("broken.ipynb: the parameters cell is not valid Python (line 2): ")
    assert error.fields == {"file": str(broken), "row": 2}
    statement = write_notebook(tmp_path, "statement", "a = 1\nimport os\n", [])
    assert _raised(ParameterError, read_parameters, statement).fields == {"file": str(statement), "row": 2}
    call = write_notebook(tmp_path, "call", "a = 1\nb = len('xy')\n", [])
    assert _raised(ParameterError, read_parameters, call).fields == {"file": str(call), "row": 2, "field": "b"}
    untagged = tmp_path / "untagged.ipynb"
    untagged.write_text(broken.read_text(encoding="utf-8").replace('"parameters"', '"other"'), encoding="utf-8")
    assert _raised(ParameterError, read_parameters, untagged).fields == {"file": str(untagged)}


def test_an_annotation_decides_the_type_and_a_comment_is_its_help(tmp_path: Path) -> None:
    path = write_notebook(tmp_path, "annotated", "ratio: float = 1  ## share of rows\nwidth = 2  #X axis\n", [])
    ratio, width = read_parameters(path)
    assert (ratio.type_name, ratio.default, ratio.help) == ("float", 1, "share of rows")
    assert width.help == "X axis"  # only the '#'s go, not what the comment starts with
    assert coerce_value(ratio, "0.5") == 0.5


def test_discover_only_the_named_audits_once_each_and_refuse_unknown_ones(notebooks: dict) -> None:
    audits = discover_audits(notebooks, ["beta", "alpha", "beta"])
    assert list(audits) == ["alpha", "beta"] and audits["alpha"].plugin is notebooks["alpha"]
    assert list(discover_audits(notebooks, ["beta"])) == ["beta"]
    error = _raised(UnknownAuditError, discover_audits, notebooks, ["gamma", "delta", "alpha"])
    assert str(error) == "unknown audit 'gamma', 'delta'; known audits: alpha, beta"
    assert error.fields == {"field": "audit", "value": ["gamma", "delta"]}
    assert str(_raised(UnknownAuditError, discover_audits, {}, ["x"])) == "unknown audit 'x'; known audits: (none)"


def test_select_refuses_unknown_names_with_structured_fields(notebooks: dict) -> None:
    error = _raised(UnknownAuditError, select_audits, ["gamma", "delta"], discover_audits(notebooks))
    assert str(error) == "unknown audit 'gamma', 'delta'; known audits: alpha, beta"
    assert error.fields == {"field": "audit", "value": ["gamma", "delta"]}
    assert str(_raised(UnknownAuditError, select_audits, ["x"], {})) == "unknown audit 'x'; known audits: (none)"


def test_resolve_errors_name_the_key_the_audit_and_the_known_parameters(notebooks: dict, tmp_path: Path) -> None:
    audits = list(discover_audits(notebooks).values())
    error = _raised(ParameterError, resolve_parameters, audits, [("gamma.limit", "7")])
    assert str(error) == "-p gamma.limit: 'gamma' is not one of the selected audits (alpha, beta)"
    assert error.fields == {"field": "gamma.limit"}
    error = _raised(ParameterError, resolve_parameters, audits, [("alpha.missing", "1")])
    assert str(error) == ("unknown parameter 'missing': no selected audit declares it "
                          "(known: dataset, datasets, executor, label, limit, ratio, verbose)")
    assert error.fields == {"field": "missing"}
    bare = discover_audits({"bare": plugin_for(write_notebook(tmp_path / "nb", "bare", "", []))})["bare"]
    assert str(_raised(ParameterError, resolve_parameters, [bare], [("limit", "1")])) == \
        "unknown parameter 'limit': no selected audit declares it (known: none)"
    error = _raised(ParameterError, resolve_parameters, audits, [("limit", "ten")])
    assert str(error) == "alpha: parameter 'limit' expects an int, got 'ten'"
    assert error.fields == {"field": "limit", "value": "ten", "audit": "alpha"}


def test_an_audit_that_fixes_a_parameter_does_not_stop_the_next_from_taking_it(tmp_path: Path) -> None:
    shared = write_notebook(tmp_path / "nb", "humaneval_plus", "dataset = \"humaneval\"\n", [])
    catalogue = discover_audits({"mbpp_plus": plugin_for(shared, name="mbpp_plus", fixed_params={"dataset": "mbpp"}),
                                 "humaneval_plus": plugin_for(shared)})
    audits = select_audits(["mbpp_plus", "humaneval_plus"], catalogue)
    assert resolve_parameters(audits, [("dataset", "other")]) == {"mbpp_plus": {"dataset": "mbpp"},
                                                                  "humaneval_plus": {"dataset": "other"}}
    error = _raised(ParameterError, resolve_parameters, audits, [("mbpp_plus.dataset", "other")])
    assert error.fields == {"field": "dataset"}


def test_a_wrong_value_says_which_parameter_and_audit_only_when_one_is_named() -> None:
    limit = NotebookParameter("limit", "int", 10)
    error = _raised(ParameterError, coerce_value, limit, "ten")
    assert str(error) == "parameter 'limit' expects an int, got 'ten'"
    assert error.fields == {"field": "limit", "value": "ten", "audit": ""}
    assert str(_raised(ParameterError, coerce_value, limit, "ten", audit="alpha")).startswith("alpha: parameter")


def test_dict_and_tuple_parameters_keep_their_kind() -> None:
    options = NotebookParameter("options", "dict", {})
    assert coerce_value(options, '{"a": 1}') == {"a": 1}
    assert "expects a dict" in str(_raised(ParameterError, coerce_value, options, "[1, 2]"))
    pair = NotebookParameter("pair", "tuple", (1, 2))
    assert coerce_value(pair, "(3, 4)") == (3, 4)
    assert coerce_value(pair, "[3, 4]") == [3, 4]
    assert "expects a tuple" in str(_raised(ParameterError, coerce_value, pair, '{"a": 1}'))
    assert coerce_value(NotebookParameter("executor", "None", None), "null") is None
