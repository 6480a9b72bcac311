"""The speed figure: counts from zero, and a curve that does not move says so in words."""

from __future__ import annotations

from audit_lib.timing.figure import flat_note, speed_figure


def test_a_flat_curve_is_said_in_the_title_and_the_axis_starts_at_zero() -> None:
    flat = {"cached generations": [[0.25, 435, 0], [1.0, 435, 0], [4.0, 435, 0]]}
    figure = speed_figure(flat, title="Failing runs vs machine speed", unit="runs")
    axes = figure.axes[0]
    assert axes.get_ylim()[0] == 0
    assert axes.get_title() == ("Failing runs vs machine speed\nflat: 435 failing runs at every speed, none of them "
                                "timing-dependent")


def test_a_curve_that_moves_gets_no_note() -> None:
    assert flat_note({"a": [[0.5, 12, 3], [1.0, 10, 1], [2.0, 9, 0]]}, "failing tasks") == ""
    assert flat_note({"a": [[0.5, 9, 2], [1.0, 9, 2]]}, "failing tasks") == \
        "\nflat: 9 failing tasks at every speed shown"  # timing-only failures: no claim about them


def test_two_levels_are_a_moving_curve_and_one_point_is_flat() -> None:
    assert flat_note({"a": [[0.5, 10, 1], [1.0, 9, 0], [2.0, 9, 0]]}, "failing tasks") == ""
    assert flat_note({"a": [[1.0, 3, 0]]}, "failing runs") == \
        "\nflat: 3 failing runs at every speed, none of them timing-dependent"


def test_flat_curves_at_different_levels_are_each_named_in_order() -> None:
    curves = {"b": [[0.5, 1200, 0], [1.0, 1200, 0]], "a": [[0.5, 9, 0], [1.0, 9, 0]], "c": [[0.5, 9, 0]]}
    assert flat_note(curves, "failing tasks") == \
        "\nflat: 9 / 1,200 failing tasks at every speed, none of them timing-dependent"
