"""Host reviews through the real CLI: ``review-gate --llm host`` writes each llm request as a review
task, ``review-gate collect RUN --answer TASK FILE`` checks and keeps an answer, ``collect RUN``
decides, with answers valid, malformed, out of scope, late and missing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from review_gate.outputs import FORMATS
from tests.conftest import make_diff
from tests.llm.conftest import KEY, llm_agent, write_config
from tests.llm.server import LlmServer
from tests.scale.helpers import DIFF, PATTERN_AGENT, PATTERN_RULE
from tests.state.helpers import query, state_db

HOST = "reviewed by: host sub-agent"


@pytest.fixture(autouse=True)
def local(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a developer's machine (not CI), with no provider key set."""
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("TEST_LLM_KEY", raising=False)


def host_config(tmp_path: Path, server: LlmServer, *, required: bool = False, **settings: Any) -> Path:
    """An optional llm agent (as the built-in ones are) and a pattern agent."""
    return write_config(tmp_path, [llm_agent("reviewer", server, required=required), PATTERN_AGENT],
                        rules=[PATTERN_RULE], **settings)


def start(cli: Any, cfg: Path, diff: str = DIFF, *extra: str) -> tuple[Any, str, list[dict[str, Any]]]:
    """``--llm host``: the run id and its tasks, read from the run's directory."""
    result = cli("--config", str(cfg), "--diff", "-", "--llm", "host", *extra, stdin=diff.encode())
    assert result.code == 3, (result.out, result.err)  # nothing decided yet
    run_id = result.out.split()[1]
    directory = next(Path(line.split(" in ")[-1].strip().rstrip("/")) for line in result.out.splitlines()
                     if line.startswith(f"run {run_id} waits"))
    tasks = [json.loads(p.read_text()) for p in sorted(directory.glob("*.json"))]
    return result, run_id, tasks


def finding(file: str, line: int, severity: str = "critical", message: str = "user input reaches eval") -> dict:
    return {"severity": severity, "message": message, "file": file, "line": line, "end_line": line,
            "rule_id": None, "category": "injection", "recommendation": "parse it instead", "confidence": 0.9}


def answer(tmp_path: Path, name: str, data: Any) -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return str(path)


def collect(cli: Any, cfg: Path, run_id: str, *extra: str) -> tuple[Any, dict[str, Any] | None]:
    result = cli("collect", run_id, "--config", str(cfg), *extra, "--format", "json")
    return result, (json.loads(result.out) if result.out.strip().startswith("{") else None)


def test_each_request_is_a_task_exactly_as_the_provider_would_get_it(cli, server: LlmServer, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = host_config(tmp_path, server)
    result, run_id, [task] = start(cli, cfg)
    assert server.requests == []  # nothing was sent anywhere
    assert task["run_id"] == run_id and task["agents"] == ["reviewer"] and task["reviewed_by"] == "host sub-agent"
    assert sorted(task["files"]) == ["app/one.py", "app/three.py", "app/two.py"]
    assert task["answer_schema"]["required"] == ["findings"]
    assert f"review-gate collect {run_id} --answer TASK FILE" in result.out
    assert "ran now: patterns" in result.out
    # The same change reviewed live, with the key: the provider gets the very same messages.
    monkeypatch.setenv("TEST_LLM_KEY", KEY)
    live = cli("--config", str(cfg), "--diff", "-", "--no-cache", "--format", "json", stdin=DIFF.encode())
    assert live.code == 1, live.err
    [sent] = server.requests
    assert sent.body["messages"] == task["messages"]
    assert sent.body["response_format"]["json_schema"]["schema"] == task["answer_schema"]


def test_a_valid_answer_adds_its_findings_and_every_format_says_who_reviewed(cli, server: LlmServer,
                                                                             tmp_path: Path) -> None:
    cfg = host_config(tmp_path, server)
    _, run_id, [task] = start(cli, cfg)
    taken = cli("collect", run_id, "--config", str(cfg), "--answer", task["task"],
                answer(tmp_path, "good", {"findings": [finding("app/two.py", 1)]}))
    # the last task answered: the run is decided at once
    assert taken.code == 1, taken.err
    assert f"task {task['task']} of run {run_id}: answer taken (1 finding(s))" in taken.out
    assert HOST in taken.out
    report = cli("show", run_id, "--format", "json", "--config", str(cfg)).json()
    reviewer = next(a for a in report["agents"] if a["id"] == "reviewer")
    assert reviewer["status"] == "completed" and reviewer["reviewed_by"] == "host sub-agent"
    assert report["decision"] == "fail"  # the host's critical, beside the pattern agent's major
    assert {(f["agent"], f["severity"]) for f in report["findings"]} == {("reviewer", "critical"),
                                                                        ("patterns", "major")}
    for fmt in ("text", "json", "markdown", "sarif", "github", "agent", "meta", "gitlab"):
        assert fmt in FORMATS
        shown = cli("show", run_id, "--config", str(cfg), "--format", fmt)
        assert "host sub-agent" in shown.out, fmt


def test_a_malformed_answer_is_refused_in_one_line_and_the_task_stays_unanswered(cli, server: LlmServer,
                                                                                  tmp_path: Path) -> None:
    cfg = host_config(tmp_path, server)
    _, run_id, [task] = start(cli, cfg)
    for name, data in (("prose", "Looks good to me!"),
                       ("partial", {"findings": [{"severity": "major", "message": "x"}]}),
                       ("badseverity", {"findings": [{**finding("app/one.py", 1), "severity": "blocker"}]})):
        refused = cli("collect", run_id, "--config", str(cfg), "--answer", task["task"], answer(tmp_path, name, data))
        assert refused.code == 2, name
        first = refused.err.splitlines()[0]
        assert first.startswith(f"review-gate: error: task {task['task']} of run {run_id}: "), first
        assert "the task stays unanswered" in first
        assert "Traceback" not in refused.err
    listed = cli("collect", run_id, "--config", str(cfg), "--list")
    assert f"{task['task']}: waiting" in listed.out


def test_an_answer_naming_a_file_outside_the_task_is_refused(cli, server: LlmServer, tmp_path: Path) -> None:
    cfg = host_config(tmp_path, server)
    _, run_id, [task] = start(cli, cfg)
    refused = cli("collect", run_id, "--config", str(cfg), "--answer", task["task"],
                  answer(tmp_path, "outside", {"findings": [finding("app/one.py", 1), finding("secrets.py", 3)]}))
    assert refused.code == 2
    assert "finding 2 names 'secrets.py', a file outside the task" in refused.err
    assert "waiting" in cli("collect", run_id, "--config", str(cfg), "--list").out


def test_an_answer_for_an_unknown_or_finished_run_is_refused(cli, server: LlmServer, tmp_path: Path) -> None:
    cfg = host_config(tmp_path, server)
    _, run_id, [task] = start(cli, cfg)
    good = answer(tmp_path, "good", {"findings": []})
    unknown = cli("collect", "20990101T000000Z-deadbeef", "--config", str(cfg), "--answer", task["task"], good)
    assert unknown.code == 2 and "no host review run '20990101T000000Z-deadbeef'" in unknown.err
    wrong_task = cli("collect", run_id, "--config", str(cfg), "--answer", "u9-c9", good)
    assert wrong_task.code == 2 and f"task 'u9-c9': run {run_id} has no such task" in wrong_task.err
    decided, _ = collect(cli, cfg, run_id)
    assert decided.code == 1  # the pattern agent's major; the optional reviewer did not run
    late = cli("collect", run_id, "--config", str(cfg), "--answer", task["task"], good)
    assert late.code == 2
    assert f"task {task['task']} of run {run_id}: the run is finished" in late.err
    again, report = collect(cli, cfg, run_id)
    assert "was collected already; nothing done" in again.err
    assert report is not None and next(a for a in report["agents"] if a["id"] == "reviewer")["status"] == "skipped"


def test_a_task_with_no_answer_is_a_reviewer_that_did_not_run(cli, server: LlmServer, tmp_path: Path) -> None:
    cfg = host_config(tmp_path, server)
    clean = make_diff("app/ok.py", ["total = 1"])
    _, run_id, [task] = start(cli, cfg, clean)
    result, report = collect(cli, cfg, run_id)
    assert report is not None
    assert f"1 task(s) had no answer ({task['task']})" in result.err
    reviewer = next(a for a in report["agents"] if a["id"] == "reviewer")
    assert reviewer["status"] == "skipped" and "no answer came back from the host" in reviewer["error"]
    assert reviewer["reviewed_by"] == "host sub-agent"
    assert report["metrics"]["agents_skipped"] == 1
    assert report["decision"] == "pass_with_warnings"  # never a pass
    assert query(state_db(), "SELECT DISTINCT status FROM review_pairs WHERE run_id = ? AND agent = 'reviewer'",
                 run_id) == [("missing",)]
    # a required reviewer that did not run makes the gate incomplete: it fails closed
    required = host_config(tmp_path / "required", server, required=True)
    _, run_id, _ = start(cli, required, clean)
    result, report = collect(cli, required, run_id)
    assert result.code == 3 and report is not None and report["decision"] == "incomplete"


def test_a_bad_answer_file_refuses_the_collect_and_nothing_of_the_run_is_lost(cli, server: LlmServer,
                                                                                tmp_path: Path) -> None:
    cfg = write_config(tmp_path, [llm_agent("reviewer", server, max_input_tokens=1200), PATTERN_AGENT],
                       rules=[PATTERN_RULE])
    big = "".join(make_diff(f"app/m{i}.py", [f"value_{i}_{j} = {j}  # {'x' * 60}" for j in range(30)])
                  for i in range(3))
    _, run_id, tasks = start(cli, cfg, big)
    assert len(tasks) >= 2  # the scope is split: one task a chunk
    *others, second = tasks
    first = others[0]
    for task in others:
        kept = cli("collect", run_id, "--config", str(cfg), "--answer", task["task"], answer(
            tmp_path, task["task"], {"findings": [finding(task["files"][0], 1, "warning", "a magic number")]}))
        assert kept.code == 0 and "still unanswered" in kept.out
    # The host wrote the next answer straight into its answer file, broken: collecting refuses it.
    Path(second["answer_file"]).write_text('{"findings": [{"severity": "major"}]}')
    refused, _ = collect(cli, cfg, run_id)
    assert refused.code == 2 and f"task {second['task']} of run {run_id}" in refused.err
    assert query(state_db(), "SELECT status FROM review_runs WHERE id = ?", run_id) == [("running",)]
    listed = cli("collect", run_id, "--config", str(cfg), "--list").out
    assert f"{first['task']}: answered" in listed
    # Fixed, the same run collects: the first answer is still there.
    Path(second["answer_file"]).write_text(json.dumps({"findings": []}))
    decided, report = collect(cli, cfg, run_id)
    assert report is not None and decided.code == 0, decided.err
    assert report["decision"] == "pass_with_warnings" and report["metrics"]["missing_inputs"] == 0
    assert sum(f["message"] == "a magic number" for f in report["findings"]) == len(others)


def test_in_ci_a_host_review_counts_as_skipped_unless_configured(cli, server: LlmServer, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = host_config(tmp_path, server)
    monkeypatch.setenv("CI", "true")
    result = cli("--config", str(cfg), "--diff", "-", "--llm", "host", "--format", "json", stdin=DIFF.encode())
    report = result.json()
    reviewer = next(a for a in report["agents"] if a["id"] == "reviewer")
    assert reviewer["status"] == "skipped" and "host_reviews" in reviewer["error"]
    assert reviewer.get("reviewed_by") is None and report["metrics"]["agents_skipped"] == 1
    monkeypatch.delenv("CI")
    flagged = cli("--config", str(cfg), "--diff", "-", "--llm", "host", "--ci", "--format", "json",
                  stdin=DIFF.encode())
    assert "host_reviews" in next(a for a in flagged.json()["agents"] if a["id"] == "reviewer")["error"]
    counted = host_config(tmp_path / "everywhere", server, host_reviews="everywhere")
    start(cli, counted, DIFF, "--ci")  # tasks written: the configuration counts them in CI too


def test_host_reviews_never_refuses_the_mode(cli, server: LlmServer, tmp_path: Path) -> None:
    cfg = host_config(tmp_path, server, host_reviews="never")
    result = cli("--config", str(cfg), "--diff", "-", "--llm", "host", stdin=DIFF.encode())
    assert result.code == 2 and "host_reviews: never" in result.err


def test_answered_files_are_not_asked_again_and_stay_the_hosts(cli, server: LlmServer, tmp_path: Path) -> None:
    cfg = host_config(tmp_path, server)
    _, run_id, [task] = start(cli, cfg)
    cli("collect", run_id, "--config", str(cfg), "--answer", task["task"],
        answer(tmp_path, "good", {"findings": [finding("app/two.py", 1)]}))
    again = cli("--config", str(cfg), "--diff", "-", "--llm", "host", "--format", "json", stdin=DIFF.encode())
    assert again.code == 1 and "nothing to ask the host" in again.err
    reviewer = next(a for a in again.json()["agents"] if a["id"] == "reviewer")
    assert reviewer["status"] == "cached" and reviewer["reviewed_by"] == "host sub-agent"
    assert any(f["agent"] == "reviewer" and f["severity"] == "critical" for f in again.json()["findings"])


def test_a_task_file_validates_against_its_published_schema(cli, server: LlmServer, tmp_path: Path) -> None:
    from jsonschema import Draft202012Validator

    from review_gate.models.schema_export import SCHEMA_DIR

    cfg = host_config(tmp_path, server)
    _, _, [task] = start(cli, cfg)
    schema = json.loads((SCHEMA_DIR / "host-task.schema.json").read_text())
    assert list(Draft202012Validator(schema).iter_errors(task)) == []


def test_a_host_info_on_the_line_a_pattern_rule_flags_major_leaves_the_major(cli, server: LlmServer,
                                                                              tmp_path: Path) -> None:
    # issue 30: a host review only adds findings; a mild answer on the very line a pattern rule
    # flags cannot make that finding milder, nor waive it
    cfg = host_config(tmp_path, server)
    _, run_id, [task] = start(cli, cfg)
    mild = finding("app/one.py", 1, severity="info", message="this eval is fine, the input is trusted")
    taken = cli("collect", run_id, "--config", str(cfg), "--answer", task["task"],
                answer(tmp_path, "mild", {"findings": [mild]}))
    assert taken.code == 1, taken.err
    report = cli("show", run_id, "--format", "json", "--config", str(cfg)).json()
    assert report["decision"] == "needs_fixes"
    on_line = {(f["agent"], f["severity"]) for f in report["findings"] if (f["file"], f["line"]) == ("app/one.py", 1)}
    assert ("patterns", "major") in on_line
    assert all(w.get("rule_id") != "no-eval" for w in report.get("waived", []))
