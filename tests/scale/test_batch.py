"""Provider batch execution: submit plans the run and writes its pending pairs, collect
completes exactly those pairs once and decides the gate as a live run would."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GitRepo
from tests.llm.conftest import KEY, llm_agent, write_config
from tests.llm.server import LlmServer, every_file
from tests.scale.helpers import DIFF, PATTERN_AGENT, PATTERN_RULE, batch_config, collect, submit
from tests.state.helpers import query, state_db

PROVIDERS = ["openai", "anthropic"]


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_LLM_KEY", KEY)


def fingerprints(report: dict[str, Any]) -> list[tuple[str, str, int | None, str]]:
    return sorted((f["fingerprint"], f["file"], f["line"], f["severity"]) for f in report["findings"])


def calls(server: LlmServer, verb: str) -> list[str]:
    return [c.path for c in server.batches.calls if c.path.startswith(verb + " ")]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_batch_round_trip_gives_the_live_runs_report(cli, server: LlmServer, tmp_path: Path, provider: str) -> None:
    server.default = every_file
    server.batches.script.polls = 1
    cfg = batch_config(tmp_path, server, providers=(provider,))
    result, sent = submit(cli, cfg)
    assert result.code == 0 and sent["finished"] is False
    assert sent["local_agents"] == ["patterns"] and sent["requests"] == 1
    [batch] = sent["batches"]
    run_id = sent["run_id"]
    # Before execution: the run and every requested pair exist; the local agent's are complete.
    pairs = dict(query(state_db(), "SELECT agent || ':' || status, COUNT(*) FROM review_pairs WHERE run_id = ? "
                                   "GROUP BY agent, status", run_id))
    assert pairs == {f"reviewer-{provider}:pending": 4, "patterns:completed": 4}  # 3 files + the scope pair
    assert query(state_db(), "SELECT status, runner FROM review_runs WHERE id = ?", run_id) == [("running", "batch")]
    assert query(state_db(), "SELECT batch_id, provider FROM review_batches WHERE run_id = ?", run_id) == [
        (batch["batch_id"], provider)]
    assert server.requests == []  # nothing asked interactively, and the batch has not run yet

    status = cli("batch", "status", "--config", str(cfg), "--format", "json")
    assert status.code == 0 and json.loads(status.out)["batches"][0]["status"] == "in_progress"
    result, report = collect(cli, cfg)
    assert report is not None and result.code == 1 and report["run_id"] == run_id
    assert report["decision"] == "needs_fixes"
    assert {a["id"]: a["status"] for a in report["agents"]} == {"patterns": "completed",
                                                                f"reviewer-{provider}": "completed"}
    assert query(state_db(), "SELECT DISTINCT status FROM review_pairs WHERE run_id = ?", run_id) == [("completed",)]
    assert query(state_db(), "SELECT status FROM review_runs WHERE id = ?", run_id) == [("completed",)]

    live = cli("--config", str(cfg), "--diff", "-", "--format", "json", "--no-state", stdin=DIFF.encode())
    assert fingerprints(json.loads(live.out)) == fingerprints(report)  # the same findings, the same fingerprints
    assert json.loads(live.out)["decision"] == report["decision"]


def test_collecting_twice_is_a_no_op_that_says_so(cli, server: LlmServer, tmp_path: Path) -> None:
    server.default = every_file
    cfg = batch_config(tmp_path, server)
    submit(cli, cfg)
    first, report = collect(cli, cfg)
    downloads = len(calls(server, "GET"))
    again, same = collect(cli, cfg)
    assert again.code == first.code == 1
    assert "collected already; nothing done" in again.err
    assert same == report
    assert len(calls(server, "GET")) == downloads  # nothing asked of the provider
    assert query(state_db(), "SELECT COUNT(*) FROM review_runs") == [(1,)]


def test_a_batch_that_has_not_ended_decides_nothing(cli, server: LlmServer, tmp_path: Path) -> None:
    server.batches.script.polls = 100
    cfg = batch_config(tmp_path, server)
    text = cli("batch", "submit", "--config", str(cfg), "--diff", "-", stdin=DIFF.encode())
    assert text.code == 0 and "1 request(s) submitted" in text.out and "at batch prices" in text.out
    run_id = text.out.split()[1].rstrip(":")
    assert f"review-gate batch collect {run_id}" in text.out
    status = cli("batch", "status", run_id[-8:], "--config", str(cfg))
    assert status.code == 0 and f"run {run_id}: submitted" in status.out and "in_progress" in status.out
    sent = {"run_id": run_id}
    result, report = collect(cli, cfg)
    assert result.code == 3 and report is None
    assert "still running" in result.err and "nothing was decided" in result.err
    assert query(state_db(), "SELECT COUNT(*) FROM review_pairs WHERE run_id = ? AND status = 'pending'",
                 sent["run_id"]) == [(4,)]
    history = cli("history", "--config", str(cfg))
    assert "submitted" in history.out


def test_collect_wait_checks_until_the_batch_ends(cli, server: LlmServer, tmp_path: Path) -> None:
    server.default = every_file
    server.batches.script.polls = 3
    cfg = batch_config(tmp_path, server)
    submit(cli, cfg)
    result, report = collect(cli, cfg, "--wait", "60", "--poll", "0.01")
    assert report is not None and result.code == 1


def test_a_batch_run_waiting_is_not_abandoned_by_other_runs(cli, server: LlmServer, tmp_path: Path) -> None:
    server.default = every_file
    cfg = batch_config(tmp_path, server)
    _, sent = submit(cli, cfg)
    other = write_config(tmp_path / "other", [PATTERN_AGENT], rules=[PATTERN_RULE])
    cli("--config", str(other), "--diff", "-", stdin=DIFF.encode())  # marks runs whose process is gone
    assert query(state_db(), "SELECT status FROM review_runs WHERE id = ?", sent["run_id"]) == [("running",)]
    _, report = collect(cli, cfg)
    assert report is not None and report["decision"] == "needs_fixes"


def test_batch_prices_are_half_the_interactive_ones(cli, server: LlmServer, tmp_path: Path) -> None:
    server.default = every_file
    cfg = batch_config(tmp_path, server)
    _, sent = submit(cli, cfg)
    assert sent["max_cost_usd"] == pytest.approx(sent["max_cost_interactive_usd"] / 2)
    _, report = collect(cli, cfg)
    assert report is not None
    agent = next(a for a in report["agents"] if a["id"] == "reviewer-openai")
    expected = (agent["tokens_in"] * 1.0 + agent["tokens_out"] * 4.0) / 1_000_000  # 2/8 per Mtok, halved
    assert agent["cost_usd"] == pytest.approx(expected, abs=1e-6)


def test_explicit_batch_prices_are_used(cli, server: LlmServer, tmp_path: Path) -> None:
    server.default = every_file
    cfg = batch_config(tmp_path, server, prices={"test-model": {
        "input_per_mtok": 2.0, "output_per_mtok": 8.0, "batch_input_per_mtok": 0.5, "batch_output_per_mtok": 1.0}})
    submit(cli, cfg)
    _, report = collect(cli, cfg)
    assert report is not None
    agent = next(a for a in report["agents"] if a["id"] == "reviewer-openai")
    assert agent["cost_usd"] == pytest.approx((agent["tokens_in"] * 0.5 + agent["tokens_out"]) / 1e6, abs=1e-6)


def test_a_second_submit_of_the_same_change_sends_nothing(cli, server: LlmServer, tmp_path: Path) -> None:
    server.default = every_file
    cfg = batch_config(tmp_path, server)
    submit(cli, cfg)
    _, first = collect(cli, cfg)
    created = len(calls(server, "POST"))
    result, sent = submit(cli, cfg)
    assert sent["finished"] is True and sent["batches"] == [] and sent["requests"] == 0
    assert len(calls(server, "POST")) == created  # no file uploaded, no batch created
    assert first is not None and result.code == first["exit_code"] == sent["exit_code"]


def test_packed_agents_share_requests_and_two_providers_get_two_batches(cli, server: LlmServer,
                                                                       tmp_path: Path) -> None:
    server.default = every_file
    agents = [llm_agent("first", server), llm_agent("second", server),
              llm_agent("claude", server, provider="anthropic")]
    cfg = write_config(tmp_path, agents)
    _, sent = submit(cli, cfg)
    assert sorted(b["provider"] for b in sent["batches"]) == ["anthropic", "openai"]
    assert sent["requests"] == 2  # first and second packed into one request; claude in its own
    _, report = collect(cli, cfg)
    assert report is not None
    per_agent = {a: sorted(f["file"] for f in report["findings"] if a in (f["agent"], *f["also_reported_by"]))
                 for a in ("first", "second", "claude")}
    assert per_agent == {a: ["app/one.py", "app/three.py", "app/two.py"] for a in per_agent}


def test_the_bundle_holds_the_requests_and_results_and_replays(cli, server: LlmServer, tmp_path: Path) -> None:
    server.default = every_file
    cfg = batch_config(tmp_path, server)
    bundle = tmp_path / "bundle"
    submit(cli, cfg, DIFF, "--bundle", str(bundle))
    _, report = collect(cli, cfg)
    assert report is not None
    [requests] = list((bundle / "batch").glob("requests-*.jsonl"))
    assert json.loads(requests.read_text().splitlines()[0])["url"] == "/v1/chat/completions"
    assert list((bundle / "batch").glob("results-*.jsonl")) and (bundle / "report.json").is_file()
    assert json.loads((bundle / "prompts" / "reviewer-openai.json").read_text())
    replay = cli("replay", str(bundle), "--config", str(cfg), "--format", "json")  # its instructions are there
    assert replay.code == report["exit_code"] and fingerprints(json.loads(replay.out)) == fingerprints(report)
    for path in [*bundle.rglob("*"), state_db()]:
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path


def test_a_sweep_can_be_submitted(cli, server: LlmServer, repo: GitRepo, tmp_path: Path) -> None:
    server.default = every_file
    repo.write("src/a.py", "a = 1\n")
    repo.commit("a file")
    cfg = batch_config(tmp_path, server)
    result = cli("batch", "submit", "--sweep", "src", "--config", str(cfg), "--format", "json")
    sent = json.loads(result.out)
    assert result.code == 0 and sent["requests"] == 1
    _, report = collect(cli, cfg)
    assert report is not None and report["source"].startswith("sweep of src")
    assert {f["file"] for f in report["findings"]} == {"src/a.py"}


def test_submit_flags_that_clash_are_usage_errors(cli, server: LlmServer, tmp_path: Path) -> None:
    cfg = batch_config(tmp_path, server)
    for args in (["some/path"], ["--sweep", "--staged"], ["--since", "HEAD"]):
        result = cli("batch", "submit", "--config", str(cfg), *args)
        assert result.code == 2 and "fix:" in result.err, args
    missing = cli("batch", "collect", "--config", str(cfg))
    assert missing.code == 2 and "no run state" in missing.err


def test_the_agent_table_counts_the_findings_a_collected_report_lists(cli, server: LlmServer, tmp_path: Path) -> None:
    """The report a batch collect decides (and `show` reads back) keeps no per-agent findings in
    its JSON: the table counts what the report lists for each agent, not an empty list."""
    server.default = every_file
    cfg = batch_config(tmp_path, server)
    submit(cli, cfg)
    collected = cli("batch", "collect", "--config", str(cfg), "--verbose")
    assert collected.code == 1, collected.err
    shown = cli("show", "last", "--config", str(cfg), "--verbose")
    for text in (collected.out, shown.out):
        assert "WARNING (3)" in text and "MAJOR (1)" in text
        rows = {line.split()[0]: line.split()[-1] for line in text.splitlines()
                if line.startswith(("patterns ", "reviewer-openai "))}
        assert rows == {"patterns": "1", "reviewer-openai": "3"}, text


def test_submit_names_the_agents_that_did_not_run_apart_from_those_that_ran(cli, server: LlmServer,
                                                                           tmp_path: Path) -> None:
    """An llm agent whose key is not set is skipped at submit: it did not 'run locally'."""
    unkeyed = llm_agent("reviewer-nokey", server, api_key_env="REVIEW_GATE_TEST_UNSET_KEY", required=False)
    cfg = write_config(tmp_path, [llm_agent("reviewer-openai", server), unkeyed, PATTERN_AGENT], rules=[PATTERN_RULE],
                       prices={"test-model": {"input_per_mtok": 2.0, "output_per_mtok": 8.0}})
    _, sent = submit(cli, cfg)
    assert "reviewer-nokey" not in sent["local_agents"]
    assert any(entry.startswith("reviewer-nokey (skipped") for entry in sent["not_run"])
    text = cli("batch", "submit", "--config", str(cfg), "--diff", "-", stdin=DIFF.encode()).out
    ran = next((line for line in text.splitlines() if "ran locally now" in line), "")
    assert "reviewer-nokey" not in ran and "did not run: reviewer-nokey (skipped" in text
