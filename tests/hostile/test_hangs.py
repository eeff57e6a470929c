"""Hostile input must not hang the gate or blow up what it keeps: a huge line range, thousands of
findings on one line, a regex that matches everywhere in a big diff, a huge model answer.

Anything that could hang runs in a subprocess with a generous timeout, so a regression fails
the test instead of stalling CI.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import make_diff
from tests.hostile.helpers import command_agent, script, write_config
from tests.llm.conftest import KEY, llm_agent
from tests.llm.conftest import write_config as llm_config
from tests.llm.server import LlmServer, Step

HUGE = 10**15


def run_cli(review_gate_bin: list[str], *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """The real CLI in its own process; a hang fails the test at ``timeout`` instead of stalling CI."""
    try:
        return subprocess.run([*review_gate_bin, *args], capture_output=True, text=True, timeout=timeout,
                              check=False)
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"review-gate {' '.join(args)} did not exit within {timeout} s") from exc


# ---------------------------------------------------------------------------- item 8: huge line ranges


@pytest.mark.parametrize("mode", ["added", "diff_context"])
def test_a_finding_with_an_astronomical_end_line_neither_hangs_nor_leaks_its_range(
        review_gate_bin: list[str], tmp_path: Path, mode: str) -> None:
    findings = [
        # off the diff: the old filter walked every line up to 10**15 looking for an added one
        {"severity": "major", "message": "far away", "file": "app.py", "line": 50, "end_line": HUGE},
        {"severity": "major", "message": "on the change", "file": "app.py", "line": 2, "end_line": HUGE},
    ]
    prog = script(tmp_path, "far.py", f"""\
        import json, sys
        sys.stdin.read()
        print(json.dumps({{"findings": {findings!r}}}))
    """)
    cfg = write_config(tmp_path, [command_agent("far", prog)])
    diff = tmp_path / "change.diff"
    diff.write_text(make_diff("app.py", ["a = 1", "b = 2", "c = 3"]))
    done = run_cli(review_gate_bin, "--config", str(cfg), "--diff", str(diff), "--no-state", "--format", "json",
                   "--filter-mode", mode, timeout=60)
    report = json.loads(done.stdout)
    assert [f["message"] for f in report["findings"]] == ["on the change"]
    [kept] = report["findings"]
    assert (kept["line"], kept["end_line"]) == (2, 3)  # clamped to the last line the diff knows
    assert report["coverage"]["findings_filtered"] == 1


# ---------------------------------------------------------------------------- item 9: dedupe


DEDUPE = """\
    import hashlib, json, sys
    from review_gate.models import Finding
    from review_gate.pipeline.aggregate import dedupe

    count = int(sys.argv[1])
    def word(i):
        return hashlib.sha256(str(i).encode()).hexdigest()[:32]
    distinct = [Finding(fingerprint=word(i), agent="a", rule_id=f"r{i}", severity="major", category="c",
                        file="a.py", line=1, end_line=1, message=f"finding {word(i)} {word(-i)}")
                for i in range(count)]
    same_rule = [Finding(fingerprint=word(i), agent=f"agent{i % 3}", rule_id="r", severity="major",
                         category="c", file="a.py", line=1, end_line=1, message=word(i))
                 for i in range(count)]
    merged = dedupe(same_rule)
    print(json.dumps({"distinct": len(dedupe(distinct)), "same_rule": len(merged),
                      "also": sorted(merged[0].also_reported_by)}))
"""


def test_dedupe_of_thousands_of_findings_on_one_line_finishes(tmp_path: Path) -> None:
    # Before: every finding was compared with every kept one by difflib: 3,000 took six minutes.
    program = script(tmp_path, "dedupe.py", DEDUPE)
    try:
        done = subprocess.run([sys.executable, str(program), "3000"], capture_output=True, text=True,
                              timeout=60, check=True)
    except subprocess.TimeoutExpired as exc:
        raise AssertionError("dedupe of 3,000 findings on one line did not finish within 60 s") from exc
    result = json.loads(done.stdout)
    assert result == {"distinct": 3000, "same_rule": 1, "also": ["agent1", "agent2"]}


def test_dedupe_still_merges_near_identical_messages_of_other_rules() -> None:
    from review_gate.models import Finding
    from review_gate.pipeline.aggregate import dedupe

    def finding(agent: str, rule: str | None, message: str, line: int = 7) -> Finding:
        return Finding(fingerprint=agent + message, agent=agent, rule_id=rule, severity="major", category="c",
                       file="a.py", line=line, end_line=line, message=message)

    merged = dedupe([
        finding("a", "sql-01", "SQL query built by string formatting"),
        finding("b", None, "SQL query built by string formatting."),  # near-identical: merged
        finding("c", "other", "sql   QUERY built by string formatting"),  # same words: merged
        finding("d", "sql-01", "something else entirely"),  # same rule: merged
        finding("e", None, "SQL query built by string formatting", line=8),  # another line: kept
        finding("f", None, "An unrelated remark"),  # kept
    ])
    assert [(f.agent, f.line, f.also_reported_by) for f in merged] == [
        ("a", 7, ["b", "c", "d"]), ("e", 8, []), ("f", 7, [])]


# ---------------------------------------------------------------------------- item 10: --timeout is hard


def broad_rule(pattern: str) -> dict[str, Any]:
    return {"id": "broad-01", "name": "Anything", "severity": "info", "agent": "broad", "category": "style",
            "description": "matches everywhere", "detection": "any character", "recommendation": "none",
            "pattern": pattern}


def test_a_pattern_agent_past_its_deadline_stops_scanning_and_the_run_exits(
        review_gate_bin: list[str], tmp_path: Path) -> None:
    # 20,000 lines of 500 characters: "." matches ten million times. Before, the report came at
    # the deadline and the process then waited for the abandoned scan (about a minute).
    cfg = write_config(tmp_path, [{"id": "broad", "name": "broad", "description": "one broad rule",
                                   "kind": "pattern", "timeout_s": 30}], rules=[broad_rule(".")])
    diff = tmp_path / "big.diff"
    diff.write_text(make_diff("big.txt", ["x" * 500] * 20_000))
    done = run_cli(review_gate_bin, "--config", str(cfg), "--diff", str(diff), "--no-state", "--format", "json",
                   "--timeout", "0.5", timeout=20)
    report = json.loads(done.stdout)
    [agent] = report["agents"]
    assert agent["status"] == "timed_out", agent
    assert done.returncode == 3


def test_a_cancelled_scan_gives_no_findings_but_an_uncancelled_one_all(tmp_path: Path) -> None:
    import threading

    from review_gate.agents import pattern
    from review_gate.agents.base import AgentTask
    from review_gate.change.diff_parser import parse_diff
    from review_gate.models import Rule

    files = parse_diff(make_diff("a.txt", ["xy"] * 3000).encode())
    rule = Rule.model_validate({**broad_rule("."), "agent": "broad"})
    task = AgentTask(files=files, rules=[rule], repo_root=None, config_dir=None)
    assert len(pattern.scan(task).findings) == 3000
    stop = threading.Event()
    stop.set()
    with pytest.raises(pattern.Cancelled):
        pattern.scan(task, stop)


# ---------------------------------------------------------------------------- item 12: raw answers are capped


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEST_LLM_KEY", KEY)


def padded_answer(size: int) -> bytes:
    """A valid chat-completions answer whose text is a findings JSON padded with ``size`` spaces."""
    content = json.dumps({"findings": []}) + " " * size
    return json.dumps({"id": "x", "object": "chat.completion", "model": "test-model", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 10}}).encode()


def llm_review(cli: Any, tmp_path: Path, server: LlmServer) -> tuple[dict[str, Any], Path]:
    cfg = llm_config(tmp_path, [llm_agent("llm", server, retries=0)])
    bundle = tmp_path / "bundle"
    result = cli("--config", str(cfg), "--diff", "-", "--no-state", "--format", "json", "--bundle", str(bundle),
                 stdin=make_diff("app.py", ["x = 1"]).encode())
    report = result.json()
    return next(a for a in report["agents"] if a["id"] == "llm"), bundle / "agents" / "llm.json"


@pytest.mark.usefixtures("key")
def test_a_large_llm_answer_is_kept_capped_in_the_bundle(cli: Any, tmp_path: Path) -> None:
    from review_gate.agents.base import RAW_LIMIT

    with LlmServer() as server:
        server.default = Step(body=padded_answer(3 * RAW_LIMIT))
        agent, saved = llm_review(cli, tmp_path, server)
    assert agent["status"] == "completed", agent
    assert saved.stat().st_size < RAW_LIMIT + 100_000
    raw = json.loads(saved.read_text())["raw"]
    assert raw.endswith(" bytes]\n") and "capped" in raw.splitlines()[-1]


@pytest.mark.usefixtures("key")
@pytest.mark.parametrize("encoding", ["identity", "gzip"])
def test_an_llm_answer_over_the_response_limit_fails_the_agent_without_keeping_it(
        cli: Any, tmp_path: Path, encoding: str) -> None:
    # gzip: ten kilobytes on the wire that inflate past the limit (a decompression bomb)
    from review_gate.llm.providers.common import MAX_ANSWER_BYTES

    body = padded_answer(MAX_ANSWER_BYTES + 1000)
    step = Step(body=body) if encoding == "identity" else Step(body=gzip.compress(body),
                                                                headers={"content-encoding": "gzip"})
    with LlmServer() as server:
        server.default = step
        agent, saved = llm_review(cli, tmp_path, server)
    assert agent["status"] == "failed"
    assert f"answer larger than {MAX_ANSWER_BYTES} bytes" in agent["error"]
    assert saved.stat().st_size < 100_000


@pytest.mark.usefixtures("key")
def test_a_compressed_llm_answer_within_the_limit_is_read(cli: Any, tmp_path: Path) -> None:
    with LlmServer() as server:
        server.default = Step(body=gzip.compress(padded_answer(1000)), headers={"content-encoding": "gzip"})
        agent, _ = llm_review(cli, tmp_path, server)
    assert agent["status"] == "completed", agent


def test_a_command_agents_huge_output_is_capped_by_the_shared_helper(tmp_path: Path) -> None:
    from review_gate.agents.base import RAW_LIMIT, AgentOutput, cap_raw

    big = "é" * RAW_LIMIT  # two bytes each: the cap counts bytes, not characters
    capped = cap_raw(big)
    assert len(capped.encode()) < RAW_LIMIT + 200
    assert capped.startswith("é" * 1000) and f"of {2 * RAW_LIMIT} bytes" in capped
    assert AgentOutput(findings=[], raw=big).raw == capped
    assert cap_raw("small") == "small"


def test_the_bundle_writer_caps_raw_answers_it_did_not_produce() -> None:
    # A kind that forgot to cap (or a result built elsewhere) still cannot fill the disk.
    from review_gate.agents.base import RAW_LIMIT
    from review_gate.models import AgentResult
    from review_gate.pipeline.bundles import result_data

    result = AgentResult(id="x", kind="command", status="completed", attempts=1, duration_s=0.1, files=[],
                         raw="y" * (5 * RAW_LIMIT))
    assert len(result_data(result)["raw"].encode()) < RAW_LIMIT + 200
