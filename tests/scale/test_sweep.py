"""Sweeps: the files as they are, each reviewed as if added whole, through the normal gate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import GitRepo
from tests.state.helpers import calls, counting_config, query, statuses

EVAL_RULES = {"version": 1, "rules": [{
    "id": "no-eval", "name": "no eval", "severity": "major", "agent": "patterns", "category": "security",
    "description": "eval runs arbitrary code", "detection": "eval(", "recommendation": "parse it",
    "pattern": r"\beval\("}]}


def pattern_config(tmp_path: Path) -> Path:
    cfg = tmp_path / "pcfg"
    cfg.mkdir(parents=True)
    (cfg / "review-rules.json").write_text(json.dumps(EVAL_RULES))
    (cfg / "review-agents.json").write_text(json.dumps({"version": 1, "agents": [
        {"id": "patterns", "name": "patterns", "description": "regex rules", "kind": "pattern"}]}))
    (cfg / "review-composition.json").write_text(json.dumps({"version": 1, "policies": [
        {"id": "all", "description": "every file", "trigger": {"type": "always"}, "dispatch": ["patterns"]}]}))
    return cfg


def sweep(cli: Any, cfg: Path, *args: str) -> tuple[int, dict[str, Any]]:
    result = cli("sweep", "--config", str(cfg), "--format", "json", *args)
    assert result.out, result.err
    return result.code, json.loads(result.out)


def test_a_sweep_reviews_committed_files_whole(cli, repo: GitRepo, tmp_path: Path) -> None:
    repo.write("app/old.py", "import os\n\nvalue = eval(os.environ['X'])\n")
    repo.write("app/clean.py", "x = 1\n")
    repo.commit("old code")
    code, report = sweep(cli, pattern_config(tmp_path))
    assert code == 1 and report["decision"] == "needs_fixes"
    assert [(f["file"], f["line"], f["rule_id"]) for f in report["findings"]] == [("app/old.py", 3, "no-eval")]
    assert report["coverage"]["files_changed"] == 3  # README.md too: every file of the tree
    assert report["coverage"]["unreviewed"] == []
    assert report["source"].startswith("sweep of the working tree at ")
    # the working tree as it is: a plain `run` of the same clean tree has nothing to review
    plain = cli("--config", str(pattern_config(tmp_path / "again")), "--format", "json")
    assert json.loads(plain.out)["coverage"]["files_changed"] == 0


def test_pathspecs_and_since_limit_what_is_swept(cli, repo: GitRepo, tmp_path: Path) -> None:
    repo.write("app/a.py", "a = eval(x)\n")
    repo.write("lib/b.py", "b = eval(y)\n")
    first = repo.commit("two files")
    cfg = pattern_config(tmp_path)
    _, only_lib = sweep(cli, cfg, "lib")
    assert {f["file"] for f in only_lib["findings"]} == {"lib/b.py"}
    assert only_lib["coverage"]["files_changed"] == 1
    repo.write("app/a.py", "a = eval(x)\nz = eval(w)\n")
    repo.write("new.py", "n = eval(q)\n")  # untracked, not ignored: part of the tree
    _, since = sweep(cli, cfg, "--since", first)
    assert sorted(f["file"] for f in since["findings"]) == ["app/a.py", "app/a.py", "new.py"]
    assert since["coverage"]["files_changed"] == 2


def test_a_second_sweep_of_an_unchanged_tree_calls_no_agent(cli, repo: GitRepo, tmp_path: Path) -> None:
    repo.write("a.py", "x = 1\n")
    repo.write("b.py", "y = 2\n")
    repo.commit("files")
    cfg = counting_config(tmp_path)
    code1, first = sweep(cli, cfg)
    assert statuses(first) == {"one": "completed", "two": "completed"}
    assert calls(tmp_path, "one") == ["README.md,a.py,b.py"]
    code2, second = sweep(cli, cfg)
    assert calls(tmp_path, "one") == ["README.md,a.py,b.py"]  # zero agent calls the second time
    assert statuses(second) == {"one": "cached", "two": "cached"}
    assert (code2, second["decision"], second["findings"]) == (code1, first["decision"], first["findings"])
    repo.write("b.py", "y = 3\n")
    sweep(cli, cfg)
    assert calls(tmp_path, "one") == ["README.md,a.py,b.py", "b.py"]  # only the file that changed
    kinds = query(repo.root / ".review-gate" / "state.db",
                  "SELECT DISTINCT review_kind, reviewed_commit FROM review_pairs")
    assert kinds == [("sweep", repo.git("rev-parse", "HEAD").strip())]


def test_the_gate_own_files_are_no_part_of_a_sweep(cli, repo: GitRepo, tmp_path: Path) -> None:
    assert cli("init", "--full").code == 0  # .review-gate/ with the five config files, committed
    repo.commit("config")
    _, report = sweep(cli, pattern_config(tmp_path))
    assert report["coverage"]["files_changed"] == 1  # README.md only
    assert report["gaps"] == [] or all(g["kind"] != "config_changed" for g in report["gaps"])
    _, again = sweep(cli, pattern_config(tmp_path / "again"))  # the state the first sweep left is not swept
    assert again["coverage"]["files_changed"] == 1


def test_binary_files_have_no_lines_and_files_over_the_limit_are_gaps(cli, repo: GitRepo, tmp_path: Path) -> None:
    repo.write("blob.bin", b"\x00\x01eval(x)\x00" * 10)
    repo.write("big.py", "v = eval(z)\n" * 100)
    repo.write("small.py", "w = eval(z)\n")
    repo.commit("files")
    _, report = sweep(cli, pattern_config(tmp_path), "--max-file-bytes", "500")
    assert {f["file"] for f in report["findings"]} == {"small.py"}  # nothing from the binary
    big = [g for g in report["gaps"] if g["subject"] == "big.py"]
    assert len(big) == 1 and big[0]["kind"] == "uncovered_file" and "1200 bytes" in big[0]["reason"]
    facts = cli("sweep", "--config", str(pattern_config(tmp_path / "p2")), "--no-state", "--format", "json")
    assert "blob.bin" in facts.out


def test_a_sweep_never_follows_a_symbolic_link(cli, repo: GitRepo, tmp_path: Path) -> None:
    secret = tmp_path / "outside.py"
    secret.write_text("s = eval(secret)\n")
    (repo.root / "link.py").symlink_to(secret)
    repo.commit("a link")
    code, report = sweep(cli, pattern_config(tmp_path))
    assert report["findings"] == []  # the target's content was never read
    assert code == 0


def test_a_pathspec_that_matches_nothing_is_a_usage_error(cli, repo: GitRepo, tmp_path: Path) -> None:
    result = cli("sweep", "--config", str(pattern_config(tmp_path)), "no/such/dir")
    assert result.code == 2 and "no/such/dir" in result.err and "fix:" in result.err
    assert "Traceback" not in result.err


def test_a_sweep_outside_a_repository_is_exit_2(cli, tmp_path: Path) -> None:
    result = cli("sweep", "--config", str(pattern_config(tmp_path)))
    assert result.code == 2 and "not inside a git repository" in result.err


def test_paths_with_unusual_characters_are_swept(cli, repo: GitRepo, tmp_path: Path) -> None:
    for name in ("my file.py", "quo\"te.py", "tab\there.py", "naïve.py", " lead.py"):
        repo.write(name, "q = eval(r)\n")
    repo.commit("names")
    _, report = sweep(cli, pattern_config(tmp_path))
    assert sorted(f["file"] for f in report["findings"]) == sorted(
        ["my file.py", "quo\"te.py", "tab\there.py", "naïve.py", " lead.py"])


def test_a_committed_team_acceptance_is_applied_and_no_gap(cli, repo: GitRepo) -> None:
    """A sweep reported a baseline_changed gap for the committed, unchanged acceptances.json it applied."""
    repo.write("app.py", "import requests\nr = requests.get(url, verify=False, timeout=5)\n")
    repo.commit("app")
    [finding] = cli("sweep", "--offline", "--no-state", "--format", "json").json()["findings"]
    assert cli("accept", finding["fingerprint"], "--reason", "a test server", "--shared", "--force").code == 0
    repo.commit("the team's acceptance")
    swept = cli("sweep", "--offline", "--no-state", "--format", "json")
    report = swept.json()
    assert [w["fingerprint"] for w in report["waived"]] == [finding["fingerprint"]]
    assert "baseline_changed" not in {g["kind"] for g in report["gaps"]}
