"""`python -m audit_lib sandbox PROGRAM.py (--test TEST.py ... | --call ENTRY --inputs INPUTS.json)`: one job, JSON out.

Exit code: 0 when the job's status is `pass`, 1 when it is anything else, 2 for bad arguments or unreadable files.
INPUTS.json is a JSON list of argument lists (tagged values such as `{"$tuple": [1, 2]}` are accepted).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from audit_lib.errors import ParameterError
from audit_lib.sandbox import codec as sandbox_codec
from audit_lib.sandbox.api import call_function, run_asserts
from audit_lib.sandbox.limits import Limits
from audit_lib.sandbox.nesting import depth_room


def register(subparsers: Any) -> None:
    """Add the `sandbox` subcommand to the top-level `python -m audit_lib` parser."""
    parser = subparsers.add_parser(
        "sandbox", help="run one suspicious program in the sandbox and print the result as JSON",
        description="Run PROGRAM.py in the sandbox: against test snippets (assert mode) or by calling a "
                    "function on inputs (function-call mode); prints the result as JSON.")
    parser.add_argument("program", type=Path, metavar="PROGRAM.py")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--test", type=Path, action="append", metavar="TEST.py",
                      help="a test snippet run after the program (repeatable; each runs in its own child)")
    mode.add_argument("--call", metavar="ENTRY", help="function to call once per input")
    parser.add_argument("--inputs", type=Path, metavar="INPUTS.json", help="JSON list of argument lists (--call)")
    parser.add_argument("--timeout", type=float, default=Limits.timeout_s,
                        help="seconds per snippet / per input (default %(default)s)")
    parser.add_argument("--total-timeout", type=float, default=Limits.total_timeout_s,
                        help="seconds for the whole job (default %(default)s)")
    parser.add_argument("--memory", type=int, default=Limits.memory_mb,
                        help="address-space limit in MB (default %(default)s)")
    parser.add_argument("--no-network-isolation", action="store_true", help="do not isolate the network")
    parser.set_defaults(func=handle)


def _read_text(path: Path, what: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ParameterError(f"cannot read {what} {path}: {exc}", file=str(path), field=what) from exc


def _read_inputs(path: Path) -> list[list[Any]]:
    text = _read_text(path, "inputs")
    try:
        with depth_room():
            inputs = sandbox_codec.decode(json.loads(text))
    except (ValueError, RecursionError, TypeError, sandbox_codec.MalformedTaggedValue) as exc:  # too deep, unhashable
        raise ParameterError(f"{path}: not valid (tagged) JSON: {exc}", file=str(path), field="inputs") from exc
    if not isinstance(inputs, list) or not all(isinstance(args, (list, tuple)) for args in inputs):
        raise ParameterError(f"{path}: must be a JSON list of argument lists", file=str(path), field="inputs")
    return [list(args) for args in inputs]


def handle(args: argparse.Namespace) -> int:
    """Run the job described by `args`; print its JSON result; return the exit code."""
    try:
        limits = Limits(timeout_s=args.timeout, total_timeout_s=args.total_timeout, memory_mb=args.memory,
                                network_isolation=not args.no_network_isolation)
        program = _read_text(args.program, "program")
        if args.call is not None:
            if not args.call:
                raise ParameterError("--call needs a function name", field="call")
            if args.inputs is None:
                raise ParameterError("--call needs --inputs INPUTS.json", field="inputs")
            # values="preview": a value too long to show comes back as its start, never decoded in this process
            result: Any = call_function(program, args.call, _read_inputs(args.inputs), limits=limits,
                                        values="preview")
        else:
            snippets = [_read_text(path, "test") for path in args.test]
            result = run_asserts(program, snippets, limits=limits)
    except ParameterError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(result_text(result.to_json()))
    return 0 if result.status == "pass" else 1


def result_text(payload: dict[str, Any]) -> str:
    """The result as JSON: a line per field and per item of a list field, each written compactly by the C encoder.

    Indenting every level (`json.dumps(indent=2)`, a pure-Python and recursive encoder) fails on values nested a
    few hundred deep and writes each nested item on a line indented by its depth, so a value's text could grow by
    about its depth; compact items are the size of their values, and their nesting has the codec's room."""
    def compact(value: Any) -> str:
        return json.dumps(value, default=str)

    with depth_room():
        fields = []
        for key, value in payload.items():
            if isinstance(value, list) and value:
                items = ",\n".join(f"    {compact(item)}" for item in value)
                fields.append(f"  {compact(key)}: [\n{items}\n  ]")
            else:
                fields.append(f"  {compact(key)}: {compact(value)}")
    return "{\n" + ",\n".join(fields) + "\n}"


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry (`python -m audit_lib.sandbox.cli ...`) until the main CLI wires `register`."""
    parser = argparse.ArgumentParser(prog="audit_lib")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    raise SystemExit(main())
