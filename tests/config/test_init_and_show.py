"""``review-gate init`` writes an editable copy of the built-in config; ``config show`` prints the
effective configuration and where each file came from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GitRepo

BUILTIN_CONFIG = Path(__file__).parents[2] / "config"
CONFIG_NAMES = ["review-rules.json", "review-domains.json", "review-agents.json",
                "review-composition.json", "review-gate.json"]


def assert_initialised(target: Path) -> None:
    assert sorted(p.name for p in target.iterdir()) == sorted([*CONFIG_NAMES, ".gitignore", "loop"])
    templates = sorted(p.name for p in (BUILTIN_CONFIG / "loop").iterdir())
    assert sorted(p.name for p in (target / "loop").iterdir()) == templates
    for name in [*CONFIG_NAMES, *(f"loop/{t}" for t in templates)]:
        assert (target / name).read_bytes() == (BUILTIN_CONFIG / name).read_bytes(), name
    ignored = (target / ".gitignore").read_text(encoding="utf-8").splitlines()
    assert "state.db" in ignored


# --- init ----------------------------------------------------------------------------------------


def test_init_writes_the_config_at_the_repository_root(cli, repo: GitRepo) -> None:
    result = cli("init", "--full")
    assert result.code == 0, result.err
    assert_initialised(repo.root / ".review-gate")
    assert str(repo.root / ".review-gate") in result.out
    assert "review-gate config validate" in result.out


def test_init_from_a_subdirectory_still_writes_at_the_root(cli, repo: GitRepo) -> None:
    sub = repo.root / "src" / "pkg"
    sub.mkdir(parents=True)
    result = cli("init", "--full", cwd=sub)
    assert result.code == 0, result.err
    assert_initialised(repo.root / ".review-gate")
    assert not (sub / ".review-gate").exists()
    assert not (repo.root / "src" / ".review-gate").exists()


def test_state_db_is_ignored_by_git(cli, repo: GitRepo) -> None:
    assert cli("init", "--full").code == 0
    (repo.root / ".review-gate" / "state.db").write_bytes(b"")
    (repo.root / ".review-gate" / "state.db-wal").write_bytes(b"")
    status = repo.git("status", "--porcelain", "--untracked-files=all")
    assert ".review-gate/review-rules.json" in status
    assert "state.db" not in status


def test_the_written_config_validates(cli, repo: GitRepo) -> None:
    assert cli("init", "--full").code == 0
    result = cli("config", "validate")
    assert result.code == 0, result.err
    assert result.out.startswith(f"config OK: {repo.root / '.review-gate'}:")
    assert "built-in" not in result.out


def test_the_written_config_is_found_from_a_subdirectory(cli, repo: GitRepo) -> None:
    assert cli("init", "--full").code == 0
    sub = repo.root / "docs"
    sub.mkdir()
    result = cli("config", "validate", cwd=sub)
    assert result.code == 0, result.err
    assert str(repo.root / ".review-gate") in result.out


def test_second_init_refuses_and_changes_nothing(cli, repo: GitRepo) -> None:
    assert cli("init", "--full").code == 0
    edited = repo.root / ".review-gate" / "review-gate.json"
    edited.write_text('{"version": 1, "concurrency": 2}\n', encoding="utf-8")

    result = cli("init", "--full")
    assert result.code == 2
    assert "Traceback" not in result.err
    assert str(repo.root / ".review-gate") in result.err
    for name in [*CONFIG_NAMES, ".gitignore"]:
        assert name in result.err
    assert "--force" in result.err
    assert "  fix: " in result.err
    assert edited.read_text(encoding="utf-8") == '{"version": 1, "concurrency": 2}\n'


def test_init_refuses_when_only_some_files_exist(cli, repo: GitRepo) -> None:
    target = repo.root / ".review-gate"
    target.mkdir()
    (target / "review-rules.json").write_text("{}", encoding="utf-8")
    result = cli("init", "--full")
    assert result.code == 2
    assert "review-rules.json" in result.err
    assert "review-domains.json" not in result.err
    assert (target / "review-rules.json").read_text(encoding="utf-8") == "{}"
    assert not (target / "review-domains.json").exists()


def test_force_overwrites(cli, repo: GitRepo) -> None:
    assert cli("init", "--full").code == 0
    target = repo.root / ".review-gate"
    (target / "review-gate.json").write_text('{"version": 1, "concurrency": 2}\n', encoding="utf-8")
    (target / ".gitignore").write_text("", encoding="utf-8")
    result = cli("init", "--full", "--force")
    assert result.code == 0, result.err
    assert_initialised(target)


def test_init_dir_writes_where_it_is_told(cli, repo: GitRepo) -> None:
    result = cli("init", "--full", "--dir", "ci/review")
    assert result.code == 0, result.err
    target = repo.root / "ci" / "review"
    assert_initialised(target)
    assert not (repo.root / ".review-gate").exists()
    assert "review-gate config validate --config ci/review" in result.out
    assert cli("config", "validate", "--config", "ci/review").code == 0


def test_init_dir_outside_a_repository(cli, isolated: Path, tmp_path: Path) -> None:
    target = tmp_path / "elsewhere" / "config"
    result = cli("init", "--full", "--dir", str(target))
    assert result.code == 0, result.err
    assert_initialised(target)
    assert not (isolated / ".review-gate").exists()


def test_init_dir_refuses_existing_files_and_force_overwrites(cli, tmp_path: Path) -> None:
    target = tmp_path / "config"
    assert cli("init", "--full", "--dir", str(target)).code == 0
    (target / "review-rules.json").write_text("{}", encoding="utf-8")
    refused = cli("init", "--full", "--dir", str(target))
    assert refused.code == 2
    assert str(target) in refused.err
    assert (target / "review-rules.json").read_text(encoding="utf-8") == "{}"
    assert cli("init", "--full", "--dir", str(target), "--force").code == 0
    assert_initialised(target)


def test_init_outside_a_repository_uses_the_current_directory(cli, isolated: Path) -> None:
    result = cli("init", "--full")
    assert result.code == 0, result.err
    assert_initialised(isolated / ".review-gate")


def test_init_dir_that_is_a_file(cli, tmp_path: Path) -> None:
    blocker = tmp_path / "taken"
    blocker.write_text("", encoding="utf-8")
    result = cli("init", "--full", "--dir", str(blocker))
    assert result.code == 2
    assert "not a directory" in result.err
    assert "Traceback" not in result.err


# --- config show ---------------------------------------------------------------------------------


def show(cli: Any, *args: str) -> dict[str, Any]:
    result = cli("config", "show", *args)
    assert result.code == 0, result.err
    data: dict[str, Any] = result.json()
    return data


def builtin(name: str) -> Any:
    return json.loads((BUILTIN_CONFIG / name).read_text(encoding="utf-8"))


def test_show_without_a_config_is_the_builtin_one(cli) -> None:
    data = show(cli)
    assert data["directory"] is None
    assert data["sources"] == {name: f"{name} (built-in)" for name in CONFIG_NAMES}
    assert [r["id"] for r in data["review-rules.json"]["rules"]] == [
        r["id"] for r in builtin("review-rules.json")["rules"]]
    assert set(data) == {"directory", "sources", *CONFIG_NAMES}


def test_show_fills_in_the_defaults(cli) -> None:
    data = show(cli)
    plain = next(r for r in builtin("review-rules.json")["rules"]
                 if not {"enabled", "paths", "redact"} & set(r))
    rule = next(r for r in data["review-rules.json"]["rules"] if r["id"] == plain["id"])
    assert rule["enabled"] is True
    assert rule["paths"] == []
    assert rule["redact"] is False
    settings = data["review-gate.json"]
    assert settings["concurrency"] == 8
    assert settings["gate"]["fail_on"] == "needs_fixes"
    assert "gap_detector" not in settings  # null values are left out


def test_show_reads_present_files_from_review_gate_and_the_rest_from_builtin(
        cli, repo: GitRepo) -> None:
    target = repo.root / ".review-gate"
    target.mkdir()
    (target / "review-gate.json").write_text(
        json.dumps({"version": 1, "concurrency": 3, "filter_mode": "file"}), encoding="utf-8")
    rules = builtin("review-rules.json")
    rules["rules"] = rules["rules"][:2]
    (target / "review-rules.json").write_text(json.dumps(rules), encoding="utf-8")

    data = show(cli)
    assert data["directory"] == str(target)
    assert data["sources"] == {
        "review-rules.json": str(target / "review-rules.json"),
        "review-domains.json": "review-domains.json (built-in)",
        "review-agents.json": "review-agents.json (built-in)",
        "review-composition.json": "review-composition.json (built-in)",
        "review-gate.json": str(target / "review-gate.json"),
    }
    assert [r["id"] for r in data["review-rules.json"]["rules"]] == [r["id"] for r in rules["rules"]]
    assert data["review-gate.json"]["concurrency"] == 3
    assert data["review-gate.json"]["filter_mode"] == "file"
    assert data["review-gate.json"]["timeout_s"] == 120  # default of a field the file left out
    assert len(data["review-domains.json"]["domains"]) == len(builtin("review-domains.json")["domains"])


def test_show_after_init_reads_everything_from_review_gate(cli, repo: GitRepo) -> None:
    assert cli("init", "--full").code == 0
    data = show(cli)
    target = repo.root / ".review-gate"
    assert data["sources"] == {name: str(target / name) for name in CONFIG_NAMES}
    assert "(built-in)" not in json.dumps(data["sources"])


def test_show_with_config_flag(cli, tmp_path: Path) -> None:
    target = tmp_path / "cfg"
    assert cli("init", "--full", "--dir", str(target)).code == 0
    data = show(cli, "--config", str(target))
    assert data["directory"] == str(target)
    assert data["sources"]["review-agents.json"] == str(target / "review-agents.json")


def test_show_output_loads_back_as_a_valid_config(cli, tmp_path: Path) -> None:
    data = show(cli)
    target = tmp_path / "round-trip"
    target.mkdir()
    for name in CONFIG_NAMES:
        (target / name).write_text(json.dumps(data[name]), encoding="utf-8")
    result = cli("config", "validate", "--config", str(target))
    assert result.code == 0, result.err
    assert show(cli, "--config", str(target))["review-rules.json"] == data["review-rules.json"]


@pytest.mark.parametrize("action", ["show", "validate"])
def test_a_broken_review_gate_dir_is_reported(cli, repo: GitRepo, action: str) -> None:
    target = repo.root / ".review-gate"
    target.mkdir()
    (target / "review-domains.json").write_text("{", encoding="utf-8")
    result = cli("config", action)
    assert result.code == 2
    assert f"{target / 'review-domains.json'}: /: invalid JSON at line 1 column 2" in result.err
    assert result.out == ""


def test_init_after_a_run_says_it_replaces_the_run_states_gitignore(cli, repo: GitRepo) -> None:
    repo.write("app.py", "x = 1\n")
    assert cli().code == 0  # the run state writes .review-gate/.gitignore
    written = cli("init", "--full")
    assert written.code == 0, written.err
    assert "replacing the .gitignore the run state had written" in written.out
    assert "state.db" in (repo.root / ".review-gate" / ".gitignore").read_text()
