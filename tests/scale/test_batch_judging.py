"""A batch run (and a host run, which is one) is decided by the runner's own steps: the same
change reviewed live and through ``batch submit``/``batch collect``, with the same answers from
the model, gives the same findings, the same waived list (with each one's kind) and the same
decision. Collect used to judge the batched answers apart, with no repository, and threw away
the pre-existing findings it found: a model's finding on an old line vanished from the report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GitRepo
from tests.llm.conftest import KEY, llm_agent, write_config
from tests.llm.server import LlmServer, Recorded, Step
from tests.scale.helpers import PATTERN_AGENT, PATTERN_RULE, collect

# A rule the llm reviewer reports by id; its pattern agent reviews no file of the change.
# Its pattern says where it stood in the base, so a finding of it on an old line is pre-existing,
# whoever reports it.
SPARE_AGENT = {"id": "spare-patterns", "name": "spare patterns", "description": "vendor code only", "kind": "pattern"}
SPARE_POLICY = {"id": "vendor", "description": "vendor code", "trigger": {"type": "paths", "paths": ["vendor/**"]},
                "dispatch": ["spare-patterns"]}
EXEC_RULE = {"id": "llm-exec", "name": "no exec", "severity": "major", "agent": "spare-patterns",
             "category": "security", "description": "exec runs arbitrary code", "detection": "exec(",
             "recommendation": "call the function", "pattern": r"\bexec\("}

BASE = "def run(y, s):\n    x = eval(y)\n    exec(s)\n    return x\n"
# eval and exec only indented (pre-existing), a new eval (counted), a new eval waived inline
HEAD = ("def run(y, s):\n    if y:\n        x = eval(y)\n        exec(s)\n    return x\n\n\n"
        "def more(q, v):\n    z = eval(q)\n    w = eval(v)  # review-gate: ignore[no-eval] v is a constant table\n"
        "    return z, w\n")


def _answers(request: Recorded) -> Step:
    """The model's answer to every request: the old exec line (its rule, pre-existing) and one
    finding of its own on the new function."""
    return Step(findings=[
        {"severity": "major", "message": "exec runs what the caller sends", "file": "app/jobs.py", "line": 4,
         "end_line": 4, "rule_id": "llm-exec", "category": "security", "recommendation": "call the function",
         "confidence": 0.9},
        {"severity": "warning", "message": "more returns an unchecked value", "file": "app/jobs.py", "line": 11,
         "end_line": 11, "rule_id": None, "category": "correctness", "recommendation": "check it",
         "confidence": 0.8},
    ])


def _change(repo: GitRepo) -> None:
    repo.write("app/jobs.py", BASE)
    repo.commit("jobs")
    repo.branch("feature")
    repo.write("app/jobs.py", HEAD)
    # the gate's own file, broken by the change: a finding of the gate itself
    repo.write(".review-gate/acceptances.json", json.dumps({"version": 1, "acceptances": [{"fingerprint": "zz"}]}))
    repo.commit("jobs run only when asked, and more")


def _config(tmp_path: Path, server: LlmServer) -> Path:
    """An optional llm reviewer (as the built-in ones are) and the pattern agent."""
    cfg = write_config(tmp_path, [llm_agent("reviewer-openai", server, required=False), PATTERN_AGENT],
                       rules=[PATTERN_RULE, EXEC_RULE])
    agents = json.loads((cfg / "review-agents.json").read_text(encoding="utf-8"))
    agents["agents"].append(SPARE_AGENT)
    (cfg / "review-agents.json").write_text(json.dumps(agents), encoding="utf-8")
    composition = json.loads((cfg / "review-composition.json").read_text(encoding="utf-8"))
    composition["policies"].append(SPARE_POLICY)
    (cfg / "review-composition.json").write_text(json.dumps(composition), encoding="utf-8")
    return cfg


def _live(cli: Any, cfg: Path) -> tuple[Any, dict[str, Any]]:
    """The change reviewed live, the model asked over HTTP."""
    live = cli("--base", "main", "--config", str(cfg), "--format", "json", "--no-state")
    assert live.out, live.err
    report = live.json()
    kinds = {(f["agent"], f["line"], f["waived_kind"]) for f in report["waived"]}
    # what it leaves out, and why: the old eval and the model's old exec (pre-existing), the eval
    # its comment waives (inline); the gate's own finding and the new eval count
    assert ("patterns", 3, "preexisting") in kinds and ("reviewer-openai", 4, "preexisting") in kinds
    assert ("patterns", 10, "inline") in kinds
    counted = {(f["agent"], f["file"], f["line"]) for f in report["findings"]}
    assert ("patterns", "app/jobs.py", 9) in counted and ("reviewer-openai", "app/jobs.py", 11) in counted
    assert ("review-gate", ".review-gate/acceptances.json", None) in counted
    assert report["decision"] == "needs_fixes" and live.code == 1
    return live, report


def _seen(report: dict[str, Any]) -> dict[str, Any]:
    return {
        "findings": sorted((f["fingerprint"], f["agent"], f["file"], f["line"], f["severity"])
                           for f in report["findings"]),
        "waived": sorted((f["fingerprint"], f["agent"], f["line"], f["waived_kind"], f["waived"])
                         for f in report["waived"]),
        "decision": report["decision"],
    }


def test_a_batch_run_reports_what_a_live_review_with_the_same_answers_reports(
        cli, server: LlmServer, repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_LLM_KEY", KEY)
    server.default = _answers
    cfg = _config(tmp_path, server)
    _change(repo)
    live, expected = _live(cli, cfg)

    sent = cli("batch", "submit", "--base", "main", "--config", str(cfg), "--format", "json")
    assert sent.code == 0 and json.loads(sent.out)["requests"] == 1, sent.out + sent.err
    result, report = collect(cli, cfg)
    assert report is not None, result.err
    assert _seen(report) == _seen(expected) and result.code == live.code


def test_a_host_run_reports_what_a_live_review_with_the_same_answers_reports(
        cli, server: LlmServer, repo: GitRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_LLM_KEY", KEY)
    server.default = _answers
    cfg = _config(tmp_path, server)
    _change(repo)
    live, expected = _live(cli, cfg)

    # on a developer's machine with no key: the coding agent's host gives the same answer
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("TEST_LLM_KEY", raising=False)
    started = cli("--base", "main", "--config", str(cfg), "--llm", "host", "--no-cache")
    assert started.code == 3, started.out + started.err
    run_id = started.out.split()[1]
    directory = next(Path(line.split(" in ")[-1].strip().rstrip("/")) for line in started.out.splitlines()
                     if line.startswith(f"run {run_id} waits"))
    [task] = [json.loads(p.read_text()) for p in sorted(directory.glob("*.json"))]
    answer = tmp_path / "answer.json"
    answer.write_text(json.dumps({"findings": _answers(Recorded("", {}, {})).findings}), encoding="utf-8")
    taken = cli("collect", run_id, "--config", str(cfg), "--answer", task["task"], str(answer))
    assert taken.code == live.code, taken.out + taken.err
    report = cli("show", run_id, "--format", "json", "--config", str(cfg)).json()
    assert _seen(report) == _seen(expected)
