"""The ``llm`` agent kind end to end: the real CLI, a config whose one agent is an OpenAI-compatible
model (llama-server with the tiny model, no API key), a small diff, and the report it writes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.llm_real.conftest import ALIAS

pytestmark = [pytest.mark.llm_real, pytest.mark.xdist_group("llm_real")]  # one model server, one worker

AGENT = "tiny-reviewer"
SEVERITIES = {"critical", "major", "warning", "info"}
DIFF = (
    "diff --git a/app/settings.py b/app/settings.py\n"
    "new file mode 100644\n--- /dev/null\n+++ b/app/settings.py\n@@ -0,0 +1,4 @@\n"
    "+import requests\n"
    "+\n"
    "+def fetch(url):\n"
    "+    return requests.get(url, timeout=None).text\n"
)


def _llm_kind_available() -> bool:
    try:
        from review_gate.agents import KINDS
    except ImportError:
        return False
    return "llm" in KINDS


needs_llm_kind = pytest.mark.skipif(not _llm_kind_available(),
                                    reason="the 'llm' agent kind is not in review_gate.agents.KINDS yet")


def make_config(root: Path, server: str, **agent: Any) -> Path:
    """The built-in config with one more agent, an llm one pointed at ``server``, and one more
    policy that sends every change to it."""
    from review_gate.config.locations import builtin_dir

    config = root / "config"
    shutil.copytree(builtin_dir("config"), config)
    (config / "instructions").mkdir(exist_ok=True)
    (config / "instructions" / "tiny.md").write_text(
        "Review the change for bugs. Answer with the findings JSON only.\n", encoding="utf-8")

    agents_file = config / "review-agents.json"
    agents = json.loads(agents_file.read_text(encoding="utf-8"))
    agents["agents"].append({
        "id": AGENT, "name": "Tiny reviewer", "description": "A tiny random model behind llama-server.",
        "kind": "llm", "provider": "openai", "model": ALIAS, "base_url": f"{server}/v1", "api_key_env": None,
        "instructions": "instructions/tiny.md", "timeout_s": 60, "retries": 0, "required": False,
        **agent,
    })
    agents_file.write_text(json.dumps(agents, indent=2), encoding="utf-8")

    composition_file = config / "review-composition.json"
    composition = json.loads(composition_file.read_text(encoding="utf-8"))
    composition["policies"].append({"id": "tiny", "description": "Every change goes to the tiny model.",
                                    "trigger": {"type": "always"}, "dispatch": [AGENT], "priority": 100})
    composition_file.write_text(json.dumps(composition, indent=2), encoding="utf-8")
    return config


def run(cli: Any, config: Path) -> dict[str, Any]:
    result = cli("--config", str(config), "--diff", "-", "--format", "json", stdin=DIFF.encode())
    assert "Traceback" not in result.err, result.err
    assert result.out, result.err
    report: dict[str, Any] = result.json()
    return report


def agent_result(report: dict[str, Any]) -> dict[str, Any]:
    [entry] = [a for a in report["agents"] if a["id"] == AGENT]
    return entry


@needs_llm_kind
def test_the_llm_agent_reviews_a_diff_with_a_real_model_server(cli: Any, llama_server: str, tmp_path: Path) -> None:
    report = run(cli, make_config(tmp_path, llama_server))

    entry = agent_result(report)
    assert entry["kind"] == "llm"
    assert entry["status"] == "completed", entry["error"]
    assert entry["error"] is None
    assert entry["files"] == ["app/settings.py"]
    # Tokens as the server counted them: the prompt (instructions, rules, the diff) and the answer.
    assert entry["tokens_in"] > 100
    assert entry["tokens_out"] > 10
    if "usage" in report:
        assert report["usage"]["tokens_in"] == entry["tokens_in"]
        assert report["usage"]["tokens_out"] == entry["tokens_out"]

    # The tiny model is biased to answer with exactly one finding, its optional fields null
    # (see tools/llm/make_tiny_model.py); grammar-constrained decoding makes it fit the schema.
    findings = [f for f in report["findings"] + report["waived"] if f["agent"] == AGENT]
    assert len(findings) == 1, report["findings"]
    [finding] = findings
    assert finding["severity"] in SEVERITIES
    assert isinstance(finding["message"], str) and finding["message"].strip()
    assert finding["file"] in (None, "app/settings.py")
    assert report["metrics"][finding["severity"]] >= 1
    assert report["decision"] in {"fail", "needs_fixes", "pass_with_warnings", "pass"}


@needs_llm_kind
def test_an_answer_cut_off_at_max_output_tokens_fails_the_agent(cli: Any, llama_server: str, tmp_path: Path) -> None:
    report = run(cli, make_config(tmp_path, llama_server, max_output_tokens=64))

    entry = agent_result(report)
    assert entry["status"] == "failed", entry
    assert "finish_reason length" in entry["error"]
    assert not [f for f in report["findings"] if f["agent"] == AGENT]


@needs_llm_kind
def test_a_change_in_many_requests_to_a_server_without_rate_limit_headers_completes(
        cli: Any, llama_server: str, tmp_path: Path) -> None:
    # llama-server sends no rate-limit headers and has one slot here (-np 1): the governor never
    # opens past its start of 4 at once, and each chunk is sent once (no 429 to retry, no fault).
    diff = "".join(
        f"diff --git a/app/m{i}.py b/app/m{i}.py\nnew file mode 100644\n--- /dev/null\n+++ b/app/m{i}.py\n"
        f"@@ -0,0 +1,30 @@\n" + "".join(f"+value_{i}_{n} = {n} * {i}\n" for n in range(30)) for i in range(5))
    config = make_config(tmp_path, llama_server, max_input_tokens=1000, max_output_tokens=256)
    result = cli("--config", str(config), "--diff", "-", "--format", "json", stdin=diff.encode())
    report = result.json()
    entry = agent_result(report)
    assert entry["status"] == "completed" and entry["unreviewed"] == [], json.dumps(entry)[:3000]
    assert entry["attempts"] == 1 and report["metrics"]["agents_failed"] == 0
    assert len(entry["files"]) == 5
