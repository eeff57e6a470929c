"""Reviewing a change with one reviewer (a lens) or several at once (a packed review).

A lens is an llm agent's instructions and rules over its scope of files. One lens sends the
scope in as many requests as its token budget needs. Several lenses that share provider,
model and endpoint (``packing: agent_packed``) review each chunk of the files they have in
scope together: one request holds every lens (each one's instructions and rules as its own
section, in a fixed order, so that every request of the review starts with the same prefix and
a provider's prompt cache can serve it), each file shown once with the lenses that read it,
and each finding names the lens that found it. A lens never keeps a finding about a file
outside its scope. The tokens of a request are shared out evenly among the lenses that had
files in it.

Requests are sent as the endpoint's rate governor gives them turns; near the deadline a chunk
whose turn comes too late is not sent, and its files are reported unreviewed for every lens
that had them, with the findings of the chunks that were answered kept.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from review_gate import dimensions
from review_gate.errors import AgentFault, TransientAgentFault
from review_gate.llm import chunking, client, prompt
from review_gate.llm.answer import ParsedAnswer, parse_answer, parse_dimensions
from review_gate.llm.context import widen
from review_gate.llm.converse import ask_with_tools
from review_gate.llm.governor import Governors, NoTurn
from review_gate.llm.schema import DIMENSIONS_TOOL, TOOL_NAME, dimensions_schema, findings_schema, format_note
from review_gate.models import FileChange, LlmAgent, Price, RawFinding, Rule, Usage
from review_gate.models.report import bounded_notes

if TYPE_CHECKING:
    import httpx

    from review_gate.llm.tools import ToolBox

CUTOFF_S = 0.5  # a review returns what it has this long before its deadline (at most a tenth of it)
TOOL_CALL_TOKENS = 200  # what a tool result's fence and header add to its output, at most


@dataclass(frozen=True)
class Lens:
    spec: LlmAgent
    instructions: str
    rules: list[Rule]
    files: list[FileChange]  # its scope: the files it reads and may report on
    tools: bool = False  # its repository tools (spec.tools) are offered: it has a repository to read


@dataclass
class LensResult:
    findings: list[RawFinding] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    unreviewed: list[str] = field(default_factory=list)
    out_of_scope: int = 0
    dropped: int = 0
    notes: list[str] = field(default_factory=list)
    raws: list[str] = field(default_factory=list)
    prompts: list[dict[str, str]] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)  # judging dimensions: those that failed, over every chunk
    judged: list[tuple[bool | None, str | None]] = field(default_factory=list)  # each chunk's criteria judgement

    def criteria(self) -> tuple[bool | None, str | None]:
        """The judgement over every chunk: false when one chunk found the intent not met, true
        when at least one found it met and none not, None (not judged) otherwise."""
        for met, note in self.judged:
            if met is False:
                return False, note
        met_notes = [note for met, note in self.judged if met]
        return (True, met_notes[0]) if met_notes else (None, None)


@dataclass
class Requests:
    """What a review sends: one system message, one user message a chunk."""

    spec: LlmAgent  # the agent settings the requests go out with
    system: str
    users: list[str]
    files: list[list[str]]  # the files of each chunk
    unreviewed: list[str]  # files no chunk can hold
    lenses: list[str] | None  # packed: the lens ids findings name; None for one lens
    criteria: bool = False  # the answer judges the change against its intent

    @property
    def schema(self) -> dict[str, Any] | None:
        if self.spec.dimensions is not None:
            return dimensions_schema(self.spec.dimensions.names)
        return findings_schema(lenses=self.lenses, criteria=self.criteria) if self.lenses or self.criteria else None

    @property
    def tool(self) -> str | None:
        """The answer's tool (Anthropic) or schema (OpenAI) name, when not the findings' default one."""
        if self.spec.dimensions is not None:
            return DIMENSIONS_TOOL
        return TOOL_NAME if self.lenses or self.criteria else None

    def parse(self, answer: str | dict[str, Any]) -> ParsedAnswer:
        if self.spec.dimensions is not None:
            return parse_dimensions(answer, self.spec.dimensions)
        return parse_answer(answer, self.lenses, criteria=self.criteria)


def packed_spec(lenses: list[Lens]) -> LlmAgent:
    """The settings a packed review's requests go out with: the members share provider, model and
    endpoint; the budget per request is the smallest, the answer may be as long as the longest."""
    first = lenses[0].spec
    if len(lenses) == 1:
        return first
    if any(lens.spec.dimensions is not None for lens in lenses):  # pack_key keeps them apart
        raise AgentFault("an agent that judges dimensions cannot share a packed review")
    return first.model_copy(update={"max_input_tokens": min(lens.spec.max_input_tokens for lens in lenses),
                                    "max_output_tokens": max(lens.spec.max_output_tokens for lens in lenses)})


def plan_requests(lenses: list[Lens], standards: str | None, repo_root: str | None,
                  intent: str | None = None) -> Requests:
    """``intent``: what the change is for (``review_gate.intent``), in every request's system
    message; the answer then judges the change against it too (not an agent judging dimensions)."""
    spec = packed_spec(lenses)
    packed = len(lenses) > 1
    criteria = bool(intent) and spec.dimensions is None
    if packed:
        system = prompt.packed_system_message([(lens.spec.id, lens.instructions, lens.rules) for lens in lenses],
                                              standards, intent)
    else:
        only = lenses[0]
        tools = prompt.tools_guide(list(only.spec.tools), only.spec.max_tool_calls) if only.tools else None
        answer = (prompt.dimensions_guide(spec.dimensions.names) if spec.dimensions is not None
                  else prompt.with_criteria(prompt.ANSWER_GUIDE, intent))
        system = prompt.system_message(only.instructions, only.rules, standards, tools, answer, intent)
    ids = [lens.spec.id for lens in lenses] if packed else None
    schema = (dimensions_schema(spec.dimensions.names) if spec.dimensions is not None
              else findings_schema(lenses=ids, criteria=criteria))
    # json_object and none: the provider adds the schema to the system message
    added = 0 if spec.answer_format == "json_schema" else len(format_note(schema)) + 2
    fixed = chunking.estimate_tokens(len(system) + added + prompt.preamble_size()) + client.MARGIN_TOKENS
    if fixed >= spec.max_input_tokens:
        raise AgentFault(f"its instructions, rules, standards and intent alone take about {fixed} tokens, "
                         f"more than max_input_tokens ({spec.max_input_tokens})")
    files: dict[str, FileChange] = {}
    readers: dict[str, list[str]] = {}
    for lens in lenses:
        for change in lens.files:
            files.setdefault(change.path, change)
            readers.setdefault(change.path, []).append(lens.spec.id)
    notes = {path: f"(lenses: {', '.join(ids)})" for path, ids in readers.items()} if packed else None
    scope = list(files.values())
    plan = chunking.split(scope, spec.max_input_tokens - fixed, widen(scope, repo_root), notes)
    users = [prompt.user_message(c.sections, prompt.boundary(c.sections)) for c in plan.chunks]
    return Requests(spec=spec, system=system, users=users, files=[c.files for c in plan.chunks],
                    unreviewed=plan.unreviewed, lenses=ids, criteria=criteria)


def estimate(lenses: list[Lens], standards: str | None, repo_root: str | None,
             prices: Mapping[str, Price], intent: str | None = None) -> tuple[int, float]:
    """The most tokens (and their cost) the review may spend: every prompt plus a full answer each."""
    try:
        requests = plan_requests(lenses, standards, repo_root, intent)
    except AgentFault:
        return 0, 0.0
    prompts = [chunking.estimate_tokens(len(requests.system) + len(u)) for u in requests.users]
    tokens_in = sum(prompts)
    requests_out = len(requests.users)
    if len(lenses) == 1 and lenses[0].tools and prompts:
        # Every tool round sends the conversation again: at most one round a call, and one final
        # request a chunk, each at most the longest prompt, all the tool output and every answer.
        spec = lenses[0].spec
        rounds = spec.max_tool_calls + len(prompts)
        longest = max(prompts) + chunking.estimate_tokens(spec.max_tool_bytes) + spec.max_tool_calls * (
            spec.max_output_tokens + TOOL_CALL_TOKENS)
        tokens_in += rounds * longest
        requests_out += rounds
    tokens_out = requests.spec.max_output_tokens * requests_out
    return tokens_in + tokens_out, client.cost(requests.spec.model, tokens_in, tokens_out, prices)


@dataclass
class Answered:
    """One request's usable answer (a provider batch's result lines are ingested as these)."""

    parsed: ParsedAnswer
    usage: Usage
    raw: str


async def review(lenses: list[Lens], *, http: httpx.AsyncClient, standards: str | None,
                 prices: Mapping[str, Price], governors: Governors | None, deadline: float | None,
                 repo_root: str | None, box: ToolBox | None = None, intent: str | None = None) -> list[LensResult]:
    """One result a lens, in order; a fault of any request fails the review (every lens), carrying
    the tokens spent. ``box``: the repository tools of a lone lens, shared by its chunks; a
    finding about a file it read through them is its own. ``intent``: what the change is for."""
    requests = plan_requests(lenses, standards, repo_root, intent)
    spec = requests.spec
    key = client.api_key(spec)
    pacing = client.pace(governors, spec, deadline)

    async def one(user: str) -> Answered:
        if box is not None:
            asked = await ask_with_tools(http, spec, key, requests.system, user, prices, requests.parse, box,
                                         schema=requests.schema, name=requests.tool, pacing=pacing)
        else:
            asked = await client.ask(http, spec, key, requests.system, user, prices, requests.parse,
                                     schema=requests.schema, name=requests.tool, pacing=pacing)
        return Answered(asked.answer, asked.usage, asked.raw)

    try:
        chunks, faults = await _schedule(requests.users, deadline, one)
        return lens_results(lenses, requests, chunks, faults, key, box.read if box is not None else ())
    except TransientAgentFault as fault:
        raise TransientAgentFault(client.scrub(str(fault), key), retry_after=fault.retry_after,
                                  spent=fault.spent) from None
    except AgentFault as fault:
        raise AgentFault(client.scrub(str(fault), key), spent=fault.spent) from None


def lens_results(lenses: list[Lens], requests: Requests, chunks: list[Answered | None], faults: list[AgentFault],
                 key: str | None, read: Iterable[str] = ()) -> list[LensResult]:
    """Each lens's result from the chunks' answers (None: a chunk not answered, whose files are
    then unreviewed for the lenses that had them); a fault of any chunk fails them all.
    ``read``: files a lone lens read through its tools, where its findings are kept too."""
    done = [c for c in chunks if c is not None]
    usage = sum((c.usage for c in done), Usage())
    if faults:
        # Every chunk's tokens were billed, those of the chunks that finished and of the failed one.
        usage = sum((f.spent for f in faults if f.spent is not None), usage)
        permanent = [f for f in faults if not isinstance(f, TransientAgentFault)]
        if permanent:
            permanent[0].spent = usage
            raise permanent[0]
        waits = [f.retry_after for f in faults if isinstance(f, TransientAgentFault) and f.retry_after is not None]
        raise TransientAgentFault(str(faults[0]), retry_after=max(waits) if waits else None, spent=usage)
    if requests.users and not done:
        raise AgentFault(f"none of its {len(requests.users)} request(s) could be sent early enough to be answered "
                         f"before its deadline: {requests.spec.url} is at its rate limits or answering too slowly",
                         spent=usage)
    results = {lens.spec.id: LensResult() for lens in lenses}
    scopes = {lens.spec.id: {f.path for f in lens.files} for lens in lenses}
    reach = {lens_id: scope | set(read) if len(lenses) == 1 else scope for lens_id, scope in scopes.items()}
    for chunk, files, user in zip(chunks, requests.files, requests.users, strict=True):
        present = [lens_id for lens_id, scope in scopes.items() if scope.intersection(files)]
        for lens_id in present:
            result = results[lens_id]
            result.prompts.append({"system": requests.system, "user": user})
            if chunk is None:
                result.unreviewed += [f for f in files if f in scopes[lens_id]]
        if chunk is None:
            continue
        for lens_id, share in zip(present, chunk.usage.split(len(present)), strict=True):
            results[lens_id].usage += share
            results[lens_id].raws.append(chunk.raw)
        owners = chunk.parsed.owners or [lenses[0].spec.id] * len(chunk.parsed.findings)
        for owner, finding in zip(owners, chunk.parsed.findings, strict=True):
            if finding.file is None or finding.file in reach[owner]:
                results[owner].findings.append(finding)
            else:
                results[owner].out_of_scope += 1
        for lens_id in present:  # a malformed finding may name no lens: every lens of the chunk hears of it
            results[lens_id].dropped += chunk.parsed.dropped
            results[lens_id].notes += chunk.parsed.notes
            results[lens_id].failed += chunk.parsed.failed
            if requests.criteria:
                results[lens_id].judged.append((chunk.parsed.criteria_met, chunk.parsed.criteria_note))
    for lens in lenses:  # dimensions fail over the whole scope: escalate once, over every chunk's verdicts
        if lens.spec.dimensions is not None:
            result = results[lens.spec.id]
            result.failed = list(dict.fromkeys(result.failed))
            result.findings = dimensions.escalate(result.findings, result.failed, lens.spec.dimensions)
    for lens_id, result in results.items():
        result.unreviewed = list(dict.fromkeys([*(f for f in requests.unreviewed if f in scopes[lens_id]),
                                                *result.unreviewed]))
        result.notes = bounded_notes(result.notes)
        result.raws = [client.scrub(raw, key) for raw in result.raws]
    return [results[lens.spec.id] for lens in lenses]


async def _schedule(users: list[str], deadline: float | None, review_one: Callable[[str], Awaitable[Answered]],
                    ) -> tuple[list[Answered | None], list[AgentFault]]:
    """Review every chunk concurrently (the governor paces the requests); a chunk whose turn
    comes too late stays None. The first fault cancels the others. Just before ``deadline``,
    once a chunk is answered, the ones still in flight are given up (None); while none is,
    the deadline takes its course and the review times out."""
    results: list[Answered | None] = [None] * len(users)
    faults: list[AgentFault] = []
    chunks = anyio.CancelScope()

    async def one(index: int, user: str) -> None:
        try:
            results[index] = await review_one(user)
        except NoTurn:
            pass
        except AgentFault as fault:
            faults.append(fault)
            chunks.cancel()

    async def cut_short(at: float) -> None:
        await anyio.sleep_until(at)
        if any(r is not None for r in results):
            chunks.cancel()

    async with anyio.create_task_group() as watch:
        if deadline is not None:
            left = deadline - anyio.current_time()
            watch.start_soon(cut_short, deadline - max(0.0, min(CUTOFF_S, left / 10)))
        with chunks:
            async with anyio.create_task_group() as group:
                for index, user in enumerate(users):
                    group.start_soon(one, index, user)
        watch.cancel_scope.cancel()
    return results, faults
