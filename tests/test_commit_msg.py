"""tools/commit_msg.py: subjects of at most 72 characters, a blank line before a body, judged on new commits only."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("commit_msg", REPO_ROOT / "tools" / "commit_msg.py")
assert _spec is not None and _spec.loader is not None
commit_msg = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = commit_msg
_spec.loader.exec_module(commit_msg)


@pytest.mark.parametrize(("message", "expected"), [
    ("Report: one package for the report modules\n\nWhy, in the body.\n", []),
    ("x" * 72 + "\n", []),
    ("x" * 73 + "\n", ["subject is 73 characters (at most 72)"]),
    ("Subject\nbody glued to it\n", ["no blank line between the subject and the body"]),
    ("\n\nbody only\n", ["empty subject"]),
])
def test_each_message_rule(message: str, expected: list[str]) -> None:
    assert commit_msg.problems(message) == expected


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org"}
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True).stdout.strip()


def test_only_the_commits_after_the_base_are_judged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "commit", "-q", "--allow-empty", "-m", "An old subject from before the rule, far longer than "
                                                          "seventy-two characters in all")
    base = _git(tmp_path, "rev-parse", "HEAD")
    assert commit_msg.main([base, "--repo", str(tmp_path)]) == 0
    _git(tmp_path, "commit", "-q", "--allow-empty", "-m", "A good subject", "-m", "And a body.")
    assert commit_msg.main([base, "--repo", str(tmp_path)]) == 0
    _git(tmp_path, "commit", "-q", "--allow-empty", "-m", "Subject\nglued body")
    assert commit_msg.main([base, "--repo", str(tmp_path)]) == 1
    assert "no blank line" in capsys.readouterr().err
    assert commit_msg.main(["no-such-ref", "--repo", str(tmp_path)]) == 2


def test_a_message_file_as_a_commit_msg_hook(tmp_path: Path) -> None:
    message = tmp_path / "COMMIT_EDITMSG"
    message.write_text("Fine subject\n\nBody.\n# a comment line git strips\n", encoding="utf-8")
    assert commit_msg.main(["--file", str(message)]) == 0
    message.write_text("y" * 80 + "\n", encoding="utf-8")
    assert commit_msg.main(["--file", str(message)]) == 1


def test_the_recorded_base_is_a_commit_of_this_repository() -> None:
    base = commit_msg.BASE_FILE.read_text(encoding="utf-8").split()[0]
    if not (REPO_ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    assert subprocess.run(["git", "cat-file", "-e", f"{base}^{{commit}}"], cwd=REPO_ROOT).returncode == 0
