"""``review-gate ack ID --reason``: a person notes that they saw a finding; it still counts and
freshness is untouched."""

from __future__ import annotations

from typing import Any

from review_gate import api
from tests.conftest import GitRepo

FLAWED = "import requests\nr = requests.get(url, verify=False, timeout=5)\n"


def review(cli: Any) -> tuple[int, dict[str, Any]]:
    result = cli("--format", "json", "--offline")
    assert result.out, result.err
    return result.code, result.json()


def test_an_ack_is_recorded_and_changes_neither_the_gate_nor_freshness(cli: Any, repo: GitRepo) -> None:
    repo.write("app.py", FLAWED)
    code, first = review(cli)
    assert code == 1
    [finding] = first["findings"]
    result = cli("ack", finding["fingerprint"][:8], "--reason", "seen; fixing it in the next pull request")
    assert result.code == 0, result.err
    assert f"acknowledged {finding['fingerprint']}" in result.out and "it still counts" in result.out
    code, second = review(cli)
    assert code == 1 and second["decision"] == first["decision"] == "needs_fixes"
    assert [f["fingerprint"] for f in second["findings"]] == [finding["fingerprint"]]  # still counted
    assert second["waived"] == []
    # freshness: the second run reuses every pair, as it would have without the ack
    assert {a["id"]: a["status"] for a in second["agents"]} == dict.fromkeys(
        (a["id"] for a in first["agents"] if a["status"] == "completed"), "cached") | {
        a["id"]: a["status"] for a in first["agents"] if a["status"] != "completed"}
    listed = cli("ack")
    assert listed.code == 0 and finding["fingerprint"] in listed.out
    assert "seen; fixing it in the next pull request" in listed.out
    assert finding["fingerprint"] not in cli("accepted").out  # an ack is no acceptance
    done = api.ack(finding["fingerprint"], "seen again", cwd=repo.root)
    assert done.fingerprint == finding["fingerprint"] and done.event > 1


def test_bad_acks_are_refused_in_a_line_with_the_fix(cli: Any, repo: GitRepo) -> None:
    nothing = cli("ack", "abcdef12", "--reason", "seen")
    assert nothing.code == 2 and "no runs recorded yet" in nothing.err
    repo.write("app.py", FLAWED)
    review(cli)
    for args, said in ((("abcdef12", "--reason", "seen"), "no recorded run reported a finding abcdef12"),
                       (("zz", "--reason", "seen"), "is not a finding id"),
                       (("abcdef12",), "no --reason"),
                       (("abcdef12", "--reason", "  "), "--reason is empty"),
                       (("--reason", "seen"), "--reason goes with the finding")):
        result = cli("ack", *args)
        assert result.code == 2, (args, result.err)
        assert said in result.err and "fix:" in result.err and "Traceback" not in result.err
        assert "--force" not in result.err  # ack has none, and it must not steer a note towards a waiver
