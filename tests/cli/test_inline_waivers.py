"""Inline waivers (`review-gate: ignore[RULE] reason`) and the peers' suppressions, through the
real CLI on real git repositories: what they waive, how every format shows them, what counts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import GitRepo

EVAL = "total = eval(expression)"


def _change(repo: GitRepo, *lines: str, path: str = "app.py") -> None:
    repo.branch("feature")
    repo.write(path, "\n".join(lines) + "\n")


def _report(cli: Any, *extra: str) -> tuple[int, dict[str, Any]]:
    result = cli("--offline", "--no-state", "--format", "json", *extra)
    return result.code, json.loads(result.out)


def test_a_waiver_with_a_reason_waives_its_finding_and_is_counted(repo: GitRepo, cli: Any) -> None:
    _change(repo, f"{EVAL}  # review-gate: ignore[sec-py-eval-01] the expression is our constant table")
    code, report = _report(cli)
    assert [f["rule_id"] for f in report["findings"]] == []
    [waived] = report["waived"]
    assert waived["rule_id"] == "sec-py-eval-01"
    assert waived["inline_waiver"]["added"] is True
    assert waived["inline_waiver"]["reason"] == "the expression is our constant table"
    assert waived["waived"].startswith("waived in this change: the expression is our constant table")
    assert waived["waived_kind"] == "inline"
    assert report["metrics"]["waived_inline"] == 1
    # the change waives its own finding: never a clean pass
    assert report["decision"] == "pass_with_warnings" and code == 0


def test_the_line_above_and_other_comment_syntaxes(repo: GitRepo, cli: Any) -> None:
    _change(repo, "// review-gate: ignore[sec-js-eval-01] a sandboxed worker evaluates it */",
            "const v = eval(input);", path="web/app.js")
    _, report = _report(cli)
    assert report["findings"] == []
    assert [f["rule_id"] for f in report["waived"]] == ["sec-js-eval-01"]
    assert report["waived"][0]["inline_waiver"]["line"] == 1


def test_a_waiver_without_a_reason_waives_nothing_and_is_reported(repo: GitRepo, cli: Any) -> None:
    _change(repo, f"{EVAL}  # review-gate: ignore[sec-py-eval-01]")
    code, report = _report(cli)
    rules = sorted(f["rule_id"] for f in report["findings"])
    assert rules == ["inline-waiver", "sec-py-eval-01"]
    problem = next(f for f in report["findings"] if f["rule_id"] == "inline-waiver")
    assert problem["severity"] == "warning" and problem["file"] == "app.py" and problem["line"] == 1
    assert "without a reason" in problem["message"]
    assert "ignore[RULE_ID]" in problem["recommendation"]
    assert report["waived"] == [] and report["metrics"]["waived_inline"] == 0
    assert code == 1


def test_a_waiver_for_an_unknown_rule_names_the_closest_ids(repo: GitRepo, cli: Any) -> None:
    _change(repo, f"{EVAL}  # review-gate: ignore[sec-py-eval-1] typo in the id")
    _, report = _report(cli)
    problem = next(f for f in report["findings"] if f["rule_id"] == "inline-waiver")
    assert "sec-py-eval-1" in problem["message"] and "sec-py-eval-01" in problem["message"]
    assert any(f["rule_id"] == "sec-py-eval-01" for f in report["findings"])


def test_a_waiver_for_another_rule_does_not_waive(repo: GitRepo, cli: Any) -> None:
    _change(repo, f"{EVAL}  # review-gate: ignore[hyg-debug-print-01] not this one")
    _, report = _report(cli)
    assert [f["rule_id"] for f in report["findings"]] == ["sec-py-eval-01"]


def test_llm_findings_are_named_by_the_agent_id(repo: GitRepo, cli: Any) -> None:
    """An id that is an agent's is known (no warning); it waives that agent's findings."""
    _change(repo, f"{EVAL}  # review-gate: ignore[security-reviewer] reviewed by the security team")
    _, report = _report(cli)
    assert [f["rule_id"] for f in report["findings"]] == ["sec-py-eval-01"]


def test_peer_suppressions_waive_the_rules_that_name_their_code(repo: GitRepo, cli: Any) -> None:
    _change(repo, "requests.get(url, verify=False, timeout=5)  # noqa: S501",
            "data = yaml.load(stream)  # nosec B506",
            "value = eval(text)  # noqa",
            "print(value)  # noqa: E501")
    _, report = _report(cli)
    waived = {f["rule_id"]: f for f in report["waived"]}
    assert set(waived) == {"sec-tls-verify-01", "sec-yaml-load-01"}
    assert waived["sec-tls-verify-01"]["inline_waiver"]["comment"] == "# noqa: S501"
    assert "# noqa: S501" in waived["sec-tls-verify-01"]["waived"]
    # a peer's suppression is its own reason: said once, not "the comment (the comment)" (a trial)
    notices = [line for line in cli("--offline", "--no-state", "--format", "github").out.splitlines()
               if "sec-tls-verify-01" in line and line.startswith("::notice")]
    assert len(notices) == 1 and notices[0].endswith("Waived in this change: # noqa: S501"), notices
    # a blanket noqa and a code no rule maps waive nothing
    assert {f["rule_id"] for f in report["findings"]} == {"sec-py-eval-01", "hyg-debug-print-01"}
    assert report["metrics"]["waived_inline"] == 2


def test_a_waiver_the_base_has_does_not_waive_a_line_the_change_adds_below_it(repo: GitRepo, cli: Any) -> None:
    """The comment was reviewed for the line that was under it then; a new line there is judged."""
    repo.write("app.py", "# review-gate: ignore[sec-py-eval-01] the table is ours\nx = 1\n")
    repo.commit("a reviewed waiver")
    repo.branch("feature")
    repo.write("app.py", f"# review-gate: ignore[sec-py-eval-01] the table is ours\n{EVAL}\n")
    code, report = _report(cli)
    assert report["waived"] == []
    assert [f["rule_id"] for f in report["findings"]] == ["sec-py-eval-01"]
    assert report["findings"][0]["line"] == 2 and code == 1


def test_a_trailing_waiver_speaks_for_its_own_line_only(repo: GitRepo, cli: Any) -> None:
    """A comment after code is that line's; only a comment alone on its line speaks for the next."""
    _change(repo, f"{EVAL}  # review-gate: ignore[sec-py-eval-01] the expression is our constant table",
            "again = eval(other)",
            "requests.get(url, verify=False, timeout=5)  # nosec B501",
            "requests.get(url, verify=False, timeout=6)")
    code, report = _report(cli)
    assert sorted((f["rule_id"], f["line"]) for f in report["waived"]) == [("sec-py-eval-01", 1),
                                                                           ("sec-tls-verify-01", 3)]
    assert sorted((f["rule_id"], f["line"]) for f in report["findings"]) == [("sec-py-eval-01", 2),
                                                                             ("sec-tls-verify-01", 4)]
    assert code == 1


def test_a_waiver_naming_a_known_and_an_unknown_id_says_which_applies(repo: GitRepo, cli: Any) -> None:
    _change(repo, "requests.get(url, verify=False, timeout=5)  "
                  "# review-gate: ignore[sec-tls-verify-01, nosuch-01] the test server has no certificate")
    _, report = _report(cli)
    assert [f["rule_id"] for f in report["waived"]] == ["sec-tls-verify-01"]
    [problem] = [f for f in report["findings"] if f["rule_id"] == "inline-waiver"]
    message = problem["message"]
    assert "names nosuch-01, which is no rule" in message
    assert "waives nothing for it; sec-tls-verify-01 applies" in message
    assert not message.endswith("waives nothing")


def test_a_bare_peer_suppression_does_not_waive_a_major_finding(repo: GitRepo, cli: Any) -> None:
    """`// eslint-disable-line` with no rule, `# nosec` with no code: a warning yes, a major finding no."""
    _change(repo, "const v = eval(input); // eslint-disable-line",
            "console.log(v); // eslint-disable-line",
            "const w = eval(other); // eslint-disable-line no-eval", path="web/app.js")
    code, report = _report(cli)
    assert sorted((f["rule_id"], f["line"]) for f in report["waived"]) == [("hyg-console-log-01", 2),
                                                                           ("sec-js-eval-01", 3)]
    assert [(f["rule_id"], f["line"]) for f in report["findings"]] == [("sec-js-eval-01", 1)]
    assert code == 1
    # and the finding says why the comment did nothing, with the code that would (a trial)
    ignored = report["findings"][0]["inline_waiver"]["ignored"]
    assert "waives only warnings and info" in ignored and "eslint-disable-line no-eval" in ignored, ignored


def _settings(repo: GitRepo, mode: str) -> None:
    builtin = Path(__file__).parents[2] / "config" / "review-gate.json"
    settings = json.loads(builtin.read_text(encoding="utf-8"))
    settings["inline_waivers"] = mode
    repo.write(".review-gate/review-gate.json", json.dumps(settings))
    repo.commit("settings")


def test_report_mode_lists_the_waiver_and_the_finding_still_counts(repo: GitRepo, cli: Any) -> None:
    _settings(repo, "report")
    _change(repo, f"{EVAL}  # review-gate: ignore[sec-py-eval-01] constant table")
    code, report = _report(cli)
    [finding] = report["findings"]
    assert finding["inline_waiver"]["ignored"].startswith("inline_waivers is report")
    assert report["waived"] == [] and code == 1


def test_off_mode_reads_no_comment(repo: GitRepo, cli: Any) -> None:
    _settings(repo, "off")
    _change(repo, f"{EVAL}  # review-gate: ignore[sec-py-eval-01]")
    _, report = _report(cli)
    assert [f["rule_id"] for f in report["findings"]] == ["sec-py-eval-01"]
    assert report["findings"][0]["inline_waiver"] is None


def test_the_api_can_refuse_waivers_the_change_adds(repo: GitRepo) -> None:
    """What a loop session's review does (loop/review.py passes added_waivers=False)."""
    from review_gate import api

    _change(repo, f"{EVAL}  # review-gate: ignore[sec-py-eval-01] the coder says so")
    report = api.review(cwd=repo.root, offline=True, state=False, added_waivers=False)
    [finding] = report.findings
    assert finding.inline_waiver is not None and finding.inline_waiver.ignored is not None
    assert "loop session" in finding.inline_waiver.ignored
    assert report.exit_code == 1 and report.metrics.waived_inline == 0


def test_every_format_shows_what_the_change_waives(repo: GitRepo, cli: Any, tmp_path: Path) -> None:
    _change(repo, f"{EVAL}  # review-gate: ignore[sec-py-eval-01] the expression is our constant table")
    outputs = {fmt: tmp_path / f"report.{fmt}" for fmt in ("text", "markdown", "sarif", "github", "gitlab",
                                                            "rdjsonl", "agent", "meta")}
    args = [a for fmt, path in outputs.items() for a in ("--format", fmt, "--output", str(path))]
    result = cli("--offline", "--no-state", *args)
    assert result.code == 0
    text = {fmt: path.read_text(encoding="utf-8") for fmt, path in outputs.items()}
    for fmt in ("text", "markdown", "github", "gitlab", "rdjsonl", "agent", "meta"):
        assert "aived in this change" in text[fmt], fmt
        assert "our constant table" in text[fmt], fmt
    [result_item] = json.loads(text["sarif"])["runs"][0]["results"]
    assert result_item["suppressions"][0]["kind"] == "inSource"
    assert "our constant table" in result_item["suppressions"][0]["justification"]


def test_the_words_of_a_waiver_inside_a_string_literal_waive_nothing(repo: GitRepo, cli: Any) -> None:
    """A trial: `x = eval(...); s = "# review-gate: ignore[sec-py-eval-01] trusted input"` was
    honoured, a string read as a comment (its reason even kept the closing quote)."""
    _change(repo, f'{EVAL}; s = "# review-gate: ignore[sec-py-eval-01] trusted input"',
            f'note = "a#b"; {EVAL}  # review-gate: ignore[sec-py-eval-01] our constant table, after a string')
    code, report = _report(cli)
    assert [(f["rule_id"], f["line"]) for f in report["findings"]] == [("sec-py-eval-01", 1)], report["findings"]
    assert [(f["rule_id"], f["line"]) for f in report["waived"]] == [("sec-py-eval-01", 2)]
    assert code == 1


def test_a_string_in_javascript_holds_no_waiver_either(repo: GitRepo, cli: Any) -> None:
    _change(repo, "const v = eval(input); const s = `// eslint-disable-line no-eval`;", path="web/app.js")
    _, report = _report(cli)
    assert [f["rule_id"] for f in report["findings"]] == ["sec-js-eval-01"] and report["waived"] == []
