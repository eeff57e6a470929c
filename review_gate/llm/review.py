"""Reviewing a change with one reviewer (a lens) or several at once (a packed review).

A lens is an llm agent's instructions and rules over its scope of files. One lens sends the
scope in as many requests as its token budget needs. Several lenses that share provider,
model and endpoint (``packing: agent_packed``) review each chunk of the files they have in
scope together: one request holds every lens (each one's instructions and rules as its own
section, in a fixed order, so that every request of the review starts with the same prefix and
a provider's prompt cache can serve it), each file shown once with the lenses that read it,
and each finding names the lens that found it. A lens never keeps a finding about a file
outside its scope. The tokens of a request are shared out evenly among the lenses that had
files in it. A finding a model put under a lens whose scope does not hold its file goes to the
lens of that request whose scope does, or is shown dropped with its severity.

Requests are sent as the endpoint's rate governor gives them turns, and a transient fault of
one is retried as that request alone. Near the deadline a chunk whose turn comes too late is
not sent, and, like a chunk whose request failed after its retries, its files are reported
unreviewed for every lens that had them, with the findings of the chunks that were answered
kept: nothing answered is ever asked again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from review_gate.errors import AgentFault, AgentSkipped
from review_gate.judging import dimensions
from review_gate.llm import chunking, client, prompt
from review_gate.llm.answer import ParsedAnswer, parse_answer, parse_dimensions
from review_gate.llm.chunk_schedule import schedule
from review_gate.llm.context import widen
from review_gate.llm.converse import ask_with_tools
from review_gate.llm.governor import Governors
from review_gate.llm.schema import (
    DIMENSIONS_TOOL,
    MAX_PATH,
    TOOL_NAME,
    dimensions_schema,
    findings_schema,
    format_note,
)
from review_gate.models import FileChange, LlmAgent, Price, RawFinding, Rule, Usage
from review_gate.models.report import NOTE_CHARS, DroppedFinding, bounded_notes

if TYPE_CHECKING:
    import httpx

    from review_gate.llm.tools import ToolBox

MAX_DISCARDED = 20  # findings about files outside every scope kept for the reports, per lens
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
    discarded: list[DroppedFinding] = field(default_factory=list)  # findings about files outside every scope
    attempts: int = 1  # the most times one of its requests was sent
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

    def add(self, chunk: chunking.Chunk) -> str:
        """A chunk's user message, added with its files."""
        user = prompt.user_message(chunk.sections, prompt.boundary(chunk.sections))
        self.users.append(user)
        self.files.append(chunk.files)
        return user

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
                                    "max_output_tokens": max(lens.spec.max_output_tokens for lens in lenses),
                                    "retries": min(lens.spec.retries for lens in lenses)})


def plan_requests(lenses: list[Lens], standards: str | None, repo_root: str | None,
                  intent: str | None = None) -> Requests:
    """``intent``: what the change is for (``review_gate.change.intent``), in every request's system
    message; the answer then judges the change against it too (not an agent judging dimensions)."""
    requests, pending = planning(lenses, standards, repo_root, intent)
    for _ in pending:
        pass
    return requests


def planning(lenses: list[Lens], standards: str | None, repo_root: str | None,
             intent: str | None = None) -> tuple[Requests, Iterator[str]]:
    """``plan_requests`` a chunk at a time: the requests without their user messages, and the
    user messages one by one, each added to the requests as it is made (its files with it), so
    that the first requests go out while the rest of a large change is rendered. What cannot
    be sent at all (instructions too large for the budget) is raised at once."""
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
    requests = Requests(spec=spec, system=system, users=[], files=[], unreviewed=[], lenses=ids, criteria=criteria)
    pending = chunking.chunks(scope, spec.max_input_tokens - fixed, widen(scope, repo_root), notes,
                              requests.unreviewed)
    return requests, (requests.add(chunk) for chunk in pending)


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
    attempts: int = 1  # times its request was sent


async def review(lenses: list[Lens], *, http: httpx.AsyncClient, standards: str | None,
                 prices: Mapping[str, Price], governors: Governors | None, deadline: float | None,
                 repo_root: str | None, box: ToolBox | None = None, intent: str | None = None,
                 progress: Callable[[int, int, Usage], None] | None = None) -> list[LensResult]:
    """One result a lens, in order. A transient fault of a request is retried as that request
    alone (``client.send``); a chunk whose request still fails leaves its files unreviewed for
    the lenses that had them, the chunks answered kept. A permanent fault (a refused key, a
    bad request, an answer unusable twice) fails the review (every lens), carrying the tokens
    spent, and so does a review none of whose chunks was answered; one none of whose requests
    got its turn before the deadline did not run (``AgentSkipped``). A review never raises a
    transient fault: what it had answered must not be asked again. ``box``: the repository
    tools of a lone lens, shared by its chunks; a finding about a file it read through them is
    its own. ``intent``: what the change is for. ``progress``: told (answered, total, usage so
    far) before each request and as each is answered; the total is the chunks made so far (the
    first requests go out while the rest are made)."""
    requests, pending = planning(lenses, standards, repo_root, intent)
    spec = requests.spec
    key = client.api_key(spec)
    pacing = client.pace(governors, spec, deadline)
    answered, used = 0, Usage()  # requests answered so far, and what they used

    def made() -> Iterator[str]:
        for user in pending:
            if progress is not None:  # before its request: the total is the chunks made so far
                progress(answered, len(requests.users), used)
            yield user

    async def one(user: str) -> Answered:
        nonlocal answered, used
        if box is not None:
            asked = await ask_with_tools(http, spec, key, requests.system, user, prices, requests.parse, box,
                                         schema=requests.schema, name=requests.tool, pacing=pacing)
        else:
            asked = await client.ask(http, spec, key, requests.system, user, prices, requests.parse,
                                     schema=requests.schema, name=requests.tool, pacing=pacing)
        if progress is not None:
            answered, used = answered + 1, used + asked.usage
            progress(answered, len(requests.users), used)
        return Answered(asked.answer, asked.usage, asked.raw, asked.attempts)

    try:
        chunks, lost = await schedule(made(), deadline, one)
        for _ in pending:  # planning cut short by the deadline: the rest are unreviewed
            chunks.append(None)
        if requests.users and not any(chunks):
            _none_answered(requests, lost)
        return lens_results(lenses, requests, chunks, key, box.read if box is not None else (), lost)
    except AgentFault as fault:
        scrubbed = (AgentSkipped if isinstance(fault, AgentSkipped) else AgentFault)(
            client.scrub(str(fault), key), spent=fault.spent, attempts=fault.attempts)
        raise scrubbed from None


def _none_answered(requests: Requests, lost: Mapping[int, AgentFault]) -> None:
    """Raise why no chunk has an answer: their requests failed, or none got its turn."""
    usage = sum((f.spent for f in lost.values() if f.spent is not None), Usage())
    attempts = max((f.attempts for f in lost.values()), default=0)
    if lost:
        last = lost[max(lost)]
        raise AgentFault(f"{len(lost)} of its {len(requests.users)} request(s) failed after "
                         f"{plural(attempts, 'attempt')}: {last}", spent=usage, attempts=attempts)
    raise AgentSkipped(f"none of its {len(requests.users)} request(s) could be sent early enough to be answered "
                       f"before its deadline: {requests.spec.url} is at its rate limits or answering too slowly")


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def lens_results(lenses: list[Lens], requests: Requests, chunks: list[Answered | None], key: str | None,
                 read: Iterable[str] = (), lost: Mapping[int, AgentFault] | None = None) -> list[LensResult]:
    """Each lens's result from the chunks' answers (None: a chunk not answered, whose files are
    then unreviewed for the lenses that had them; ``lost``: the faults that ended some of them,
    whose tokens were billed all the same). ``read``: files a lone lens read through its tools,
    where its findings are kept too.

    A finding belongs to the lens it names when its file is in that lens's scope; else to the
    first lens of its request whose scope holds the file (a model that put it under the wrong
    lens, noted); else it is dropped, counted, and kept with its severity for every report to
    show (``out_of_scope_findings``)."""
    lost = lost or {}
    results = {lens.spec.id: LensResult() for lens in lenses}
    scopes = {lens.spec.id: {f.path for f in lens.files} for lens in lenses}
    reach = {lens_id: scope | set(read) if len(lenses) == 1 else scope for lens_id, scope in scopes.items()}
    for index, (chunk, files, user) in enumerate(zip(chunks, requests.files, requests.users, strict=True)):
        present = [lens_id for lens_id, scope in scopes.items() if scope.intersection(files)]
        for lens_id in present:
            result = results[lens_id]
            result.prompts.append({"system": requests.system, "user": user})
            if chunk is None:
                result.unreviewed += [f for f in files if f in scopes[lens_id]]
        fault = lost.get(index)
        if fault is not None:
            for lens_id, share in zip(present, (fault.spent or Usage()).split(len(present)), strict=True):
                results[lens_id].usage += share
                results[lens_id].attempts = max(results[lens_id].attempts, fault.attempts)
                results[lens_id].notes.append(f"request {index + 1} of {len(chunks)} failed after "
                                              f"{plural(fault.attempts, 'attempt')}, its files unreviewed: {fault}")
        if chunk is None:
            continue
        for lens_id, share in zip(present, chunk.usage.split(len(present)), strict=True):
            results[lens_id].usage += share
            results[lens_id].raws.append(chunk.raw)
            results[lens_id].attempts = max(results[lens_id].attempts, chunk.attempts)
        owners = chunk.parsed.owners or [lenses[0].spec.id] * len(chunk.parsed.findings)
        for owner, finding in zip(owners, chunk.parsed.findings, strict=True):
            _place(finding, owner, present, scopes, reach, results)
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
        result.notes = bounded_notes([client.scrub(note, key) for note in result.notes])
        result.raws = [client.scrub(raw, key) for raw in result.raws]
    return [results[lens.spec.id] for lens in lenses]


def _place(finding: RawFinding, owner: str, present: list[str], scopes: Mapping[str, set[str]],
           reach: Mapping[str, set[str]], results: dict[str, LensResult]) -> None:
    """Give ``finding`` to the lens that may keep it (see ``lens_results``)."""
    if finding.file is not None:
        named = as_changed(finding.file, [reach[owner], *(scopes[lens_id] for lens_id in present)])
        finding = finding if named == finding.file else finding.model_copy(update={"file": named})
    if finding.file is None or finding.file in reach[owner]:
        results[owner].findings.append(finding)
        return
    holder = next((lens_id for lens_id in present if finding.file in scopes[lens_id]), None)
    if holder is not None:
        results[holder].findings.append(finding)
        results[holder].notes.append(f"a finding named lens {owner}, whose scope does not hold its file; credited "
                                     f"to {holder}, whose scope does")
        return
    result = results[owner]
    result.out_of_scope += 1
    if len(result.discarded) < MAX_DISCARDED:
        result.discarded.append(DroppedFinding(severity=finding.severity, file=finding.file[:MAX_PATH],
                                               message=finding.message[:NOTE_CHARS]))
    elif finding.severity == "critical" and all(d.severity != "critical" for d in result.discarded):
        result.discarded[-1] = DroppedFinding(severity=finding.severity, file=finding.file[:MAX_PATH],
                                              message=finding.message[:NOTE_CHARS])


def as_changed(path: str, scopes: list[set[str]]) -> str:
    """``path`` as the change names it, when a model wrote it as the diff does (``a/``, ``b/``) or
    as ``./path``; else as written. A path some scope holds as written stays as it is."""
    if any(path in scope for scope in scopes):
        return path
    bare = path.removeprefix("./")
    for candidate in (bare, bare.removeprefix("a/"), bare.removeprefix("b/")):
        if any(candidate in scope for scope in scopes):
            return candidate
    return path
