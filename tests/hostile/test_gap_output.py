"""A gap's subject and reason come from the change (a path) or from the agent that added a
reviewer (its reason): terminal escapes, Markdown and HTML, mentions, code fences and GitHub
workflow commands in them stay inert in every report format and in ``review-gate gaps``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from review_gate.models import ConfigPatch, Gap, PatchOperation
from review_gate.outputs import FORMATS, renderer
from tests.cli.test_add_agent import DIFF
from tests.cli.test_add_agent import config as add_agent_config
from tests.hostile.test_escapes import PAYLOAD, assert_inert, strings
from tests.outputs.conftest import make_report

FORGED = ("\r\n::error file=app.py,line=1::pwned\n## owned <img src=x onerror=alert(1)> @org/team "
          "```` [click](http://evil) %0A::warning::x\n##[error]forged")
HOSTILE = PAYLOAD + FORGED
GAPS = [
    Gap(kind="unclassified_file", subject="**/*.x" + HOSTILE, reason="1 changed file(s) match no domain: a.x" + HOSTILE,
        suggestion="add" + HOSTILE,
        patch=ConfigPatch(file="review-domains.json", operations=[PatchOperation(
            op="add", path="/domains/-",
            value={"id": "x", "description": "x files" + HOSTILE, "paths": ["**/*.x" + HOSTILE], "risk_weight": 2})])),
    Gap(kind="agent_addition", subject="sec", reason=HOSTILE, suggestion="add a policy" + HOSTILE),
]
OURS = ("::notice title=review-gate gap ", "::notice title=review-gate::", "::error file=", "::warning file=",
        "::notice file=", "::error title=", "::warning title=", "::notice title=info")


def assert_no_forged_lines(text: str, fmt: str) -> None:
    """No line the payload starts: no workflow command, no log group, no heading of its own."""
    for line in text.splitlines():
        assert not line.startswith(("::error::", "::warning::", "##[", "## owned", "pwned")), line[:200]
        if line.startswith("::"):
            assert fmt == "github" and line.startswith(OURS), line[:200]


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_a_hostile_gap_is_inert_in_every_format(fmt: str) -> None:
    out = renderer(fmt)(make_report(gaps=GAPS))
    assert_inert(out)
    assert_no_forged_lines(out, fmt)
    if fmt in ("markdown", "meta"):
        assert "<img" not in out and "&lt;img" in out
        assert "@org" not in out and "@\u200dorg" in out
        assert "```" not in out and "[click](" not in out
    if fmt == "github":
        gap_lines = [line for line in out.splitlines() if line.startswith("::notice title=review-gate gap ")]
        assert len(gap_lines) == len(GAPS)  # each gap on its own one line, whatever its text holds
    if fmt == "text":
        assert len([line for line in out.splitlines() if line.startswith("gap ")]) == len(GAPS)


@pytest.mark.parametrize("fmt", ["json", "sarif", "gitlab", "rdjsonl"])
def test_machine_formats_keep_a_hostile_gap_exactly(fmt: str) -> None:
    out = renderer(fmt)(make_report(gaps=GAPS))
    data: Any = [json.loads(line) for line in out.splitlines()] if fmt == "rdjsonl" else json.loads(out)
    found = "\n".join(strings(data))
    assert HOSTILE in found  # escaped for the terminal, not changed


def test_the_gap_log_keeps_a_hostile_reason_inert(cli: Any, tmp_path: Path) -> None:
    cfg = add_agent_config(tmp_path)
    result = cli("--config", str(cfg), "--diff", "-", "--format", "json", "--add-agent", "sec",
                 "--gap-reason", HOSTILE, stdin=DIFF.encode())
    assert result.code == 0, result.err
    for fmt in ("text", "json", "markdown"):
        listed = cli("gaps", "--format", fmt, "--config", str(cfg))
        assert listed.code == 0
        assert_inert(listed.out + listed.err)
        assert_no_forged_lines(listed.out, fmt)
    [gap] = [g for g in cli("gaps", "--format", "json", "--config", str(cfg)).json()["gaps"]
             if g["kind"] == "agent_addition"]
    assert gap["reason"] == " ".join(HOSTILE.split())  # kept (one line), escaped only where it is shown
    draft = cli("gaps", "--format", "markdown", "--config", str(cfg)).out
    # the patch's code block is fenced longer than any run of backticks in it: nothing closes it early
    opening = next(line for line in draft.splitlines() if line.startswith("```") and line.endswith("json"))
    fence = opening.removesuffix("json")
    assert len(fence) > 4
    before, rest = draft.split(opening + "\n", 1)
    body, after = rest.split("\n" + fence + "\n", 1)
    assert json.loads(body)[0]["value"]["dispatch"] == ["sec"]
    prose = before + after  # outside the code block, where Markdown and HTML would act
    assert "<img" not in prose and "@org" not in prose and "```" not in prose
    applied = cli("gaps", "--apply", gap["id"], "--yes", "--config", str(cfg))
    assert applied.code == 0, applied.err
    assert_inert(applied.out + applied.err)
    assert_no_forged_lines(applied.out, "text")
    written = (cfg / "review-composition.json").read_text(encoding="utf-8")
    assert_inert(written)  # the reason documents the policy, its control characters escaped
    assert cli("config", "validate", "--config", str(cfg)).code == 0
