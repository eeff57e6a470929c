"""Sharding over a CI matrix: --shard K/N reviews a stable, balanced share of the files, and
merge combines the N reports into the report and decision of the unsharded run."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from review_gate.models import FileChange
from review_gate.pipeline import shards as shard
from tests.agents.test_command import script
from tests.conftest import make_diff
from tests.state.helpers import counting_config

FILES = [f"pkg{n % 3}/mod_{n}.py" for n in range(14)]
DIFF = "".join(make_diff(path, [f"line_{i} = {i}" for i in range(1 + (n * 7) % 23)]) for n, path in enumerate(FILES))


def run(cli: Any, cfg: Path, diff: str, *args: str) -> tuple[int, dict[str, Any]]:
    result = cli("--config", str(cfg), "--diff", "-", "--no-state", "--format", "json", *args, stdin=diff.encode())
    assert result.out, result.err
    return result.code, json.loads(result.out)


def shards(cli: Any, cfg: Path, tmp_path: Path, diff: str = DIFF, count: int = 4) -> list[Path]:
    paths = []
    for index in range(1, count + 1):
        path = tmp_path / f"shard-{index}.json"
        result = cli("--config", str(cfg), "--diff", "-", "--no-state", "--shard", f"{index}/{count}", "--format",
                     "json", "--output", str(path), stdin=diff.encode())
        assert result.code in (0, 1, 3), result.err
        paths.append(path)
    return paths


def comparable(report: dict[str, Any]) -> tuple[Any, ...]:
    findings = sorted((f["fingerprint"], f["file"], f["line"], f["severity"], f["message"],
                       tuple(f["also_reported_by"])) for f in report["findings"])
    agents = sorted((a["id"], a["status"], tuple(a["files"]), tuple(a["unreviewed"])) for a in report["agents"])
    return (report["decision"], report["exit_code"], report["metrics"], findings, agents, report["manifest"],
            report["coverage"], report["gaps"], report["classification"])


def change(path: str, size: int) -> FileChange:
    return FileChange(path=path, old_path=None, status="added", added=1, removed=0, patch="x" * size)


def test_shares_are_stable_balanced_and_cover_every_file_once() -> None:
    rng = random.Random(7)
    files = [change(f"f{n}.py", rng.randint(10, 5000)) for n in range(200)]
    shares = shard.assign(files, 4)
    assert sorted(p for s in shares for p in s) == sorted(f.path for f in files)
    loads = [sum(len(f.patch) for f in files if f.path in s) for s in shares]
    assert max(loads) - min(loads) <= max(len(f.patch) for f in files)
    shuffled = files[:]
    rng.shuffle(shuffled)
    assert shard.assign(shuffled, 4) == shares  # the same share whatever order the files come in
    assert shard.assign(files, 1) == [sorted(f.path for f in files)]


@pytest.mark.parametrize("text", ["5/4", "0/3", "a/b", "2", "1/0", "-1/2", "2/1001"])
def test_a_shard_that_is_not_k_of_n_is_a_usage_error(cli, tmp_path: Path, text: str) -> None:
    result = cli("--config", str(counting_config(tmp_path)), "--diff", "-", f"--shard={text}", stdin=DIFF.encode())
    assert result.code == 2 and "--shard" in result.err and "fix:" in result.err


def test_four_shards_merged_give_the_unsharded_report(cli, tmp_path: Path) -> None:
    cfg = counting_config(tmp_path)
    code, whole = run(cli, cfg, DIFF)
    paths = shards(cli, cfg, tmp_path)
    reports = [json.loads(p.read_text()) for p in paths]
    assert sorted(f for r in reports for f in r["shard"]["files"]) == sorted(FILES)
    assert all(r["shard"]["count"] == 4 and r["manifest"] == whole["manifest"] for r in reports)
    merged = cli("merge", "--config", str(cfg), *map(str, reversed(paths)), "--format", "json")
    assert merged.code == code
    assert comparable(json.loads(merged.out)) == comparable(whole)
    assert json.loads(merged.out)["shard"] is None


def test_a_sweep_can_be_sharded(cli, repo: Any, tmp_path: Path) -> None:
    for path in FILES:
        repo.write(path, "v = 1\n" * (len(path) % 5 + 1))
    repo.commit("files")
    cfg = counting_config(tmp_path)
    whole = json.loads(cli("sweep", "--config", str(cfg), "--no-state", "--format", "json").out)
    paths = []
    for index in (1, 2):
        path = tmp_path / f"sweep-{index}.json"
        cli("sweep", "--config", str(cfg), "--no-state", "--shard", f"{index}/2", "--format", "json", "--output",
            str(path))
        paths.append(str(path))
    merged = cli("merge", "--config", str(cfg), *paths, "--format", "json")
    assert comparable(json.loads(merged.out)) == comparable(whole)


def test_merge_refuses_reports_that_are_not_one_runs_shards(cli, tmp_path: Path) -> None:
    cfg = counting_config(tmp_path)
    one = shards(cli, cfg, tmp_path / "one")
    other_diff = shards(cli, cfg, tmp_path / "two", diff=DIFF + make_diff("extra.py", ["e = 1"]))
    other_cfg_dir = counting_config(tmp_path / "three", rule_text="another text")
    other_cfg = shards(cli, other_cfg_dir, tmp_path / "three")
    (tmp_path / "plain.json").write_text(json.dumps(run(cli, cfg, DIFF)[1]))
    (tmp_path / "broken.json").write_text("{not json")
    cases = {
        "another change": [*one[:3], other_diff[3]],
        "another configuration": [*one[:3], other_cfg[3]],
        "missing": one[:3],
        "are both shard": [*one, one[0]],
        "not the report of a shard": [*one, tmp_path / "plain.json"],
        "not a review-gate JSON report": [*one, tmp_path / "broken.json"],
    }
    for words, paths in cases.items():
        result = cli("merge", "--config", str(cfg), *map(str, paths))
        assert result.code == 2 and words in result.err and "fix:" in result.err, (words, result.err)
        assert "Traceback" not in result.err
    mismatch = cli("merge", "--config", str(other_cfg_dir), *map(str, one))
    assert mismatch.code == 2 and "configuration" in mismatch.err


def test_an_incomplete_shard_makes_the_merged_report_incomplete(cli, tmp_path: Path) -> None:
    flaky = script(tmp_path, "flaky.py", """\
        import json, os, sys
        sys.stdin.read()
        files = json.loads(os.environ["REVIEW_GATE_FILES"])
        if "pkg0/mod_0.py" in files:
            sys.exit("cannot read pkg0/mod_0.py")
        print(json.dumps({"findings": []}))
    """)
    cfg = counting_config(tmp_path)
    agents = json.loads((cfg / "review-agents.json").read_text())
    agents["agents"][0]["command"] = [agents["agents"][0]["command"][0], str(flaky)]
    (cfg / "review-agents.json").write_text(json.dumps(agents))
    _, whole = run(cli, cfg, DIFF)
    merged = cli("merge", "--config", str(cfg), *map(str, shards(cli, cfg, tmp_path)), "--format", "json")
    report = json.loads(merged.out)
    assert merged.code == 3 and report["decision"] == whole["decision"] == "incomplete"
    assert report["metrics"]["missing_inputs"] == 1
    failed = next(a for a in report["agents"] if a["id"] == "one")
    assert failed["status"] == "failed" and failed["files"] == sorted(FILES)
