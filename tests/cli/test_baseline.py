"""``review-gate baseline`` and the baseline every ``run`` applies, in real git repositories."""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.cli.todo_agent import todo_config
from tests.conftest import GitRepo


def feature(repo: GitRepo) -> None:
    repo.branch("feature")
    repo.write("app.py", "x = 1  # TODO old\nz = 3\n")
    repo.commit("old debt")


def baseline_file(repo: GitRepo) -> Path:
    return repo.root / ".review-gate" / "baseline.json"


def to_main(repo: GitRepo, message: str) -> None:
    """Move the baseline just written on the feature branch to main and bring main into the
    branch: a baseline waives findings once it is on the base side (the change cannot bring its own)."""
    path = baseline_file(repo)
    text = path.read_text()
    path.unlink()
    repo.git("checkout", "-q", "main")
    repo.write(".review-gate/baseline.json", text)
    repo.commit(message)
    repo.git("checkout", "-q", "feature")
    repo.git("merge", "-q", "--no-edit", "main")


def test_baselined_findings_no_longer_fail_but_a_new_one_does(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    cfg, _ = todo_config(tmp_path)
    feature(repo)
    first = cli("--config", str(cfg), "--base", "main")
    assert first.code == 1, first.err

    made = cli("baseline", "--config", str(cfg), "--base", "main")
    assert made.code == 0, made.err
    assert "baselined 1 finding" in made.err
    data = json.loads(baseline_file(repo).read_text())
    assert data["version"] == 1 and data["tool_version"] and data["created"]
    [entry] = data["findings"]
    assert entry | {"fingerprint": "-"} == {
        "fingerprint": "-", "rule_id": "todo", "agent": "todo", "severity": "major", "file": "app.py",
        "line": 1, "message": "unfinished work", "expires": None}
    to_main(repo, "baseline the debt")

    again = cli("--config", str(cfg), "--base", "main")
    assert again.code == 0, again.out
    assert "waived: 1 finding not counted (1 baselined)" in again.out
    report = cli("--config", str(cfg), "--base", "main", "--format", "json").json()
    assert report["metrics"]["total"] == 0
    assert [(f["fingerprint"], f["waived"], f["waived_kind"]) for f in report["waived"]] == [
        (entry["fingerprint"], "baselined", "baseline")]

    repo.write("app.py", "x = 1  # TODO old\nz = 3\ny = 2  # TODO new\n")
    repo.commit("new debt")
    new = cli("--config", str(cfg), "--base", "main", "--format", "json")
    assert new.code == 1
    report = new.json()
    assert [(f["file"], f["line"]) for f in report["findings"]] == [("app.py", 3)]
    assert len(report["waived"]) == 1


def test_regenerating_the_baseline_is_stable(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    cfg, _ = todo_config(tmp_path)
    feature(repo)
    repo.write("lib.py", "a = 1  # TODO one\nb = 2  # TODO two\n")
    repo.commit("more")
    out = tmp_path / "b.json"
    assert cli("baseline", "--config", str(cfg), "--base", "main", "--output", str(out)).code == 0
    first = json.loads(out.read_text())
    assert cli("baseline", "--config", str(cfg), "--base", "main", "--output", str(out)).code == 0
    second = json.loads(out.read_text())
    assert first["findings"] == second["findings"]
    assert [(e["file"], e["line"]) for e in first["findings"]] == [("app.py", 1), ("lib.py", 1), ("lib.py", 2)]


def test_an_expired_entry_counts_again(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    cfg, _ = todo_config(tmp_path)
    feature(repo)
    tomorrow = (date.today() + timedelta(days=1)).isoformat()
    kept = tmp_path / "kept.json"  # outside the repository: read as it is
    assert cli("baseline", "--config", str(cfg), "--base", "main", "--expires", tomorrow, "--output",
               str(kept)).code == 0
    data = json.loads(kept.read_text())
    assert data["findings"][0]["expires"] == tomorrow
    assert cli("--config", str(cfg), "--base", "main", "--baseline", str(kept)).code == 0

    # expires is the last day an entry applies, as for `accept --expires`
    data["findings"][0]["expires"] = date.today().isoformat()
    kept.write_text(json.dumps(data))
    assert cli("--config", str(cfg), "--base", "main", "--baseline", str(kept)).code == 0

    data["findings"][0]["expires"] = (date.today() - timedelta(days=1)).isoformat()
    kept.write_text(json.dumps(data))
    result = cli("--config", str(cfg), "--base", "main", "--baseline", str(kept), "--format", "json")
    assert result.code == 1
    assert result.json()["waived"] == []


def test_expires_is_today_or_later(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    cfg, _ = todo_config(tmp_path)
    feature(repo)
    assert cli("baseline", "--config", str(cfg), "--base", "main", "--expires", "soon").code == 2
    past = cli("baseline", "--config", str(cfg), "--base", "main", "--expires", "2000-01-01")
    assert past.code == 2 and "--expires 2000-01-01" in past.err
    assert not baseline_file(repo).exists()
    today = cli("baseline", "--config", str(cfg), "--base", "main", "--expires", date.today().isoformat())
    assert today.code == 0, today.err  # the last day it applies may be today, as for an acceptance


def test_a_malformed_baseline_is_exit_2_naming_the_file(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    cfg, _ = todo_config(tmp_path)
    feature(repo)
    path = tmp_path / "baseline.json"
    path.write_text("{\"version\": 1,")
    broken = cli("--config", str(cfg), "--base", "main", "--baseline", str(path))
    assert broken.code == 2
    assert "baseline.json" in broken.err and "invalid JSON" in broken.err

    path.write_text(json.dumps({"version": 1, "created": "2024-01-01T00:00:00Z", "tool_version": "0",
                                "findings": [{"fingerprint": "f", "rule_id": None, "agent": "a",
                                              "severity": "huge", "file": None, "line": None,
                                              "message": "m"}]}))
    wrong = cli("--config", str(cfg), "--base", "main", "--baseline", str(path))
    assert wrong.code == 2
    assert f"{path}: /findings/0/severity" in wrong.err


def test_a_malformed_baseline_on_the_base_branch_names_the_commit(cli: Any, repo: GitRepo,
                                                                   tmp_path: Path) -> None:
    cfg, _ = todo_config(tmp_path)
    repo.write(".review-gate/baseline.json", "{\"version\": 1,")
    main = repo.commit("a broken baseline on main")
    feature(repo)
    broken = cli("--config", str(cfg), "--base", "main")
    assert broken.code == 2
    assert f".review-gate/baseline.json (at {main[:12]})" in broken.err and "invalid JSON" in broken.err


def test_no_baseline_and_an_explicit_baseline(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    cfg, _ = todo_config(tmp_path)
    feature(repo)
    assert cli("baseline", "--config", str(cfg), "--base", "main").code == 0
    to_main(repo, "baseline")
    assert cli("--config", str(cfg), "--base", "main").code == 0
    ignored = cli("--config", str(cfg), "--base", "main", "--no-baseline")
    assert ignored.code == 1 and "waived" not in ignored.out

    elsewhere = tmp_path / "elsewhere.json"
    repo.git("checkout", "-q", "main")
    baseline_file(repo).rename(elsewhere)
    repo.commit("move the baseline away")
    repo.git("checkout", "-q", "feature")
    repo.git("merge", "-q", "--no-edit", "main")
    assert cli("--config", str(cfg), "--base", "main").code == 1
    assert cli("--config", str(cfg), "--base", "main", "--baseline", str(elsewhere)).code == 0
    missing = cli("--config", str(cfg), "--base", "main", "--baseline", str(tmp_path / "nope.json"))
    assert missing.code == 2 and "nope.json" in missing.err
    both = cli("--config", str(cfg), "--base", "main", "--baseline", str(elsewhere), "--no-baseline")
    assert both.code == 2


def test_the_config_directory_baseline_comes_first(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    cfg, _ = todo_config(tmp_path)
    feature(repo)
    assert cli("baseline", "--config", str(cfg), "--base", "main", "--output", str(cfg / "baseline.json")).code == 0
    repo.write(".review-gate/baseline.json", "not json")  # not used: the config directory has one
    repo.commit("a broken one at the root")
    assert cli("--config", str(cfg), "--base", "main").code == 0


def test_a_baseline_problem_is_a_baseline_error_not_a_config_error(tmp_path: Path) -> None:
    """`config validate` and the config hint catch ConfigError: a baseline is not configuration."""
    from review_gate.errors import BaselineError, ConfigError
    from review_gate.judging import baseline

    path = tmp_path / "baseline.json"
    for text in ("{\"version\": 1,", json.dumps({"version": 1})):
        path.write_text(text)
        with pytest.raises(BaselineError) as caught:
            baseline.load(path)
        assert not isinstance(caught.value, ConfigError)
        assert str(path) in caught.value.message


def test_no_baseline_is_written_when_a_required_agent_broke(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    cfg, _ = todo_config(tmp_path)
    feature(repo)
    # the agent's program breaks (a missing one is a config error now, found before any review)
    (tmp_path / "scripts" / "todo.py").write_text("import sys\nsys.exit('broken')\n")
    result = cli("baseline", "--config", str(cfg), "--base", "main")
    assert result.code == 3
    assert "baseline not written: required agent todo did not review the whole change" in result.err
    assert not baseline_file(repo).exists()


@pytest.mark.parametrize("change", ["none", "clean", "finding"])
def test_a_broken_baseline_named_on_the_command_line_is_exit_2_whatever_the_run_finds(
        cli: Any, repo: GitRepo, tmp_path: Path, change: str) -> None:
    """Checked before anything is reviewed, even when nothing would read it: no change to
    review, or a file inside the repository (read as the base commit has it, where it is not)."""
    cfg, _ = todo_config(tmp_path)
    if change == "clean":
        repo.write("calc.py", "x = 1\n")
    elif change == "finding":
        repo.write("app.py", "x = 1  # TODO new\n")
    for path in (repo.root / "bad.json", tmp_path / "bad.json"):
        path.write_text("{bad")
        result = cli("--config", str(cfg), "--baseline", str(path))
        assert result.code == 2, (path, result.out, result.err)
        assert "bad.json: /: invalid JSON" in result.err and "Traceback" not in result.err
        assert "agent " not in result.err  # no agent ran


def test_the_baseline_records_only_counted_findings(cli: Any, repo: GitRepo) -> None:
    """One person's local acceptance, an inline waiver and a finding the base already has never
    become a waiver for the whole team (docs: "every counted finding")."""
    repo.write("old.py", "import requests\nr = requests.get(u, verify=False, timeout=5)\n")
    repo.commit("old code")
    repo.branch("feature")
    repo.write("old.py", "import requests\nr = requests.get(u, verify=False, timeout=5)  \n")  # pre-existing
    repo.write("a.py", "import requests\nr = requests.get(a, verify=False, timeout=5)\n")  # accepted locally
    repo.write("b.py", "import requests\n# review-gate: ignore[sec-tls-verify-01] a test server\n"
                       "r = requests.get(b, verify=False, timeout=5)\n")  # waived inline
    repo.write("c.py", "import requests\nr = requests.get(c, verify=False, timeout=5)\n")  # counted
    repo.commit("feature")
    report = cli("--offline", "--base", "main", "--format", "json").json()
    local = next(f for f in report["findings"] if f["file"] == "a.py")
    assert cli("accept", local["fingerprint"], "--reason", "mine").code == 0
    made = cli("baseline", "--offline", "--base", "main")
    assert made.code == 0, made.err
    entries = json.loads(baseline_file(repo).read_text())["findings"]
    assert [e["file"] for e in entries] == ["c.py"]
    assert "baselined 1 finding" in made.err
