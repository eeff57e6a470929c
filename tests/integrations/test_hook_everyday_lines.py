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


TIMEUTIL = ('"""Time helpers."""\nimport time\n\n\ndef to_seconds(ms):\n    # ms is not seconds; divide\n'
            '    return ms / 1000\n\n\ndef is_nonsecure(url):\n    return url.startswith("http://")\n')


@pytest.mark.parametrize("command", [
    "sed -i '1i # -*- coding: utf-8 -*-' src/app/timeutil.py",
    "sed -i '2a # end of helpers' src/app/timeutil.py",
    "sed -i 's/time/clock/;1i # -*- coding: utf-8 -*-' src/app/timeutil.py",
    "sed -i 's/x/\\U&/' src/app/timeutil.py",
    "sed -i 's/x/\\U&/' src/app/names.py",
    "perl -pi -e 's{ms / 1000}{ms / 1e3}g' src/app/timeutil.py",
    "perl -pi -e 's/user/\\@user \\$x/' src/app/timeutil.py",
])
def test_a_substitution_on_a_file_without_a_waiver_nearby_is_allowed(cli: Any, repo: GitRepo, command: str) -> None:
    """`not seconds` is no `nosec` spelt loosely, naming the package `review_gate` outside a
    comment is no waiver; sed's a/i/c and perl's s{}{} with escaped sigils are computed."""
    repo.write("src/app/timeutil.py", TIMEUTIL)
    repo.write("src/app/names.py", "from review_gate.cli import main\nNAME = 'review_gate'\n")
    repo.commit("helpers")
    assert hook(cli, bash(repo, command)).out == "", command


@pytest.mark.parametrize("command", [
    "sed -i '1i x = eval(y)  # nosec B307' src/app/timeutil.py",
    "sed -i '2a\\\nx = 1  # noqa: S101' src/app/timeutil.py",
    "perl -pi -e 's{ms / 1000}{ms / 1000  # nosec B101}' src/app/timeutil.py",
    "perl -pi -e 's{divide}{divide}; print \"# nosec\"' src/app/timeutil.py",
    "sed -i 's/x/\\U&/' src/app/near.py",
    "sed -i 's/loads(b)$/loads(b)  \\o043 nosec B301/' src/app/timeutil.py",
    "sed -i 's/loads(b)$/loads(b)  \\d035 nosec B301/' src/app/timeutil.py",
    "perl -pi -e 's/divide/divide \\N{U+23} nosec B101/' src/app/timeutil.py",
    "perl -pi -e 's/divide/divide \\N{NUMBER SIGN} nosec B101/' src/app/timeutil.py",
    "perl -pi -e 's/divide/divide \\x{23} nosec B101/' src/app/timeutil.py",
    "sed -i 's/loads(b)$/loads(b)  \\o043 nosec B301/' src/app/missing.py",
])
def test_a_waiver_added_by_insertion_escapes_or_near_an_uncomputed_one_is_denied(cli: Any, repo: GitRepo,
                                                                                 command: str) -> None:
    repo.write("src/app/timeutil.py", TIMEUTIL + "\n\ndef load(b):\n    return pickle.loads(b)\n")
    repo.write("src/app/near.py", "x = 1  # nosXec B501\n")
    repo.commit("helpers")
    _denied(hook(cli, bash(repo, command)))


def _built(repo: GitRepo) -> None:
    _protected(repo)
    repo.write("build/.cache/x", "1")
    repo.write("build/out.js", "1")
    repo.write(".review-gate/notes.txt", "untracked, inside the configuration")


@pytest.mark.parametrize("command", [
    "git clean -fdx -e .review-gate -e .claude", "git clean -ndx -e .review-gate",
    "cd build && rm -rf .[!.]* *", "cd build && rm -rf .[!.]* * && ls | wc -l",
])
def test_a_clean_that_keeps_the_protected_paths_is_allowed(cli: Any, repo: GitRepo, command: str) -> None:
    _built(repo)
    assert hook(cli, bash(repo, command)).out == "", command


@pytest.mark.parametrize("command", [
    "git clean -fdx", "git clean -fdx -e .claude", "git clean -fdx .review-gate",
    "cd build; rm -rf .[!.]* *", "cd build || rm -rf .[!.]*", "cd build && true; rm -rf .[!.]*",
    "cd missing && ls\nrm -rf .[!.]*", "cd build && cd .. && rm -rf .[!.]*", "cd build && rm -rf ../.review-gate",
])
def test_a_clean_that_may_take_a_protected_path_is_denied(cli: Any, repo: GitRepo, command: str) -> None:
    _built(repo)
    _denied(hook(cli, bash(repo, command)))
