"""The gate's own files are kept out of the review; their changes are gaps (pure, no I/O)."""

from __future__ import annotations

from review_gate.models import FileChange, PRFacts
from review_gate.own_files import OwnFiles, blob_ids, split

OWN = OwnFiles(config_dir=".review-gate", directories=[".review-gate", "ci/review"],
               baselines=[".review-gate/baseline.json"],
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
    assert "review-rules.json" in config.reason and "review-agents.json" in config.reason
    assert "configuration this run uses" in config.reason


def test_a_report_is_left_out_only_while_it_is_what_the_gate_wrote() -> None:
    ours = change("review.sarif", sha=blob_ids(b"{}\n")[0])
    edited = change("review.sarif", sha=blob_ids(b"secret\n")[0])
    assert split(facts(ours), OWN)[0].files == []
    assert [f.path for f in split(facts(edited), OWN)[0].files] == ["review.sarif"]
    assert [f.path for f in split(facts(change("review.sarif")), OWN)[0].files] == ["review.sarif"]  # no blob id


def test_a_file_moved_out_of_the_gate_directory_is_reviewed_and_reported() -> None:
    kept, gaps = split(facts(change("src/tool.py", old_path=".review-gate/tool.py")), OWN)
    assert [f.path for f in kept.files] == ["src/tool.py"]
    assert [g.kind for g in gaps] == ["config_changed"]


def test_blob_ids_are_git_s() -> None:
    assert blob_ids(b"hello\n")[0] == "ce013625030ba8dba906f756967f9e9ca394464a"  # `git hash-object`
