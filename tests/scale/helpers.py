"""Shared by the scale tests: a config of llm agents at the test server plus a pattern agent,
and running the batch commands through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import make_diff
from tests.llm.conftest import KEY, llm_agent, write_config
from tests.llm.server import LlmServer, Step

PATTERN_RULE = {"id": "no-eval", "name": "no eval", "severity": "major", "agent": "patterns", "category": "security",
                "description": "eval runs arbitrary code", "detection": "eval(", "recommendation": "parse it",
                "pattern": r"\beval\("}
PATTERN_AGENT = {"id": "patterns", "name": "patterns", "description": "regex rules", "kind": "pattern"}

DIFF = (make_diff("app/one.py", ["x = eval(y)", "print(x)"]) + make_diff("app/two.py", ["a = 1"])
        + make_diff("app/three.py", ["b = 2", "c = 3"]))


def batch_config(tmp_path: Path, server: LlmServer, *, providers: tuple[str, ...] = ("openai",),
                 **settings: Any) -> Path:
    """llm agents reviewer-<provider> (one per provider), a pattern agent, one always policy."""
    agents = [llm_agent(f"reviewer-{p}", server, provider=p) for p in providers]
    settings.setdefault("prices", {"test-model": {"input_per_mtok": 2.0, "output_per_mtok": 8.0}})
    return write_config(tmp_path, [*agents, PATTERN_AGENT], rules=[PATTERN_RULE], **settings)


def finding_on_every_file(request: Any) -> Step:
    """A model that reports one warning on line 1 of each file it is shown."""
    from tests.llm.server import every_file

    return every_file(request)


def submit(cli: Any, cfg: Path, diff: str = DIFF, *extra: str) -> tuple[Any, dict[str, Any]]:
    result = cli("batch", "submit", "--config", str(cfg), "--diff", "-", "--format", "json", *extra,
                 stdin=diff.encode())
    assert result.out, result.err
    return result, json.loads(result.out)


def collect(cli: Any, cfg: Path, *extra: str) -> tuple[Any, dict[str, Any] | None]:
    result = cli("batch", "collect", "--config", str(cfg), "--format", "json", *extra)
    return result, (json.loads(result.out) if result.out else None)


__all__ = ["KEY", "batch_config", "collect", "submit"]
