"""Check commit messages: a subject of at most 72 characters, and a blank line between it and any body.

    python tools/commit_msg.py                 # the commits after the recorded base (tools/commit_msg_base.txt)
    python tools/commit_msg.py origin/main     # the commits of HEAD that are not in that ref
    python tools/commit_msg.py --file MSG      # one message file (usable as a `commit-msg` hook)

Exits 1 naming each commit and what is wrong with it, 2 when git cannot list the commits. Older history, from
before the rule, is not judged: the default range starts after the recorded base commit. Stdlib only.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

MAX_SUBJECT = 72
BASE_FILE = Path(__file__).with_name("commit_msg_base.txt")


def problems(message: str) -> list[str]:
    """What breaks the rule in one message (git's comment lines already removed); empty when it is fine."""
    lines = message.rstrip("\n").split("\n")
    subject = lines[0].rstrip()
    found = []
    if not subject.strip():
        found.append("empty subject")
    if len(subject) > MAX_SUBJECT:
        found.append(f"subject is {len(subject)} characters (at most {MAX_SUBJECT})")
    if len(lines) > 1 and lines[1].strip():
        found.append("no blank line between the subject and the body")
    return found


def commits(base: str, repo: Path) -> list[tuple[str, str]]:
    """(hash, message) of every commit of HEAD that is not in `base`, oldest first."""
    listed = subprocess.run(["git", "rev-list", "--reverse", f"{base}..HEAD"], cwd=repo, capture_output=True,
                            text=True, check=True).stdout.split()
    return [(sha, subprocess.run(["git", "log", "-1", "--format=%B", sha], cwd=repo, capture_output=True, text=True,
                                 check=True).stdout) for sha in listed]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("base", nargs="?", help="judge the commits of HEAD not in this ref (default: the recorded "
                                                "base commit)")
    parser.add_argument("--file", type=Path, help="judge this one message file instead")
    parser.add_argument("--repo", type=Path, default=Path.cwd(), help="the repository (default: here)")
    args = parser.parse_args(argv)
    if args.file is not None:
        text = "\n".join(line for line in args.file.read_text(encoding="utf-8").split("\n")
                         if not line.startswith("#"))
        found = problems(text)
        for problem in found:
            print(f"{args.file}: {problem}", file=sys.stderr)
        return 1 if found else 0
    base = args.base or BASE_FILE.read_text(encoding="utf-8").split()[0]
    try:
        judged = commits(base, args.repo)
    except (subprocess.CalledProcessError, FileNotFoundError) as exc:
        print(f"cannot list the commits after {base} (a shallow clone, or an unknown ref?): {exc}", file=sys.stderr)
        return 2
    bad = [(sha, message, found) for sha, message in judged if (found := problems(message))]
    for sha, message, found in bad:
        print(f"{sha[:10]} {message.split(chr(10), 1)[0][:60]!r}: {'; '.join(found)}", file=sys.stderr)
    print(f"{len(judged) - len(bad)} of {len(judged)} commit message(s) after {base[:10]} keep the rule")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
