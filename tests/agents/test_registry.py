"""The agent kinds: every module in the registry is a whole ``AgentKind``."""

from __future__ import annotations

import pytest

from review_gate.agents import KINDS, base


@pytest.mark.parametrize("name", sorted(KINDS))
def test_every_kind_has_every_member_of_the_protocol(name: str) -> None:
    kind = KINDS[name]
    assert isinstance(kind.needs_network, bool)
    assert callable(kind.review) and callable(kind.unavailable)
    assert kind.estimate is None or callable(kind.estimate)


@pytest.mark.parametrize("name", ["pattern", "command"])
def test_kinds_that_call_no_model_take_the_shared_defaults(name: str) -> None:
    kind = KINDS[name]
    assert kind.unavailable is base.always_available
    assert kind.estimate is base.SPENDS_NOTHING is None
