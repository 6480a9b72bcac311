"""The judge of a call job: decodes each output and compares it with its expected value.

It runs in a judge cell under the judges' uid and its own limits, apart from the job (stdlib only; the caller's rules,
given as source with `make_comparer(setup, api)`, may import numpy). The zygote relays each value line of the job
unopened (`Q` frame: `<index> <tagged JSON>`); the judge answers each with one record (`V` frame), in order:
`{"v": "match" | "wrong_value" | null, "r": reason, "p": preview}`, or `{"k": "unserializable", "t": type,
"m": message}` when the value cannot be decoded within the judge's budget: a CPU time per value (`value_cpu_s`, a
profiling timer raising between bytecodes) on top of the judge's own limits and the decode budget's structural checks.
"""

from __future__ import annotations

import _signal
import builtins
import json
import signal
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

from audit_lib.sandbox import budget as sandbox_budget
from audit_lib.sandbox import codec as sandbox_codec
from audit_lib.sandbox.nesting import depth_room
from audit_lib.sandbox.zygote.call_child import GO_FD
from audit_lib.sandbox.zygote.fast_json import dumps, loads_bytes
from audit_lib.sandbox.zygote.frames import REQUEST, VERDICT, read_frame, write_frame
from audit_lib.sandbox.zygote.harness_io import exception_fields as _exception_fields
from audit_lib.sandbox.zygote.protocol import RESULT_FD

PREVIEW_CHARS = 200
# A value whose encoding is shorter than this is previewed by `repr`; a longer one by `budget.bounded_repr`.
FULL_REPR_BYTES = 1 << 20
CODEC_API = SimpleNamespace(ValueDigest=sandbox_codec.ValueDigest, digest_of=sandbox_codec.digest_of,
                            bounded_set=sandbox_budget.bounded_set, Unserializable=sandbox_codec.Unserializable)


# `_signal.signal` is what `signal.signal` calls, without its wrapper's enum conversions (0.3 us instead of 7 us per
# value).
_install, _setitimer, _SIGPROF, _ITIMER_PROF = _signal.signal, signal.setitimer, signal.SIGPROF, signal.ITIMER_PROF


class OverBudget(BaseException):
    """The value's decoding and comparison used up its CPU time."""


def _on_budget_timer(_signum: int, _frame: Any) -> None:
    raise OverBudget


class LazyInputs(Sequence):
    """One input's arguments, decoded only if a rule reads them (special oracles)."""

    def __init__(self, tagged: Any) -> None:
        self.tagged, self.decoded = tagged, None

    def _items(self) -> list:
        if self.decoded is None:
            self.decoded = sandbox_codec.decode(self.tagged)
        return self.decoded

    def __getitem__(self, position: int) -> Any:
        return self._items()[position]

    def __len__(self) -> int:
        return len(self._items())


class CallJudge:
    """The comparer built from the caller's rules, the expected values, and the record of each output."""

    def __init__(self, spec: dict) -> None:
        source = spec.get("source")
        self.comparer = None
        if source is not None:
            namespace = {"__name__": "judge_rules", "__builtins__": builtins}
            exec(compile(source, "<judge rules>", "exec"), namespace)
            self.comparer = namespace["make_comparer"](spec.get("setup") or {}, CODEC_API)
        self.expected = {int(index): tagged for index, tagged in spec.get("expected") or []}
        self.inputs = spec.get("inputs") or []
        digests = spec.get("digest_inputs", ())
        self.digestible = None if digests is None else frozenset(int(i) for i in digests)
        self.value_cpu_s = float(spec.get("value_cpu_s") or 10.0)
        self.decoder = sandbox_budget.JobDecoder()

    def record(self, index: int, payload: bytes) -> dict:
        """The record of output `index` (its tagged JSON), decoded and compared within the value's CPU budget."""
        _install(_SIGPROF, _on_budget_timer)
        _setitimer(_ITIMER_PROF, self.value_cpu_s)
        try:
            return self._record(index, payload)
        except OverBudget:
            return _refused("BudgetExceeded", f"decoding and comparing took more than {self.value_cpu_s:g} s of CPU")
        except sandbox_budget.BudgetExceeded as exc:
            return _refused("BudgetExceeded", exc.reason)
        except (MemoryError, RecursionError) as exc:
            return _refused("BudgetExceeded", f"{type(exc).__name__} in the judge")
        except (ValueError, TypeError, sandbox_codec.MalformedTaggedValue) as exc:
            return _refused("MalformedResult", f"{type(exc).__name__}: {exc}"[:500])
        except Exception as exc:  # noqa: BLE001 - whatever a value makes go wrong here refuses that value, not the job's
            error_type, message = _exception_fields(exc)
            return _refused("JudgeError", f"{error_type}: {message}"[:500])
        finally:
            _setitimer(_ITIMER_PROF, 0)

    def _record(self, index: int, payload: bytes) -> dict:
        self.decoder.charge(payload)
        with depth_room():  # values nested up to MAX_DEPTH; the comparison runs at the limit it was given
            parsed = loads_bytes(payload)
        may_digest = self.digestible is None or index in self.digestible
        output = sandbox_codec.digest_from_json(parsed) if may_digest else None
        if output is None:
            output = self.decoder.decode(parsed)
        preview = _preview(output, len(payload))
        if self.comparer is None or index not in self.expected:
            return {"v": None, "r": "", "p": preview}
        expected = self.expected[index]
        expected = sandbox_codec.digest_from_json(expected) or sandbox_codec.decode(expected)
        arguments = LazyInputs(self.inputs[index]) if index < len(self.inputs) else LazyInputs([])
        passed, reason = self.comparer.compare(arguments, output, expected)[:2]
        return {"v": "match" if passed else "wrong_value", "r": "" if passed else str(reason)[:1000], "p": preview}


def _refused(kind: str, message: str) -> dict:
    return {"k": "unserializable", "t": kind, "m": message}


def _preview(value: Any, encoded_bytes: int) -> str:
    if isinstance(value, sandbox_codec.ValueDigest):
        return f"<{value.type_name} of {value.nbytes:,} encoded bytes, sha256 {value.sha256[:16]}...>"
    if encoded_bytes < FULL_REPR_BYTES:
        return sandbox_budget.safe_repr(value, PREVIEW_CHARS)
    return sandbox_budget.bounded_repr(value, PREVIEW_CHARS)


def call_judge(spec: dict) -> None:
    """Answer each relayed value line with its record, until the zygote closes the pipe."""
    try:
        judge = CallJudge(spec)
    except BaseException as exc:  # noqa: BLE001 - the caller's rules do not load: every output is refused
        error_type, message = _exception_fields(exc)
        judge = None
        failure = _refused("JudgeRulesError", f"{error_type}: {message}"[:500])
    while True:
        got = read_frame(GO_FD)
        if got is None:
            return
        kind, body = got
        if kind != REQUEST:
            return
        index_text, _, payload = body.partition(b" ")
        record = judge.record(int(index_text), payload) if judge is not None else failure
        write_frame(RESULT_FD, VERDICT, dumps(record).encode())
