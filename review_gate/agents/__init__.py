"""Agent kinds, one module each, in an explicit registry keyed by the ``kind`` of an agent entry.

A kind's module is imported when the registry is first asked for it: a run of pattern agents
alone never imports the llm kind's providers and governor, and ``plan`` imports no kind at all.
"""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from importlib import import_module
from typing import TYPE_CHECKING, cast

from review_gate.agents.base import AgentContext, AgentKind, AgentOutput, AgentSpec, AgentTask

_MODULES = {"pattern": "review_gate.agents.pattern", "command": "review_gate.agents.command",
            "llm": "review_gate.agents.llm"}


class _Registry(MutableMapping[str, AgentKind]):
    """kind -> its module, imported when first asked for; a kind set here (a plugin, a test's
    fake) stands for the module of that name."""

    def __init__(self) -> None:
        self._kinds: dict[str, AgentKind] = {}

    def __getitem__(self, kind: str) -> AgentKind:
        found = self._kinds.get(kind)
        if found is None:
            found = self._kinds[kind] = cast(AgentKind, import_module(_MODULES[kind]))
        return found

    def __setitem__(self, kind: str, value: AgentKind) -> None:
        self._kinds[kind] = value

    def __delitem__(self, kind: str) -> None:
        if kind not in self:
            raise KeyError(kind)
        self._kinds.pop(kind, None)

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*_MODULES, *self._kinds]))

    def __len__(self) -> int:
        return len(set(_MODULES) | set(self._kinds))

    def __contains__(self, kind: object) -> bool:
        return kind in _MODULES or kind in self._kinds


KINDS: MutableMapping[str, AgentKind] = _Registry()

if TYPE_CHECKING:  # each module is held to the protocol, as an eager registry would be
    from review_gate.agents import command, llm, pattern

    _CHECKED: dict[str, AgentKind] = {"pattern": pattern, "command": command, "llm": llm}

__all__ = ["KINDS", "AgentContext", "AgentKind", "AgentOutput", "AgentSpec", "AgentTask"]
