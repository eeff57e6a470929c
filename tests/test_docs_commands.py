"""Every command the docs show does what they say.

Each ```sh block of README.md and docs/*.md is run, line by line and in order, by bash in a
scratch repository (one per document, so a document may build on its own earlier blocks). A
line's trailing comment may say ``exit N``; otherwise it must exit 0. Blocks meant as pictures
rather than commands (a synopsis with placeholders, a hook's configuration) are written as
```text. Installing (``python3 -m venv``, ``pip install``) is left to .ci/run, which does it for
real.

The scratch repository is what the docs assume of "your repository": a branch ``main`` with a
commit, a branch ``feature`` with one more commit, the remote-tracking branch ``origin/release``,
and a unified diff ``change.diff`` (committed, so not itself a change).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import GitRepo

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.DOTALL | re.MULTILINE)
EXIT = re.compile(r"#.*?\bexit (\d+)")
INSTALLING = re.compile(r"^\s*(python3 -m venv|pip install)\b")
CHANGE = "--- a/lib.py\n+++ b/lib.py\n@@ -1 +1,2 @@\n x = 1\n+y = 2\n"


def commands(document: Path) -> list[tuple[int, str, int]]:
    """(line number, command, expected exit code) of every command in the document's sh blocks."""
    text = document.read_text(encoding="utf-8")
    found = []
    for block in BLOCK.finditer(text):
        if block.group(1) != "sh":
            continue
        first = text.count("\n", 0, block.start(2)) + 1
        for offset, line in enumerate(block.group(2).splitlines()):
            command = re.sub(r"\s+#.*$", "", line).strip()
            if not command or command.startswith("#") or INSTALLING.match(command):
                continue
            expected = EXIT.search(line)
            found.append((first + offset, command, int(expected.group(1)) if expected else 0))
    return found


def script(document: Path) -> str:
    lines = ["set -u"]
    for number, command, expected in commands(document):
        lines += [command,
                  f'rc=$?; if [ "$rc" != "{expected}" ]; then '
                  f'echo "{document.name}:{number}: exit $rc, the docs say {expected}: {command!r}" >&2; exit 99; fi']
    return "\n".join(lines) + "\n"


LOCAL_INSTALL = re.compile(r"^python3 -m venv \.venv && \.venv/bin/pip install (?:\.|-e \"\.\[test\]\")(?: &&|$)")


def test_every_install_line_is_run_for_real_or_marked_not_runnable_offline() -> None:
    """The lines this test skips: the repository's own install (which .ci/run does for real, from
    the clone), or one that says it needs the network. Nothing else is left untried."""
    unmarked = []
    for document in DOCUMENTS:
        text = document.read_text(encoding="utf-8")
        for block in BLOCK.finditer(text):
            if block.group(1) != "sh":
                continue
            for line in block.group(2).splitlines():
                command = re.sub(r"\s+#.*$", "", line).strip()
                if INSTALLING.match(command) and not LOCAL_INSTALL.match(command) \
                        and "not runnable offline" not in line:
                    unmarked.append(f"{document.name}: {line.strip()}")
    assert not unmarked


@pytest.fixture
def your_repository(repo: GitRepo, tmp_path: Path) -> GitRepo:
    repo.write("lib.py", "x = 1\n")
    repo.write("change.diff", CHANGE)
    repo.commit("library")
    repo.git("update-ref", "refs/remotes/origin/release", "HEAD")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("lib.py", "x = 1\ny = 2\n")
    repo.commit("a feature")
    repo.git("checkout", "-q", "main")
    return repo


@pytest.mark.parametrize("document", [d for d in DOCUMENTS if commands(d)], ids=lambda d: d.name)
def test_every_documented_command_exits_as_documented(document: Path, your_repository: GitRepo) -> None:
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])}
    for name in ("CI", "PRE_COMMIT_FROM_REF", "PRE_COMMIT_TO_REF", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        env.pop(name, None)
    result = subprocess.run(["bash", "--noprofile", "--norc"], input=script(document), cwd=your_repository.root,
                            env=env, capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr[-3000:]


def test_the_readme_shows_its_commands() -> None:
    assert len(commands(ROOT / "README.md")) >= 15
