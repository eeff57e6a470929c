"""A report written by `show --output` is the gate's own file, as one written by `run --output`:
the next run leaves it out of the review while its content is what was written."""

from __future__ import annotations

from typing import Any

from tests.conftest import GitRepo

INSECURE = "import requests\nr = requests.get(url, verify=False, timeout=5)\n"


def test_a_report_show_wrote_is_not_reviewed_as_a_change(repo: GitRepo, cli: Any) -> None:
    repo.write("app.py", INSECURE)
    first = cli("--offline", "--format", "json").json()
    assert cli("show", "last", "--format", "markdown", "--output", "last.md").code == 0
    again = cli("--offline", "--format", "json").json()
    assert again["coverage"]["files_changed"] == first["coverage"]["files_changed"] == 1
    assert again["coverage"]["files_left_out"] == 1
    assert [f["file"] for f in again["findings"]] == ["app.py"]
    (repo.root / "last.md").write_text("edited by hand: now it is code\n", encoding="utf-8")
    edited = cli("--offline", "--format", "json").json()
    assert edited["coverage"]["files_changed"] == 2  # no longer what the gate wrote
