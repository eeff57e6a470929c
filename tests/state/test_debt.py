"""Deferred debt: what passing runs let through becomes one item per fingerprint across runs,
resolved only when a later run looked at its lines again, linked to the issue opened for it
once; and `review-gate debt` lists the items and drafts their issues, escaped."""

from __future__ import annotations

import json
import re
import sqlite3
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from review_gate.state.migrations import MIGRATIONS, SCHEMA_VERSION
from review_gate.state.store import open_store
from tests.cli.test_terminal import assert_fits, on_terminal
from tests.conftest import GitRepo

# A command agent that reports what the JSON file named by argv[1] holds (findings of the files
# in its scope, and those with no file): each test says what the "reviewer" finds in each run.
EMIT = """\
    import json, os, sys
    sys.stdin.read()
    files = json.loads(os.environ["REVIEW_GATE_FILES"])
    found = json.load(open(sys.argv[1], encoding="utf-8"))
    print(json.dumps({"findings": [f for f in found if f.get("file") in files or f.get("file") is None]}))
"""


class Reviewer:
    """A config dir whose agents (``lint``, and ``second`` if asked) report what ``finds`` gave them last."""

    def __init__(self, tmp_path: Path, agents: tuple[str, ...] = ("lint",)) -> None:
        self.cfg = tmp_path / "cfg"
        self.cfg.mkdir(parents=True)
        self.tmp = tmp_path
        program = tmp_path / "emit.py"
        program.write_text(textwrap.dedent(EMIT), encoding="utf-8")
        entries = [{"id": a, "name": a, "description": "reports what the test says", "kind": "command",
                    "command": [sys.executable, str(program), str(self.answers(a))], "timeout_s": 30, "retries": 0}
                   for a in agents]
        files = {"review-agents.json": {"version": 1, "agents": entries},
                 "review-composition.json": {"version": 1, "policies": [{
                     "id": "all", "description": "everything", "trigger": {"type": "always"},
                     "dispatch": list(agents)}]},
                 "review-rules.json": {"version": 1, "rules": []}}
        for name, data in files.items():
            (self.cfg / name).write_text(json.dumps(data), encoding="utf-8")
        for a in agents:
            self.finds(agent=a)

    def answers(self, agent: str = "lint") -> Path:
        return self.tmp / f"answer-{agent}.json"

    @property
    def answer(self) -> Path:
        return self.answers()

    def finds(self, *findings: dict[str, Any], agent: str = "lint") -> None:
        self.answers(agent).write_text(json.dumps(list(findings)), encoding="utf-8")


def finding(line: int, message: str = "a deferred warning", severity: str = "warning",
            file: str | None = "app.py") -> dict[str, Any]:
    return {"severity": severity, "message": message, "file": file, "line": line}


@pytest.fixture
def reviewer(tmp_path: Path) -> Reviewer:
    return Reviewer(tmp_path)


@pytest.fixture
def main(repo: GitRepo) -> GitRepo:
    """A repository whose main branch has app.py with one line; the tests change the working tree."""
    repo.write("app.py", "a = 1\n")
    repo.commit("init")
    return repo


def review(cli: Any, reviewer: Reviewer, *args: str) -> tuple[int, dict[str, Any]]:
    result = cli("--config", str(reviewer.cfg), "--format", "json", *args)
    assert result.out, result.err
    return result.code, result.json()


def items(cli: Any, reviewer: Reviewer, *args: str) -> list[dict[str, Any]]:
    result = cli("debt", "--config", str(reviewer.cfg), "--format", "json", *args)
    assert result.code == 0, result.err
    found: list[dict[str, Any]] = result.json()["items"]
    return found


# ---------------------------------------------------------------------------- recording


def test_a_warning_of_a_passing_run_is_one_item_across_runs(cli: Any, main: GitRepo, reviewer: Reviewer) -> None:
    main.write("app.py", "a = 1\nb = 2\n")
    reviewer.finds(finding(2, "first wording"))
    code, first = review(cli, reviewer)
    assert (code, first["decision"]) == (0, "pass_with_warnings")
    [item] = items(cli, reviewer)
    assert (item["id"], item["status"], item["runs"], item["line"]) == (1, "open", 1, 2)
    assert item["fingerprint"] == first["findings"][0]["fingerprint"] and item["first_run"] == first["run_id"]

    main.write("app.py", "z = 0\na = 1\nb = 2\n")  # the flagged line moved: the fingerprint did not
    reviewer.finds(finding(3, "second wording"))
    _, second = review(cli, reviewer)
    [item] = items(cli, reviewer)
    assert (item["id"], item["runs"], item["line"], item["message"]) == (1, 2, 3, "second wording")
    assert (item["first_run"], item["last_run"]) == (first["run_id"], second["run_id"])


def test_an_item_is_resolved_once_a_run_on_the_same_base_no_longer_reports_it(
        cli: Any, main: GitRepo, reviewer: Reviewer) -> None:
    main.write("app.py", "a = 1\nb = 2\n")
    reviewer.finds(finding(2))
    review(cli, reviewer)
    main.write("app.py", "a = 11\n")  # the flagged line is gone; the file is still changed
    reviewer.finds()
    _, report = review(cli, reviewer)
    assert items(cli, reviewer) == []
    [item] = items(cli, reviewer, "--all")
    assert item["status"] == "resolved" and item["closed_run"] == report["run_id"]
    assert item["resolution"] == f"lint no longer reports it in app.py (run {report['run_id']})"
    listed = cli("debt", "--config", str(reviewer.cfg))
    assert listed.code == 0 and "no open debt items" in listed.err


def test_an_item_stays_open_while_no_run_looks_at_its_lines_again(cli: Any, main: GitRepo,
                                                                 reviewer: Reviewer) -> None:
    """The line became part of the base: a later diff does not show it, so its absence proves nothing."""
    main.write("app.py", "a = 1\nb = 2\n")
    reviewer.finds(finding(2))
    review(cli, reviewer)
    main.commit("merged with its warning")
    main.write("app.py", "a = 1\nb = 2\nc = 3\n")
    reviewer.finds()
    review(cli, reviewer)
    [item] = items(cli, reviewer)
    assert item["status"] == "open" and item["runs"] == 1

    reviewer.answer.write_text("not json", encoding="utf-8")  # the agent fails: it looked at nothing
    result = cli("sweep", "app.py", "--config", str(reviewer.cfg), "--format", "json")
    assert result.code == 3 and result.json()["decision"] == "incomplete"
    assert items(cli, reviewer)[0]["status"] == "open"

    reviewer.finds()
    swept = cli("sweep", "app.py", "--config", str(reviewer.cfg), "--format", "json")  # the whole file, shown
    assert swept.code == 0, swept.err
    [item] = items(cli, reviewer, "--all")
    assert item["status"] == "resolved" and "no longer reports it in app.py" in item["resolution"]


def test_an_item_another_agent_reported_more_severely_stays_open(cli: Any, main: GitRepo,
                                                                 tmp_path: Path) -> None:
    """Merged into another agent's finding, it is still reported: not resolved, seen once more."""
    reviewer = Reviewer(tmp_path / "two", agents=("lint", "second"))
    main.write("app.py", "a = 1\nb = 2\n")
    reviewer.finds(finding(2, "the same problem"))
    review(cli, reviewer)
    reviewer.finds(finding(2, "the same problem", severity="major"), agent="second")
    _, report = review(cli, reviewer, "--no-cache")  # the program changed its mind, not the file
    assert report["decision"] == "needs_fixes"
    assert [(f["agent"], f["also_reported_by"]) for f in report["findings"]] == [("second", ["lint"])]
    [item] = items(cli, reviewer)
    assert (item["agent"], item["status"], item["runs"]) == ("lint", "open", 2)


def test_deleting_the_file_resolves_its_items(cli: Any, main: GitRepo, reviewer: Reviewer) -> None:
    main.write("app.py", "a = 1\nb = 2\n")
    reviewer.finds(finding(2))
    review(cli, reviewer)
    main.commit("kept")
    main.git("rm", "-q", "app.py")
    main.write("other.py", "x = 1\n")
    reviewer.finds()
    review(cli, reviewer)
    [item] = items(cli, reviewer, "--all")
    assert item["status"] == "resolved" and item["resolution"].startswith("app.py was deleted")


@pytest.mark.parametrize(("found", "args", "decision", "code"), [
    ([finding(2, severity="major"), finding(2, "also", severity="warning")], (), "needs_fixes", 1),
    ([finding(2)], ("--fail-on", "pass_with_warnings"), "pass_with_warnings", 1),
    ([finding(2, severity="major")], ("--exit-zero",), "needs_fixes", 0),
    ([finding(2, severity="info")], (), "pass", 0),
])
def test_runs_that_do_not_pass_with_it_defer_nothing(cli: Any, main: GitRepo, reviewer: Reviewer,
                                                    found: list[dict[str, Any]], args: tuple[str, ...],
                                                    decision: str, code: int) -> None:
    main.write("app.py", "a = 1\nb = 2\n")
    reviewer.finds(*found)
    assert review(cli, reviewer, *args)[0] == code
    assert review(cli, reviewer, *args)[1]["decision"] == decision
    assert items(cli, reviewer, "--all") == []


def test_a_major_a_custom_gate_lets_through_is_debt(cli: Any, main: GitRepo, reviewer: Reviewer) -> None:
    (reviewer.cfg / "review-gate.json").write_text(json.dumps({"version": 1, "gate": {"conditions": [
        {"metric": "major", "op": ">", "value": 2, "decision": "needs_fixes"},
        {"metric": "total", "op": ">", "value": 0, "decision": "pass_with_warnings"}]}}))
    main.write("app.py", "a = 1\nb = 2\n")
    reviewer.finds(finding(2, severity="major"))
    assert review(cli, reviewer)[1]["decision"] == "pass_with_warnings"
    assert [i["severity"] for i in items(cli, reviewer)] == ["major"]


def test_accepted_findings_are_not_debt_and_accepting_one_waives_its_item(cli: Any, main: GitRepo,
                                                                         reviewer: Reviewer) -> None:
    main.write("app.py", "a = 1\nb = 2\nc = 3\n")
    reviewer.finds(finding(2, "deferred"), finding(3, "accepted first"))
    _, report = review(cli, reviewer)
    by_message = {f["message"]: f["fingerprint"] for f in report["findings"]}
    assert len(items(cli, reviewer)) == 2
    for message in ("deferred", "accepted first"):
        assert cli("accept", by_message[message], "--reason", "known", "--config", str(reviewer.cfg)).code == 0
    review(cli, reviewer)
    assert items(cli, reviewer) == []
    resolved = {(i["status"], i["resolution"]) for i in items(cli, reviewer, "--all")}
    assert resolved == {("waived", "accepted by test@example.com: known")}


# ---------------------------------------------------------------------------- linking issues


def test_link_records_the_issue_once(cli: Any, main: GitRepo, reviewer: Reviewer) -> None:
    main.write("app.py", "a = 1\nb = 2\n")
    reviewer.finds(finding(2))
    review(cli, reviewer)
    cfg = ("--config", str(reviewer.cfg))
    url = "https://github.com/acme/shop/issues/41"
    linked = cli("debt", "link", "1", url, *cfg)
    assert linked.code == 0 and linked.out.strip() == f"linked debt item 1 to {url}"
    again = cli("debt", *cfg, "link", "1", url)  # --config before the action works too
    assert again.code == 0 and "already" in again.out
    other = cli("debt", "link", "1", "https://github.com/acme/shop/issues/42", *cfg)
    assert other.code == 2 and "already linked to " + url in other.err and "--replace" in other.err
    assert items(cli, reviewer)[0]["issue_url"] == url
    assert items(cli, reviewer, "--unlinked") == []
    assert cli("debt", *cfg).out.splitlines()[1].split()[5] == "#41"
    fingerprint = items(cli, reviewer)[0]["fingerprint"]
    moved = cli("debt", "link", fingerprint[:8], "https://github.com/acme/shop/issues/42", "--replace", *cfg)
    assert moved.code == 0 and items(cli, reviewer)[0]["issue_url"].endswith("/42")
    for ref, url_given, message in (("7", url, "no debt item '7'"), ("1", "javascript:alert(1)", "not an issue URL"),
                                    ("1", "https://x/\n/issues/1", "not an issue URL")):
        refused = cli("debt", "link", ref, url_given, *cfg)
        assert refused.code == 2 and message in refused.err and "Traceback" not in refused.err


def test_a_resolved_item_that_comes_back_keeps_its_issue(cli: Any, main: GitRepo, reviewer: Reviewer) -> None:
    main.write("app.py", "a = 1\nb = 2\n")
    reviewer.finds(finding(2))
    review(cli, reviewer)
    assert cli("debt", "link", "1", "https://github.com/acme/shop/issues/3", "--config", str(reviewer.cfg)).code == 0
    main.write("app.py", "a = 11\n")
    reviewer.finds()
    review(cli, reviewer)
    main.write("app.py", "a = 1\nb = 2\n")
    reviewer.finds(finding(2))
    review(cli, reviewer)
    [item] = items(cli, reviewer)
    assert (item["id"], item["status"], item["issue_url"]) == (1, "open", "https://github.com/acme/shop/issues/3")
    assert items(cli, reviewer, "--unlinked") == []


# ---------------------------------------------------------------------------- issue drafts

HOSTILE = ("<script>alert(1)</script> @octocat see [here](https://evil.example) `x` | y\n"
           "# Heading\r\x1b[31mred ![img](https://evil.example/i.png)")


def test_markdown_drafts_escape_what_agents_wrote(cli: Any, main: GitRepo, reviewer: Reviewer,
                                                  tmp_path: Path) -> None:
    main.write("app.py", "a = 1\nb = 2\n")
    reviewer.finds({**finding(2, HOSTILE), "recommendation": "<b>@team</b> " + "long " * 40})
    review(cli, reviewer)
    drafts = cli("debt", "--config", str(reviewer.cfg), "--format", "markdown")
    assert drafts.code == 0, drafts.err
    text = drafts.out
    for raw in ("<script>", "<b>", "@octocat", "@team", "[here](", "![img](", "\x1b", "\r", "\n# Heading"):
        assert raw not in text, raw
    assert "&lt;script&gt;" in text and "@\u200doctocat" in text and "<br>" in text
    assert text.count("<!-- review-gate-debt:") == 1

    [item] = items(cli, reviewer)
    title = item["title"]
    assert "\n" not in title and "\r" not in title and "\x1b" not in title
    assert len(title) <= 120 and "@\u200doctocat" in title and title.startswith("Tech debt (warning): ")
    body = item["body"]
    assert body.startswith(f"<!-- review-gate-debt:{item['fingerprint']} -->\n")
    assert "<script>" not in body

    out = tmp_path / "drafts"
    written = cli("debt", "--config", str(reviewer.cfg), "--drafts", str(out))
    assert written.code == 0 and written.out.split() == ["1"]
    assert (out / "1.title").read_text(encoding="utf-8") == title + "\n"
    assert (out / "1.md").read_text(encoding="utf-8") == body
    saved = tmp_path / "debt.md"
    assert cli("debt", "--config", str(reviewer.cfg), "--format", "markdown", "--output", str(saved)).code == 0
    assert saved.read_text(encoding="utf-8").strip() == text.strip()


def test_limit_keeps_the_most_severe_then_the_oldest(cli: Any, main: GitRepo, reviewer: Reviewer) -> None:
    (reviewer.cfg / "review-gate.json").write_text(json.dumps({"version": 1, "gate": {"conditions": [
        {"metric": "total", "op": ">", "value": 0, "decision": "pass_with_warnings"}]}}))
    main.write("app.py", "a = 1\nb = 2\nc = 3\nd = 4\n")
    reviewer.finds(finding(2, "first"), finding(3, "second"), finding(4, "worse", severity="major"))
    review(cli, reviewer)
    assert [i["message"] for i in items(cli, reviewer, "--limit", "2")] == ["worse", "first"]
    refused = cli("debt", "--limit", "0", "--config", str(reviewer.cfg))
    assert refused.code == 2 and "--limit 0: must be at least 1" in refused.err
    refused = cli("debt", "--output", "x.txt", "--config", str(reviewer.cfg))
    assert refused.code == 2 and "--format markdown" in refused.err and not Path("x.txt").exists()


def test_nothing_recorded_is_not_an_error(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    listed = cli("debt")
    assert listed.code == 0 and "no debt recorded yet" in listed.err
    assert json.loads(cli("debt", "--format", "json").out) == {"schema_version": 1, "items": []}
    refused = cli("debt", "link", "1", "https://github.com/a/b/issues/1")
    assert refused.code == 2 and "no debt recorded yet" in refused.err


@pytest.mark.parametrize("columns", [80, 120])
def test_the_table_fits_the_terminal_and_keeps_ids_whole(cli: Any, main: GitRepo, reviewer: Reviewer,
                                                         review_gate_bin: list[str], columns: int) -> None:
    path = "src/a/rather/long/directory/of/components/and/modules/app_service.py"
    main.write(path, "x = 1\n")
    reviewer.finds(finding(1, "a message long enough to need wrapping " * 4, file=path), finding(1, file=None))
    review(cli, reviewer)
    code, lines = on_terminal([*review_gate_bin, "debt", "--config", str(reviewer.cfg)], main.root, columns)
    assert code == 0
    assert_fits([line for line in lines if line], columns)
    assert re.match(r"^id +severity +where +runs +first +issue +message$", lines[0])
    assert re.match(r"^ *1  warning  ", lines[1]) and any(re.match(r"^ *2  warning  ", line) for line in lines)
    assert any("app_service.py:1" in line for line in lines)  # a long path keeps its end


def test_a_version_6_state_gains_the_debt_table(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute("INSERT INTO meta VALUES ('application', 'review-gate'), ('schema_version', '6')")
    for version in range(1, 7):
        for statement in MIGRATIONS[version]:
            db.execute(statement)
    db.execute("INSERT INTO review_runs (id, started_at, source, config_sha, status, pid, host) "
               "VALUES ('r1', '2026-01-01T00:00:00Z', 'x', 'c', 'completed', 1, 'h')")
    db.commit()
    db.close()
    store = open_store(path)
    assert store is not None
    with store:
        assert store.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (
            str(SCHEMA_VERSION),)
        assert store.db.execute("SELECT COUNT(*) FROM debt_items").fetchone() == (0,)
        assert store.db.execute("SELECT id FROM review_runs").fetchall() == [("r1",)]


def test_debt_survives_the_runs_being_dropped(cli: Any, main: GitRepo, reviewer: Reviewer) -> None:
    main.write("app.py", "a = 1\nb = 2\n")
    reviewer.finds(finding(2))
    review(cli, reviewer)
    assert cli("gc", "--keep", "0", "--config", str(reviewer.cfg)).code == 0
    assert [i["status"] for i in items(cli, reviewer)] == ["open"]
