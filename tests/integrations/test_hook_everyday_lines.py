"""Everyday agent lines a user trial saw denied: a find that only narrows with a negation, a
line that mentions a waiver without writing one into a file, a rewrite that keeps a file's
waivers, and cleans that leave the protected paths alone. Each is allowed; the spellings that
do reach a protected path or write a waiver stay denied."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import GitRepo
from tests.integrations.test_hooks import answer, bash, hook


def _protected(repo: GitRepo) -> None:
    repo.write(".claude/settings.json", "{}")
    repo.write(".review-gate/review-rules.json", "{}")
    repo.write("src/app/core.py", "old_name = 1\n")
    repo.commit("the hooks")


def _denied(result: Any) -> str:
    decision = answer(result)["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny", decision
    return str(decision["permissionDecisionReason"])


@pytest.mark.parametrize("command", [
    "find . -name '*.pyc' -not -path './.venv/*' -delete",
    "find . -name '*.py' -not -path './.venv/*' -exec sed -i 's/old_name/new_name/g' {} +",
    "find . -name '*.py' ! -path './.venv/*' -exec sed -i 's/a/b/g' {} +",
    "find . -name '*.js.map' -not -path './node_modules/*' -delete",
    "find . -name '*.json' -path './build/*' -delete",
])
def test_a_find_whose_negation_only_narrows_it_is_allowed(cli: Any, repo: GitRepo, command: str) -> None:
    _protected(repo)
    assert hook(cli, bash(repo, command)).out == "", command


@pytest.mark.parametrize("command", [
    "find . -name '*.json' -not -path './build/*' -delete",
    "find . -not -name '*.py' -delete",
    "find . -name '*.pyc' -o -not -path './.venv/*' -delete",
    "find . \\( -name '*.pyc' -o -name '*.json' \\) -delete",
    "find . -name 'settings.json' -path './.claude/*' -delete",
])
def test_a_find_that_may_still_reach_a_protected_file_is_denied(cli: Any, repo: GitRepo, command: str) -> None:
    _protected(repo)
    _denied(hook(cli, bash(repo, command)))


LEGACY = ("import requests\n\n\ndef fetch(url):\n"
          "    return requests.get(url, verify=False)  # nosec B501 test server has self-signed cert\n")


@pytest.mark.parametrize("command", [
    "grep -rn '# nosec B501' src/", "git grep -n '# noqa: S101'", "git log -S '# nosec B501' --oneline",
    "git commit -am 'Drop the # nosec B501 waiver: verify TLS now'",
    "sed -i 's/  # nosec B501 test server has self-signed cert//' src/app/legacy.py",
    "sed -i 's/verify=False)  # nosec.*/verify=True)/' src/app/legacy.py",
    "grep -c '# nosec' src/app/legacy.py | wc -l",
])
def test_a_line_that_mentions_a_waiver_without_writing_one_is_allowed(cli: Any, repo: GitRepo, command: str) -> None:
    repo.write("src/app/legacy.py", LEGACY)
    repo.commit("legacy")
    assert hook(cli, bash(repo, command)).out == "", command


@pytest.mark.parametrize("command", [
    "echo 'x = 1  # nosec B501' | tee -a src/app/legacy.py",
    "{ echo 'x = 1  # nosec B501'; } >> src/app/legacy.py",
    "cat >> src/app/legacy.py <<'EOF'\nx = 1  # nosec B501\nEOF",
    "grep -rn nosec src/ && echo 'y = 2  # noqa: S101' >> src/app/legacy.py",
    "git commit -am 'msg' && python3 - <<'EOF'\nopen('a.py', 'a').write('x = 1  # nosec B501')\nEOF",
])
def test_a_line_that_writes_a_waiver_beside_quiet_commands_is_denied(cli: Any, repo: GitRepo, command: str) -> None:
    repo.write("src/app/legacy.py", "x = 0\n")
    repo.commit("legacy")
    assert "inline waiver" in _denied(hook(cli, bash(repo, command))), command


def test_a_here_document_that_rewrites_a_file_keeping_its_waivers_is_allowed(cli: Any, repo: GitRepo) -> None:
    repo.write("src/app/legacy.py", LEGACY)
    repo.commit("legacy")
    keep = f"cat > src/app/legacy.py <<'EOF'\n{LEGACY}\n\ndef other():\n    return 2\nEOF"
    assert hook(cli, bash(repo, keep)).out == ""
    add = f"cat > src/app/legacy.py <<'EOF'\n{LEGACY}x = eval(y)  # noqa: S307\nEOF"
    assert "# noqa: S307" in _denied(hook(cli, bash(repo, add)))
    fresh = f"cat <<'EOF' > src/app/new.py\n{LEGACY}EOF"
    assert "nosec" in _denied(hook(cli, bash(repo, fresh)))
    # the here-document ends at its first delimiter line: what follows is a command, not the file
    smuggled = f"cat > src/app/legacy.py <<'EOF'\n{LEGACY}EOF\necho '# nosec B501' >> src/app/b.py\nEOF"
    _denied(hook(cli, bash(repo, smuggled)))
