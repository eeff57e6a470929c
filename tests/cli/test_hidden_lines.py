"""Characters that make code read differently to a person than to the compiler, through the
real CLI on real git repositories whose files hold the raw bytes: a lone carriage return that
ends a Python line inside one of git's, U+2028 that ends a JavaScript line, bidi controls
(Trojan Source), invisible characters beside code; and files of mixed line ends or invalid
UTF-8, which are reviewed, never a crash."""

from __future__ import annotations

import json
from typing import Any

from tests.conftest import GitRepo, review_branch

SECRET = "Xk9mQ2vL8p" + "W4zRt7"  # assembled: the source holds no secret a scanner would flag


def _review(repo: GitRepo, cli: Any, files: dict[str, bytes]) -> tuple[int, dict[str, Any]]:
    return review_branch(repo, cli, files)


def _found(report: dict[str, Any]) -> set[tuple[str, str, int]]:
    return {(f["rule_id"], f["file"], f["line"]) for f in report["findings"]}


def test_a_lone_carriage_return_hides_no_python_statement(repo: GitRepo, cli: Any) -> None:
    source = (b"import subprocess\n\n\ndef run(request):\n"
              b'    # run the job\r    exec(request.args["code"])\n'
              b'    # clean up\r    subprocess.run(request.args["cmd"], shell=True)\n')
    code, report = _review(repo, cli, {"app/jobs.py": source})
    found = _found(report)
    # reported at git's line numbers, quoting git's line with the hidden end written out
    assert ("sec-py-eval-01", "app/jobs.py", 5) in found
    assert ("sec-shell-true-01", "app/jobs.py", 6) in found
    assert ("sec-hidden-text-01", "app/jobs.py", 5) in found
    evaluated = next(f for f in report["findings"] if f["rule_id"] == "sec-py-eval-01")
    assert evaluated["column"] == 23
    assert "# run the job\\r    exec(" in evaluated["message"]
    assert report["decision"] == "fail" and code == 1


def test_a_secret_after_a_hidden_line_end_is_no_comment(repo: GitRepo, cli: Any) -> None:
    code, report = _review(repo, cli, {
        "app/settings.py": b"# defaults\rDB_PASSWORD = \"" + SECRET.encode() + b"\"\n",
        "web/settings.js": "// settings\u2028const password = \"".encode() + SECRET.encode() + b"\";\n",
    })
    found = _found(report)
    assert ("sec-generic-secret-01", "app/settings.py", 1) in found
    assert ("sec-generic-secret-01", "web/settings.js", 1) in found
    assert SECRET not in json.dumps(report)
    assert code == 1


def test_a_real_comment_of_one_line_still_hides_its_secret_word(repo: GitRepo, cli: Any) -> None:
    """The near miss: a whole comment line (no hidden end) is still documentation to the secret rules."""
    _, report = _review(repo, cli, {"app/settings.py": b"# e.g. DB_PASSWORD = \"" + SECRET.encode() + b"\"\r\n"})
    assert not [f for f in report["findings"] if f["rule_id"].startswith("sec-")]


def test_trojan_source_and_invisible_identifiers_are_critical_in_code(repo: GitRepo, cli: Any) -> None:
    bidi = 'access_level = "user\u202e \u2066# Check if admin\u2069 \u2066"\n'
    code, report = _review(repo, cli, {
        "app/access.py": (bidi + "if is_\u200badmin(user):\n    grant()\n").encode(),
        "web/app.js": "const {timeout,\u3164} = req.query;\n".encode(),
    })
    hidden = {(f["file"], f["line"], f["severity"]) for f in report["findings"] if f["rule_id"] == "sec-hidden-text-01"}
    assert hidden == {("app/access.py", 1, "critical"), ("app/access.py", 2, "critical"), ("web/app.js", 1, "critical")}
    message = next(f["message"] for f in report["findings"] if f["line"] == 1 and f["file"] == "app/access.py")
    assert "\\u202e" in message and "\u202e" not in json.dumps(report, ensure_ascii=False)
    assert report["decision"] == "fail" and code == 1


def test_right_to_left_text_and_emoji_are_not_hidden_code(repo: GitRepo, cli: Any) -> None:
    _, report = _review(repo, cli, {
        "app/i18n.py": ('GREETING = "\u0645\u0631\u062d\u0628\u0627"\n'
                        'FAMILY = "\U0001F468\u200d\U0001F469\u200d\U0001F467"\n'
                        'WANT = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"\n').encode(),
        "locale/ar/LC_MESSAGES/app.po": 'msgid "Hello"\nmsgstr "\u202b\u0645\u0631\u062d\u0628\u0627\u202c"\n'.encode(),
        "docs/ar/index.md":
            "# \u0645\u0631\u062d\u0628\u0627 \u200fv2\u200f \u2067\u05e9\u05dc\u05d5\u05dd\u2069\n".encode(),
    })
    assert [f for f in report["findings"] if f["rule_id"].startswith("sec-hidden-text")] == []


def test_an_override_in_documentation_is_major_not_critical(repo: GitRepo, cli: Any) -> None:
    _, report = _review(repo, cli, {"docs/guide.md": "Run `rm -rf \u202e/tmp/cache\u202c` first.\n".encode()})
    [finding] = [f for f in report["findings"] if f["rule_id"].startswith("sec-hidden-text")]
    assert (finding["rule_id"], finding["severity"]) == ("sec-hidden-text-02", "major")


def test_mixed_line_ends_and_invalid_utf8_are_reviewed(repo: GitRepo, cli: Any) -> None:
    """Bad input: CRLF, CR alone, CR runs, U+2028 and bytes that are no UTF-8 in one file."""
    data = (b"x = 1\r\ny = 2\r\r\n\xff\xfe = 3\rexec(request.data)\n"
            + "z = 4\u2028\u2029\u0085\n".encode() + b"\r\r\r\n\x80" + "\u202e\n".encode())
    code, report = _review(repo, cli, {"app/mixed.py": data, "web/mixed.ts": data, "conf/mixed.yml": data})
    found = _found(report)
    assert ("sec-py-eval-01", "app/mixed.py", 3) in found
    assert {("sec-hidden-text-01", "app/mixed.py", n) for n in (3, 4, 6)} <= found
    assert report["coverage"]["files_reviewed"] == 3 and report["coverage"]["unreviewed"] == []
    assert code == 1


def test_an_override_in_test_vectors_warns_and_blocks_nothing(repo: GitRepo, cli: Any) -> None:
    """A URL parser's test data (WHATWG's vectors hold U+202E and U+202D on purpose): a warning."""
    vectors = '[{"input": "http://example.com/\u202e/foo/\u202d/bar", "base": null}]\n'
    code, report = _review(repo, cli, {"tests/models/whatwg.json": vectors.encode()})
    [finding] = [f for f in report["findings"] if f["rule_id"].startswith("sec-hidden-text")]
    assert finding["severity"] == "warning" and code == 0
