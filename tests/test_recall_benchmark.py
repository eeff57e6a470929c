"""benchmarks/recall.py on bad input (issue 31): a fix whose parent a shallow copy lacks, a root
commit, a merge and a commit the copy does not have are each reported and skipped, never a crash;
a real fix is reviewed reversed, and what it puts back is caught."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from tests.conftest import GitRepo

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "recall.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("recall_benchmark", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _fix(repo: str, commit: str, pattern: str = "yes") -> dict[str, Any]:
    return {"repo": repo, "fix": commit, "language": "python", "class": "injection", "description": "d",
            "pattern": pattern, "rule": "sec-shell-true-01"}


def test_bad_entries_are_skipped_and_a_real_fix_is_caught(tmp_path: Path, capsys: Any) -> None:
    mirrors = tmp_path / "mirrors"
    root = mirrors / "acme+app"
    root.mkdir(parents=True)
    app = GitRepo(root)
    first = app.git("rev-parse", "HEAD").strip()
    app.write("run.py", "import subprocess\nsubprocess.run(cmd, shell=True)\n")
    app.commit("run a command")
    app.write("run.py", "import subprocess\nsubprocess.run(cmd)\n")
    fix = app.commit("fix: no shell")
    app.branch("side")
    app.write("side.py", "x = 1\n")
    app.commit("side")
    app.git("checkout", "-q", "main")
    app.git("merge", "-q", "--no-ff", "-m", "merge side", "side")
    merge = app.git("rev-parse", "HEAD").strip()
    subprocess.run(["git", "clone", "-q", "--depth", "1", "--branch", "side", f"file://{root}",
                    str(mirrors / "acme+shallow")], check=True, capture_output=True)
    shallow_head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=mirrors / "acme+shallow", check=True,
                                  capture_output=True, text=True).stdout.strip()
    listed = tmp_path / "fixes.json"
    listed.write_text(json.dumps({"version": 1, "fixes": [
        _fix("acme/app", fix), _fix("acme/app", first, "no"), _fix("acme/app", merge, "no"),
        _fix("acme/shallow", shallow_head, "no"), _fix("acme/app", "0" * 40, "no"),
        _fix("acme/gone", "1" * 40, "no")]}))
    out = tmp_path / "out.json"
    assert _script().main(["--mirrors", str(mirrors), "--list", str(listed), "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "fixes listed: 6, reviewed: 1" in printed
    outcomes = {o["fix"]: o for o in json.loads(out.read_text())}
    assert outcomes[fix]["skipped"] is None and outcomes[fix]["caught"]["pattern agents"]
    assert "root commit" in outcomes[first]["skipped"]
    assert "merge" in outcomes[merge]["skipped"], outcomes
    assert "shallow" in outcomes[shallow_head]["skipped"]
    assert "not in the local copy" in outcomes["0" * 40]["skipped"]
    assert "skipped:" in printed and "no local copy of acme/gone" in printed
