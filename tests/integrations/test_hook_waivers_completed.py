"""A waiver an agent completes from the text around it, or spells so the line does not show it,
is denied like one written out: an Edit or a sed/perl substitution is applied to the file as it
is and the result compared with it; printf's and `echo -e`'s escapes are decoded, printf's format
applied, and variables assigned earlier on the line filled in."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import GitRepo
from tests.integrations.test_hook_waivers import denied, tool
from tests.integrations.test_hooks import bash, hook

NEAR = ("import requests\nr = requests.get(u, verify=False, timeout=5)  # nosXec B501\n"
        "# review-gate: ignore sec-tls-verify-01] ok\n")


@pytest.mark.parametrize("name, tool_input", [
    ("Edit", {"old_string": "nosXec", "new_string": "nosec"}),
    ("Edit", {"old_string": "X", "new_string": ""}),
    ("Edit", {"old_string": "ignore sec", "new_string": "ignore[sec"}),
    ("MultiEdit", {"edits": [{"old_string": "import requests", "new_string": "import requests, os"},
                             {"old_string": "X", "new_string": "", "replace_all": True}]}),
])
def test_an_edit_that_completes_a_waiver_from_the_text_around_it_is_denied(cli: Any, repo: GitRepo, name: str,
                                                                           tool_input: dict[str, Any]) -> None:
    repo.write("app.py", NEAR)
    assert "inline waiver" in denied(hook(cli, tool(repo, name, "app.py", tool_input)))


def test_an_edit_near_a_waiver_that_completes_none_is_allowed(cli: Any, repo: GitRepo) -> None:
    repo.write("app.py", NEAR)
    for edit in ({"old_string": "timeout=5", "new_string": "timeout=10"},
                 {"old_string": "verify=False", "new_string": "verify=True"}):
        assert hook(cli, tool(repo, "Edit", "app.py", edit)).out == "", edit


@pytest.mark.parametrize("command", [
    "sed -i 's/nosXec/nosec/' app2.py", "sed -i 's/X//' app2.py", "perl -pi -e 's/X//' app2.py",
    "sed -i 's/ignore sec/ignore[sec/' app2.py", "sed -i -e '/requests/s/X//g' app2.py",
    "sed -E -i.bak 's/(no)sX(ec)/\\1s\\2/' app2.py",
])
def test_a_substitution_that_completes_a_waiver_in_the_file_is_denied(cli: Any, repo: GitRepo, command: str) -> None:
    repo.write("app2.py", NEAR)
    assert "inline waiver" in denied(hook(cli, bash(repo, command)))


def test_a_substitution_the_hook_cannot_compute_fails_closed_only_near_a_waiver(cli: Any, repo: GitRepo) -> None:
    repo.write("app2.py", NEAR)
    repo.write("plain.py", "x = 1\n")
    assert "cannot read" in denied(hook(cli, bash(repo, "sed -i 's/X/\\L&/' app2.py")))
    assert hook(cli, bash(repo, "sed -i 's/x/\\U&/' plain.py")).out == ""


@pytest.mark.parametrize("command", [
    "printf 'x()  # n\\157sec B501\\n' >> app.py",
    "echo -e 'x()  # n\\x6fsec B501' >> app.py",
    "printf '# review-gate: \\x69gnore[sec-tls-verify-01] ok\\n' >> app.py",
    "printf 'x()  # nosec B%d\\n' 501 >> app.py",
    "X=nos; echo \"x()  # ${X}ec B501\" >> app.py",
])
def test_a_waiver_spelt_with_escapes_a_format_or_a_variable_is_denied(cli: Any, repo: GitRepo, command: str) -> None:
    repo.write("app.py", "x = 1\n")
    assert "inline waiver" in denied(hook(cli, bash(repo, command)))


@pytest.mark.parametrize("command", [
    "git status", "git diff", "git add -A", "sed -i 's/timeout=5/timeout=10/' app2.py",
    "perl -pi -e 's/requests/httpx/g' app2.py", "sed -i 's/foo/bar/' app2.py", "find . -name '*.pyc' -delete",
    "printf '%s\\n' done >> notes.txt", "X=1; echo \"$X\" > notes.txt", "grep -rn nosec .",
])
def test_everyday_commands_stay_allowed_beside_a_near_waiver(cli: Any, repo: GitRepo, command: str) -> None:
    repo.write("app2.py", NEAR)
    assert hook(cli, bash(repo, command)).out == "", command


LINE = "    return requests.get(url, verify=False)  # nosec B501 test server has self-signed cert\n"
WAIVED = "import requests\n\n\ndef get(url):\n" + LINE


@pytest.mark.parametrize("name, tool_input", [
    ("Edit", {"old_string": LINE, "new_string": LINE + "\n\ndef get_prod(url):\n" + LINE}),
    ("MultiEdit", {"edits": [{"old_string": "import requests\n",
                              "new_string": "import requests\n\n\ndef ping(url):\n" + LINE}]}),
])
def test_an_edit_that_copies_a_waiver_the_file_holds_onto_a_new_line_is_denied(cli: Any, repo: GitRepo, name: str,
                                                                               tool_input: dict[str, Any]) -> None:
    """The file's own waiver, copied: a second waiver on a new line (the gate went FAIL -> PASS)."""
    repo.write("legacy.py", WAIVED)
    assert "inline waiver" in denied(hook(cli, tool(repo, name, "legacy.py", tool_input)))


def test_an_edit_that_changes_the_code_on_a_waivers_line_keeps_it_allowed(cli: Any, repo: GitRepo) -> None:
    repo.write("legacy.py", WAIVED)
    edit = {"old_string": "requests.get(url, verify=False)", "new_string": "requests.get(url, verify=False, timeout=5)"}
    assert hook(cli, tool(repo, "Edit", "legacy.py", edit)).out == ""
