"""The agents of review-agents.json (DESIGN §4): what every agent has, and each kind's own model
(pattern, command with its dimension mapping, llm with its endpoint, budgets and tools)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field

from review_gate.models.base import Frozen
from review_gate.models.config_values import ConfigFile, Id, OnFailure, Severity, Text

Capability = Annotated[str, Field(min_length=1, max_length=60, pattern=r"^[^\x00-\x1f\x7f]*$")]


class AgentBase(Frozen):
    id: Id
    name: Text
    description: Text
    capabilities: list[Capability] = Field(
        default_factory=list, max_length=30,
        description="Short labels of what the agent checks (e.g. \"money-arithmetic\", \"accessibility\"), "
                    "shown by `review-gate agents list`; they describe the agent and change nothing it does.",
    )
    timeout_s: float | None = Field(
        default=None, gt=0, le=3600, description="Hard deadline covering all attempts."
    )
    retries: int = Field(default=1, ge=0, le=10, description="Extra attempts on transient faults.")
    required: bool = Field(
        default=True, description="A required agent that produces no usable output fails closed."
    )
    on_failure: OnFailure = Field(
        default="fail_closed",
        description="An optional agent (required: false) that was run and failed, timed out or left files "
                    "unreviewed: fail_closed counts it in agents_failed (the built-in gate: incomplete); "
                    "fail_open counts it in agents_skipped instead (pass_with_warnings), named in every report "
                    "as failing open. A required agent always fails closed.",
    )
    enabled: bool = True


class PatternAgent(AgentBase):
    kind: Literal["pattern"]


DimensionVerdict = Literal["pass", "warn", "fail"]
"""How an agent judges one dimension (seed 004's design-auditor: Pass / Warn / Fail)."""


class DimensionSeverities(Frozen):
    """The severity of the finding each verdict becomes; null: no finding."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, defer_build=True)

    fail: Severity | None = Field(default="major", description="A failed dimension (default major).")
    warn: Severity | None = Field(default="warning", description="A dimension with a warning (default warning).")
    pass_: Severity | None = Field(default=None, alias="pass",
                                   description="A dimension that passes (default null: no finding).")

    def of(self, verdict: DimensionVerdict) -> Severity | None:
        return {"fail": self.fail, "warn": self.warn, "pass": self.pass_}[verdict]


class DimensionEscalation(Frozen):
    failed_at_least: int = Field(
        default=3, ge=1, le=1000,
        description="When at least this many distinct dimensions fail, the most severe finding is raised.")
    to: Severity = Field(default="critical", description="The severity it is raised to (never lowered).")


class DimensionMapping(Frozen):
    """How an agent that judges dimensions (Pass / Warn / Fail each) turns its verdicts into findings."""

    names: list[Id] = Field(
        default_factory=list, max_length=100,
        description="The dimensions the agent judges; a verdict about another one is malformed. Empty: any name.",
    )
    severity: DimensionSeverities = Field(
        default_factory=DimensionSeverities,
        description="Verdict -> severity of its finding: fail major, warn warning, pass none by default.",
    )
    escalate: DimensionEscalation | None = Field(
        default_factory=DimensionEscalation,
        description="When enough dimensions fail, the most severe finding is raised (default: 3 or more "
                    "failed dimensions make it critical); null never raises.",
    )


class CommandAgent(AgentBase):
    kind: Literal["command"]
    command: list[Annotated[str, Field(min_length=1)]] = Field(
        min_length=1, description="argv list, run without a shell."
    )
    input: Literal["stdin", "file"] = "stdin"
    output: Literal["findings", "sarif", "review_meta", "dimensions"] = Field(
        default="findings",
        description="What the program prints: findings JSON, SARIF 2.1.0, a @@@REVIEW_META review, or "
                    "dimension verdicts ({\"dimensions\": [...]}) that 'dimensions' maps to findings.",
    )
    dimensions: DimensionMapping | None = Field(
        default=None,
        description="With output 'dimensions': how verdicts become findings (default: fail major, warn warning, "
                    "pass none; 3 or more failed dimensions make the most severe finding critical).",
    )
    max_output_bytes: int = Field(default=10_000_000, ge=1024)
    cwd: Literal["repo", "config"] = Field(
        default="repo", description="Run in the repository root or in the config directory."
    )


EnvName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", max_length=100)]

# http(s), a host with no user:password@, an optional path; no query or fragment, where keys
# would sit in plain text (and the request paths are appended to it, so they would break it).
BASE_URL_PATTERN = r"^https?://[^/?#@\s]+(/[^?#\s]*)?$"
DEFAULT_BASE_URLS = {"openai": "https://api.openai.com/v1", "anthropic": "https://api.anthropic.com"}


StructuredOutput = Literal["json_schema", "json_object", "none"]
ToolName = Literal["read_file", "grep", "list_files"]
DEFAULT_PRIVATE_PATHS = (".env", ".env.*", "*.pem", "*.key", "*.p12", "*.pfx", "id_rsa*", "id_ecdsa*", "id_ed25519*",
                         ".netrc", ".npmrc", ".pypirc", ".review-gate/")
ReasoningEffort = Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"]

# OpenAI model families that refuse max_tokens and any temperature but the default. A name
# matches a family when it is the family's name or goes on with "-" or "." ("o3-mini",
# "gpt-5.1", "gpt-5-2025-08-07"); a gateway's "openai/o3" counts as "o3".
REASONING_FAMILIES = ("o1", "o3", "o4", "gpt-5")


def reasoning_model(model: str) -> bool:
    """Whether ``model`` names a known OpenAI reasoning model.

    >>> reasoning_model("o4-mini"), reasoning_model("gpt-5.1"), reasoning_model("gpt-4o")
    (True, True, False)
    """
    name = model.strip().lower().rsplit("/", 1)[-1]
    return any(name == family or name.startswith((family + "-", family + "."))
               for family in REASONING_FAMILIES)


class LlmAgent(AgentBase):
    """A model behind an HTTP API. Its key comes from the environment variable it names, never
    from a config file."""

    kind: Literal["llm"]
    provider: Literal["openai", "anthropic"] = Field(
        description="openai: any OpenAI-compatible /chat/completions endpoint; anthropic: the Messages API."
    )
    model: Text
    base_url: str | None = Field(
        default=None, pattern=BASE_URL_PATTERN,
        description="API root; default https://api.openai.com/v1 (openai) or https://api.anthropic.com (anthropic). "
                    "No user:password@, query string or fragment: keys come from api_key_env only.",
    )
    api_key_env: EnvName | None = Field(
        default=None,
        description="Name of the environment variable holding the API key; required for anthropic, "
                    "null for a local OpenAI-compatible server that needs no key.",
    )
    instructions: Text = Field(
        description="Markdown file with the agent's instructions, relative to the config directory."
    )
    dimensions: DimensionMapping | None = Field(
        default=None,
        description="Set: the model answers a verdict per dimension (pass, warn or fail) instead of findings, "
                    "and this mapping turns them into findings; such an agent is never packed with others.",
    )
    max_input_tokens: int = Field(
        default=24000, ge=1000, le=2_000_000,
        description="Prompt budget per request; larger scopes are split into chunks.",
    )
    max_output_tokens: int = Field(
        default=2048, ge=64, le=200_000,
        description="The most tokens one answer may take (a reasoning model's hidden reasoning included).",
    )
    temperature: float | None = Field(
        default=None, ge=0, le=2,
        description="Sampling temperature. Null: 0 for an openai model that is not a reasoning model, and none "
                    "sent to a reasoning model or to anthropic (their current models take only the default).",
    )
    structured_output: StructuredOutput | None = Field(
        default=None,
        description="How the answer's JSON shape is asked for. json_schema: openai strict response_format, "
                    "anthropic tool use; json_object: openai JSON mode (for servers without strict schemas: "
                    "DeepSeek, some vLLM and Ollama builds, gateways), anthropic a plain answer; none: no "
                    "server-side format at all. With json_object and none the prompt carries the schema and "
                    "a tolerant parser reads the answer. Null means json_schema.",
    )
    reasoning: bool | None = Field(
        default=None,
        description="openai only: a reasoning model (o1, o3, o4 families, gpt-5 family), which takes "
                    "max_completion_tokens instead of max_tokens and no temperature. Null detects it from the "
                    "model name; set it for a deployment or gateway name that hides the model.",
    )
    reasoning_effort: ReasoningEffort | None = Field(
        default=None,
        description="openai reasoning models only: the reasoning_effort sent with each request; null sends "
                    "none (the model's default). Not every model takes every value.",
    )
    # The rate governor: one queue per endpoint (base_url and api_key_env); agents that share an
    # endpoint share these limits, the strictest wins.
    rpm: int | None = Field(
        default=None, ge=1, le=1_000_000,
        description="Rate governor: requests per minute the run may send to this endpoint (base_url and "
                    "api_key_env), for all agents that share it; null: only what the server's rate-limit "
                    "headers say.",
    )
    tpm: int | None = Field(
        default=None, ge=1, le=1_000_000_000,
        description="Rate governor: tokens per minute for this endpoint, counting each request's prompt "
                    "estimate plus its max_output_tokens; null: only what the server's rate-limit headers say.",
    )
    max_concurrency: int | None = Field(
        default=None, ge=1, le=256,
        description="Rate governor: a hard cap on the requests in flight at once to this endpoint, for all agents "
                    "that share it. Null (the default): 4 until an answer carries rate-limit headers, then up to "
                    "64 as the budgets they report allow, halved on a 429; an endpoint without such headers (a "
                    "local server) stays at 4.",
    )

    tools: list[ToolName] = Field(
        default_factory=list,
        description="Read-only tools the model may call to look around the repository at the reviewed revision: "
                    "read_file, grep, list_files. Empty (the default): the model sees the diff only. An agent with "
                    "tools is never packed with others.",
    )
    max_tool_calls: int = Field(
        default=8, ge=1, le=64,
        description="The most tool calls the agent may make in one attempt; then it is asked for its answer.",
    )
    max_tool_bytes: int = Field(
        default=65_536, ge=1024, le=1_048_576,
        description="The most bytes of tool output the agent's model is sent in one attempt, all calls together.",
    )

    @property
    def url(self) -> str:
        return (self.base_url or DEFAULT_BASE_URLS[self.provider]).rstrip("/")

    @property
    def answer_format(self) -> StructuredOutput:
        return self.structured_output or "json_schema"

    @property
    def is_reasoning(self) -> bool:
        """Whether requests go out in a reasoning model's shape (set, else detected from the model name)."""
        if self.provider != "openai":
            return False
        return self.reasoning if self.reasoning is not None else reasoning_model(self.model)


Agent = Annotated[PatternAgent | CommandAgent | LlmAgent, Field(discriminator="kind")]


class AgentsFile(ConfigFile):
    agents: list[Agent]
