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
    assert explore.strip() and not RUN_CALL.findall(explore), "an Explore section that runs no check comes last"
    runs = RUN_CALL.findall(code)
    if EVERY_CHECK_LOOP in code:  # one check per registered file: the notebook runs whichever the session has
        assert not runs
        return
    assert sorted(runs) == sorted(spec.id for spec in plugin.checks), "one report.check(audit, id) per declared check"
    assert "show_check(audit.run(" not in code, "a check is shown with report.check(audit, id)"


@pytest.mark.parametrize("name", benchmarks.names())
def test_a_check_id_leads_to_its_function_in_one_hop(name: str) -> None:
    """Declared as `.checks_<topic>:<id>`: the function computing a check is named as its id (one per registered
    file for data_inventory, whose ids are generated)."""
    plugin = benchmarks.load(name)
    ids = [spec.id for spec in plugin.checks]
    assert len(ids) == len(set(ids)), "each check is declared once"
    for spec in plugin.checks:
        assert callable(spec.function(plugin.package))
        if isinstance(spec.run, str):
            assert re.fullmatch(rf"\.checks_[a-z0-9]+:{re.escape(spec.id)}", spec.run), spec.run
