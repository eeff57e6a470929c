"""A coding agent's Stop hook honours only the inline waivers the last commit holds.

A trial: the PreToolUse hook denied an Edit or a `sed -i` that adds `# noqa: S501`, but let
`python3 -c "...replace(...)"` and `cp /tmp/prepared.py src/bad.py` through, and the Stop review
then honoured the waiver the agent had just written: the agent stopped on its own waiver. A
waiver a person committed on the branch still counts."""

from __future__ import annotations

from typing import Any

from tests.conftest import GitRepo
from tests.integrations.test_hooks import answer, hook, stop

INSECURE = "import requests\nr = requests.get(url, verify=False, timeout=5)\n"
WAIVED = "import requests\nr = requests.get(url, verify=False, timeout=5)  # noqa: S501 pinned test host\n"


def test_a_waiver_written_since_the_last_commit_does_not_let_the_agent_stop(cli: Any, repo: GitRepo) -> None:
    repo.write("app.py", "import requests\n")
    repo.commit("start")
    repo.write("app.py", WAIVED)  # as `python3 -c` or `cp` would leave it, past the PreToolUse hook
    blocked = answer(hook(cli, stop(repo)))
    assert blocked.get("decision") == "block", blocked
    assert "sec-tls-verify-01" in blocked["reason"]


def test_a_staged_waiver_is_not_committed_either(cli: Any, repo: GitRepo) -> None:
    repo.write("app.py", "import requests\n")
    repo.commit("start")
    repo.write("app.py", WAIVED)
    repo.git("add", "app.py")
    blocked = answer(hook(cli, stop(repo)))
    assert blocked.get("decision") == "block", blocked


def test_a_waiver_a_person_committed_on_the_branch_still_counts(cli: Any, repo: GitRepo) -> None:
    repo.write("app.py", "import requests\n")
    repo.commit("start")
    repo.branch("feature")
    repo.write("app.py", WAIVED)
    repo.commit("a person's reviewed waiver")
    repo.write("calc.py", "def add(a, b):\n    return a + b\n")  # the agent's own work since
    result = hook(cli, stop(repo))
    assert result.code == 0 and result.out == "", result.out


def test_without_the_waiver_the_stop_is_blocked_as_before(cli: Any, repo: GitRepo) -> None:
    repo.write("app.py", INSECURE)
    assert answer(hook(cli, stop(repo))).get("decision") == "block"
