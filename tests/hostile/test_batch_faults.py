"""Provider batches that go wrong fail closed: an expired, partially failed or failed batch
leaves the pairs it did not answer missing and a required agent's files unreviewed, so the
gate is incomplete (exit 3), never a pass; a hostile batch server gets no key and no path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import make_diff
from tests.llm.conftest import KEY, server
from tests.llm.server import LlmServer, Step, every_file
from tests.scale.helpers import batch_config, collect, submit
from tests.state.helpers import query, state_db

PROVIDERS = ["openai", "anthropic"]
__all__ = ["server"]  # the scripted model server, a fixture
SMALL = {"max_input_tokens": 1000}  # one file of WIDE a request: three requests for its three files
WIDE = "".join(make_diff(f"app/{name}.py", ["x = eval(y)" if (name, i) == ("one", 0) else f"value_{i} = {i} * 1000"
                                            for i in range(60)]) for name in ("one", "two", "three"))


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_LLM_KEY", KEY)


def small_config(tmp_path: Path, server: LlmServer, provider: str) -> Path:
    cfg = batch_config(tmp_path, server, providers=(provider,))
    agents = json.loads((cfg / "review-agents.json").read_text())
    agents["agents"][0].update(SMALL)
    (cfg / "review-agents.json").write_text(json.dumps(agents))
    return cfg


def pair_states(run_id: str, agent: str) -> dict[str, str]:
    return dict(query(state_db(), "SELECT file, status FROM review_pairs WHERE run_id = ? AND agent = ? AND file != ''",
                      run_id, agent))


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_expired_batch_fails_closed_and_keeps_what_was_answered(cli, server: LlmServer, tmp_path: Path,
                                                                   provider: str) -> None:
    server.default = every_file
    server.batches.script.expire = lambda index, custom_id: index == 1  # one of three requests never ran
    cfg = small_config(tmp_path, server, provider)
    _, sent = submit(cli, cfg, WIDE)
    assert sent["requests"] == 3
    result, report = collect(cli, cfg)
    assert report is not None and result.code == 3 and report["decision"] == "incomplete"
    agent = next(a for a in report["agents"] if a["id"] == f"reviewer-{provider}")
    assert agent["status"] == "completed" and len(agent["unreviewed"]) == 1
    assert any("expired" in note for note in agent["notes"])
    states = pair_states(sent["run_id"], f"reviewer-{provider}")
    assert sorted(states.values()) == ["completed", "completed", "missing"]
    assert states[agent["unreviewed"][0]] == "missing"
    assert len([f for f in report["findings"] if f["agent"] == f"reviewer-{provider}"]) == 2  # the answered ones
    assert query(state_db(), "SELECT status, failure IS NOT NULL FROM review_runs WHERE id = ?",
                 sent["run_id"]) == [("incomplete", 1)]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_partially_failed_batch_fails_closed(cli, server: LlmServer, tmp_path: Path, provider: str) -> None:
    steps = iter([None, Step(status=500), None])

    def answer(request: object) -> Step:
        scripted = next(steps)
        return scripted if scripted is not None else every_file(request)  # type: ignore[arg-type]

    server.default = answer
    cfg = small_config(tmp_path, server, provider)
    _, sent = submit(cli, cfg, WIDE)
    result, report = collect(cli, cfg)
    assert report is not None and result.code == 3 and report["metrics"]["missing_inputs"] == 1
    assert sorted(pair_states(sent["run_id"], f"reviewer-{provider}").values()) == ["completed", "completed",
                                                                                    "missing"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_batch_with_no_usable_answer_fails_the_agent(cli, server: LlmServer, tmp_path: Path, provider: str) -> None:
    server.default = Step(truncated=True)  # cut off: a live run would retry; a batch cannot
    cfg = small_config(tmp_path, server, provider)
    _, sent = submit(cli, cfg, WIDE)
    result, report = collect(cli, cfg)
    assert report is not None and result.code == 3
    agent = next(a for a in report["agents"] if a["id"] == f"reviewer-{provider}")
    assert agent["status"] == "failed" and "cut off" in agent["error"]
    assert agent["tokens_in"] > 0  # billed all the same
    assert set(pair_states(sent["run_id"], f"reviewer-{provider}").values()) == {"missing"}


def test_a_batch_that_fails_as_a_whole_fails_closed(cli, server: LlmServer, tmp_path: Path) -> None:
    server.batches.script.fail = "the input file is not valid JSONL"
    cfg = small_config(tmp_path, server, "openai")
    _, sent = submit(cli, cfg, WIDE)
    result, report = collect(cli, cfg)
    assert report is not None and result.code == 3 and report["decision"] == "incomplete"
    agent = next(a for a in report["agents"] if a["id"] == "reviewer-openai")
    assert agent["status"] == "failed" and "ended failed" in agent["error"] and "not valid JSONL" in agent["error"]
    assert report["metrics"]["major"] == 1  # the pattern agent's finding, run at submit, still counts
    failure = query(state_db(), "SELECT failure FROM review_runs WHERE id = ?", sent["run_id"])[0][0]
    assert "missing" in failure


def test_an_optional_agent_whose_batch_expired_is_no_missing_input_but_counts_as_failed(
        cli, server: LlmServer, tmp_path: Path) -> None:
    server.batches.script.expire = lambda index, custom_id: True
    cfg = small_config(tmp_path, server, "openai")
    agents = json.loads((cfg / "review-agents.json").read_text())
    agents["agents"][0]["required"] = False
    (cfg / "review-agents.json").write_text(json.dumps(agents))
    submit(cli, cfg, WIDE)
    result, report = collect(cli, cfg)
    assert report is not None and report["metrics"]["missing_inputs"] == 0
    # It was run and got no answer: agents_failed, so the built-in gate fails closed (issue 20),
    # where it said needs_fixes for the pattern finding alone before.
    assert report["metrics"]["agents_failed"] == 1 and report["metrics"]["major"] >= 1
    assert report["decision"] == "incomplete" and result.code == 3


def test_a_results_url_on_another_host_gets_no_key(cli, server: LlmServer, tmp_path: Path) -> None:
    with LlmServer() as elsewhere:
        server.default = every_file
        server.batches.script.results_url = f"{elsewhere.url}/v1/messages/batches/x/results"
        cfg = small_config(tmp_path, server, "anthropic")
        _, sent = submit(cli, cfg, WIDE)
        result, report = collect(cli, cfg)
        assert result.code == 2 and report is None
        assert "another host" in result.err and "Traceback" not in result.err
        assert elsewhere.batches.calls == [] and elsewhere.requests == []
    # nothing was recorded: the run still waits and can be collected once the server behaves
    assert query(state_db(), "SELECT state FROM batch_runs WHERE run_id = ?", sent["run_id"]) == [("submitted",)]
    server.batches.script.results_url = None
    again, report = collect(cli, cfg)
    assert report is not None and again.code == 1


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_batch_id_that_names_a_path_is_refused(cli, server: LlmServer, tmp_path: Path, provider: str) -> None:
    server.batches.script.batch_id = "../../files/file-1"
    cfg = small_config(tmp_path, server, provider)
    result = cli("batch", "submit", "--config", str(cfg), "--diff", "-", stdin=_diff())
    assert result.code == 2 and "unusable batch id" in result.err
    assert query(state_db(), "SELECT status FROM review_runs") == [("failed",)]
    assert query(state_db(), "SELECT DISTINCT status FROM review_pairs WHERE agent = ?",
                 f"reviewer-{provider}") == [("missing",)]


def test_provider_errors_never_show_the_key(cli, server: LlmServer, tmp_path: Path) -> None:
    cfg = small_config(tmp_path, server, "openai")
    from tests.llm.server import Batches

    original = Batches.upload

    def refuse(self: Batches, headers: dict[str, str], raw: bytes) -> tuple[int, object]:
        return 401, {"error": {"message": f"Incorrect API key provided: {KEY}", "type": "invalid_request_error"}}

    Batches.upload = refuse  # type: ignore[method-assign]
    try:
        result = cli("batch", "submit", "--config", str(cfg), "--diff", "-", stdin=_diff())
    finally:
        Batches.upload = original  # type: ignore[method-assign]
    assert result.code == 2 and "HTTP 401" in result.err and KEY not in result.err + result.out


def _diff() -> bytes:
    return WIDE.encode()


def test_a_submit_that_fails_half_way_cancels_the_batches_it_created(cli, server: LlmServer, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.llm.server import Batches

    def refuse(self: Batches, headers: dict[str, str], raw: bytes) -> tuple[int, object]:
        return 400, {"error": {"message": "too many requests", "type": "invalid_request_error"}}

    monkeypatch.setattr(Batches, "create_openai", refuse)  # the anthropic batch is created first
    cfg = batch_config(tmp_path, server, providers=("openai", "anthropic"))
    result = cli("batch", "submit", "--config", str(cfg), "--diff", "-", stdin=_diff())
    assert result.code == 2 and "refused the batch" in result.err and "too many requests" in result.err
    [created] = server.batches.batches.values()
    assert created.provider == "anthropic" and created.status == "canceling"  # nothing left running, nor billed
    assert query(state_db(), "SELECT status FROM review_runs") == [("failed",)]
    assert query(state_db(), "SELECT COUNT(*) FROM batch_runs") == [(0,)]
