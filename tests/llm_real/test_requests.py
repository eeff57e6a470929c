"""The request shapes the openai provider builds, as a real OpenAI-compatible server takes them:
JSON mode, no response_format, a reasoning model's (max_completion_tokens, no temperature), and
the cached prompt tokens it reports read back into the agent's result."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from review_gate.llm.providers import openai
from review_gate.models import LlmAgent
from tests.llm_real.conftest import ALIAS
from tests.llm_real.test_llm_agent import DIFF, agent_result, make_config, needs_llm_kind

pytestmark = [pytest.mark.llm_real, pytest.mark.xdist_group("llm_real")]  # one model server, one worker


@pytest.mark.parametrize("fields", [
    {"structured_output": "json_object"},
    {"structured_output": "none"},
    {"reasoning": True},
    {"reasoning": True, "structured_output": "json_object"},
])
def test_the_server_accepts_every_request_shape_we_build(llama_server: str, fields: dict[str, Any]) -> None:
    spec = LlmAgent.model_validate({"id": "a", "name": "a", "description": "d", "kind": "llm", "provider": "openai",
                                    "model": ALIAS, "instructions": "i.md", "base_url": f"{llama_server}/v1",
                                    "max_output_tokens": 256, **fields})
    url, headers, body = openai.request(spec, None, "You review code.", "+x = eval(input())")
    assert ("temperature" in body) is not fields.get("reasoning", False)
    response = httpx.post(url, headers=headers, json=body, timeout=60)
    assert response.status_code == 200, response.text
    choice = response.json()["choices"][0]
    assert choice["finish_reason"] in ("stop", "length")
    if fields.get("structured_output") == "json_object" and choice["finish_reason"] == "stop":
        assert isinstance(json.loads(choice["message"]["content"]), dict)  # the server's JSON mode held


@needs_llm_kind
def test_cached_prompt_tokens_reach_the_agents_result(cli: Any, llama_server: str, tmp_path: Path) -> None:
    config = make_config(tmp_path, llama_server)
    first, again = (agent_result(cli("--config", str(config), "--diff", "-", "--format", "json", "--no-cache",
                                     stdin=DIFF.encode()).json()) for _ in range(2))
    # the second request starts with the first one's system message: a prefix the server had cached
    assert first["status"] == again["status"] == "completed"
    assert 0 < again["cached_tokens_in"] < again["tokens_in"]
