"""The batch request files review-gate sends, and the answers it reads, in the official SDKs'
own types: the OpenAI Batch API (files, batches, JSONL lines for /v1/chat/completions) and
Anthropic's Message Batches. The test server's answers are checked against the same types,
so the round trips the other tests drive are the real wire formats."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest
from anthropic.types import Message
from anthropic.types.messages import MessageBatch, MessageBatchIndividualResponse
from anthropic.types.messages.batch_create_params import Request as AnthropicRequest
from openai.types import Batch, FileObject
from openai.types.batch_create_params import BatchCreateParams
from openai.types.chat import ChatCompletion

from tests.llm.conftest import KEY, llm_agent, write_config
from tests.llm.server import LlmServer, every_file
from tests.llm.test_sdk_shapes import sdk_accepts, strict_problems
from tests.scale.helpers import collect, submit

CUSTOM_ID = re.compile(r"[a-zA-Z0-9_-]{1,64}")  # Anthropic's rule for custom ids


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_LLM_KEY", KEY)


@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize("structured", ["json_schema", "json_object", "none"])
def test_openai_request_lines_and_answers_fit_the_sdk(cli, server: LlmServer, tmp_path: Path, packed: bool,
                                                      structured: str) -> None:
    server.default = every_file
    agents = [llm_agent(a, server, structured_output=structured) for a in (["a", "b"] if packed else ["a"])]
    cfg = write_config(tmp_path, agents)
    submit(cli, cfg)
    [(file_id, content)] = server.batches.files.items()
    lines = [json.loads(line) for line in content.decode().splitlines()]
    for line in lines:
        assert set(line) == {"custom_id", "method", "url", "body"} and line["method"] == "POST"
        assert CUSTOM_ID.fullmatch(line["custom_id"])
        sdk_accepts("openai", line["body"])
    [create] = [c for c in server.batches.calls if c.path == "POST /v1/batches"]
    assert strict_problems(create.body, BatchCreateParams) == []
    assert create.body["input_file_id"] == file_id
    upload = next(c for c in server.batches.calls if c.path == "POST /v1/files")
    assert upload.headers["authorization"] == f"Bearer {KEY}"

    collect(cli, cfg)
    with httpx.Client(base_url=f"{server.url}/v1") as http:
        [batch_id] = server.batches.batches
        batch = Batch.model_validate(http.get(f"/batches/{batch_id}").json())
        assert batch.status == "completed" and batch.output_file_id
        output = http.get(f"/files/{batch.output_file_id}/content").text.splitlines()
    for line in output:
        ChatCompletion.model_validate(json.loads(line)["response"]["body"])
    with httpx.Client(base_url=f"{server.url}/v1") as http:  # the server's own answers to the upload and create
        uploaded = FileObject.model_validate(
            http.post("/files", data={"purpose": "batch"}, files={"file": ("x.jsonl", content)}).json())
        created = Batch.model_validate(http.post("/batches", json={
            "input_file_id": uploaded.id, "endpoint": "/v1/chat/completions", "completion_window": "24h"}).json())
    assert (uploaded.purpose, created.status) == ("batch", "validating")


@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize("structured", ["json_schema", "none"])
def test_anthropic_requests_and_answers_fit_the_sdk(cli, server: LlmServer, tmp_path: Path, packed: bool,
                                                   structured: str) -> None:
    server.default = every_file
    agents = [llm_agent(a, server, provider="anthropic", structured_output=structured)
              for a in (["a", "b"] if packed else ["a"])]
    cfg = write_config(tmp_path, agents)
    submit(cli, cfg)
    [create] = [c for c in server.batches.calls if c.path == "POST /v1/messages/batches"]
    assert set(create.body) == {"requests"}
    for request in create.body["requests"]:
        assert CUSTOM_ID.fullmatch(request["custom_id"])
        sdk_accepts("anthropic", request["params"])
        assert strict_problems({"custom_id": request["custom_id"], "params": {"model": "m", "max_tokens": 1,
                                                                             "messages": []}},
                               AnthropicRequest) == []
    assert create.headers["x-api-key"] == KEY and create.headers["anthropic-version"]

    collect(cli, cfg)
    [batch_id] = server.batches.batches
    with httpx.Client(base_url=server.url) as http:
        batch = MessageBatch.model_validate(http.get(f"/v1/messages/batches/{batch_id}").json())
        assert batch.processing_status == "ended" and batch.results_url
        results = http.get(batch.results_url).text.splitlines()
    for line in results:
        parsed = MessageBatchIndividualResponse.model_validate(json.loads(line))
        assert parsed.result.type == "succeeded"
        Message.model_validate(json.loads(line)["result"]["message"])


def test_expired_and_errored_result_lines_fit_the_sdk(cli, server: LlmServer, tmp_path: Path) -> None:
    from tests.llm.server import Step

    steps = iter([Step(status=500)])
    server.default = lambda request: next(steps, every_file(request))
    server.batches.script.expire = lambda index, custom_id: index == 1
    agents = [llm_agent("a", server, provider="anthropic", max_input_tokens=1000)]
    cfg = write_config(tmp_path, agents)
    wide = "".join(f"diff --git a/f{n}.py b/f{n}.py\nnew file mode 100644\n--- /dev/null\n+++ b/f{n}.py\n"
                   f"@@ -0,0 +1,60 @@\n" + "".join(f"+value_{i} = {i} * 1000\n" for i in range(60))
                   for n in range(3))
    submit(cli, cfg, wide)
    collect(cli, cfg)
    [batch] = server.batches.batches.values()
    kinds = sorted(MessageBatchIndividualResponse.model_validate(line).result.type for line in batch.results)
    assert kinds == ["errored", "expired", "succeeded"]
