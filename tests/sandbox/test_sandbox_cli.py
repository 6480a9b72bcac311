"""The `sandbox` subcommand, driven through `register` on a bare argparse parser."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from audit_lib.sandbox import cli as sandbox_cli
from audit_lib.sandbox import codec as sandbox_codec

pytestmark = pytest.mark.timeout(60)


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser()
    sandbox_cli.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["sandbox", *argv])
    code = args.func(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture()
def program(tmp_path: Path) -> Path:
    path = tmp_path / "program.py"
    path.write_text("def add(a, b):\n    return a + b\n")
    return path


def test_assert_mode_prints_json_and_exit_code(program: Path, tmp_path: Path, capsys) -> None:
    good, bad = tmp_path / "good.py", tmp_path / "bad.py"
    good.write_text("assert add(1, 2) == 3\n")
    bad.write_text("import sys\nsys.exit(0)\n")
    code, out, _ = run_cli([str(program), "--test", str(good), "--test", str(bad), "--timeout", "2"], capsys)
    payload = json.loads(out)
    assert code == 1
    assert [s["status"] for s in payload["snippets"]] == ["pass", "error"]
    assert payload["limits"]["timeout_s"] == 2
    code, out, _ = run_cli([str(program), "--test", str(good)], capsys)
    assert code == 0 and json.loads(out)["status"] == "pass"


def test_call_mode_reads_tagged_inputs(program: Path, tmp_path: Path, capsys) -> None:
    inputs = tmp_path / "inputs.json"
    inputs.write_text(json.dumps([[1, 2], [{"$tuple": [1]}, {"$tuple": [2]}], ["a", 1]]))
    code, out, _ = run_cli([str(program), "--call", "add", "--inputs", str(inputs), "--memory", "256"], capsys)
    payload = json.loads(out)
    assert code == 0
    assert [o["kind"] for o in payload["outcomes"]] == ["value", "value", "exception"]
    assert payload["outcomes"][1]["value"] == {"$tuple": [1, 2]}
    assert payload["limits"]["memory_mb"] == 256


def test_bad_arguments_exit_2(program: Path, tmp_path: Path, capsys) -> None:
    code, _, err = run_cli([str(program), "--call", "add"], capsys)
    assert code == 2 and "--inputs" in err
    missing = tmp_path / "missing.json"
    code, _, err = run_cli([str(program), "--call", "add", "--inputs", str(missing)], capsys)
    assert code == 2 and "missing.json" in err
    code, _, err = run_cli([str(program), "--test", str(program), "--timeout", "0"], capsys)
    assert code == 2 and "timeout_s" in err


@pytest.mark.parametrize("inputs", ["[[" + "[" * 100_000 + "]" * 100_000 + "]]", '[[{"$set": [[1]]}]]',
                                    '[[{"$dict": [[[1], 2]]}]]'])
def test_inputs_nested_too_deep_or_unhashable_exit_2(program: Path, tmp_path: Path, capsys, inputs: str) -> None:
    # Too deep or unhashable inputs must not end in a traceback (RecursionError, TypeError) with no JSON.
    path = tmp_path / "inputs.json"
    path.write_text(inputs)
    code, out, err = run_cli([str(program), "--call", "add", "--inputs", str(path)], capsys)
    assert code == 2 and "not valid (tagged) JSON" in err and out == ""


def test_inputs_past_the_codecs_depth_exit_2_and_500_deep_ones_run(program: Path, tmp_path: Path, capsys) -> None:
    path = tmp_path / "inputs.json"
    for depth in (sandbox_codec.MAX_DEPTH + 200, 500):
        path.write_text("[[" + "[" * depth + "]" * depth + ", []]]")  # add returns the nested input back
        code, out, err = run_cli([str(program), "--call", "add", "--inputs", str(path)], capsys)
        if depth > sandbox_codec.MAX_DEPTH:
            assert code == 2 and "nested deeper" in err and out == ""
        else:
            (outcome,) = json.loads(out)["outcomes"]
            assert (code, outcome["kind"]) == (0, "value") and outcome["value"] == _nested_list(depth - 1), outcome


NEST = "def nest(depth, width):\n    value = [0] * width\n    for _ in range(depth):\n        value = [value]\n    return value\n"


def test_a_value_nested_500_deep_prints_compactly(tmp_path: Path, capsys) -> None:
    # json.dumps(indent=2) fails near 300 levels, and writes each level on a line indented by its depth: a 0.9 MB
    # value 190 deep printed as 117 MB. Each field and outcome on one compact line instead.
    program, path = tmp_path / "nest.py", tmp_path / "inputs.json"
    program.write_text(NEST)
    path.write_text("[[500, 0], [190, 3000]]")
    code, out, err = run_cli([str(program), "--call", "nest", "--inputs", str(path)], capsys)
    assert code == 0, err
    deep, wide = json.loads(out)["outcomes"]
    assert deep["kind"] == "value" and deep["value"] == _nested_list(500)
    assert wide["kind"] == "value" and len(out) < 3 * (len(json.dumps(wide["value"])) + len(json.dumps(deep["value"])))


def _nested_list(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("option", [["--timeout", "1e300"], ["--total-timeout", "1e300"],
                                    ["--timeout", "1e300", "--total-timeout", "1e300"]])
def test_huge_timeouts_exit_2(program: Path, tmp_path: Path, capsys, option: list[str]) -> None:
    # --total-timeout 1e300 would overflow select (a traceback, exit 1) and --timeout 1e300 the child's setitimer
    # (a passing program an `error`).
    inputs = tmp_path / "inputs.json"
    inputs.write_text("[[1, 2]]")
    code, out, err = run_cli([str(program), "--call", "add", "--inputs", str(inputs), *option], capsys)
    assert code == 2 and out == "" and err.startswith("error: Limits.") and "must be at most" in err


def test_empty_call_name_exits_2(program: Path, tmp_path: Path, capsys) -> None:
    # `--call ""` was taken for assert mode without tests: a TypeError traceback.
    inputs = tmp_path / "inputs.json"
    inputs.write_text("[[1, 2]]")
    code, out, err = run_cli([str(program), "--call", "", "--inputs", str(inputs)], capsys)
    assert code == 2 and out == "" and "--call needs a function name" in err
