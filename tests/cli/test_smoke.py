from __future__ import annotations

from tests.conftest import GitRepo, make_diff


def test_a_secret_in_the_working_tree_fails_the_gate(cli, repo: GitRepo) -> None:
    repo.write("deploy/key.pem", "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n")
    result = cli("--format", "json")
    report = result.json()
    assert result.code == 1
    assert report["decision"] == "fail"
    assert report["findings"][0]["rule_id"] == "sec-private-key-01"
    assert report["findings"][0]["file"] == "deploy/key.pem"
    assert "REVIEW: FAIL | issues=1 (critical=1) | missing_inputs=0" in result.err


def test_diff_from_stdin(cli, isolated) -> None:
    diff = make_diff("app.py", ["x = 1  # TODO tidy"])
    result = cli("--diff", "-", "--format", "json", stdin=diff.encode())
    assert result.code == 0, result.err
    assert result.json()["decision"] == "pass_with_warnings"  # the built-in LLM reviewers did not run: no key
    assert result.json()["metrics"]["info"] == 1
