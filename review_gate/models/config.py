"""The five configuration files (DESIGN §4), as models; their JSON Schemas are generated from here."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Annotated, ClassVar, Literal, NamedTuple, get_args

from pydantic import ConfigDict, Field

from review_gate.models.base import Frozen, VersionOne
from review_gate.models.loop import LoopSettings
from review_gate.models.rule_context import Action, PathClass, PathClasses, Placeholders, RuleContext

Severity = Literal["critical", "major", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = get_args(Severity)
"""Most severe first: the order reports list findings in and the gate counts them."""
SEVERITY_RANK: dict[str, int] = {severity: rank for rank, severity in enumerate(SEVERITIES)}
Decision = Literal["fail", "incomplete", "needs_fixes", "pass_with_warnings", "pass"]
FilterMode = Literal["added", "diff_context", "file", "nofilter"]
Packing = Literal["per_agent", "agent_packed"]
UnreadPolicy = Literal["list", "incomplete"]
SubmodulePolicy = Literal["warn", "list", "incomplete"]
FailOn = Literal["pass_with_warnings", "needs_fixes", "fail", "never"]
PrType = Literal["feature", "fix", "refactor", "docs", "test", "config", "deps", "mixed"]
Metric = Literal[Severity, "total", "missing_inputs", "unreviewed_files", "agents_failed", "agents_skipped",
                 "waived_inline", "risk_score"]
InlineWaivers = Literal["honour", "report", "off"]
OnFailure = Literal["fail_closed", "fail_open"]

Id = Annotated[str, Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")]
Interpreter = Annotated[str, Field(min_length=1, max_length=60, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")]
Text = Annotated[str, Field(min_length=1)]


MAX_CONCURRENCY = 256  # agents at once, in review-gate.json and on the command line


class ConfigFile(Frozen):
    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, defer_build=True)

    schema_: str | None = Field(default=None, alias="$schema")
    version: VersionOne = 1


PEER_TOOLS = ("noqa", "nosec", "eslint", "zizmor", "semgrep")
PeerCode = Annotated[str, Field(max_length=200, pattern=r"^(noqa|nosec|eslint|zizmor|semgrep):[A-Za-z0-9_./@-]+$")]


class RuleExamples(Frozen):
    fires: list[Text] = Field(default_factory=list, max_length=10, description="Added lines the rule flags.")
    passes: list[Text] = Field(default_factory=list, max_length=10,
                               description="Near misses: added lines like them that it does not flag.")
    path: str = Field(default="example.txt", min_length=1, description="The file the lines are in.")


class Rule(Frozen):
    id: Id
    name: Text
    severity: Severity
    agent: Id
    category: Text
    description: Text
    detection: Text
    recommendation: Text
    pattern: str | None = Field(
        default=None, description="RE2 pattern matched on each added line by a pattern agent."
    )
    paths: list[str] = Field(
        default_factory=list,
        description="gitignore-style globs; empty means every file. A script a domain claims by its #! line "
                    "(`shebangs`) is matched also as if it had the extensions of that domain's `*.ext` globs.",
    )
    exclude_paths: list[str] = Field(
        default_factory=list, description="gitignore-style globs of files the rule skips."
    )
    enabled: bool = True
    redact: bool = Field(
        default=False, description="Hide the matched text in messages (secrets must not reach CI logs)."
    )
    confidence: float | None = Field(
        default=None, ge=0, le=1, description="How sure a match of this rule is a real problem."
    )
    peers: list[PeerCode] = Field(
        default_factory=list, max_length=30,
        description="Codes of other tools' rules for the same problem, as TOOL:CODE (noqa:S501, nosec:B501, "
                    "eslint:no-eval, zizmor:unpinned-uses, semgrep:RULE-ID): that tool's suppression comment "
                    "naming the code waives this rule's finding on its line, reported as waived (a bare # nosec, "
                    "// eslint-disable-line, nosemgrep: only a warning or info finding).",
    )
    examples: RuleExamples | None = Field(
        default=None, description="Lines that show the rule: one it flags, and a near miss it does not "
                                  "(`review-gate rule ID` shows them).")
    path_classes: dict[PathClass, Action] | None = Field(
        default=None,
        description="What the rule does in test, fixture, example, docs, generated, vendored and minified files: "
                    "skip, keep, or a lower severity. Classes not named take the rules file's "
                    "`path_classes.default` (never for a rule of category `secrets`).")
    placeholders: Placeholders | None = Field(
        default=None, description="How a match that holds a placeholder, not a secret, is told apart (dropped).")
    contexts: list[RuleContext] = Field(
        default_factory=list, max_length=20,
        description="Contexts in which a finding is skipped or lowered (a library's own opt-out branch, a "
                    "version bump); the first that applies decides.")
    once_per_file: bool = Field(
        default=False, description="Report only the first finding of the rule in each file (one drop per migration).")


class RulesFile(ConfigFile):
    path_classes: PathClasses = Field(
        default_factory=PathClasses,
        description="Which files are tests, fixtures, examples, docs, generated, vendored or minified, and what a "
                    "rule that does not say otherwise does there.")
    rules: list[Rule]


class Domain(Frozen):
    id: Id
    description: Text
    paths: list[str] = Field(min_length=1, description="gitignore-style globs.")
    shebangs: list[Interpreter] = Field(
        default_factory=list, max_length=50,
        description="Interpreters whose `#!` line puts a file in this domain whatever its name (python3, bash, "
                    "node): the program named, or the one `env` runs. A name matches with or without its "
                    "version (python matches python3 and python3.12).",
    )
    risk_weight: int = Field(ge=0, le=10)
    pr_type: PrType | None = Field(
        default=None,
        description="The PR type a change is when every file it touches is in this domain.",
    )

    def claims(self, interpreter: str | None) -> bool:
        """Whether ``shebangs`` list ``interpreter`` (lower case), with or without its version."""
        if interpreter is None or not self.shebangs:
            return False
        wanted = {s.lower() for s in self.shebangs}
        # python3.12 is claimed by python3.12, python3 or python
        return not wanted.isdisjoint((interpreter, _MINOR.sub("", interpreter), _VERSION.sub("", interpreter)))

    def extensions(self) -> list[str]:
        """The extensions its ``*.ext`` globs select files by (``.py``)."""
        return [found.group(1) for glob in self.paths if (found := _EXTENSION.fullmatch(glob))]


_VERSION = re.compile(r"[0-9][0-9.]*$")
_MINOR = re.compile(r"\.[0-9.]*$")
_EXTENSION = re.compile(r"\*(\.[A-Za-z0-9_+-]+)")  # a glob that selects files by their extension alone


def script_names(path: str, interpreter: str | None, domains: Sequence[Domain]) -> list[str]:
    """The other names globs match a file by: a name that ends in spaces or dots is also the name
    without them (``python 'app.py '`` runs it, Windows drops them), an extension in capitals is
    also the extension in lower case (``UP.PY``), and a script is also its
    name with each extension of every domain that claims its interpreter (``bin/deploy`` run by
    python3 is ``bin/deploy.py`` too; none from a domain whose extension it already has)."""
    bare = path.rstrip(" .")
    bare = bare if bare and not bare.endswith("/") else path
    dot = bare.rfind(".")
    if dot > bare.rfind("/") + 1:  # UP.PY is Python to Python (and to Windows): *.py matches it
        bare = bare[:dot] + bare[dot:].lower()
    names: dict[str, None] = {bare: None} if bare != path else {}
    if interpreter is None:
        return list(names)
    path = bare or path
    suffix = path[path.rfind("."):] if "." in path.rpartition("/")[2] else ""
    for domain in domains:
        if domain.claims(interpreter) and suffix not in (extensions := domain.extensions()):
            names.update((path + ext, None) for ext in extensions)
    return list(names)


class DomainsFile(ConfigFile):
    domains: list[Domain]


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


class Trigger(Frozen):
    type: Literal["always", "domain", "risk", "paths", "pr_type"]
    domains: list[Id] = Field(default_factory=list)
    min_risk: int = Field(default=0, ge=0, le=100)
    paths: list[str] = Field(default_factory=list)
    pr_types: list[PrType] = Field(default_factory=list)


class Policy(Frozen):
    id: Id
    description: Text
    trigger: Trigger
    dispatch: list[Id] = Field(min_length=1)
    priority: int = Field(default=50, ge=0, le=100)


class CompositionFile(ConfigFile):
    policies: list[Policy]


class GateCondition(Frozen):
    metric: Metric
    op: Literal[">", ">=", "<", "<=", "==", "!="]
    value: float
    decision: Decision


DEFAULT_CONDITIONS = (
    GateCondition(metric="critical", op=">", value=0, decision="fail"),
    GateCondition(metric="missing_inputs", op=">", value=0, decision="incomplete"),
    GateCondition(metric="agents_failed", op=">", value=0, decision="incomplete"),
    GateCondition(metric="major", op=">", value=0, decision="needs_fixes"),
    GateCondition(metric="warning", op=">", value=0, decision="pass_with_warnings"),
    GateCondition(metric="agents_skipped", op=">", value=0, decision="pass_with_warnings"),
    GateCondition(metric="waived_inline", op=">", value=0, decision="pass_with_warnings"),
)


class Gate(Frozen):
    conditions: list[GateCondition] = Field(
        default_factory=lambda: list(DEFAULT_CONDITIONS),
        description="Evaluated in order, first match wins; no match means pass.",
    )
    fail_on: FailOn = Field(
        default="needs_fixes", description="The least severe decision that exits 1."
    )


class Price(Frozen):
    input_per_mtok: float = Field(ge=0, description="USD per million input tokens.")
    output_per_mtok: float = Field(ge=0, description="USD per million output tokens (reasoning tokens included).")
    cached_input_per_mtok: float | None = Field(
        default=None, ge=0,
        description="USD per million input tokens read from the provider's prompt cache; null prices them as input.",
    )
    cache_write_per_mtok: float | None = Field(
        default=None, ge=0,
        description="USD per million input tokens written to the provider's prompt cache; null prices them as input.",
    )
    batch_input_per_mtok: float | None = Field(
        default=None, ge=0,
        description="USD per million input tokens sent through the provider's batch API; null: half of "
                    "input_per_mtok (both providers' batch discount).",
    )
    batch_output_per_mtok: float | None = Field(
        default=None, ge=0,
        description="USD per million output tokens of the provider's batch API; null: half of output_per_mtok.",
    )

    BATCH_DISCOUNT: ClassVar[float] = 0.5  # what OpenAI's and Anthropic's batch APIs charge of the interactive price

    def batch(self) -> Price:
        """The price of a batch request: the batch columns, the cache rates scaled as input is.

        >>> Price(input_per_mtok=2, output_per_mtok=8).batch().input_per_mtok
        1.0
        """
        batch_in = self.input_per_mtok * self.BATCH_DISCOUNT if self.batch_input_per_mtok is None \
            else self.batch_input_per_mtok
        batch_out = self.output_per_mtok * self.BATCH_DISCOUNT if self.batch_output_per_mtok is None \
            else self.batch_output_per_mtok
        ratio = batch_in / self.input_per_mtok if self.input_per_mtok else self.BATCH_DISCOUNT

        def scaled(rate: float | None) -> float | None:
            return None if rate is None else rate * ratio

        return Price(input_per_mtok=batch_in, output_per_mtok=batch_out,
                     cached_input_per_mtok=scaled(self.cached_input_per_mtok),
                     cache_write_per_mtok=scaled(self.cache_write_per_mtok))


class SettingsFile(ConfigFile):
    """review-gate.json: the gate (its conditions and threshold) and how a run goes."""

    gate: Gate = Field(default_factory=Gate)
    filter_mode: FilterMode = "added"
    concurrency: int = Field(default=8, ge=1, le=MAX_CONCURRENCY)
    timeout_s: float = Field(default=120, gt=0, le=3600)
    state_path: str = Field(
        default=".review-gate/state.db", min_length=1, pattern=r"^[^\x00]*$",
        description="The run-state database; relative paths are from the repository root.",
    )
    state_max_age_days: int = Field(
        default=30, ge=1, le=3650, description="Runs older than this are dropped from the run state after each run.")
    state_max_mb: int = Field(
        default=256, ge=1, le=100_000,
        description="After each run the oldest runs are dropped until the run state holds at most this much data.")
    packing: Packing = Field(
        default="agent_packed",
        description="agent_packed (the default): llm agents that share provider, model and endpoint review each "
                    "chunk together in one request, each keeping its own findings, status and tokens (a share of "
                    "each request); per_agent: every llm agent sends the change in its own requests.",
    )
    gap_detector: Id | None = Field(
        default=None, description="Registry id of an agent that may add agents (LLM gap detection)."
    )
    prices: dict[str, Price] = Field(
        default_factory=dict, description="Model name -> price per million tokens, for cost reporting."
    )
    max_cost_usd: float | None = Field(
        default=None, ge=0, description="Run budget: no llm agent starts once it could exceed this cost."
    )
    max_tokens: int | None = Field(
        default=None, ge=0, description="Run budget: no llm agent starts once it could exceed these tokens."
    )
    binary_files: UnreadPolicy = Field(
        default="list",
        description="A changed file that is binary by content (an image, an archive, a keystore) is read by no "
                    "agent. list: it is listed in the coverage as not inspected and does not count against the "
                    "gate; incomplete: it counts as a missing input, so the decision is incomplete.",
    )
    submodules: SubmodulePolicy = Field(
        default="warn",
        description="A submodule a change moves is reviewed through its own commits when both are present on "
                    "this machine. One whose commits are not (or that the change adds): warn: listed, with a "
                    "warning saying how to make them present; list: listed in the coverage only; incomplete: it "
                    "counts as a missing input (fail closed).",
    )
    inline_waivers: InlineWaivers = Field(
        default="honour",
        description="Inline waivers (`review-gate: ignore[RULE] reason` and the peers' suppressions such as "
                    "`# noqa: S501`) in the change's files. honour: the finding is waived and listed as waived; "
                    "report: it is listed with its waiver and still counts; off: such comments are not read.",
    )
    private_paths: list[str] = Field(
        default_factory=lambda: list(DEFAULT_PRIVATE_PATHS),
        description="gitignore-style globs of files an llm agent's tools never read, search or list (the run "
                    "state is never shown either). Setting it replaces the default list.",
    )
    constitution: str | None = Field(
        default=None, min_length=1,
        description="Markdown file (relative to the config directory) whose 'Standards' section "
                    "every llm agent gets in its prompt.",
    )
    loop: LoopSettings = Field(
        default_factory=LoopSettings,
        description="The coder/reviewer loop (review-gate loop): mode, max_iterations, and per phase its ai, "
                    "approver and max_retries.",
    )


RULES_FILE = "review-rules.json"
DOMAINS_FILE = "review-domains.json"
AGENTS_FILE = "review-agents.json"
COMPOSITION_FILE = "review-composition.json"
SETTINGS_FILE = "review-gate.json"


class FileKind(NamedTuple):
    field: str  # the ReviewConfig field that holds the file
    model: type[ConfigFile]


class ReviewConfig(Frozen):
    """The five files, loaded and checked, with where each one came from."""

    FILES: ClassVar[dict[str, FileKind]] = {
        RULES_FILE: FileKind("rules", RulesFile),
        DOMAINS_FILE: FileKind("domains", DomainsFile),
        AGENTS_FILE: FileKind("agents", AgentsFile),
        COMPOSITION_FILE: FileKind("composition", CompositionFile),
        SETTINGS_FILE: FileKind("settings", SettingsFile),
    }
    """File name -> where it goes: the one table of the config files, in the order they load."""

    rules: RulesFile
    domains: DomainsFile
    agents: AgentsFile
    composition: CompositionFile
    settings: SettingsFile
    directory: str | None = Field(description="The config directory, None for the built-in one.")
    sources: dict[str, str] = Field(description="File name -> path it was read from.")

    def file(self, name: str) -> ConfigFile:
        """The model of config file ``name`` (``review-gate.json`` -> ``settings``).

        >>> from review_gate.config import load_config
        >>> type(load_config(None).file("review-gate.json")).__name__
        'SettingsFile'
        """
        model: ConfigFile = getattr(self, self.FILES[name].field)
        return model

    def agent(self, agent_id: str) -> PatternAgent | CommandAgent | LlmAgent | None:
        return next((a for a in self.agents.agents if a.id == agent_id), None)

    def rules_for(self, agent_id: str) -> list[Rule]:
        return [r for r in self.rules.rules if r.agent == agent_id and r.enabled]
