"""review_gate.api: the library the CLI, the MCP server and the loop call."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import anyio
import pytest

from review_gate import api
from review_gate.errors import GitError, InputError, ReviewGateError, UsageError
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


BAD_ARGUMENTS = [
    ({"cwd": "/nonexistent-x"}, "cwd '/nonexistent-x': no such directory", "existing directory"),
    ({"cwd": "FILE"}, "': not a directory", "existing directory"),
    ({"fail_on": "bogus"}, "fail_on 'bogus': not one of pass_with_warnings, needs_fixes, fail, never",
     "give fail_on as one of them"),
    ({"filter_mode": "bogus"}, "filter_mode 'bogus': not one of added, diff_context, file, nofilter",
     "give filter_mode as one of them"),
    ({"concurrency": 0}, "concurrency 0: must be from 1 to 256", "agents may run at once"),
    ({"concurrency": 257}, "concurrency 257: must be from 1 to 256", "agents may run at once"),
    ({"agent_timeout": -1.0}, "agent_timeout -1: must be more than 0", "deadline of each agent"),
    ({"outputs": [("bogus", "out.txt")]}, "format 'bogus': not one of", "give format as one of them"),
    ({"packing": "bogus"}, "packing 'bogus': not one of per_agent, agent_packed", "give packing as one of them"),
    ({"shard": (3, 2)}, "shard (3, 2): not a share (K, N) with 1 <= K <= N", "e.g. shard=(2, 4)"),
    # wrong types (trial 3, item 9): named like a wrong value, never a TypeError from inside
    ({"cwd": 123}, "cwd 123: not a path (int given)", "give cwd as a string or a pathlib.Path"),
    ({"config": 5}, "config 5: not a path (int given)", "give config as a string or a pathlib.Path"),
    ({"outputs": "json"}, "outputs 'json': not a list of pairs", "give outputs as a list of pairs"),
]


def _bad(arguments: dict[str, object], tmp_path: Path) -> dict[str, object]:
    if arguments.get("cwd") == "FILE":
        tmp_path.mkdir(exist_ok=True)
        (tmp_path / "app.py").write_text("x = 1\n")
        return {**arguments, "cwd": str(tmp_path / "app.py")}
    return arguments


def _calls(repo: GitRepo, tmp_path: Path) -> dict[str, Any]:
    """Each entry point, called with the arguments it takes of those in BAD_ARGUMENTS."""
    bundle = tmp_path / "bundle"
    repo.write("app.py", INSECURE)
    api.review(cwd=repo.root, bundle_dir=bundle, offline=True, state=False)
    return {
        "review": lambda **a: api.review(offline=True, state=False, **{"cwd": repo.root, **a}),
        "sweep": lambda **a: api.sweep(offline=True, state=False, **{"cwd": repo.root, **a}),
        "batch_submit": lambda **a: api.batch_submit(**{"cwd": repo.root, **a}),
        "plan": lambda **a: api.plan(offline=True, **{"cwd": repo.root, **a}),
        "explain": lambda **a: api.explain(["app.py"], **{"cwd": repo.root, **a}),
        "accept": lambda **a: api.accept("abcdef", "a reason", **{"cwd": repo.root, **a}),
        "batch_status": lambda **a: api.batch_status(**{"cwd": repo.root, **a}),
        "batch_collect": lambda **a: api.batch_collect(**{"cwd": repo.root, **a}),
        "merge": lambda **a: api.merge([], **{"cwd": repo.root, **a}),
        "replay": lambda **a: api.replay(bundle, **a),
    }


RUNS = {"cwd", "config", "fail_on", "filter_mode", "concurrency", "agent_timeout", "outputs", "packing"}
TAKES = {"review": {*RUNS, "shard"}, "sweep": {*RUNS, "shard"}, "batch_submit": RUNS,
         "plan": {"cwd", "config"}, "explain": {"cwd", "config"}, "accept": {"cwd", "config"},
         "batch_status": {"cwd", "config"}, "batch_collect": {"cwd", "config", "outputs"},
         "merge": {"cwd", "config", "fail_on", "outputs"}, "replay": {"config", "fail_on", "filter_mode"}}


def test_every_entry_point_refuses_bad_arguments_with_message_and_fix(repo: GitRepo, tmp_path: Path) -> None:
    calls = _calls(repo, tmp_path)
    for name, call in calls.items():
        for arguments, message, fix in BAD_ARGUMENTS:
            if not set(arguments) <= TAKES[name]:
                continue
            with pytest.raises(ReviewGateError) as caught:
                call(**_bad(arguments, tmp_path / name))
            error = caught.value
            assert isinstance(error, (UsageError, InputError)), (name, arguments, type(error))
            assert message in error.message and "\n" not in error.message, (name, error.message)
            assert error.fix is not None and fix in error.fix, (name, error.fix)


WRONG = [
    (lambda: api.explain([None]), "path None: not text (None given)", "give path as a string"),
    (lambda: api.explain([""]), "path is empty", "non-empty string"),
    (lambda: api.explain(["src"]), "explain src: a directory", "give the paths of files"),
    (lambda: api.accept(None, "x"), "id_or_fingerprint None: not text", "give id_or_fingerprint as a string"),
    (lambda: api.accept("abcdef", None), "reason None: not text", "give reason as a string"),
    (lambda: api.review(base=["main"]), "base ['main']: not text (list given)", "give base as a string"),
    (lambda: api.plan(base=5), "base 5: not text (int given)", "give base as a string"),
    (lambda: api.review(add_agents="x"), "add_agents 'x': not a list of pairs", "give add_agents as a list"),
    (lambda: api.review(staged="yes"), "staged 'yes': not True or False", "give staged as a bool"),
    (lambda: api.review(diff="+x"), "diff '+x': not bytes", "text.encode()"),
    (lambda: api.review(accepted_before="yesterday"), "accepted_before 'yesterday': not a UTC time stamp",
     "like 2026-11-26T10:00:00Z"),
    (lambda: api.review(accepted_before="2026-11-26T10:00Z"), "not a UTC time stamp", "2026-11-26T10:00:00Z"),
    (lambda: api.review(accepted_before="2026-02-30T10:00:00Z"), "not a UTC time stamp", "2026-11-26T10:00:00Z"),
    (lambda: api.sweep(["src"], max_file_bytes="1"), "--max-file-bytes '1': must be a whole number", "bytes"),
    (lambda: api.merge("a.json"), "reports 'a.json': not a list of paths", "as a list of paths"),
    (lambda: api.replay(None), "directory None", "bundle's directory"),
]


@pytest.mark.parametrize("index", range(len(WRONG)))
def test_arguments_of_the_wrong_type_raise_a_usage_error_naming_them(repo: GitRepo, index: int) -> None:
    repo.write("src/app.py", "x = 1\n")
    call, message, fix = WRONG[index]
    with pytest.raises(UsageError) as caught:
        call()
    assert message in caught.value.message and "\n" not in caught.value.message, caught.value.message
    assert caught.value.fix is not None and fix in caught.value.fix, caught.value.fix


def test_a_well_formed_accepted_before_is_taken(repo: GitRepo) -> None:
    repo.write("app.py", INSECURE)
    report = api.review(offline=True, accepted_before="2026-11-26T10:00:00Z")
    assert report.decision == "needs_fixes"
