"""Data inventory: one check per registered file (`file.<dataset>.<path>`): fetched, verified, readable.

Its checks are declared from `audit_lib.data.sources.REGISTRY`, each run when the `datasets` parameter selects its
dataset. Fetching, profiling and the check (`inventory.file_check`) live in `inventory.py`, the overview in
`overview.py`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from audit_lib.benchmarks.data_inventory.inventory import (
    FileInventory,
    check_ids,
    check_title,
    file_check,
    inventory_file,
    selected_sources,
)
from audit_lib.data.sources import DATASETS, REGISTRY
from audit_lib.findings import Result
from audit_lib.plugin import AuditPlugin, CheckSpec, param

NAME = "data_inventory"
NOT_FETCHED = ("unavailable", "checksum_mismatch")


def _known_datasets(datasets: list[str]) -> str | None:
    unknown = [name for name in datasets if name not in DATASETS]
    if unknown:
        return f"names unknown dataset(s) {', '.join(map(repr, unknown))}; allowed: {', '.join(DATASETS)}"
    return None


def _existing_folder(mirror: str) -> str | None:
    return None if not mirror or Path(mirror).expanduser().is_dir() else "must be an existing folder or \"\""


@dataclass(frozen=True)
class Params:
    """The notebook's parameters cell."""

    datasets: list[str] = param([], "dataset names to inventory; empty: every registered dataset",
                                rule=_known_datasets)
    mirror: str = param("", "local mirror folder laid out as <dataset>/<file>; empty: AUDIT_MIRROR, else none",
                        rule=_existing_folder, path=True)
    offline: bool = param(False, "True: never download, use only the cache and the mirror")


@dataclass(frozen=True)
class Inputs:
    """What fetching and profiling found for each selected file, by file key (`<dataset>/<file>`)."""

    inventories: Mapping[str, FileInventory]

    @property
    def provenance(self) -> tuple[Any, ...]:
        return tuple(item.provenance for item in self.inventories.values() if item.provenance is not None)

    @property
    def missing(self) -> Mapping[str, str]:
        return {key: item.reason for key, item in self.inventories.items() if item.state in NOT_FETCHED}


def load(params: Params) -> Inputs:
    """Fetch (verifying the pin or lock) and profile every selected file; data problems become states."""
    mirror = Path(params.mirror).expanduser().resolve() if params.mirror else None
    # offline=False leaves the decision to fetch (AUDIT_OFFLINE / HF_HUB_OFFLINE may still switch downloads off).
    offline = True if params.offline else None
    return Inputs({source.key: inventory_file(source, mirror=mirror, offline=offline)
                   for source in selected_sources(params.datasets)})


@dataclass(frozen=True)
class FileCheck:
    """The check of one registered file.

    It reports a file that could not be fetched itself (skipped, `meta.missing` naming it, with its registry facts), so
    it declares no `needs`."""

    key: str

    def __call__(self, inputs: Inputs, params: Params) -> Result:
        return file_check(inputs.inventories[self.key])


@dataclass(frozen=True)
class SelectsDataset:
    """Whether a run's `datasets` parameter includes this dataset (empty selects every one)."""

    dataset: str

    def __call__(self, params: Params) -> bool:
        return not params.datasets or self.dataset in params.datasets


_IDS = check_ids(list(REGISTRY.values()))

AUDIT: AuditPlugin[Inputs, Params] = AuditPlugin(
    name=NAME,
    title="Data inventory",
    params=Params,
    load=load,
    checks=tuple(CheckSpec(_IDS[source.key], check_title(source), FileCheck(source.key),
                           when=SelectsDataset(source.dataset)) for source in REGISTRY.values()),
)

__all__ = ["AUDIT", "FileCheck", "Inputs", "Params", "load"]
