"""The requests our providers build, and the responses they read, in the official SDKs' own types.

The ``openai`` and ``anthropic`` packages (test extra only) type every request parameter as a
TypedDict and every response as a pydantic model: their types are the APIs' ground truth. Each
request body of every combination of provider, structured_output and reasoning must pass the
SDK's params TypedDict, checked strictly (pydantic ignores unknown TypedDict keys and checks
iterables lazily, so ``strict_problems`` walks the body too: an unknown key or a wrong type
anywhere fails). Each response, written in the SDK's documented shape (checked with its model)
with cached and reasoning token details, must read back into the same numbers.
"""

from __future__ import annotations

import collections.abc
import json
import types
import typing
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

import pytest
from anthropic.types import TextBlockParam
from pydantic import TypeAdapter
from typing_extensions import NotRequired, Required, is_typeddict

from review_gate.llm.answer import parse_answer
from review_gate.llm.client import spent
from review_gate.llm.gap_detector import TOOL_NAME as GAP_TOOL
from review_gate.llm.gap_detector import additions_schema
from review_gate.llm.providers import anthropic, openai
from review_gate.models import LlmAgent, Price
from review_gate.models.agent_config import ReasoningEffort, reasoning_model

anthropic_sdk = pytest.importorskip("anthropic")
openai_sdk = pytest.importorskip("openai")

from anthropic.types import Message  # noqa: E402
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming  # noqa: E402
from openai.types.chat import ChatCompletion  # noqa: E402
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming  # noqa: E402
from openai.types.shared.reasoning_effort import ReasoningEffort as SdkReasoningEffort  # noqa: E402

PARAMS = {"openai": CompletionCreateParamsNonStreaming, "anthropic": MessageCreateParamsNonStreaming}
SEQUENCES = (list, tuple, collections.abc.Iterable, collections.abc.Sequence)


def strict_problems(value: Any, hint: Any, where: str = "body") -> list[str]:
    """Every way ``value`` does not fit ``hint`` (a type of the SDK): unknown or missing keys of a
    TypedDict, wrong types, values outside a Literal. A hint this walker has no rule for is a
    problem too, so it never passes what it did not check."""
    origin = get_origin(hint)
    if hint is Any or hint is object:
        return []
    if origin in (Required, NotRequired, typing.Annotated):
        return strict_problems(value, get_args(hint)[0], where)
    if origin in (Union, types.UnionType):
        tried = [strict_problems(value, arg, where) for arg in get_args(hint)]
        return [] if any(not t for t in tried) else min(tried, key=len)
    if origin is Literal:
        return [] if value in get_args(hint) else [f"{where}: {value!r} is not one of {get_args(hint)}"]
    if hint is type(None):
        return [] if value is None else [f"{where}: {value!r} is not null"]
    if isinstance(hint, typing.TypeAliasType if hasattr(typing, "TypeAliasType") else ()):
        return strict_problems(value, hint.__value__, where)
    if is_typeddict(hint):
        return _typeddict_problems(value, hint, where)
    if origin in SEQUENCES or getattr(origin, "__name__", "") == "SequenceNotStr":
        if not isinstance(value, list):
            return [f"{where}: {type(value).__name__} is not a list"]
        [item] = get_args(hint) or (Any,)
        return [p for i, v in enumerate(value) for p in strict_problems(v, item, f"{where}[{i}]")]
    if origin in (dict, collections.abc.Mapping) or hint is dict:
        if not isinstance(value, dict):
            return [f"{where}: {type(value).__name__} is not an object"]
        _, item = get_args(hint) or (Any, Any)
        return [p for k, v in value.items() for p in strict_problems(v, item, f"{where}.{k}")]
    scalars: dict[Any, tuple[type, ...]] = {str: (str,), int: (int,), float: (int, float), bool: (bool,)}
    if hint in scalars:
        fits = isinstance(value, scalars[hint]) and (hint is bool or not isinstance(value, bool))
        return [] if fits else [f"{where}: {value!r} is not a {hint.__name__}"]
    return [f"{where}: no rule for {hint!r}"]


def _typeddict_problems(value: Any, hint: Any, where: str) -> list[str]:
    if not isinstance(value, dict):
        return [f"{where}: {type(value).__name__} is not an object"]
    fields = get_type_hints(hint, include_extras=True)
    required = {k for k, t in fields.items()
                if get_origin(t) is Required or (hint.__total__ and get_origin(t) is not NotRequired)}
    problems = [f"{where}.{k}: not a parameter of {hint.__name__}" for k in value if k not in fields]
    problems += [f"{where}.{k}: required by {hint.__name__}" for k in sorted(required - set(value))]
    for key, item in value.items():
        if key in fields:
            problems += strict_problems(item, fields[key], f"{where}.{key}")
    return problems


def sdk_accepts(provider: str, body: dict[str, Any]) -> None:
    params = PARAMS[provider]
    validated = TypeAdapter(params).validate_python(body)
    for key, item in validated.items():  # iterables are checked only as they are consumed
        if provider == "anthropic" and key == "system" and isinstance(body[key], list):
            # Consuming this lazy iterator trips a pydantic-core panic (a DefinitionRef inside a
            # generator); the same blocks are validated as a plain list instead.
            TypeAdapter(list[TextBlockParam]).validate_python(body[key])
            continue
        if not isinstance(item, (str, bytes, dict)) and isinstance(item, collections.abc.Iterable):
            list(item)
    assert strict_problems(body, params) == []


def agent(provider: str, **fields: Any) -> LlmAgent:
    return LlmAgent.model_validate({"id": "a", "name": "a", "description": "d", "kind": "llm", "provider": provider,
                                    "model": "gpt-4o-mini" if provider == "openai" else "claude-sonnet-4-5",
                                    "instructions": "i.md", "api_key_env": "K", **fields})


def test_the_walker_refuses_what_the_sdk_would_not_take() -> None:
    good = openai.request(agent("openai"), "k", "system", "user")[2]
    assert strict_problems(good, CompletionCreateParamsNonStreaming) == []
    bad = {**good, "max_output_tokens": 5, "temperature": "0",
           "messages": [{"role": "system", "content": "s", "cache": True}]}
    assert strict_problems(bad, CompletionCreateParamsNonStreaming) == [
        "body.max_output_tokens: not a parameter of CompletionCreateParamsNonStreaming",
        "body.messages[0].cache: not a parameter of ChatCompletionSystemMessageParam",
        "body.temperature: '0' is not a float"]
    assert strict_problems({"model": "m"}, MessageCreateParamsNonStreaming) == [
        "body.max_tokens: required by MessageCreateParamsNonStreaming",
        "body.messages: required by MessageCreateParamsNonStreaming"]


COMBINATIONS = [
    (provider, structured, reasoning)
    for provider in ("openai", "anthropic")
    for structured in (None, "json_schema", "json_object", "none")
    for reasoning in ((None, False, True) if provider == "openai" else (None, False))
]


@pytest.mark.parametrize(("provider", "structured", "reasoning"), COMBINATIONS)
@pytest.mark.parametrize("gap_detector", [False, True])
def test_every_request_body_is_one_the_sdk_accepts(provider: str, structured: str | None, reasoning: bool | None,
                                                    gap_detector: bool) -> None:
    spec = agent(provider, structured_output=structured, reasoning=reasoning,
                 **({"reasoning_effort": "low"} if reasoning else {}))
    schema = {"schema": additions_schema(["security-reviewer"]), "name": GAP_TOOL} if gap_detector else {}
    module = openai if provider == "openai" else anthropic
    _url, _headers, body = module.request(spec, "sk-test", "You review code.", "the diff", **schema)
    sdk_accepts(provider, body)
    json.dumps(body)  # what goes on the wire
    format_in_system = structured in ("json_object", "none")
    system = body["messages"][0]["content"] if provider == "openai" else body["system"][0]["text"]
    assert ("## Answer format" in system) is format_in_system
    if provider == "openai":
        shaped = {"json_object": {"type": "json_object"}, "none": None}
        expected = shaped.get(structured or "json_schema", "json_schema")
        got = body.get("response_format")
        assert (got["type"] if got and expected == "json_schema" else got) == expected
        assert ("max_completion_tokens" in body, "max_tokens" in body) == (bool(reasoning), not reasoning)
        assert ("temperature" in body, body.get("reasoning_effort")) == (not reasoning, "low" if reasoning else None)
    else:
        assert ("tools" in body and "tool_choice" in body) is (not format_in_system)
        assert "temperature" not in body  # this SDK (and Anthropic's current models) take none


def test_a_temperature_goes_out_only_where_one_is_taken() -> None:
    body = openai.request(agent("openai", temperature=0.3), None, "s", "u")[2]
    sdk_accepts("openai", body)
    assert body["temperature"] == 0.3
    # Older Claude models take a temperature the agent sets; this SDK no longer lists it.
    assert anthropic.request(agent("anthropic", temperature=0.3), "k", "s", "u")[2]["temperature"] == 0.3


def test_our_reasoning_efforts_are_the_sdks() -> None:
    assert set(get_args(ReasoningEffort)) <= set(get_args(get_args(SdkReasoningEffort)[0]))


@pytest.mark.parametrize(("model", "reasons"), [
    ("o1", True), ("o1-mini", True), ("o3-2025-04-16", True), ("o3-pro", True), ("o4-mini", True),
    ("gpt-5", True), ("gpt-5-mini", True), ("gpt-5.1-codex", True), ("openai/gpt-5-nano", True), ("O3", True),
    ("gpt-4o", False), ("gpt-4.1-mini", False), ("gpt-50x", False), ("o10", False), ("llama-3-o3", False),
    ("ollama/qwen3", False), ("omni-moderation-latest", False),
])
def test_reasoning_models_are_detected_by_family(model: str, reasons: bool) -> None:
    assert reasoning_model(model) is reasons
    assert agent("openai", model=model).is_reasoning is reasons
    assert agent("anthropic", model=model).is_reasoning is False


PRICE = {"m": Price(input_per_mtok=2.0, output_per_mtok=8.0, cached_input_per_mtok=0.5, cache_write_per_mtok=2.5)}


def test_an_openai_response_with_cached_and_reasoning_tokens_reads_back() -> None:
    data = {
        "id": "chatcmpl-abc123", "object": "chat.completion", "created": 1_741_569_952, "model": "o4-mini-2025-04-16",
        "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                     "message": {"role": "assistant", "content": json.dumps({"findings": [
                         {"severity": "major", "message": "m", "file": "a.py", "line": 1, "end_line": None,
                          "rule_id": None, "category": None, "recommendation": None, "confidence": 0.7}]}),
                                 "refusal": None, "annotations": []}}],
        "usage": {"prompt_tokens": 2006, "completion_tokens": 300, "total_tokens": 2306,
                  "prompt_tokens_details": {"cached_tokens": 1920, "audio_tokens": 0},
                  "completion_tokens_details": {"reasoning_tokens": 192, "audio_tokens": 0,
                                                "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}},
        "service_tier": "default", "system_fingerprint": None,
    }
    parsed = ChatCompletion.model_validate(data)
    reply = openai.reply(data, json.dumps(data))
    assert (reply.tokens_in, reply.tokens_out) == (parsed.usage.prompt_tokens, parsed.usage.completion_tokens)
    assert (reply.cached_in, reply.reasoning_out, reply.model) == (1920, 192, "o4-mini-2025-04-16")
    assert reply.answer is not None and len(parse_answer(reply.answer).findings) == 1
    usage = spent(reply, "m", PRICE)
    assert (usage.cached_tokens_in, usage.cache_write_tokens_in, usage.reasoning_tokens) == (1920, 0, 192)
    assert usage.cost_usd == pytest.approx((86 * 2.0 + 1920 * 0.5 + 300 * 8.0) / 1e6)


def test_an_anthropic_response_with_cache_reads_and_writes_reads_back() -> None:
    data = {
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{"type": "text", "text": "Here is the review."},
                    {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "report_findings",
                     "input": {"findings": [{"severity": "info", "message": "ok"}]}}],
        "stop_reason": "tool_use", "stop_sequence": None,
        "usage": {"input_tokens": 50, "output_tokens": 120, "cache_creation_input_tokens": 1000,
                  "cache_read_input_tokens": 3000, "service_tier": "standard"},
    }
    parsed = Message.model_validate(data)
    reply = anthropic.reply(data, json.dumps(data))
    usage = parsed.usage
    assert reply.tokens_in == usage.input_tokens + (usage.cache_read_input_tokens or 0) + (
        usage.cache_creation_input_tokens or 0) == 4050
    assert (reply.cached_in, reply.cache_write_in, reply.tokens_out, reply.structured) == (3000, 1000, 120, True)
    assert reply.answer == {"findings": [{"severity": "info", "message": "ok"}]}
    cost = spent(reply, "m", PRICE).cost_usd
    assert cost == pytest.approx((50 * 2.0 + 3000 * 0.5 + 1000 * 2.5 + 120 * 8.0) / 1e6)
    assert spent(reply, "m", {"m": Price(input_per_mtok=2.0, output_per_mtok=8.0)}).cost_usd == pytest.approx(
        (4050 * 2.0 + 120 * 8.0) / 1e6)  # without cache rates, cached input is priced as input


def test_an_anthropic_text_answer_reads_back() -> None:
    data = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-haiku-4-5",
            "content": [{"type": "text", "text": '```json\n{"findings": []}\n```'}],
            "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5, "output_tokens_details": {"thinking_tokens": 3}}}
    Message.model_validate(data)
    reply = anthropic.reply(data, json.dumps(data))
    assert (reply.structured, reply.reasoning_out) == (False, 3)
    assert parse_answer(reply.answer or "").findings == []


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_the_test_servers_answers_are_in_the_sdks_shapes(provider: str) -> None:
    from tests.llm.server import Step, answer

    usage = ({"prompt_tokens_details": {"cached_tokens": 5}} if provider == "openai"
             else {"cache_read_input_tokens": 5})
    for step in (Step(findings=[{"severity": "info", "message": "x"}], usage=usage), Step(content="text"),
                 Step(truncated=True)):
        data = answer("/v1/chat/completions" if provider == "openai" else "/v1/messages", step)
        (ChatCompletion if provider == "openai" else Message).model_validate(data)
