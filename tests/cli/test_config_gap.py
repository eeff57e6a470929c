"""After `init`, the change that adds the configuration is one line in the report, not a list."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.conftest import GitRepo


def test_the_config_changed_gap_is_one_line_with_the_list_in_json_verbose_and_gaps(repo: GitRepo, cli: Any) -> None:
    repo.branch("adopt-review-gate")
    assert cli("init", "--full").code == 0
    repo.write("app.py", "x = 1\n")
    report = cli("--offline", "--format", "json").json()
    [gap] = [g for g in report["gaps"] if g["kind"] == "config_changed"]
    count = len(gap["files"])
    assert count >= 10 and ".review-gate/review-rules.json" in gap["files"]
    assert gap["reason"].startswith(f"the change edits the review configuration ({count} files)")
    assert "review-rules.json" not in gap["reason"]  # counted, not listed

    text = cli("--offline").out
    lines = [line for line in text.splitlines() if "config_changed" in line]
    assert len(lines) == 1 and f"({count} files)" in lines[0]
    assert "review-rules.json" not in text
    verbose = cli("--offline", "--verbose").out
    assert ".review-gate/review-rules.json" in verbose

    listed = cli("gaps").out
    assert ".review-gate/review-rules.json" in listed
    assert cli("gaps", "--format", "json").json()["gaps"][0]["files"]


def test_the_gap_says_whether_the_edited_configuration_judged_this_run(repo: GitRepo, cli: Any, tmp_path: Path) -> None:
    """A trial: a branch that switched rules off in .review-gate/ and ran with it was told the edit
    'does not judge this change', when the edited copy had just judged it."""
    assert cli("init", "--full").code == 0
    repo.commit("adopt review-gate")
    repo.branch("feature")
    rules = repo.root / ".review-gate" / "review-rules.json"
    rules.write_text(rules.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    repo.commit("touch the rules")

    [mine] = [g for g in cli("--offline", "--base", "main", "--format", "json").json()["gaps"]
              if g["kind"] == "config_changed"]
    assert "this run is judged by the edited copy" in mine["reason"] and "does not judge" not in mine["reason"]
    trusted = tmp_path / "trusted"
    trusted.mkdir()
    [theirs] = [g for g in cli("--offline", "--base", "main", "--config", str(trusted), "--format", "json").json()[
        "gaps"] if g["kind"] == "config_changed"]
    assert "it does not judge this change" in theirs["reason"]
