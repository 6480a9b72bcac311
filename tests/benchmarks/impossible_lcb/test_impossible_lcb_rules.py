"""Drop-list derivation, id files and the text-vs-number order replay."""

from __future__ import annotations

import pytest

from audit_lib.benchmarks.impossible_lcb.data import KnownIssue, task_number
from audit_lib.benchmarks.impossible_lcb.rules import (
    derive_drop_list,
    parse_id_list,
    position_split_flips,
    read_task_id_file,
)
from audit_lib.errors import ParameterError, SchemaError


def _issue(row, task_id, split, issue, action="keep"):
    return KnownIssue(row=row, task_id=task_id, split=split, issue=issue, detail="d", action=action)


def test_drop_list_is_every_task_with_a_defect_in_its_original_split():
    issues = [
        _issue(2, "t_12", "oneoff", "broken_mutation"),
        _issue(3, "t_12", "original", "original_test_wrong", "treat as impossible"),
        _issue(4, "t_3", "original", "input_violates_docstring"),
        _issue(5, "t_3", "original", "original_test_wrong"),
        _issue(6, "t_20", "original", "test_too_weak"),
        _issue(7, "t_9", "conflicting", "broken_mutation"),
        _issue(8, "t_4", "original", "test_over_specified"),
        _issue(9, "t_5", "original", "brand_new_category"),
    ]
    dropped = derive_drop_list(issues)
    assert [d.task_id for d in dropped] == ["t_3", "t_4", "t_5", "t_12", "t_20"]  # numeric order, no t_9
    by_id = {d.task_id: d for d in dropped}
    assert by_id["t_3"].categories == ("input_violates_docstring", "original_test_wrong")
    assert by_id["t_3"].unsolvable_for_honest == "yes" and by_id["t_3"].source_rows == (4, 5)
    assert by_id["t_4"].unsolvable_for_honest == "possibly"
    assert by_id["t_20"].unsolvable_for_honest == "no"
    assert by_id["t_5"].unsolvable_for_honest == "unclassified"
    assert by_id["t_12"].actions == ("treat as impossible",)


def test_text_sort_moves_tasks_across_a_position_split():
    ids = ["t_1", "t_2", "t_10", "t_11"]
    flips = position_split_flips(ids, 2)
    assert [(f.task_id, f.side_by_number, f.side_by_text) for f in flips] == [
        ("t_2", "heldout", "train"), ("t_10", "train", "heldout")]
    assert position_split_flips(["t_1", "t_2", "t_3"], 2) == ()


def test_task_id_files_plain_and_csv(tmp_path):
    plain = tmp_path / "ids.txt"
    plain.write_text("# held out\nlcbhard_1\nlcbhard_10\n", encoding="utf-8")
    assert read_task_id_file(plain, parameter="heldout_path") == (("lcbhard_1", "lcbhard_10"), ())
    table = tmp_path / "split.csv"
    table.write_text("task_id,split\nlcbhard_1,heldout\nlcbhard_2,train\nlcbhard_1,train\n", encoding="utf-8")
    assert read_task_id_file(table, parameter="heldout_path") == (
        ("lcbhard_1", "lcbhard_2", "lcbhard_1"), ("heldout", "train", "train"))
    broken = tmp_path / "bad.csv"
    broken.write_text("task_id\nlcbhard_1\nnot-an-id\n", encoding="utf-8")
    with pytest.raises(SchemaError) as caught:
        read_task_id_file(broken, parameter="dropped_tasks_path")
    assert caught.value.fields["row"] == 3 and caught.value.fields["field"] == "task_id"
    with pytest.raises(ParameterError):
        read_task_id_file(tmp_path / "missing.csv", parameter="dropped_tasks_path")
    commented = tmp_path / "commented.txt"
    commented.write_text("# held out\n\nlcbhard_1\nbad id\n", encoding="utf-8")
    with pytest.raises(SchemaError) as caught:
        read_task_id_file(commented, parameter="heldout_path")
    assert caught.value.fields["row"] == 4  # the file's own line number, comment and blank line included


def test_id_list_parameter():
    assert parse_id_list(" lcbhard_3, lcbhard_10 ,", parameter="heldout_ids") == ("lcbhard_3", "lcbhard_10")
    with pytest.raises(ParameterError):
        parse_id_list("lcbhard_3, oops", parameter="heldout_ids")
    assert task_number("lcbhard_17") == 17


def test_a_task_takes_its_worst_category_wherever_it_is_listed():
    worst_first = derive_drop_list([
        _issue(2, "t_7", "original", "original_test_wrong"),
        _issue(3, "t_7", "original", "test_too_weak"),
        _issue(4, "t_7", "original", "input_violates_docstring"),
    ])
    assert worst_first[0].categories == ("original_test_wrong", "test_too_weak", "input_violates_docstring")
    assert worst_first[0].unsolvable_for_honest == "yes"
    worst_in_the_middle = derive_drop_list([
        _issue(2, "t_8", "original", "test_too_weak"),
        _issue(3, "t_8", "original", "test_over_specified"),
        _issue(4, "t_8", "original", "test_too_weak"),
    ])
    assert worst_in_the_middle[0].categories == ("test_too_weak", "test_over_specified")
    assert worst_in_the_middle[0].unsolvable_for_honest == "possibly"


def test_dropped_tasks_carry_a_label_per_category():
    dropped = {d.task_id: d for d in derive_drop_list([
        _issue(4, "t_3", "original", "input_violates_docstring"),
        _issue(5, "t_3", "original", "original_test_wrong"),
        _issue(9, "t_5", "original", "brand_new_category"),
    ])}
    assert dropped["t_3"].labels == ("input outside the documented range", "wrong expected value")
    assert dropped["t_5"].labels == ("unclassified category 'brand_new_category'",)


def test_id_file_errors_name_the_parameter_the_file_and_the_row(tmp_path):
    absent = tmp_path / "missing.csv"
    with pytest.raises(ParameterError) as caught:
        read_task_id_file(absent, parameter="heldout_path")
    assert str(caught.value) == f"parameter 'heldout_path': file {str(absent)!r} does not exist"
    assert caught.value.fields["parameter"] == "heldout_path"

    only_comments = tmp_path / "empty.txt"
    only_comments.write_text("# nothing here\n\n", encoding="utf-8")
    with pytest.raises(SchemaError) as caught:
        read_task_id_file(only_comments, parameter="heldout_path")
    assert str(caught.value) == f"{only_comments}: no task ids"
    assert caught.value.fields == {"file": str(only_comments), "row": None, "field": "task_id"}

    plain = tmp_path / "ids.txt"
    plain.write_text("lcbhard_1\nlcbhard_x\n", encoding="utf-8")
    with pytest.raises(SchemaError) as caught:
        read_task_id_file(plain, parameter="heldout_path")
    assert str(caught.value) == f"{plain}: row 2: field 'task_id': task id 'lcbhard_x' does not end in a number"
    assert caught.value.fields == {"file": str(plain), "row": 2, "field": "task_id"}

    blank_id = tmp_path / "split.csv"
    blank_id.write_text("task_id,split\nlcbhard_1,heldout\n,train\n", encoding="utf-8")
    with pytest.raises(SchemaError) as caught:
        read_task_id_file(blank_id, parameter="heldout_path")
    assert str(caught.value) == f"{blank_id}: row 3: field 'task_id': task id '' does not end in a number"
    assert caught.value.fields["file"] == str(blank_id)


def test_id_list_error_names_the_parameter():
    with pytest.raises(ParameterError) as caught:
        parse_id_list("lcbhard_3, oops", parameter="heldout_ids")
    assert str(caught.value) == "parameter 'heldout_ids': task id 'oops' does not end in a number"
    assert caught.value.fields["parameter"] == "heldout_ids"


def test_order_flips_record_both_positions():
    flips = position_split_flips(["t_1", "t_2", "t_10", "t_11"], 2, first="eval", rest="rest")
    assert [(f.numeric_position, f.text_position) for f in flips] == [(1, 3), (2, 1)]
    assert [(f.side_by_number, f.side_by_text) for f in flips] == [("eval", "rest"), ("rest", "eval")]
