"""A checked configuration is kept for the next run (config/snapshot.py), and never outlives what
it was checked from: an edit of any file is read afresh, the files it names are looked at every
time, a configuration with a problem is never kept, and a damaged or unwritable cache is no error."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from review_gate.config import snapshot
from review_gate.config.load import load_config
from tests.conftest import GitRepo

BUILTIN_CONFIG = Path(__file__).parents[2] / "config"


def _kept() -> list[Path]:
    folder = Path(os.environ["HOME"]) / ".cache" / "review-gate" / "config"
    return sorted(folder.glob("*.pickle")) if folder.is_dir() else []


@pytest.fixture
def config_dir(tmp_path: Path) -> Path:
    target = tmp_path / "gate-config"
    shutil.copytree(BUILTIN_CONFIG, target)
    return target


def _edit_rule(config_dir: Path, rule_id: str, **changes: Any) -> None:
    path = config_dir / "review-rules.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    for rule in data["rules"]:
        if rule["id"] == rule_id:
            rule.update(changes)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def _todo_severity(cli: Any, config_dir: Path) -> str:
    result = cli("--offline", "--no-state", "--config", str(config_dir), "--format", "json")
    assert result.code in (0, 1), result.err
    [finding] = [f for f in result.json()["findings"] if f["rule_id"] == "hyg-todo-01"]
    return str(finding["severity"])


def test_a_kept_configuration_is_read_again_until_a_file_of_it_changes(cli: Any, repo: GitRepo,
                                                                        config_dir: Path) -> None:
    repo.write("app.py", "x = 1  # TODO: handle retries\n")
    assert _todo_severity(cli, config_dir) == "info"
    [first] = _kept()
    assert _todo_severity(cli, config_dir) == "info"
    assert _kept() == [first]  # the same files: the snapshot was read, not written again
    _edit_rule(config_dir, "hyg-todo-01", severity="major")
    assert _todo_severity(cli, config_dir) == "major"  # the edit judges, not the kept copy
    assert len(_kept()) == 2


def test_the_files_a_kept_configuration_names_are_looked_at_every_time(cli: Any, repo: GitRepo,
                                                                       config_dir: Path) -> None:
    agents = config_dir / "review-agents.json"
    data = json.loads(agents.read_text(encoding="utf-8"))
    [at] = [i for i, agent in enumerate(data["agents"]) if agent["id"] == "build-reviewer"]
    data["agents"][at]["instructions"] = "instructions/ours.md"  # only this directory has it
    agents.write_text(json.dumps(data), encoding="utf-8")
    (config_dir / "instructions" / "ours.md").write_text("Review the build.\n", encoding="utf-8")
    repo.write("app.py", "x = 1\n")
    assert cli("--offline", "--no-state", "--config", str(config_dir)).code == 0
    assert _kept()
    (config_dir / "instructions" / "ours.md").unlink()
    result = cli("--offline", "--no-state", "--config", str(config_dir))
    assert result.code == 2
    assert f"/agents/{at}/instructions" in result.err and "'instructions/ours.md' not found" in result.err


def test_a_configuration_with_a_problem_is_never_kept(cli: Any, repo: GitRepo, config_dir: Path) -> None:
    repo.write("app.py", "x = 1\n")
    _edit_rule(config_dir, "hyg-todo-01", pattern="(unclosed")
    for _ in range(2):  # found and said again each time, not remembered as good
        result = cli("--offline", "--no-state", "--config", str(config_dir))
        assert result.code == 2
        assert "/pattern" in result.err
    assert _kept() == []


def test_a_damaged_snapshot_is_checked_afresh_and_replaced(cli: Any, repo: GitRepo, config_dir: Path) -> None:
    repo.write("app.py", "x = 1  # TODO: later\n")
    assert _todo_severity(cli, config_dir) == "info"
    [kept] = _kept()
    kept.write_bytes(b"\x80\x05not a pickle")
    assert _todo_severity(cli, config_dir) == "info"
    assert load_config(config_dir) == snapshot.read(kept.stem)  # rewritten whole


def test_something_else_kept_under_the_name_is_no_configuration(config_dir: Path) -> None:
    loaded = load_config(config_dir)
    [kept] = _kept()
    kept.write_bytes(__import__("pickle").dumps({"rules": []}))
    assert snapshot.read(kept.stem) is None
    assert load_config(config_dir) == loaded


def test_a_cache_that_cannot_be_written_is_no_error(cli: Any, repo: GitRepo, config_dir: Path,
                                                    monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    repo.write("app.py", "x = 1  # TODO: later\n")
    assert _todo_severity(cli, config_dir) == "info"
    assert _todo_severity(cli, config_dir) == "info"


def test_the_key_is_every_byte_and_where_the_files_are(tmp_path: Path) -> None:
    files = {"review-rules.json": ("rules", b'{"version": 1}')}
    same = snapshot.key(tmp_path, files)
    assert snapshot.key(tmp_path, dict(files)) == same
    assert snapshot.key(tmp_path, {"review-rules.json": ("rules", b'{"version": 1} ')}) != same
    assert snapshot.key(tmp_path / "other", files) != same
    assert snapshot.key(None, files) != same


def test_only_the_most_recent_snapshots_are_kept(config_dir: Path) -> None:
    for severity in ("info", "warning", "major", "critical") * 5:
        _edit_rule(config_dir, "hyg-todo-01", severity=severity, confidence=0.1 + len(_kept()) / 100)
        load_config(config_dir)
    assert len(_kept()) == snapshot.KEPT


def test_a_home_kept_in_git_lists_none_of_the_cache(cli: Any, tmp_path: Path) -> None:
    # the snapshot folder is made before the run state: the state's .gitignore is still written
    home = Path(os.environ["HOME"])
    GitRepo(home)
    diff = tmp_path / "change.diff"
    diff.write_text("--- a/x.py\n+++ b/x.py\n@@ -0,0 +1 @@\n+x = 1  # TODO\n", encoding="utf-8")
    result = cli("--diff", str(diff), "--offline", cwd=tmp_path)
    assert result.code == 0, result.err
    assert _kept() and (home / ".cache" / "review-gate" / "state.db").is_file()
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=home,
                            capture_output=True, text=True, check=True).stdout
    assert ".cache" not in status, status


def test_config_validate_checks_afresh_and_keeps_what_passes(cli: Any, repo: GitRepo, config_dir: Path) -> None:
    assert cli("config", "validate", "--config", str(config_dir)).code == 0
    [kept] = _kept()  # the run after it reads it
    kept.write_bytes(b"not a pickle")
    assert cli("config", "validate", "--config", str(config_dir)).code == 0  # never read: checked again
    assert snapshot.read(kept.stem) is not None


def test_a_snapshot_is_unpickled_once_a_process_until_its_file_changes(config_dir: Path) -> None:
    # issue 33: a Stop hook loads its configuration three times; each unpickling cost ~10 ms of CPU
    load_config(config_dir)
    [kept] = _kept()
    first = snapshot.read(kept.stem)
    assert first is not None and snapshot.read(kept.stem) is first  # the same object: not unpickled again
    kept.write_bytes(__import__("pickle").dumps({"rules": []}))  # replaced under the process: read again
    assert snapshot.read(kept.stem) is None


def test_a_snapshot_carries_the_digest_and_the_glob_translations_its_checks_made(config_dir: Path) -> None:
    # issue 33: every process that read a snapshot dumped the whole configuration again for its
    # digest (30 ms) and each agent's entry and rules for theirs, and translated every domain glob
    # again with pathspec (20 ms)
    load_config(config_dir)  # checked, kept
    script = (
        "import sys\n"
        "from review_gate.config.load import load_config\n"
        "from review_gate.text import globs\n"
        "from pathlib import Path\nconfig = load_config(Path(sys.argv[1]))\n"
        "assert config._digest is not None, 'the digest was made again'\n"
        "assert set(config._hashed) == {a.id for a in config.agents.agents}, 'the agents were dumped again'\n"
        "assert 'pathspec.patterns.gitignore.spec' not in sys.modules, 'globs were translated again'\n"
        "domain = next(d for d in config.domains.domains if d.id == 'ui')\n"
        "assert globs.selections([domain.paths], ['web/App.tsx', 'web/App.test.tsx']) == [{0}]\n"
        "print(config.digest())\n"
    )
    run = subprocess.run([sys.executable, "-c", script, str(config_dir)], capture_output=True, text=True,
                         check=False)
    assert run.returncode == 0, run.stderr
    fresh = load_config(config_dir, one_pass=True)  # checked afresh, its digest made here
    made = json.dumps(fresh.model_dump(mode="json", exclude={"directory", "sources"}), sort_keys=True)
    assert run.stdout.strip() == hashlib.sha256(made.encode()).hexdigest()
