"""What an llm reviewer is shown of a change (issue 9, item 6).

A deleted check is often the bug, and a hunk's three lines of context rarely hold the signature
the change sits in. The reviewer used to see "2 removed lines not shown" and no signature, so a
change that only removes an authorisation check looked harmless.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GitRepo
from tests.llm.conftest import KEY, llm_agent, write_config
from tests.llm.server import LlmServer, Step

VIEWS = '''\
import logging

log = logging.getLogger(__name__)


class AccountViews:
    """Account administration."""

    def __init__(self, store):
        self.store = store

    @requires_login
    def delete_account(self, request, user,
                       reason=None):
        """Delete an account; administrators only."""
        actor = request.user
        log.info("%s deletes %s", actor, user)
        if not actor.is_admin:
            raise PermissionError("administrators only")
        self.store.delete(user)
        log.info("deleted %s", user)
        return True
'''
CHECK = '        if not actor.is_admin:\n            raise PermissionError("administrators only")\n'


def test_a_deleted_check_and_its_enclosing_signature_reach_the_model(
        cli: Any, repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_LLM_KEY", KEY)
    repo.write("views.py", VIEWS)
    repo.commit("account views")
    repo.write("views.py", VIEWS.replace(CHECK, ""))  # the change under review: only a deletion
    with LlmServer() as server:
        cfg = write_config(tmp_path, [llm_agent("reviewer", server)])
        result = cli("--config", str(cfg), "--format", "json")
        report = json.loads(result.out)
        [request] = server.requests
    assert [a["status"] for a in report["agents"]] == ["completed"], result.err
    user = request.body["messages"][-1]["content"]
    assert "old 18 -         if not actor.is_admin:" in user
    assert 'old 19 -             raise PermissionError("administrators only")' in user
    assert "removed lines not shown" not in user
    # the signature and its decorator lie outside the hunk (lines 15-20)
    assert "    13       def delete_account(self, request, user," in user
    assert "    12       @requires_login" in user
    assert "     6   class AccountViews:" in user
    assert "old-file number" in request.prompt  # the answer guide says which numbers findings use


def test_a_finding_about_a_deleted_check_counts(cli: Any, repo: GitRepo, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The reviewer puts a finding about removed lines on the nearest new line, a context line:
    the default filter (findings on added lines) must still count it, or the gate passes a
    change that only deletes an authorisation check."""
    monkeypatch.setenv("TEST_LLM_KEY", KEY)
    repo.write("views.py", VIEWS)
    repo.commit("account views")
    repo.write("views.py", VIEWS.replace(CHECK, ""))
    with LlmServer() as server:
        server.default = Step(findings=[{"severity": "critical", "file": "views.py", "line": 18,
                                         "message": "the administrators-only check was deleted"}])
        cfg = write_config(tmp_path, [llm_agent("reviewer", server)])
        result = cli("--config", str(cfg), "--format", "json")
    report = json.loads(result.out)
    assert [f["message"] for f in report["findings"]] == ["the administrators-only check was deleted"]
    assert (result.code, report["decision"], report["coverage"]["findings_filtered"]) == (1, "fail", 0)
