"""One question to a model that may call repository tools before it answers (``llm.tools``).

The loop: ask; while the model asks for tool calls instead of answering, run them (each one
cheap and bounded, refusals answered as tool errors) and send their results back; once the
agent's tool-call budget is spent, ask for the answer with no more tools allowed. A model that
still asks for tools then, or that asks for more than MAX_CALLS_AT_ONCE calls in one turn,
fails the agent (fail closed). An answer that cannot be used is asked for again once with the
reason, as ``client.ask`` does; the tokens of every round are counted, on a fault too.

    >>> final_note(8).startswith("You have used all")
    True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from review_gate.errors import AgentFault
from review_gate.llm import client, prompt
from review_gate.llm.answer import UnusableAnswer
from review_gate.llm.providers.common import Dialog, ToolResult, Unusable
from review_gate.models import LlmAgent, Price, Usage

if TYPE_CHECKING:
    import httpx

    from review_gate.llm.tools import ToolBox

MAX_CALLS_AT_ONCE = 32  # tool calls one turn may ask for; more is a broken or hostile model
T = TypeVar("T")


def final_note(budget: int) -> str:
    return (f"You have used all {budget} tool calls you may make. Do not call a tool again: answer now "
            'with your findings (the JSON object {"findings": [...]}, or the report tool when there is one).')


def _retry_note(error: str) -> str:
    return prompt.retry_note(error).strip()


async def ask_with_tools(http: httpx.AsyncClient, spec: LlmAgent, key: str | None, system: str, user: str,
                         prices: Mapping[str, Price], read: Callable[[str | dict[str, Any]], T], box: ToolBox, *,
                         schema: dict[str, Any] | None = None, name: str | None = None,
                         pacing: client.Pace | None = None) -> client.Asked[T]:
    """Ask with the tools of ``box``, run the calls the model makes, and read its answer with ``read``."""
    dialog = Dialog(tools=box.definitions(), final=box.left == 0,
                    note=final_note(box.max_calls) if box.left == 0 else None)
    usage = Usage()
    raws: list[str] = []
    retried = False
    sent = most = 0  # times this turn's question went out (asked again included); the most of any turn
    while True:
        try:
            reply = await client.send(http, spec, key, system, user, schema=schema, name=name, pacing=pacing,
                                      dialog=dialog)
        except Unusable as exc:
            usage += client.spent(exc.reply, spec.model, prices)
            raws.append(exc.reply.raw)
            sent += exc.reply.attempts
            if retried:
                raise AgentFault(f"no usable answer after a retry: {exc}", spent=usage,
                                 attempts=max(most, sent)) from None
            retried, dialog.note = True, _retry_note(str(exc))
            continue
        except AgentFault as fault:
            fault.attempts = max(most, sent + fault.attempts)
            raise client.with_spent(fault, usage) from None
        usage += client.spent(reply, spec.model, prices)
        raws.append(reply.raw)
        sent += reply.attempts
        most = max(most, sent)
        if reply.calls and reply.answer is None:
            await _run_calls(reply.calls, reply.turn, dialog, box, usage)
            sent = 0
            continue
        try:
            assert reply.answer is not None
            return client.Asked(read(reply.answer), usage, "\n".join(raws), most)
        except UnusableAnswer as exc:
            if retried:
                raise AgentFault(f"no usable answer after a retry: {exc}", spent=usage, attempts=most) from None
            retried, dialog.note = True, _retry_note(str(exc))


async def _run_calls(calls: list[Any], turn: dict[str, Any] | None, dialog: Dialog, box: ToolBox,
                     usage: Usage) -> None:
    """Answer the turn's calls into ``dialog``; once the budget is spent, the next request is the final one."""
    if dialog.final:
        raise AgentFault(f"its model asked for {len(calls)} more tool call(s) after its {box.max_calls} were "
                         "spent and was told to answer; it gave no answer", spent=usage)
    if len(calls) > MAX_CALLS_AT_ONCE:
        raise AgentFault(f"its model asked for {len(calls)} tool calls in one turn (at most {MAX_CALLS_AT_ONCE})",
                         spent=usage)
    results = []
    for call in calls:
        text, error = await box.call(call.name, call.arguments)
        results.append(ToolResult(call.id, text, error))
    assert turn is not None
    dialog.turns.append((turn, results))
    dialog.note = None
    if box.left == 0:
        dialog.final, dialog.note = True, final_note(box.max_calls)
