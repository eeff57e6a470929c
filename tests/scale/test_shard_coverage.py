"""merge checks coverage instead of taking a report's word for it: it computes the shares again
from the assignment inputs every shard report records and N, and refuses (exit 2, no report
written) a shard whose files are not exactly its own share, shards that overlap, or a file no
shard reviewed. The real CLI, real shard runs of one change."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import make_diff

FILES = [f"src/mod_{n}.py" for n in range(6)]
BAD = "src/mod_4.py"
DIFF = "".join(make_diff(path, [f"line_{i} = {i}" for i in range(1 + n * 3)]
                         + (["total = eval(user_input)"] if path == BAD else [])) for n, path in enumerate(FILES))


def shard_reports(cli: Any, tmp_path: Path, count: int = 2) -> list[Path]:
    paths = []
    for index in range(1, count + 1):
        path = tmp_path / f"shard-{index}.json"
        result = cli("--diff", "-", "--no-state", "--offline", "--shard", f"{index}/{count}", "--exit-zero",
                     "--format", "json", "--output", str(path), stdin=DIFF.encode())
        assert result.code == 0, result.err
        paths.append(path)
    return paths


def edited(path: Path, target: Path, change: Any) -> Path:
    report = json.loads(path.read_text())
    change(report)
    target.write_text(json.dumps(report))
    return target


def refused(cli: Any, tmp_path: Path, *reports: Path, words: str) -> None:
    out = tmp_path / "merged.sarif"
    result = cli("merge", *map(str, reports), "--format", "sarif", "--output", str(out))
    assert result.code == 2, (result.code, result.err)
    assert words in result.err and "fix:" in result.err, result.err
    assert "Traceback" not in result.err
    assert not out.exists()  # a refused merge writes no report


def test_the_shards_of_one_run_merge_to_the_whole_decision(cli: Any, tmp_path: Path) -> None:
    reports = shard_reports(cli, tmp_path)
    assert sorted(json.loads(reports[0].read_text())["shard"]["sizes"]) == FILES
    merged = cli("merge", *map(str, reports), "--format", "json")
    assert merged.code == 1, merged.err
    assert [f["file"] for f in merged.json()["findings"]] == [BAD]


def test_a_shard_relabelled_as_another_is_refused(cli: Any, tmp_path: Path) -> None:
    one, two = shard_reports(cli, tmp_path)
    clean, flagged = (one, two) if BAD in json.loads(two.read_text())["shard"]["files"] else (two, one)
    clean_index = json.loads(clean.read_text())["shard"]["index"]
    flagged_index = json.loads(flagged.read_text())["shard"]["index"]

    def relabel(report: dict[str, Any]) -> None:
        report["shard"]["index"] = flagged_index

    forged = edited(clean, tmp_path / "forged.json", relabel)
    refused(cli, tmp_path, clean, forged, words=f"says it is shard {flagged_index}/2, but the files it reviewed are "
                                                "not that shard's share")
    assert clean_index != flagged_index


def test_a_shard_claiming_another_shards_files_is_refused(cli: Any, tmp_path: Path) -> None:
    one, two = shard_reports(cli, tmp_path)
    others = json.loads(one.read_text())["shard"]["files"]

    def claim(report: dict[str, Any]) -> None:
        report["shard"]["files"] = others

    refused(cli, tmp_path, one, edited(two, tmp_path / "claims.json", claim), words="left out:")


def test_an_agent_that_left_files_out_of_its_share_is_refused(cli: Any, tmp_path: Path) -> None:
    one, two = shard_reports(cli, tmp_path)

    def drop(report: dict[str, Any]) -> None:
        agent = next(a for a in report["agents"] if a["files"])
        agent["files"] = agent["files"][1:]

    refused(cli, tmp_path, one, edited(two, tmp_path / "dropped.json", drop), words="reviewing exactly its files")


def test_reports_that_record_another_assignment_are_refused(cli: Any, tmp_path: Path) -> None:
    one, two = shard_reports(cli, tmp_path)

    def reweigh(report: dict[str, Any]) -> None:
        report["shard"]["sizes"][BAD] += 1_000_000

    refused(cli, tmp_path, one, edited(two, tmp_path / "reweighed.json", reweigh), words="another assignment")
