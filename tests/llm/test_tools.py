"""llm reviewers with read-only repository tools, through the real CLI against the test server
(both wire formats), in real git repositories: the tool loop, what is recorded, replay, packing,
budgets, and the request and response shapes checked against the official SDKs' types."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest

from review_gate.agents import llm as llm_kind
from review_gate.agents.base import AgentContext, AgentTask
from review_gate.llm.providers import anthropic, openai
from review_gate.llm.providers.common import Dialog, ToolResult
from review_gate.llm.repository_tools import DEFINITIONS
from review_gate.llm.tool_files import Revision
from review_gate.llm.tools import ToolBox
from review_gate.models import LlmAgent
from tests.conftest import GitRepo, make_diff
from tests.llm.conftest import KEY, agent_result, llm_agent, run, write_config
from tests.llm.server import LlmServer, Step, answer, tool_results

LIB_OLD = "def charge(amount):\n    return round(amount * 100)\n"
LIB_NEW = "def charge(amount, currency):\n    return round(amount * 100), currency\n"
SHOP = "from lib import charge\n\n\ndef checkout(total):\n    return charge(total)\n"
GREP = ("grep", {"pattern": r"\bcharge\(", "paths": None})
READ = ("read_file", {"path": "shop.py", "start_line": None, "end_line": None})
CALLER = {"severity": "major", "message": "checkout still calls charge without a currency", "file": "shop.py",
          "line": 5, "end_line": None, "rule_id": None, "category": "correctness",
          "recommendation": "pass the currency", "confidence": 0.9}


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_LLM_KEY", KEY)


@pytest.fixture
def change(repo: GitRepo) -> GitRepo:
    """main has lib.charge and its caller in shop.py; feature gives charge a new parameter."""
    repo.write("lib.py", LIB_OLD)
    repo.write("shop.py", SHOP)
    repo.write("notes.md", "# notes\n")
    repo.commit("shop")
    repo.branch("feature")
    repo.write("lib.py", LIB_NEW)
    repo.commit("charge takes a currency")
    return repo


def tool_config(tmp_path: Path, server: LlmServer, provider: str = "openai", **fields: Any) -> Path:
    agent = llm_agent("reviewer", server, provider, tools=["read_file", "grep"], **fields)
    return write_config(tmp_path, [agent], filter_mode="nofilter")


def caller_script(server: LlmServer) -> None:
    server.script(Step(tool_calls=[GREP], tokens=(100, 10)), Step(tool_calls=[READ], tokens=(200, 10)),
                  Step(findings=[CALLER], tokens=(300, 20)))


def review(cli: Any, cfg: Path, *extra: str) -> tuple[Any, dict[str, Any]]:
    result = cli("--config", str(cfg), "--base", "main", "--head", "feature", "--format", "json", *extra)
    assert result.out, result.err
    return result, result.json()


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_reviewer_greps_for_the_callers_reads_one_and_reports_there(
        cli: Any, tmp_path: Path, server: LlmServer, change: GitRepo, provider: str) -> None:
    change.write("shop.py", "# an uncommitted edit the review of feature must not see\n")
    caller_script(server)
    bundle = tmp_path / "bundle"
    result, report = review(cli, tool_config(tmp_path, server, provider), "--bundle", str(bundle))
    assert result.code == 1, result.err
    [finding] = report["findings"]
    assert (finding["file"], finding["line"], finding["severity"]) == ("shop.py", 5, "major")
    agent = agent_result(report, "reviewer")
    assert agent["status"] == "completed"
    assert [(c["tool"], c["arguments"], c["refused"], c["reason"]) for c in agent["tool_calls"]] == [
        ("grep", GREP[1], False, None), ("read_file", READ[1], False, None)]
    assert all(c["bytes"] > 0 for c in agent["tool_calls"])
    assert (agent["tokens_in"], agent["tokens_out"]) == (600, 40)  # every round counted
    first, second, third = server.requests
    [(_, grepped, error)] = tool_results(second)
    assert not error and "shop.py:5:     return charge(total)" in grepped and "lib.py:1: def charge" in grepped
    results = tool_results(third)
    assert [r[0] for r in results[:1]] == [r[0] for r in tool_results(second)]  # the whole conversation again
    read = results[-1][1]
    assert "<<<DATA " in read and "     5      return charge(total)" in read  # fenced, at the head commit
    assert "uncommitted" not in json.dumps(third.body)
    assert agent["tool_calls"][0]["bytes"] == len(grepped.encode())
    offered = ([t["function"]["name"] for t in first.body["tools"]] if provider == "openai"
               else [t["name"] for t in first.body["tools"]])
    assert offered == (["read_file", "grep"] if provider == "openai" else ["read_file", "grep", "report_findings"])
    assert "## Tools" in first.prompt
    saved = json.loads((bundle / "agents" / "reviewer.json").read_text())
    assert saved["tool_calls"] == agent["tool_calls"]

    asked = len(server.requests)
    replayed = cli("replay", str(bundle), "--format", "json")
    assert len(server.requests) == asked  # offline: no model is asked again
    assert replayed.out, replayed.err
    again = replayed.json()
    assert replayed.code == result.code
    assert again["findings"] == report["findings"] and again["decision"] == report["decision"]
    assert agent_result(again, "reviewer") == agent


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_tool_requests_and_the_answers_read_are_the_sdks_shapes(
        cli: Any, tmp_path: Path, server: LlmServer, change: GitRepo, provider: str) -> None:
    from anthropic.types import Message
    from openai.types.chat import ChatCompletion

    from tests.llm.test_sdk_shapes import sdk_accepts

    caller_script(server)
    review(cli, tool_config(tmp_path, server, provider))
    for request in server.requests:
        sdk_accepts(provider, request.body)
    path = "/v1/chat/completions" if provider == "openai" else "/v1/messages"
    (ChatCompletion if provider == "openai" else Message).model_validate(answer(path, Step(tool_calls=[GREP, READ])))


COMBINATIONS = [(provider, structured, final) for provider in ("openai", "anthropic")
                for structured in ("json_schema", "json_object", "none") for final in (False, True)]


@pytest.mark.parametrize(("provider", "structured", "final"), COMBINATIONS)
def test_every_conversation_body_is_one_the_sdk_accepts(provider: str, structured: str, final: bool) -> None:
    from tests.llm.test_sdk_shapes import agent, sdk_accepts

    module = openai if provider == "openai" else anthropic
    spec = agent(provider, structured_output=structured)
    plain = module.request(spec, "k", "system", "user")[2]
    reply = module.reply(answer("/v1/chat/completions" if provider == "openai" else "/v1/messages",
                                Step(tool_calls=[GREP, READ])), "", tools=True)
    assert reply.answer is None and [(c.name, c.arguments) for c in reply.calls] == [GREP, READ]
    assert reply.turn is not None
    dialog = Dialog(tools=list(DEFINITIONS.values()), final=final, note="answer now" if final else None,
                    turns=[(reply.turn, [ToolResult(c.id, "data", error=i == 1) for i, c in enumerate(reply.calls)])])
    body = module.request(spec, "k", "system", "user", dialog=dialog)[2]
    sdk_accepts(provider, body)
    assert {k: v for k, v in body.items() if k not in ("messages", "tools", "tool_choice")} == {
        k: v for k, v in plain.items() if k not in ("messages", "tools", "tool_choice")}
    if provider == "openai":
        assert body["tool_choice"] == ("none" if final else "auto")
        assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant", "tool", "tool",
                                                        *(["user"] if final else [])]
    else:
        reporting = structured == "json_schema"
        expected = ({"type": "tool", "name": "report_findings"} if reporting else {"type": "none"}) if final \
            else ({"type": "any"} if reporting else {"type": "auto"})
        assert body["tool_choice"] == expected
        results = body["messages"][2]["content"]
        assert [b["type"] for b in results] == ["tool_result", "tool_result", *(["text"] if final else [])]
        assert results[1]["is_error"] is True and "is_error" not in results[0]
        assert results[-1]["cache_control"] == {"type": "ephemeral"}  # the conversation so far is cached


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_an_agent_without_tools_sends_exactly_the_request_it_always_did(
        cli: Any, tmp_path: Path, server: LlmServer, change: GitRepo, provider: str) -> None:
    server.default = Step(findings=[])
    cfg = write_config(tmp_path, [llm_agent("plain", server, provider)])
    review(cli, cfg)
    [request] = server.requests
    spec = LlmAgent.model_validate(llm_agent("plain", server, provider))
    module = openai if provider == "openai" else anthropic
    body = request.body
    system, user = ((body["messages"][0]["content"], body["messages"][1]["content"]) if provider == "openai"
                    else (body["system"][0]["text"], body["messages"][0]["content"]))
    assert request.body == module.request(spec, KEY, system, user)[2]
    assert "## Tools" not in system


def test_without_a_repository_the_tools_are_not_offered(cli: Any, tmp_path: Path, server: LlmServer) -> None:
    server.default = Step(findings=[])
    cfg = write_config(tmp_path, [llm_agent("reviewer", server, tools=["grep"])])
    result, report = run(cli, cfg, make_diff("app.py", ["x = 1"]))  # a bare diff, no repository around it
    assert agent_result(report, "reviewer")["status"] == "completed", result.err
    [request] = server.requests
    assert "tools" not in request.body and "## Tools" not in request.prompt


def test_the_working_tree_is_read_as_it_is(cli: Any, tmp_path: Path, server: LlmServer, change: GitRepo) -> None:
    change.write("shop.py", SHOP.replace("charge(total)", "charge(total, 'EUR')"))
    server.script(Step(tool_calls=[READ]), Step(findings=[]))
    cfg = tool_config(tmp_path, server)
    result = cli("--config", str(cfg), "--base", "main", "--format", "json")
    assert agent_result(result.json(), "reviewer")["status"] == "completed", result.err
    [(_, read, _)] = tool_results(server.requests[1])
    assert "charge(total, 'EUR')" in read and "the working tree" in read


def test_staged_changes_are_read_from_the_index(cli: Any, tmp_path: Path, server: LlmServer,
                                                change: GitRepo) -> None:
    change.write("shop.py", SHOP.replace("charge(total)", "charge(total, 'staged')"))
    change.git("add", "shop.py")
    change.write("shop.py", SHOP.replace("charge(total)", "charge(total, 'not staged')"))
    server.script(Step(tool_calls=[READ]), Step(findings=[]))
    result = cli("--config", str(tool_config(tmp_path, server)), "--staged", "--format", "json")
    assert agent_result(result.json(), "reviewer")["status"] == "completed", result.err
    [(_, read, _)] = tool_results(server.requests[1])
    assert "'staged'" in read and "not staged" not in read


def test_an_agent_with_tools_is_never_packed(cli: Any, tmp_path: Path, server: LlmServer, change: GitRepo) -> None:
    server.default = Step(findings=[])
    cfg = write_config(tmp_path, [llm_agent("a", server), llm_agent("b", server),
                                  llm_agent("t", server, tools=["list_files"])])
    result = cli("--config", str(cfg), "--base", "main", "--head", "feature", "--format", "json")
    assert {a["id"]: a["status"] for a in result.json()["agents"]} == {"a": "completed", "b": "completed",
                                                                      "t": "completed"}
    assert len(server.requests) == 2  # a and b packed together; t alone
    alone = [r for r in server.requests if "tools" in r.body]
    assert len(alone) == 1 and "# Lens" not in alone[0].prompt
    assert llm_kind.pack_key(LlmAgent.model_validate(llm_agent("t", server, tools=["grep"]))) is None


def test_the_estimate_counts_every_tool_round(tmp_path: Path, server: LlmServer, change: GitRepo) -> None:
    from review_gate.pipeline.normalize import DiffRequest, normalize

    cfg = write_config(tmp_path, [llm_agent("x", server)])

    facts = anyio.run(normalize, DiffRequest(mode="range", repo_root=str(change.root), base="main", head="feature"))
    task = AgentTask(files=facts.files, rules=[], repo_root=str(change.root), config_dir=str(cfg))
    context = AgentContext(config_dir=str(cfg), revision=Revision(root=str(change.root), commit=facts.head))
    plain = LlmAgent.model_validate(llm_agent("x", server))
    tooled = plain.model_copy(update={"tools": ["grep"], "max_tool_calls": 4, "max_tool_bytes": 8192})
    without, _ = llm_kind.estimate(plain, task, context)
    with_tools, _ = llm_kind.estimate(tooled, task, context)
    # at least 4 tool rounds and a final request, each re-sending the prompt, the tool output and the answers
    assert with_tools >= without + 5 * (8192 // 4 + 4 * plain.max_output_tokens)
    no_repo, _ = llm_kind.estimate(tooled, task, AgentContext(config_dir=str(cfg)))
    assert no_repo == without  # no repository: no tools offered, no rounds


def test_a_run_budget_holds_back_a_reviewer_whose_tool_rounds_would_pass_it(
        cli: Any, tmp_path: Path, server: LlmServer, change: GitRepo) -> None:
    server.default = Step(findings=[])
    agents = [llm_agent("plain", server, required=False),
              llm_agent("tooled", server, tools=["grep"], max_tool_calls=64, required=False)]
    cfg = write_config(tmp_path, agents, max_tokens=40_000)
    result = cli("--config", str(cfg), "--base", "main", "--head", "feature", "--format", "json",
                 "--packing", "per_agent")
    status = {a["id"]: (a["status"], a["error"]) for a in result.json()["agents"]}
    assert status["plain"] == ("completed", None)
    assert status["tooled"][0] == "skipped" and "run budget" in status["tooled"][1]


@pytest.mark.parametrize(("settings", "agent_fields", "pointer"), [
    ({"private_paths": ["secrets/[z-a]"]}, {}, "/private_paths/0"),
    ({"gap_detector": "reviewer"}, {"tools": ["grep"]}, "/agents/0/tools"),
])
def test_config_validate_refuses_what_the_tools_cannot_use(cli: Any, tmp_path: Path, server: LlmServer,
                                                           settings: dict[str, Any], agent_fields: dict[str, Any],
                                                           pointer: str) -> None:
    cfg = write_config(tmp_path, [llm_agent("reviewer", server, **agent_fields)], **settings)
    result = cli("config", "validate", "--config", str(cfg))
    assert result.code == 2
    assert pointer in result.err


def test_a_tool_box_never_raises_and_counts_every_call(change: GitRepo) -> None:
    box = ToolBox(Revision(root=str(change.root)), ["read_file"], max_calls=2, max_bytes=4096)

    async def calls() -> list[tuple[str, bool]]:
        return [await box.call("read_file", {"path": "lib.py"}), await box.call("bash", {"cmd": "id"}),
                await box.call("read_file", {"path": "shop.py"})]

    (read, ok), (unknown, bad), (spent, over) = anyio.run(calls)
    assert not ok and "def charge" in read
    assert bad and "unknown tool 'bash'" in unknown
    assert over and "budget (2 calls) is spent" in spent
    assert [(c.tool, c.refused) for c in box.calls] == [("read_file", False), ("bash", True), ("read_file", True)]
    assert box.read == {"lib.py"}


def test_a_bundle_of_llm_agents_replays_without_the_config_directory(
        cli: Any, tmp_path: Path, server: LlmServer, change: GitRepo) -> None:
    """The bundle keeps the instructions (and the constitution) its llm agents were given: replay
    loads the bundle's config/, which names them, with the run's config directory gone."""
    server.default = Step(findings=[{**CALLER, "file": "lib.py", "line": 1}])
    cfg = write_config(tmp_path, [llm_agent("plain", server)], constitution="rules/constitution.md")
    (cfg / "rules").mkdir()
    (cfg / "rules" / "constitution.md").write_text("# Constitution\n\n## Standards\n\nBe kind.\n")
    bundle = tmp_path / "bundle"
    result, report = review(cli, cfg, "--bundle", str(bundle))
    shutil.rmtree(cfg)
    replayed = cli("replay", str(bundle), "--format", "json")
    assert replayed.out, replayed.err
    assert replayed.json()["findings"] == report["findings"] and replayed.code == result.code == 1
    assert (bundle / "config" / "instructions" / "reviewer.md").read_text().startswith("# Reviewer")


def test_merged_shards_keep_every_tool_call(cli: Any, tmp_path: Path, server: LlmServer, change: GitRepo) -> None:
    change.write("shop.py", SHOP.replace("total", "amount"))
    change.commit("rename in the caller too")  # two changed files: one for each of two shards
    server.default = lambda request: (Step(findings=[]) if tool_results(request)
                                      else Step(tool_calls=[("list_files", {"glob": "*.py"})]))
    cfg = tool_config(tmp_path, server)
    paths = []
    for k in (1, 2):
        out = tmp_path / f"shard{k}.json"
        result = cli("--config", str(cfg), "--base", "main", "--head", "feature", f"--shard={k}/2",
                     "--format", "json", "--output", str(out))
        assert out.is_file(), result.err
        paths.append(str(out))
    merged = cli("merge", "--config", str(cfg), *paths, "--format", "json")
    assert merged.out, merged.err
    calls = agent_result(merged.json(), "reviewer")["tool_calls"]
    assert [c["tool"] for c in calls] == ["list_files", "list_files"]
