"""Dimension verdicts -> findings (seed 004's design-auditor mapping): the pure mapping, a real
command agent (``output: "dimensions"``) through the CLI, and an llm agent with ``dimensions``
against the scriptable model server."""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from review_gate.judging import dimensions
from review_gate.models import DimensionMapping
from tests.conftest import make_diff
from tests.llm.server import LlmServer, Step

UI_DIFF = make_diff("web/Button.tsx", [f"line {n}" for n in range(1, 9)])


def verdict(dimension: str, outcome: str, line: int | None = 1, message: str | None = "wrong") -> dict[str, Any]:
    return {"dimension": dimension, "verdict": outcome, "file": "web/Button.tsx", "line": line,
            "message": message, "recommendation": "fix it"}


# ---------------------------------------------------------------------------- the pure mapping


def mapped(*items: dict[str, Any], mapping: DimensionMapping | None = None) -> list[tuple[str, str]]:
    found = dimensions.findings(dimensions.read({"dimensions": list(items)}, []), mapping or DimensionMapping())
    return [(f.severity, f.category or "") for f in found]


def test_fail_is_major_warn_is_warning_pass_is_nothing() -> None:
    assert mapped(verdict("contrast", "Fail"), verdict("focus", "Warn"), verdict("layout", "Pass", message=None)) \
        == [("major", "contrast"), ("warning", "focus")]


def test_three_failed_dimensions_raise_the_worst_finding_to_critical_once() -> None:
    found = dimensions.findings(dimensions.read([verdict("focus", "warn"), verdict("contrast", "fail"),
                                                 verdict("keyboard", "FAIL"), verdict("motion", "fail")], []),
                                DimensionMapping())
    assert [f.severity for f in found] == ["warning", "critical", "major", "major"]
    assert found[1].recommendation is not None
    assert found[1].recommendation.startswith("Raised from major to critical: 3 dimensions failed "
                                              "(contrast, keyboard, motion).")
    assert found[1].message == "wrong"  # the message (and so the fingerprint) is the agent's


def test_one_dimension_failing_in_three_places_is_one_failed_dimension() -> None:
    assert mapped(verdict("contrast", "fail", 1), verdict("contrast", "fail", 2), verdict("contrast", "fail", 3)) \
        == [("major", "contrast")] * 3


def test_the_mapping_is_configurable() -> None:
    custom = DimensionMapping.model_validate({"severity": {"fail": "critical", "warn": None, "pass": "info"},
                                              "escalate": None})
    assert mapped(verdict("a", "fail"), verdict("b", "warn"), verdict("c", "pass"), verdict("d", "fail"),
                  verdict("e", "fail"), mapping=custom) == [("critical", "a"), ("info", "c"), ("critical", "d"),
                                                             ("critical", "e")]
    two = DimensionMapping.model_validate({"escalate": {"failed_at_least": 2, "to": "critical"}})
    assert [s for s, _ in mapped(verdict("a", "fail"), verdict("b", "fail"), mapping=two)] == ["critical", "major"]


@pytest.mark.parametrize(("items", "error"), [
    ({"verdicts": []}, 'expected {"dimensions": [...]}'),
    ([{"dimension": "a", "verdict": "maybe", "message": "x"}], "verdict 0: verdict: Input should be"),
    ([{"verdict": "fail", "message": "x"}], "verdict 0: dimension: Field required"),
    ([{"dimension": "a", "verdict": "fail", "message": ""}], "a fail verdict needs a message"),
    ([{"dimension": "a", "verdict": "pass", "score": 3}], "verdict 0: score: Extra inputs are not permitted"),
    (["fail"], "verdict 0 is not a JSON object"),
])
def test_malformed_verdicts_are_refused(items: Any, error: str) -> None:
    with pytest.raises(dimensions.MalformedVerdicts, match=None) as caught:
        dimensions.read(items, [])
    assert error in str(caught.value)


def test_named_dimensions_refuse_another_one_and_take_any_case() -> None:
    [read] = dimensions.read([verdict("Color-Contrast", "fail")], ["color-contrast"])
    assert read.dimension == "color-contrast"
    with pytest.raises(dimensions.MalformedVerdicts, match="unknown dimension 'vibes'"):
        dimensions.read([verdict("vibes", "fail")], ["color-contrast"])


# ---------------------------------------------------------------------------- a command agent


def dimension_agent(tmp_path: Path, printed: Any, **fields: Any) -> Path:
    """A config dir with one command agent that prints ``printed`` (JSON, or text as is)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    canned = tmp_path / "answer.txt"
    canned.write_text(printed if isinstance(printed, str) else json.dumps(printed), encoding="utf-8")
    program = tmp_path / "auditor.py"
    program.write_text(textwrap.dedent("""\
        import sys
        sys.stdin.read()
        sys.stdout.write(open(sys.argv[1], encoding="utf-8").read())
    """), encoding="utf-8")
    entry = {"id": "auditor", "name": "auditor", "description": "judges dimensions", "kind": "command",
             "command": [sys.executable, str(program), str(canned)], "timeout_s": 20,
             **{"output": "dimensions", **fields}}
    cfg = tmp_path / "cfg"
    cfg.mkdir()
    files = {"review-agents.json": {"version": 1, "agents": [entry]},
             "review-composition.json": {"version": 1, "policies": [{
                 "id": "all", "description": "everything", "trigger": {"type": "always"}, "dispatch": ["auditor"]}]},
             "review-rules.json": {"version": 1, "rules": []}}
    for name, data in files.items():
        (cfg / name).write_text(json.dumps(data), encoding="utf-8")
    return cfg


def review(cli: Any, cfg: Path) -> tuple[Any, dict[str, Any]]:
    result = cli("--config", str(cfg), "--diff", "-", "--format", "json", "--no-state", stdin=UI_DIFF.encode())
    assert result.out, result.err
    return result, result.json()


def severities(report: dict[str, Any]) -> list[str]:
    return sorted(f["severity"] for f in report["findings"])


def test_command_agent_two_fails_are_two_majors(cli: Any, tmp_path: Path) -> None:
    cfg = dimension_agent(tmp_path, {"dimensions": [verdict("contrast", "Fail", 1), verdict("focus", "Fail", 2),
                                                    verdict("layout", "Pass", 3, None)]})
    result, report = review(cli, cfg)
    assert severities(report) == ["major", "major"]
    assert {f["category"] for f in report["findings"]} == {"contrast", "focus"}
    assert (report["decision"], result.code) == ("needs_fixes", 1)


def test_command_agent_three_fails_make_the_worst_critical(cli: Any, tmp_path: Path) -> None:
    cfg = dimension_agent(tmp_path, [verdict("contrast", "fail", 1), verdict("focus", "fail", 2),
                                     verdict("motion", "fail", 3), verdict("typography", "warn", 4)])
    result, report = review(cli, cfg)
    assert severities(report) == ["critical", "major", "major", "warning"]
    [critical] = [f for f in report["findings"] if f["severity"] == "critical"]
    assert (critical["category"], critical["line"]) == ("contrast", 1)  # the first among equals
    assert "3 dimensions failed" in critical["recommendation"]
    assert (report["decision"], result.code) == ("fail", 1)


def test_command_agent_warn_is_a_warning_and_pass_is_nothing(cli: Any, tmp_path: Path) -> None:
    cfg = dimension_agent(tmp_path, {"dimensions": [verdict("spacing", "warn", 5), verdict("layout", "pass", 6)]})
    result, report = review(cli, cfg)
    assert severities(report) == ["warning"]
    assert (report["decision"], result.code) == ("pass_with_warnings", 0)
    cfg = dimension_agent(tmp_path / "clean", {"dimensions": [verdict("layout", "pass", 6, None)]})
    result, report = review(cli, cfg)
    assert report["findings"] == [] and (report["decision"], result.code) == ("pass", 0)


@pytest.mark.parametrize("output", [
    "not json",
    {"findings": []},
    {"dimensions": [{"dimension": "contrast", "verdict": "Broken", "message": "x"}]},
    {"dimensions": [{"dimension": "contrast", "verdict": "fail"}]},
    {"dimensions": [verdict("contrast", "fail"), {"dimension": "", "verdict": "fail", "message": "x"}]},
    {"dimensions": [verdict("vibes", "fail")]},
])
def test_command_agent_malformed_output_is_an_agent_fault_and_fails_closed(cli: Any, tmp_path: Path,
                                                                           output: Any) -> None:
    cfg = dimension_agent(tmp_path, output, dimensions={"names": ["contrast", "focus"]})
    result, report = review(cli, cfg)
    [agent] = report["agents"]
    assert agent["status"] == "failed", agent
    assert "expected JSON" in agent["error"] or "output is not JSON" in agent["error"] \
        or "dimensions output:" in agent["error"]
    assert (report["decision"], result.code) == ("incomplete", 3)


def test_dimensions_on_a_command_agent_that_prints_findings_is_a_config_error(cli: Any, tmp_path: Path) -> None:
    cfg = dimension_agent(tmp_path, [], dimensions={}, output="findings")
    result = cli("config", "validate", "--config", str(cfg))
    assert result.code == 2
    assert "/agents/0/dimensions" in result.err and 'set "output": "dimensions"' in result.err


# ---------------------------------------------------------------------------- an llm agent

KEY = "sk-test-dimensions-0123456789"
NAMES = ["contrast", "focus", "motion", "layout"]


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[LlmServer]:
    monkeypatch.setenv("TEST_LLM_KEY", KEY)
    with LlmServer() as running:
        yield running


def llm_config(tmp_path: Path, server: LlmServer, provider: str, *, extra: list[dict[str, Any]] = (),
               **fields: Any) -> Path:
    base = f"{server.url}/v1" if provider == "openai" else server.url
    common = {"kind": "llm", "provider": provider, "model": "test-model", "base_url": base,
              "api_key_env": "TEST_LLM_KEY", "instructions": "auditor.md", "timeout_s": 20, "retries": 0}
    auditor = {"id": "auditor", "name": "auditor", "description": "judges dimensions", **common,
               "dimensions": {"names": NAMES}, **fields}
    others = [{"name": a["id"], "description": "a findings reviewer", **common, **a} for a in extra]
    cfg = tmp_path / "cfg"
    cfg.mkdir(exist_ok=True)
    (cfg / "auditor.md").write_text("# Auditor\n\nJudge the dimensions.\n", encoding="utf-8")
    agents = [auditor, *others]
    files = {"review-agents.json": {"version": 1, "agents": agents},
             "review-composition.json": {"version": 1, "policies": [{
                 "id": "all", "description": "everything", "trigger": {"type": "always"},
                 "dispatch": [a["id"] for a in agents]}]},
             "review-rules.json": {"version": 1, "rules": []},
             "review-gate.json": {"version": 1, "packing": "agent_packed"}}
    for name, data in files.items():
        (cfg / name).write_text(json.dumps(data), encoding="utf-8")
    return cfg


def answer(provider: str, verdicts: list[dict[str, Any]]) -> Step:
    body = {"dimensions": verdicts}
    if provider == "openai":
        return Step(content=json.dumps(body))
    return Step(tool_input=body, tool_name="report_dimensions")


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_llm_agent_answers_verdicts_that_map_and_escalate(cli: Any, tmp_path: Path, server: LlmServer,
                                                         provider: str) -> None:
    server.default = answer(provider, [verdict("contrast", "fail", 1), verdict("Focus", "fail", 2),
                                       verdict("motion", "fail", 3), verdict("layout", "warn", 4),
                                       verdict("layout", "pass", 5, None)])
    result, report = review(cli, llm_config(tmp_path, server, provider))
    [agent] = report["agents"]
    assert agent["status"] == "completed", agent
    assert severities(report) == ["critical", "major", "major", "warning"]
    assert {f["category"] for f in report["findings"]} == {"contrast", "focus", "motion", "layout"}
    assert (report["decision"], result.code) == ("fail", 1)
    [request] = server.requests
    if provider == "openai":
        schema = request.body["response_format"]["json_schema"]
        assert schema["name"] == "report_dimensions"
        item = schema["schema"]["properties"]["dimensions"]["items"]
    else:
        assert request.body["tool_choice"] == {"type": "tool", "name": "report_dimensions"}
        item = request.body["tools"][0]["input_schema"]["properties"]["dimensions"]["items"]
    assert item["properties"]["dimension"]["enum"] == NAMES
    assert item["properties"]["verdict"]["enum"] == ["pass", "warn", "fail"]
    assert '{"dimensions": [...]}' in request.prompt and "(contrast, focus, motion, layout)" in request.prompt


def test_llm_agent_escalates_over_all_of_its_chunks(cli: Any, tmp_path: Path, server: LlmServer) -> None:
    """Three dimensions that fail in three different requests are three failed dimensions."""
    files = [make_diff(f"web/C{n}.tsx", [f"const x{n} = {'y' * 3000};" for _ in range(3)]) for n in range(3)]

    def by_file(request: Any) -> Step:
        text = request.prompt
        found = [n for n in range(3) if f"file: web/C{n}.tsx" in text]
        return Step(content=json.dumps({"dimensions": [
            {**verdict(NAMES[n], "fail", 1), "file": f"web/C{n}.tsx"} for n in found]}))

    server.default = by_file
    cfg = llm_config(tmp_path, server, "openai", max_input_tokens=3000)
    result = cli("--config", str(cfg), "--diff", "-", "--format", "json", "--no-state",
                 stdin="".join(files).encode())
    report = result.json()
    assert len(server.requests) >= 2, "the scope should need several requests"
    assert sorted(f["severity"] for f in report["findings"]) == ["critical", "major", "major"]


def test_llm_agent_drops_a_malformed_verdict_and_keeps_the_rest(cli: Any, tmp_path: Path,
                                                                server: LlmServer) -> None:
    server.default = Step(content=json.dumps({"dimensions": [
        {"dimension": "contrast", "verdict": "terrible", "message": "x"},
        {"dimension": "focus", "verdict": "fail", "file": "web/Button.tsx", "line": 2, "message": None}]}))
    _, report = review(cli, llm_config(tmp_path, server, "openai"))
    [agent] = report["agents"]
    assert (agent["status"], agent["dropped_findings"]) == ("completed", 1)
    [finding] = report["findings"]
    assert (finding["severity"], finding["category"], finding["message"]) == ("major", "focus", "dimension focus: fail")


def test_llm_agent_without_a_usable_verdict_is_asked_again_then_fails(cli: Any, tmp_path: Path,
                                                                      server: LlmServer) -> None:
    server.default = Step(content=json.dumps({"findings": []}))
    result, report = review(cli, llm_config(tmp_path, server, "openai"))
    [agent] = report["agents"]
    assert agent["status"] == "failed" and "no usable answer after a retry" in agent["error"]
    assert 'JSON object {"dimensions": [...]}' in server.requests[1].prompt
    assert (report["decision"], result.code) == ("incomplete", 3)


def test_an_llm_agent_with_dimensions_is_never_packed(cli: Any, tmp_path: Path, server: LlmServer) -> None:
    def by_schema(request: Any) -> Step:
        schema = request.body["response_format"]["json_schema"]["schema"]
        if "dimensions" in schema["properties"]:
            return Step(content=json.dumps({"dimensions": [verdict("focus", "warn", 1)]}))
        return Step(findings=[{"severity": "info", "message": "a note", "file": "web/Button.tsx", "line": 1}])

    server.default = by_schema
    cfg = llm_config(tmp_path, server, "openai", extra=[{"id": "reviewer", "instructions": "auditor.md"}])
    _, report = review(cli, cfg)
    assert len(server.requests) == 2
    assert {a["id"]: a["status"] for a in report["agents"]} == {"auditor": "completed", "reviewer": "completed"}
    assert sorted((f["agent"], f["severity"]) for f in report["findings"]) == [("auditor", "warning"),
                                                                               ("reviewer", "info")]
