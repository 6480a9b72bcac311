"""A check's declared function: a callable as given, a name imported (relative to the audit's package) when run."""

from __future__ import annotations

import json

import pytest

from audit_lib.check_spec import CheckSpec
from audit_lib.findings import Result


def direct(inputs: object, params: object) -> Result:
    raise AssertionError("never called")


def test_a_callable_is_the_function_and_a_name_is_imported_absolute_or_relative() -> None:
    assert CheckSpec("a", "A", direct).function("audit_lib") is direct
    assert CheckSpec("a", "A", "json:dumps").function() is json.dumps
    assert CheckSpec("a", "A", ".check_spec:CheckSpec").function("audit_lib") is CheckSpec


def test_a_relative_name_needs_the_audits_package() -> None:
    with pytest.raises(TypeError, match="package"):  # importlib's refusal, not a search for another package
        CheckSpec("a", "A", ".check_spec:CheckSpec").function()
