"""The gap log: gaps kept per run in the run state, ``review-gate gaps`` counting what recurs, and
``gaps --apply ID`` patching the config directory (docs/gaps.md)."""

from __future__ import annotations

import json
import os
import pty
import subprocess
from pathlib import Path
from typing import Any

from review_gate.config import builtin_dir
from review_gate.models.manifest import gap_id
from tests.conftest import GitRepo, env_without_ci
from tests.state.helpers import query

XYZ = ("unclassified_file", "**/*.xyz")


def record(cli: Any, times: int, *extra: str) -> list[dict[str, Any]]:
    """``times`` recorded runs of the working tree (offline: the pattern agents only)."""
    reports = []
    for _ in range(times):
        result = cli("--offline", "--format", "json", *extra)
        assert result.code in (0, 1), result.err
        reports.append(result.json())
    return reports


def listed(cli: Any, *extra: str) -> dict[tuple[str, str], dict[str, Any]]:
    result = cli("gaps", "--format", "json", *extra)
    assert result.code == 0, result.err
    return {(g["kind"], g["subject"]): g for g in result.json()["gaps"]}


def editable_config(cli: Any, tmp_path: Path) -> Path:
    cfg = tmp_path / "cfg"
    assert cli("init", "--full", "--dir", str(cfg)).code == 0
    return cfg


def test_the_same_unclassified_path_in_three_runs_is_counted_three_times(cli: Any, repo: GitRepo) -> None:
    repo.write("notes.xyz", "some notes\n")
    record(cli, 2)
    repo.write("data.qqq", "1,2\n")
    record(cli, 1)
    gaps = listed(cli)
    xyz, qqq = gaps[XYZ], gaps[("unclassified_file", "**/*.qqq")]
    assert (xyz["runs"], qqq["runs"]) == (3, 1)
    assert xyz["id"] == gap_id(*XYZ) and len(xyz["id"]) == 8
    assert xyz["first_seen"] <= xyz["last_seen"] and xyz["applicable"] is True
    assert xyz["patch"] == {"file": "review-domains.json", "operations": [{
        "op": "add", "path": "/domains/-",
        "value": {"id": "xyz", "description": "xyz files", "paths": ["**/*.xyz"], "risk_weight": 2}}]}
    assert next(iter(gaps)) == XYZ  # the most recurring first
    text = cli("gaps")
    assert text.code == 0
    [row] = [line for line in text.out.splitlines() if line.startswith(xyz["id"])]
    assert row.split()[:3] == [xyz["id"], "unclassified_file", "3"] and row.endswith("**/*.xyz")
    assert "review-gate gaps --apply ID" in text.err


def test_markdown_is_one_issue_draft_per_gap_with_its_evidence_and_patch(cli: Any, repo: GitRepo) -> None:
    repo.write("notes.xyz", "some notes\n")
    record(cli, 2)
    gaps = listed(cli)
    drafts = cli("gaps", "--format", "markdown").out.split("\n## ")
    assert len(drafts) == len(gaps)
    [draft] = [d for d in drafts if f"<!-- review-gate-gap:{gaps[XYZ]['id']} -->" in d]
    assert draft.lstrip("# ").startswith("review-gate gap: unclassified\\_file \\*\\*/\\*.xyz")
    assert "missed this in 2 recorded runs" in draft and "notes.xyz" in draft
    assert f"`review-gate gaps --apply {gaps[XYZ]['id']}`" in draft
    body = draft.split("```json\n", 1)[1].split("\n```", 1)[0]
    assert json.loads(body) == gaps[XYZ]["patch"]["operations"]


def test_an_applied_patch_validates_and_the_next_run_has_no_such_gap(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    cfg = editable_config(cli, tmp_path)
    repo.write("notes.xyz", "some notes\n")
    record(cli, 3, "--config", str(cfg))
    gap = listed(cli, "--config", str(cfg))[XYZ]
    before = (cfg / "review-domains.json").read_text(encoding="utf-8")
    result = cli("gaps", "--apply", gap["id"], "--yes", "--config", str(cfg))
    assert result.code == 0, result.err
    # the diff keeps the file's layout: one entry added (and a comma on the line before it)
    changed = [line for line in result.out.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert len(changed) == 3 and changed[-1] == '+    {"id": "xyz", "description": "xyz files", "paths": ' \
                                                '["**/*.xyz"], "risk_weight": 2}'
    after = (cfg / "review-domains.json").read_text(encoding="utf-8")
    assert after != before and json.loads(after)["domains"][-1]["id"] == "xyz"
    assert cli("config", "validate", "--config", str(cfg)).code == 0
    [report] = record(cli, 1, "--config", str(cfg))
    assert XYZ not in {(g["kind"], g["subject"]) for g in report["gaps"]}
    assert {f["path"]: f["domains"] for f in report["classification"]["files"]}["notes.xyz"] == ["xyz"]
    assert XYZ not in listed(cli, "--config", str(cfg))  # closed
    closed = listed(cli, "--config", str(cfg), "--all")[XYZ]
    assert closed["applied_at"] and closed["runs"] == 3


def test_a_gap_reported_again_after_its_patch_is_open_again(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    cfg = editable_config(cli, tmp_path)
    repo.write("notes.xyz", "some notes\n")
    record(cli, 1, "--config", str(cfg))
    gap = listed(cli, "--config", str(cfg))[XYZ]
    before = (cfg / "review-domains.json").read_bytes()
    assert cli("gaps", "--apply", gap["id"], "--yes", "--config", str(cfg)).code == 0
    (cfg / "review-domains.json").write_bytes(before)  # someone takes the domain out again
    record(cli, 1, "--config", str(cfg))
    again = listed(cli, "--config", str(cfg))[XYZ]
    assert again["runs"] == 2 and again["applied_at"] is None


def test_the_builtin_configuration_is_never_patched(cli: Any, repo: GitRepo) -> None:
    repo.write("notes.xyz", "some notes\n")
    record(cli, 1)
    gap = listed(cli)[XYZ]
    result = cli("gaps", "--apply", gap["id"], "--yes")
    assert result.code == 2
    assert "built-in" in result.err and "review-gate init" in result.err and "Traceback" not in result.err
    # .review-gate/ holds the run state only: nothing was written beside it
    assert not [p.name for p in (repo.root / ".review-gate").iterdir() if p.name.startswith("review-")]
    shipped = builtin_dir("config") / "review-domains.json"
    before = shipped.read_bytes()
    named = cli("gaps", "--apply", gap["id"], "--yes", "--config", str(builtin_dir("config")))
    assert named.code == 2 and "review-gate init" in named.err
    assert shipped.read_bytes() == before


def test_a_patch_that_would_not_validate_writes_nothing(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    cfg = editable_config(cli, tmp_path)
    repo.write("notes.xyz", "some notes\n")
    record(cli, 1, "--config", str(cfg))
    gap = listed(cli, "--config", str(cfg))[XYZ]
    # Since the run, someone gave another domain the id the patch adds.
    domains = cfg / "review-domains.json"
    data = json.loads(domains.read_text(encoding="utf-8"))
    data["domains"].append({"id": "xyz", "description": "something else", "paths": ["*.other"], "risk_weight": 1})
    domains.write_text(json.dumps(data, indent=2), encoding="utf-8")
    before = domains.read_bytes()
    result = cli("gaps", "--apply", gap["id"], "--yes", "--config", str(cfg))
    assert result.code == 2
    assert "duplicate id 'xyz'" in result.err and "/domains/" in result.err and "nothing was written" in result.err
    assert domains.read_bytes() == before
    assert XYZ in listed(cli, "--config", str(cfg))  # still open


def test_an_unknown_or_malformed_id_is_refused(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    cfg = editable_config(cli, tmp_path)
    assert cli("gaps", "--apply", "abcd1234", "--yes", "--config", str(cfg)).code == 2  # nothing recorded yet
    repo.write("notes.xyz", "some notes\n")
    record(cli, 1, "--config", str(cfg))
    unknown = cli("gaps", "--apply", "ffffffff" if not gap_id(*XYZ).startswith("f") else "00000000", "--yes",
                  "--config", str(cfg))
    assert unknown.code == 2 and "no recorded gap" in unknown.err and "review-gate gaps" in unknown.err
    malformed = cli("gaps", "--apply", "zz", "--yes", "--config", str(cfg))
    assert malformed.code == 2 and "not a gap id" in malformed.err


def test_without_yes_and_no_terminal_the_diff_is_shown_and_nothing_written(cli: Any, repo: GitRepo,
                                                                           tmp_path: Path) -> None:
    cfg = editable_config(cli, tmp_path)
    repo.write("notes.xyz", "some notes\n")
    record(cli, 1, "--config", str(cfg))
    gap = listed(cli, "--config", str(cfg))[XYZ]
    before = (cfg / "review-domains.json").read_bytes()
    result = cli("gaps", "--apply", gap["id"], "--config", str(cfg), stdin=b"y\n")
    assert result.code == 2
    assert '+    {"id": "xyz"' in result.out
    assert "--yes" in result.err and "nothing was written" in result.err
    assert (cfg / "review-domains.json").read_bytes() == before
    assert XYZ in listed(cli, "--config", str(cfg))


def test_at_a_terminal_a_person_confirms_or_declines(cli: Any, repo: GitRepo, tmp_path: Path,
                                                    review_gate_bin: list[str]) -> None:
    cfg = editable_config(cli, tmp_path)
    repo.write("notes.xyz", "some notes\n")
    record(cli, 1, "--config", str(cfg))
    gap = listed(cli, "--config", str(cfg))[XYZ]
    before = (cfg / "review-domains.json").read_bytes()

    def answer(text: str) -> subprocess.CompletedProcess[str]:
        main, side = pty.openpty()
        try:
            os.write(main, text.encode())  # waits in the terminal's buffer until the prompt reads it
            return subprocess.run([*review_gate_bin, "gaps", "--apply", gap["id"], "--config", str(cfg)],
                                  stdin=side, capture_output=True, text=True, cwd=repo.root, timeout=60,
                                  env={**env_without_ci(), "TERM": "xterm"}, check=False)
        finally:
            os.close(main)
            os.close(side)

    declined = answer("n\n")
    assert declined.returncode == 1, declined.stderr
    assert "apply this change to review-domains.json? [y/N]" in declined.stderr
    assert "not applied" in declined.stderr and (cfg / "review-domains.json").read_bytes() == before
    accepted = answer("y\n")
    assert accepted.returncode == 0, accepted.stderr
    assert json.loads((cfg / "review-domains.json").read_text(encoding="utf-8"))["domains"][-1]["id"] == "xyz"


def test_gaps_with_no_patch_are_listed_but_not_applied(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    cfg = editable_config(cli, tmp_path)
    repo.write("vendor/review-rules.json", "{}\n")  # named like configuration: a config_changed gap
    record(cli, 1, "--config", str(cfg))
    gap = listed(cli, "--config", str(cfg))[("config_changed", "vendor/review-rules.json")]
    assert gap["patch"] is None and gap["applicable"] is False
    result = cli("gaps", "--apply", gap["id"], "--yes", "--config", str(cfg))
    assert result.code == 2
    assert f"gap {gap['id']} (config_changed) has no patch to apply" in result.err
    assert "fix: follow its suggestion by hand: have a person review this edit" in result.err
    markdown = cli("gaps", "--format", "markdown", "--config", str(cfg)).out
    assert "No patch: it is about an edit to the gate's configuration under review" in markdown


def test_gc_drops_the_gaps_of_the_runs_it_drops(cli: Any, repo: GitRepo) -> None:
    repo.write("notes.xyz", "some notes\n")
    record(cli, 3)
    assert listed(cli)[XYZ]["runs"] == 3
    assert cli("gc", "--keep", "1").code == 0
    assert listed(cli)[XYZ]["runs"] == 1
    db = repo.root / ".review-gate" / "state.db"
    assert query(db, "SELECT COUNT(DISTINCT run_id) FROM review_gaps") == [(1,)]


def test_no_runs_recorded_lists_nothing(cli: Any, repo: GitRepo) -> None:
    result = cli("gaps", "--format", "json")
    assert result.code == 0 and result.json() == {"gaps": []}
    assert "no runs recorded yet" in result.err
    assert cli("gaps", "--yes").code == 2  # --yes confirms --apply only


def test_issue_drafts_leave_out_gaps_about_the_change_and_linked_ones(cli: Any, repo: GitRepo,
                                                                      tmp_path: Path) -> None:
    repo.write("notes.xyz", "some notes\n")
    repo.write(".review-gate/review-rules.json", '{"version": 1, "rules": []}\n')  # a config_changed gap
    record(cli, 1)
    gaps = listed(cli)
    assert any(kind == "config_changed" for kind, _ in gaps)
    drafts = tmp_path / "drafts"
    result = cli("gaps", "--unlinked", "--drafts", str(drafts))
    assert result.code == 0, result.err
    xyz = gaps[XYZ]["id"]
    assert result.out.split() == [xyz]  # config_changed is about this change: no issue for it
    assert (drafts / f"{xyz}.title").read_text() == "Review configuration gap (unclassified_file): **/*.xyz\n"
    assert (drafts / f"{xyz}.md").read_text().startswith(f"<!-- review-gate-gap:{xyz} -->\n")
    url = "https://github.com/acme/shop/issues/7"
    linked = cli("gaps", "link", xyz, url)
    assert linked.code == 0 and f"linked gap {xyz} to {url}" in linked.out
    assert cli("gaps", "link", xyz, url).out.strip().endswith("already")
    assert listed(cli)[XYZ]["issue_url"] == url
    assert cli("gaps", "--unlinked", "--drafts", str(tmp_path / "again")).out == ""
    other = cli("gaps", "link", xyz, "https://github.com/acme/shop/issues/8")
    assert other.code == 2 and "linked to" in other.err and "--replace" in other.err
    assert cli("gaps", "link", xyz, "https://github.com/acme/shop/issues/8", "--replace").code == 0
    bad = cli("gaps", "link", xyz, "javascript:alert(1)")
    assert bad.code == 2 and "is not an issue URL" in bad.err and "Traceback" not in bad.err
    record(cli, 1)  # the next run reports the gap again: its link stays
    assert listed(cli)[XYZ]["issue_url"] == "https://github.com/acme/shop/issues/8"
