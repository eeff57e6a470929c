"""review_gate.api: the library the CLI, the MCP server and the loop call."""

from __future__ import annotations

import re
from pathlib import Path

import anyio
import pytest

from review_gate import api
from review_gate.errors import GitError, ReviewGateError, UsageError
from tests.conftest import GitRepo, make_diff

DOC = Path(__file__).resolve().parent.parent / "docs" / "api.md"
INSECURE = "import requests\nr = requests.get(url, verify=False, timeout=5)\n"


@pytest.mark.parametrize("number", range(2))
def test_the_documented_examples_run(repo: GitRepo, number: int) -> None:
    blocks = re.findall(r"^```python\n(.*?)^```", DOC.read_text(encoding="utf-8"), re.DOTALL | re.MULTILINE)
    assert len(blocks) == 2
    exec(compile(blocks[number], f"docs/api.md example {number + 1}", "exec"), {"__name__": "example"})


def test_review_returns_the_report_the_cli_gives(cli, repo: GitRepo) -> None:
    repo.write("app.py", INSECURE)
    report = api.review()
    cli_report = cli("--format", "json").json()
    assert report.decision == cli_report["decision"] == "needs_fixes"
    assert [f.fingerprint for f in report.findings] == [f["fingerprint"] for f in cli_report["findings"]]


def test_review_writes_outputs_and_a_bundle_and_keeps_them_out_of_the_next_review(repo: GitRepo) -> None:
    repo.write("app.py", INSECURE)
    api.review(outputs=[("sarif", "out.sarif"), ("markdown", "out.md")], bundle_dir="run1")
    assert (repo.root / "out.sarif").is_file() and (repo.root / "run1" / "bundle.json").is_file()
    again = api.review()
    assert [f.path for f in again.classification.files] == ["app.py"]


def test_the_async_twin_runs_in_a_callers_event_loop(repo: GitRepo) -> None:
    async def main() -> list[str]:
        report = await api.review_async(diff=make_diff("a.py", ["eval(x)"]).encode(), state=False)
        planned = await api.plan_async(diff=make_diff("a.py", ["eval(x)"]).encode(), offline=True)
        return [report.decision, planned.facts.files[0].path]

    assert anyio.run(main) == ["needs_fixes", "a.py"]


def test_bad_input_raises_the_error_the_cli_would_print(repo: GitRepo, tmp_path: Path) -> None:
    with pytest.raises(GitError) as unknown:
        api.review(base="no-such-ref")
    assert unknown.value.exit_code == 2 and "no-such-ref" in unknown.value.message
    with pytest.raises(UsageError):
        api.review(diff=b"", base="main")
    with pytest.raises(GitError):
        api.review(cwd=tmp_path)  # not a repository
    with pytest.raises(ReviewGateError):
        api.review(config=tmp_path / "missing")


def test_replay_decides_again_from_a_bundle(repo: GitRepo, tmp_path: Path) -> None:
    repo.write("app.py", INSECURE)
    first = api.review(bundle_dir=tmp_path / "run1")
    again, recorded = api.replay(tmp_path / "run1")
    assert recorded.run_id == first.run_id and again.decision == first.decision
    lenient, _ = api.replay(tmp_path / "run1", fail_on="never")
    assert lenient.exit_code == 0
