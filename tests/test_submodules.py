"""Submodules reviewed, not just counted: a moved submodule's own commits join the change when both
are on this machine; otherwise review-gate.json's ``submodules`` says whether that warns (the
default), is only listed, or makes the review incomplete. Real repositories and the real CLI.

Secrets are assembled at run time: this file holds no literal a secret scanner would flag.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.conftest import GitRepo

AWS_KEY = "AKIA" + "Q7WZ3M9K2R5T8XB4"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


def library(tmp_path: Path) -> tuple[Path, list[str]]:
    """A repository of two commits; the second adds a key and a shell call."""
    other = tmp_path / "lib"
    other.mkdir()
    git(other, "init", "-q", "-b", "main")
    made = []
    for files in ({"util.c": "int add(int a, int b) { return a + b; }\n"},
                  {"keys.py": f'KEY = "{AWS_KEY}"\n', "run.c": "void run(char *c) { system(c); }\n"}):
        for name, text in files.items():
            (other / name).write_text(text, encoding="utf-8")
        git(other, "add", "-A")
        git(other, "commit", "-q", "-m", "work")
        made.append(git(other, "rev-parse", "HEAD"))
    git(other, "checkout", "-q", made[0])
    return other, made


def with_submodule(repo: GitRepo, other: Path) -> None:
    repo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(other), "modules/lib")
    repo.commit("add the library")


def review(cli: Any, *extra: str) -> tuple[int, dict[str, Any]]:
    result = cli("--base", "HEAD~1", "--head", "HEAD", "--offline", "--no-state", "--format", "json", *extra)
    assert result.out, result.err
    return result.code, json.loads(result.out)


def settings(tmp_path: Path, policy: str) -> str:
    cfg = tmp_path / "cfg"
    cfg.mkdir(exist_ok=True)
    (cfg / "review-gate.json").write_text(json.dumps({"version": 1, "submodules": policy}), encoding="utf-8")
    return str(cfg)


def test_a_moved_submodule_is_reviewed_through_its_own_commits(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    other, commits = library(tmp_path)
    with_submodule(repo, other)
    git(repo.root / "modules" / "lib", "checkout", "-q", commits[1])
    repo.commit("bump the library")
    code, report = review(cli)
    assert code == 1 and report["decision"] == "fail"
    found = {(f["file"], f["rule_id"]) for f in report["findings"]}
    assert ("modules/lib/keys.py", "sec-aws-key-01") in found
    assert ("modules/lib/run.c", "sec-c-command-01") in found  # C: a domain of its own, reviewed for shell calls
    assert report["coverage"]["not_inspected"] == [] and report["metrics"]["missing_inputs"] == 0


def test_a_submodule_whose_commits_are_absent_warns_how_to_fetch_them(cli: Any, repo: GitRepo,
                                                                     tmp_path: Path) -> None:
    other, _ = library(tmp_path)
    with_submodule(repo, other)
    git(other, "checkout", "-q", "main")
    (other / "more.py").write_text("x = 1\n", encoding="utf-8")
    git(other, "add", "-A")
    git(other, "commit", "-q", "-m", "later")  # a commit the checkout at modules/lib never fetched
    later = git(other, "rev-parse", "HEAD")
    repo.git("update-index", "--cacheinfo", f"160000,{later},modules/lib")
    repo.git("commit", "-q", "-m", "point the library at a later commit")
    code, report = review(cli)
    assert code == 0 and report["decision"] == "pass_with_warnings"
    [warning] = [f for f in report["findings"] if f["file"] == "modules/lib"]
    assert warning["severity"] == "warning" and later[:12] in warning["message"]
    assert "git submodule update --init -- modules/lib" in warning["recommendation"]
    [item] = report["coverage"]["not_inspected"]
    assert item["counted"] is False and report["metrics"]["missing_inputs"] == 0

    code, report = review(cli, "--config", settings(tmp_path, "incomplete"))  # today's fail-closed behaviour
    assert code == 3 and report["decision"] == "incomplete" and report["metrics"]["missing_inputs"] == 1
    code, report = review(cli, "--config", settings(tmp_path, "list"))
    assert code == 0 and report["metrics"]["warning"] == 0
    assert report["coverage"]["not_inspected"][0]["counted"] is False
    assert report["decision"] == ("pass_with_warnings" if report["metrics"]["agents_skipped"] else "pass")


def test_the_submodules_setting_is_validated(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    result = cli("config", "validate", "--config", settings(tmp_path, "review"))
    assert result.code == 2
    assert "review-gate.json" in result.err and "/submodules" in result.err


def test_a_changed_submodule_url_is_a_major_finding(cli: Any, repo: GitRepo) -> None:
    repo.write(".gitmodules", '[submodule "laf"]\n\tpath = laf\n\turl = https://github.com/aseprite/laf.git\n')
    repo.commit("a submodule")
    code, report = review(cli)
    assert [f for f in report["findings"] if f["rule_id"] == "infra-submodule-url-01"] == []  # a new one: no finding
    repo.write(".gitmodules", '[submodule "laf"]\n\tpath = laf\n\turl = https://github.com/someone/laf.git\n')
    repo.commit("point the submodule elsewhere")
    code, report = review(cli)
    assert code == 1 and [(f["file"], f["line"], f["severity"]) for f in report["findings"]
                          if f["rule_id"] == "infra-submodule-url-01"] == [(".gitmodules", 3, "major")]
