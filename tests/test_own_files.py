"""The gate's own files are kept out of the review; their changes are gaps (pure, no I/O)."""

from __future__ import annotations

from pathlib import Path

from review_gate.change.blobs import blob_ids
from review_gate.change.own_files import Link, OwnFiles, inside, sealed, split
from review_gate.models import FileChange, PRFacts

OWN = OwnFiles(config_dir=".review-gate",
               config={".review-gate": [".review-gate/review-rules.json", ".review-gate/review-agents.json",
                                        ".review-gate/instructions/sec.md"],
                       "ci/review": ["ci/review/x.md"]},
               loop_dir=".review-gate", baselines=[".review-gate/baseline.json"],
               state=[".review-gate/state.db", ".review-gate/state.db-wal"],
               written={"review.sarif": blob_ids(b"{}\n")})


def change(path: str, old_path: str | None = None, sha: str | None = None) -> FileChange:
    return FileChange(path=path, old_path=old_path or path, status="modified", added=1, removed=0, content_sha=sha)


def facts(*changes: FileChange) -> PRFacts:
    return PRFacts(source="t", files=list(changes))


def test_own_files_leave_the_review_and_each_set_is_one_gap() -> None:
    kept, gaps = split(facts(change("app.py"), change(".review-gate/review-rules.json"),
                             change(".review-gate/review-agents.json"), change(".review-gate/baseline.json"),
                             change(".review-gate/state.db"), change("ci/review/x.md")), OWN)
    assert [f.path for f in kept.files] == ["app.py"]
    assert sorted((g.kind, g.subject) for g in gaps) == [
        ("baseline_changed", ".review-gate/baseline.json"), ("config_changed", ".review-gate"),
        ("config_changed", "ci/review"), ("state_changed", ".review-gate/state.db")]
    [config] = [g for g in gaps if g.subject == ".review-gate"]
    assert any(f.endswith("review-rules.json") for f in config.files)
    assert any(f.endswith("review-agents.json") for f in config.files)
    assert config.reason.startswith("the change edits the review configuration (")


def test_a_report_is_left_out_only_while_it_is_what_the_gate_wrote() -> None:
    ours = change("review.sarif", sha=blob_ids(b"{}\n")[0])
    edited = change("review.sarif", sha=blob_ids(b"secret\n")[0])
    assert split(facts(ours), OWN)[0].files == []
    assert [f.path for f in split(facts(edited), OWN)[0].files] == ["review.sarif"]
    assert [f.path for f in split(facts(change("review.sarif")), OWN)[0].files] == ["review.sarif"]  # no blob id


def test_a_file_moved_out_of_the_gate_directory_is_reviewed_and_reported() -> None:
    kept, gaps = split(facts(change("src/tool.py", old_path=".review-gate/instructions/sec.md")), OWN)
    assert [f.path for f in kept.files] == ["src/tool.py"]
    assert [g.kind for g in gaps] == ["config_changed"]


def test_only_the_gate_s_own_files_are_its_own() -> None:
    """Named exactly: code beside the configuration, or shaped unlike a loop file, is reviewed."""
    paths = [".review-gate/deploy.py", ".review-gate/instructions/other.md", ".review-gate/sessions/t/1/x.py",
             ".review-gate/sessions/t/1/plan.prompt.md", ".review-gate/hil/t.json", "ci/review/y.md"]
    kept, gaps = split(facts(*map(change, paths)), OWN)
    assert [f.path for f in kept.files] == [".review-gate/deploy.py", ".review-gate/instructions/other.md",
                                            ".review-gate/sessions/t/1/x.py", "ci/review/y.md"]
    [gap] = gaps
    assert (gap.subject, "deploy.py" in gap.reason) == (".review-gate", False)


def test_a_link_on_the_gate_s_paths_is_a_gap_whether_or_not_it_changed() -> None:
    own = OWN.model_copy(update={"links": [Link(path=".review-gate", kind="config_changed", target="src")]})
    kept, gaps = split(facts(change("src/s.py")), own)
    assert [f.path for f in kept.files] == ["src/s.py"]
    assert [(g.kind, g.subject) for g in gaps] == [("config_changed", ".review-gate")]
    assert "(to src)" in gaps[0].reason


def test_a_file_put_where_the_gate_directory_was_is_reviewed_and_reported() -> None:
    kept, gaps = split(facts(change(".review-gate")), OWN)
    assert [f.path for f in kept.files] == [".review-gate"]
    assert [(g.kind, g.subject) for g in gaps] == [("config_changed", ".review-gate")]


def test_inside_never_goes_through_a_link_in_the_repository(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / ".review-gate").symlink_to("src", target_is_directory=True)
    outside = tmp_path / "outside"
    outside.symlink_to(root, target_is_directory=True)  # a link outside the repository is fine
    assert inside(root / ".review-gate", root) is None
    assert inside(root / ".review-gate" / "state.db", root) is None
    assert inside(root / "src" / "a.py", root) == "src/a.py"
    assert inside(outside / "src", root) == "src"
    assert inside(root, root) == "."
    assert inside(tmp_path, root) is None


def test_blob_ids_are_git_s() -> None:
    assert blob_ids(b"hello\n")[0] == "ce013625030ba8dba906f756967f9e9ca394464a"  # `git hash-object`


def test_the_gate_s_data_files_a_change_commits_are_sealed_for_the_secret_rules() -> None:
    """State, loop files, baselines, what the gate wrote and the configuration's files can hold a
    key: a change that commits them has them scanned by the secret rules (``secrets_only``),
    never by the code rules (its rule texts would flag themselves)."""
    own = OWN.model_copy(update={"state": [*OWN.state, ".review-gate/.gitignore"]})
    changes = [change(p) for p in (
        ".review-gate/state.db", ".review-gate/state.db-wal", ".review-gate/.gitignore", ".review-gate/baseline.json",
        ".review-gate/hil/t.json", ".review-gate/sessions/t/1/plan.prompt.md", ".review-gate/review-rules.json",
        ".review-gate/instructions/sec.md", "ci/review/x.md", "app.py")]
    changes.append(change("review.sarif", sha=blob_ids(b"{}\n")[0]))
    found = sealed(facts(*changes), own)
    assert [f.path for f in found] == [".review-gate/state.db", ".review-gate/state.db-wal",
                                       ".review-gate/baseline.json", ".review-gate/hil/t.json",
                                       ".review-gate/sessions/t/1/plan.prompt.md", ".review-gate/review-rules.json",
                                       ".review-gate/instructions/sec.md", "ci/review/x.md", "review.sarif"]
    assert all(f.secrets_only for f in found)
    # a working-tree review: only what git tracks is committed; an untracked report stays out
    tracked = {".review-gate/hil/t.json"}
    assert [f.path for f in sealed(facts(*changes), own, tracked.__contains__)] == [".review-gate/hil/t.json"]
