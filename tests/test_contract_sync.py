"""Every registered audit keeps the contract: its notebook's parameters cell is its `Params`, and it runs each
declared check once through the session (like test_environment_sync.py for the environment)."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from audit_lib import benchmarks
from audit_lib.runner.catalogue import read_parameters

SESSION_LINE = re.compile(r"^audit = AUDIT\.session\(globals\(\)\)$", re.M)
RUN_CALL = re.compile(r"""report\.check\(audit, ["']([\w.\-]+)["']""")
OLD_RUN_CALL = re.compile(r"""audit\.run\(["']([\w.\-]+)["']\)""")
EXPLORE_HEADING = "## Explore"
EVERY_CHECK_LOOP = "for check_id in audit.check_ids:\n    report.check(audit, check_id"


@pytest.mark.parametrize("name", benchmarks.names())
def test_parameters_cell_equals_the_params_dataclass(name: str) -> None:
    plugin = benchmarks.load(name)
    cell = [(p.name, p.default) for p in read_parameters(plugin.notebook_path())]
    fields = [(f.name, f.default_factory() if f.default is dataclasses.MISSING else f.default)  # type: ignore[misc]
              for f in dataclasses.fields(plugin.params)]
    assert cell == fields, f"{plugin.notebook_path().name} parameters cell differs from {name}'s Params"


@pytest.mark.parametrize("name", benchmarks.names())
def test_notebook_has_the_contract_shape(name: str) -> None:
    plugin = benchmarks.load(name)
    notebook = json.loads(plugin.notebook_path().read_text(encoding="utf-8"))
    assert notebook["metadata"]["kernelspec"]["name"] == "benchaudit"
    cells = notebook["cells"]
    explore_at = next((i for i, c in enumerate(cells) if c["cell_type"] == "markdown"
                       and "".join(c["source"]).startswith(EXPLORE_HEADING)), len(cells))
    code = "\n".join("".join(c["source"]) for c in cells[:explore_at] if c["cell_type"] == "code")
    explore = "\n".join("".join(c["source"]) for c in cells[explore_at:] if c["cell_type"] == "code")
    assert len(SESSION_LINE.findall(code)) == 1
    assert code.rstrip().endswith("audit.write()"), "the findings are written before the Explore section"
    assert explore.strip() and not RUN_CALL.findall(explore) and not OLD_RUN_CALL.findall(explore), "an Explore section that runs no check comes last"
    runs = RUN_CALL.findall(code) or OLD_RUN_CALL.findall(code)
    if EVERY_CHECK_LOOP in code:  # one check per registered file: the notebook runs whichever the session has
        assert not runs
        return
    declared = [spec.id for spec in (plugin.checks(plugin.validate({})) if callable(plugin.checks) else plugin.checks)]
    if callable(plugin.checks):
        return
    assert sorted(runs) == sorted(declared), "one report.check(audit, id) per declared check"
