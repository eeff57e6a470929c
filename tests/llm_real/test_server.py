"""The model server itself, as the ``llm`` agent kind relies on it: OpenAI-style chat completions,
JSON-schema-constrained answers, token usage, and truncation when max_tokens runs out."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from jsonschema import Draft202012Validator

from tests.llm_real.conftest import ALIAS

pytestmark = [pytest.mark.llm_real, pytest.mark.xdist_group("llm_real")]  # one model server, one worker

FINDINGS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["findings"],
    "properties": {
        "findings": {
            "type": "array",
            "maxItems": 3,
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["severity", "message", "line"],
                "properties": {
                    "severity": {"type": "string", "enum": ["critical", "major", "warning", "info"]},
                    "message": {"type": "string", "minLength": 1, "maxLength": 40},
                    "line": {"type": "integer", "minimum": 1, "maximum": 999},
                },
            },
        },
    },
}

DIFF = "--- a/app.py\n+++ b/app.py\n@@ -0,0 +1,2 @@\n+password = 'hunter2'  # TODO\n+print(password)\n"


def chat(base: str, **overrides: Any) -> httpx.Response:
    body: dict[str, Any] = {
        "model": ALIAS,
        "messages": [
            {"role": "system", "content": "You review code. Answer with JSON findings."},
            {"role": "user", "content": f"Review this diff:\n{DIFF}"},
        ],
        "response_format": {"type": "json_schema",
                            "json_schema": {"name": "findings", "strict": True, "schema": FINDINGS_SCHEMA}},
        "max_tokens": 512,
        "temperature": 0,
        "seed": 7,
    }
    body.update(overrides)
    return httpx.post(f"{base}/v1/chat/completions", json=body, timeout=60)


def test_constrained_answer_validates_against_the_findings_schema(llama_server: str) -> None:
    response = chat(llama_server)
    assert response.status_code == 200, response.text
    data = response.json()
    assert data["model"] == ALIAS
    choice = data["choices"][0]
    assert choice["finish_reason"] == "stop"
    answer = json.loads(choice["message"]["content"])
    errors = [e.message for e in Draft202012Validator(FINDINGS_SCHEMA).iter_errors(answer)]
    assert errors == []
    # The tiny model is biased to answer with exactly one short finding (see make_tiny_model.py).
    assert len(answer["findings"]) == 1


def test_sampled_answers_validate_too(llama_server: str) -> None:
    validator = Draft202012Validator(FINDINGS_SCHEMA)
    for seed in (1, 2, 3):
        response = chat(llama_server, temperature=1.0, seed=seed)
        assert response.status_code == 200, response.text
        choice = response.json()["choices"][0]
        assert choice["finish_reason"] == "stop"
        assert list(validator.iter_errors(json.loads(choice["message"]["content"]))) == []


def test_usage_tokens_are_reported(llama_server: str) -> None:
    usage = chat(llama_server).json()["usage"]
    assert usage["prompt_tokens"] > 20  # the prompt went through the chat template and tokenizer
    assert usage["completion_tokens"] > 5
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]


def test_small_max_tokens_truncates_the_answer(llama_server: str) -> None:
    response = chat(llama_server, max_tokens=5)
    assert response.status_code == 200, response.text
    data = response.json()
    choice = data["choices"][0]
    assert choice["finish_reason"] == "length"
    assert data["usage"]["completion_tokens"] == 5
    with pytest.raises(json.JSONDecodeError):
        json.loads(choice["message"]["content"])


def test_bad_request_gets_an_openai_style_error(llama_server: str) -> None:
    response = chat(llama_server, messages="not a list")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["message"]
    assert error["type"]
