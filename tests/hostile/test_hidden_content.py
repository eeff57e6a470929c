"""Content a change hides from the diff is still judged, or counts against the gate.

git shows no line of what it takes for binary, and the change under review can make it take a
text file for binary (``.gitattributes``), transform it (a textconv driver), or carry it where
the diff has no lines (a binary patch, UTF-16, a submodule, a file too large for a sweep). Each
test drives the real CLI in a real repository and reproduces a way the gate used to PASS a key
the built-in secrets-scanner flags as critical.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import GitRepo

KEY = "AKIAIOSFODNN7EXAMPLQ"  # the shape of an AWS access key id: sec-aws-key-01, critical
SECRET_LINE = f'k = "{KEY}"\n'
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10\x00\x00\x00\x10\x08\x06\x00\x00\x00\x1f\xf3\xffa"


def report_of(result: Any) -> dict[str, Any]:
    assert result.out, result.err
    data: dict[str, Any] = json.loads(result.out)
    return data


def key_findings(report: dict[str, Any]) -> list[tuple[str, int]]:
    return sorted((f["file"], f["line"]) for f in report["findings"] if f["rule_id"] == "sec-aws-key-01")


def not_inspected(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {item["path"]: item for item in report["coverage"]["not_inspected"]}


def settings(tmp_path: Path, **fields: Any) -> Path:
    """A config directory holding only review-gate.json (the other files are the built-in ones)."""
    cfg = tmp_path / "cfg"
    cfg.mkdir(exist_ok=True)
    (cfg / "review-gate.json").write_text(json.dumps({"version": 1, **fields}), encoding="utf-8")
    return cfg


def git(cwd: Path, *args: str) -> bytes:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=True).stdout


# 1. The change's own attributes never make text look binary or transform it.

@pytest.mark.parametrize("attribute", ["-diff", "binary", "diff=secretive"])
@pytest.mark.parametrize("mode", ["worktree", "staged", "range"])
def test_attributes_the_change_adds_do_not_hide_a_key(cli: Any, repo: GitRepo, attribute: str, mode: str) -> None:
    # the user's own git config defines the driver; the change only names it
    repo.git("config", "--global", "diff.secretive.textconv", "sed s/AKIA/XXXX/")
    repo.git("config", "--global", "diff.secretive.binary", "true")
    repo.write(".gitattributes", f"*.py {attribute}\n")
    repo.write("s.py", SECRET_LINE)
    args = {"worktree": (), "staged": ("--staged",), "range": ("--base", "HEAD~1", "--head", "HEAD")}[mode]
    if mode == "staged":
        repo.git("add", "-A")
    elif mode == "range":
        repo.commit("hidden key")
    result = cli("--offline", "--no-state", "--format", "json", *args)
    report = report_of(result)
    assert key_findings(report) == [("s.py", 1)], report["coverage"]
    assert result.code == 1 and report["decision"] == "fail"


def test_a_textconv_driver_alone_does_not_transform_what_is_reviewed(cli: Any, repo: GitRepo) -> None:
    repo.git("config", "--global", "diff.scrub.textconv", "sed s/AKIA/XXXX/")
    repo.write(".gitattributes", "*.py diff=scrub\n")
    repo.write("s.py", SECRET_LINE)
    report = report_of(cli("--offline", "--no-state", "--format", "json"))
    assert key_findings(report) == [("s.py", 1)]


def test_a_hidden_modification_is_reviewed_at_its_own_lines(cli: Any, repo: GitRepo) -> None:
    repo.write("s.py", "".join(f"line_{n} = {n}\n" for n in range(1, 41)))
    repo.commit("forty lines")
    repo.write(".gitattributes", "*.py -diff\n")
    lines = [f"line_{n} = {n}\n" for n in range(1, 41)]
    lines.insert(30, SECRET_LINE)  # becomes line 31
    repo.write("s.py", "".join(lines))
    repo.commit("hide a key in the middle")
    result = cli("--offline", "--no-state", "--format", "json", "--base", "HEAD~1", "--head", "HEAD")
    report = report_of(result)
    assert key_findings(report) == [("s.py", 31)]
    changed = next(f for f in cli("plan", "--format", "json", "--base", "HEAD~1", "--head", "HEAD").json()
                   ["facts"]["files"] if f["path"] == "s.py")
    assert (changed["status"], changed["added"], changed["removed"]) == ("modified", 1, 0)


def test_a_genuine_binary_file_is_listed_as_not_inspected_and_does_not_block(cli: Any, repo: GitRepo) -> None:
    repo.write("logo.png", PNG)
    repo.write("app.py", "x = 1\n")
    result = cli("--offline", "--no-state", "--format", "json")
    report = report_of(result)
    assert result.code == 0, report["coverage"]
    item = not_inspected(report)["logo.png"]
    assert item["kind"] == "binary" and item["counted"] is False
    assert report["coverage"]["files_reviewed"] == 1 and report["coverage"]["files_changed"] == 2
    assert report["coverage"]["unreviewed"] == [] and report["metrics"]["missing_inputs"] == 0
    text = cli("--offline", "--no-state")
    assert "coverage: 1/2 files reviewed" in text.out
    assert "not inspected (listed only): logo.png is binary by content" in text.out
    assert 'note: binary files are listed, not counted against the gate; set "binary_files": "incomplete"' in text.out
    markdown = cli("--offline", "--no-state", "--format", "markdown").out
    assert "### Not inspected (1)" in markdown and "- logo.png is binary by content" in markdown


def test_binary_files_can_be_made_to_count_against_the_gate(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    repo.write("keystore.jks", PNG)
    strict = settings(tmp_path, binary_files="incomplete")
    result = cli("--offline", "--no-state", "--format", "json", "--config", str(strict))
    report = report_of(result)
    assert result.code == 3 and report["decision"] == "incomplete"
    assert not_inspected(report)["keystore.jks"]["counted"] is True
    assert report["coverage"]["unreviewed"] == ["keystore.jks"] and report["metrics"]["missing_inputs"] == 1


# 2. A diff file's binary sections: read what git apply would write, or count it unread.

def _committed_hidden_key(repo: GitRepo) -> None:
    repo.write(".gitattributes", "*.py -diff\n")
    repo.write("s.py", SECRET_LINE)
    repo.commit("hidden key")


def test_a_literal_binary_patch_is_decoded_and_reviewed(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    _committed_hidden_key(repo)
    patch = tmp_path / "p.patch"
    patch.write_bytes(git(repo.root, "format-patch", "-1", "--binary", "--stdout"))
    assert b"GIT binary patch\nliteral" in patch.read_bytes()
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    for where in (repo.root, outside):  # the content is in the patch: no repository needed
        result = cli("--offline", "--no-state", "--format", "json", "--diff", str(patch), cwd=where)
        report = report_of(result)
        assert key_findings(report) == [("s.py", 1)], where
        assert result.code == 1


def test_a_binary_files_differ_line_is_read_from_the_repository_or_counts_unread(
        cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    _committed_hidden_key(repo)
    patch = tmp_path / "p.patch"
    patch.write_bytes(git(repo.root, "diff", "--full-index", "HEAD~1", "HEAD"))
    assert b"Binary files /dev/null and b/s.py differ" in patch.read_bytes()
    inside = report_of(cli("--offline", "--no-state", "--format", "json", "--diff", str(patch)))
    assert key_findings(inside) == [("s.py", 1)]  # the blob it names is in the repository

    outside = tmp_path / "elsewhere"
    outside.mkdir()
    result = cli("--offline", "--no-state", "--format", "json", "--diff", str(patch), cwd=outside)
    report = report_of(result)
    assert result.code == 3 and report["decision"] == "incomplete"
    item = not_inspected(report)["s.py"]
    assert item["kind"] == "unreadable" and item["counted"] is True and "--binary" in item["fix"]
    assert "s.py" in report["coverage"]["unreviewed"]


def test_a_delta_binary_patch_is_applied_to_its_base_or_counts_unread(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    repo.write(".gitattributes", "*.py binary\n")
    body = [f"setting_{n} = {n * 7}  # a long enough line to make a delta worth it\n" for n in range(200)]
    repo.write("s.py", "".join(body))
    repo.commit("settings")
    body.insert(120, SECRET_LINE)
    repo.write("s.py", "".join(body))
    repo.commit("a key in the middle")
    patch = tmp_path / "p.patch"
    patch.write_bytes(git(repo.root, "format-patch", "-1", "--binary", "--stdout"))
    assert b"GIT binary patch\ndelta" in patch.read_bytes()
    inside = report_of(cli("--offline", "--no-state", "--format", "json", "--diff", str(patch)))
    assert key_findings(inside) == [("s.py", 121)]

    outside = tmp_path / "elsewhere"
    outside.mkdir()
    result = cli("--offline", "--no-state", "--format", "json", "--diff", str(patch), cwd=outside)
    assert result.code == 3 and not_inspected(report_of(result))["s.py"]["kind"] == "unreadable"


def test_a_corrupt_binary_patch_counts_unread_without_a_crash(cli: Any, tmp_path: Path) -> None:
    patch = tmp_path / "p.patch"
    patch.write_bytes(b"diff --git a/s.py b/s.py\nnew file mode 100644\nindex 0000000..1111111\n"
                      b"GIT binary patch\nliteral 27\nicmc~+uvJiU^!9Z0^bdCPck%%%%%%%%%%%%%%%%%%%%\n\nliteral 0\n"
                      b"HcmV?d00001\n\n")
    result = cli("--offline", "--no-state", "--format", "json", "--diff", str(patch))
    assert result.code == 3 and "Traceback" not in result.err
    assert not_inspected(report_of(result))["s.py"]["kind"] == "unreadable"


def test_a_binary_patch_of_a_genuine_image_is_listed(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    repo.write("logo.png", PNG)
    repo.commit("logo")
    patch = tmp_path / "p.patch"
    patch.write_bytes(git(repo.root, "format-patch", "-1", "--binary", "--stdout"))
    result = cli("--offline", "--no-state", "--format", "json", "--diff", str(patch), cwd=tmp_path)
    report = report_of(result)
    assert result.code == 0 and not_inspected(report)["logo.png"]["kind"] == "binary"


def test_a_modified_image_is_listed_from_a_range_and_from_its_binary_delta(
        cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    image = bytearray(PNG + bytes(range(256)) * 40)
    repo.write("logo.png", bytes(image))
    repo.commit("logo")
    image[100:104] = b"\x01\x02\x03\x04"
    repo.write("logo.png", bytes(image))
    repo.commit("retouch")
    ranged = cli("--offline", "--no-state", "--format", "json", "--base", "HEAD~1", "--head", "HEAD")
    assert ranged.code == 0 and not_inspected(report_of(ranged))["logo.png"]["kind"] == "binary"
    patch = tmp_path / "p.patch"
    patch.write_bytes(git(repo.root, "format-patch", "-1", "--binary", "--stdout"))
    assert b"GIT binary patch\ndelta" in patch.read_bytes()
    applied = cli("--offline", "--no-state", "--format", "json", "--diff", str(patch))
    assert applied.code == 0 and not_inspected(report_of(applied))["logo.png"]["kind"] == "binary"


def test_a_not_inspected_file_name_is_escaped_in_every_format(cli: Any, repo: GitRepo) -> None:
    repo.write("logo\x1b]0;pwned\x07\x1b[2J.png", PNG)
    for form in ("text", "markdown", "agent"):
        out = cli("--offline", "--no-state", "--format", form).out
        assert "not inspected" in out.lower() and "\x1b" not in out and "\x07" not in out, form


# 3. Text that is binary to git: UTF-16/32, a stray NUL.

@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32"])
def test_wide_text_is_decoded_and_reviewed_at_its_decoded_lines(cli: Any, repo: GitRepo, encoding: str) -> None:
    repo.write("creds.env", f"# settings\nREGION=eu-west-1\nK={KEY}\n".encode(encoding))
    result = cli("--offline", "--no-state", "--format", "json")
    report = report_of(result)
    assert key_findings(report) == [("creds.env", 3)], report["coverage"]
    assert result.code == 1


def test_wide_text_a_diff_attribute_shows_as_text_lines_is_decoded(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    # `diff` makes git print UTF-16 as text: lines of NUL-interleaved bytes no rule can match
    repo.write(".gitattributes", "*.env diff\n")
    repo.write("creds.env", f"# settings\nK={KEY}\n".encode("utf-16-le"))
    result = cli("--offline", "--no-state", "--format", "json")
    assert key_findings(report_of(result)) == [("creds.env", 2)] and result.code == 1

    repo.commit("creds")
    patch = tmp_path / "p.patch"
    patch.write_bytes(git(repo.root, "format-patch", "-1", "--stdout"))
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    result = cli("--offline", "--no-state", "--format", "json", "--diff", str(patch), cwd=outside)
    assert result.code == 3 and not_inspected(report_of(result))["creds.env"]["kind"] == "unreadable"


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le"])
def test_a_control_character_does_not_make_wide_text_binary(cli: Any, repo: GitRepo, encoding: str) -> None:
    repo.write("creds.env", f"K={KEY}\n\x1b[0m\x07\n".encode(encoding))
    result = cli("--offline", "--no-state", "--format", "json")
    assert key_findings(report_of(result)) == [("creds.env", 1)] and result.code == 1


def test_a_stray_nul_byte_does_not_make_text_binary(cli: Any, repo: GitRepo) -> None:
    repo.write("s.py", b"\x00" + SECRET_LINE.encode())
    report = report_of(cli("--offline", "--no-state", "--format", "json"))
    assert key_findings(report) == [("s.py", 1)]


def test_a_sweep_decodes_wide_text(cli: Any, repo: GitRepo) -> None:
    repo.write("creds.env", f"K={KEY}\n".encode("utf-16"))
    repo.commit("creds")
    result = cli("sweep", "--offline", "--no-state", "--format", "json")
    assert key_findings(report_of(result)) == [("creds.env", 1)] and result.code == 1


# 4. What no agent could read counts against the gate.

def _other_repository(tmp_path: Path) -> tuple[Path, list[str]]:
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "main")
    made = []
    for text in (SECRET_LINE, SECRET_LINE + "more = 1\n"):
        (other / "key.py").write_text(text, encoding="utf-8")
        git(other, "add", "-A")
        git(other, "commit", "-q", "-m", "key")
        made.append(git(other, "rev-parse", "HEAD").decode().strip())
    git(other, "checkout", "-q", made[0])
    return other, made


def test_a_submodule_pointer_is_an_unreviewed_item(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    other, commits = _other_repository(tmp_path)
    repo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(other), "vendor/lib")
    result = cli("--offline", "--no-state", "--format", "json")
    report = report_of(result)
    # an added submodule's content is another repository's: listed with a warning by default
    assert result.code == 0 and report["decision"] == "pass_with_warnings"
    item = not_inspected(report)["vendor/lib"]
    assert item["kind"] == "submodule" and item["counted"] is False
    assert item["reason"] == f"submodule vendor/lib is added at {commits[0]}: its content is not reviewed"
    assert '"submodules": "incomplete" in review-gate.json' in item["fix"]
    assert [f["severity"] for f in report["findings"] if f["file"] == "vendor/lib"] == ["warning"]
    closed = cli("--offline", "--no-state", "--format", "json", "--config",
                 str(settings(tmp_path, submodules="incomplete")))
    report = report_of(closed)
    assert closed.code == 3 and report["decision"] == "incomplete"
    assert "vendor/lib" in report["coverage"]["unreviewed"] and report["metrics"]["missing_inputs"] == 1

    repo.commit("vendor the library")
    git(repo.root / "vendor" / "lib", "checkout", "-q", commits[1])
    moved = report_of(cli("--offline", "--no-state", "--format", "json"))
    # both commits are here: the move is reviewed through the submodule's own change
    assert not_inspected(moved) == {}
    assert "vendor/lib/key.py" in {f["path"] for f in moved["classification"]["files"]}


def test_submodules_may_be_listed_only(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    other, _ = _other_repository(tmp_path)
    repo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(other), "vendor/lib")
    result = cli("--offline", "--no-state", "--format", "json", "--config", str(settings(tmp_path, submodules="list")))
    report = report_of(result)
    assert result.code == 0 and not_inspected(report)["vendor/lib"]["counted"] is False


def test_a_sweep_counts_an_oversized_text_file_unreviewed(cli: Any, repo: GitRepo) -> None:
    repo.write("big.py", SECRET_LINE + "x = 1\n" * 400_000)  # 2.4 MB: over the sweep's 2 MB default
    repo.write("huge.bin", PNG + bytes(2_100_000))
    repo.commit("big files")
    result = cli("sweep", "--offline", "--no-state", "--format", "json")
    report = report_of(result)
    assert result.code == 3 and report["decision"] == "incomplete"
    items = not_inspected(report)
    assert items["big.py"]["kind"] == "unreadable" and items["big.py"]["counted"] is True
    assert "over the sweep's limit" in items["big.py"]["reason"]
    assert items["huge.bin"]["kind"] == "binary" and items["huge.bin"]["counted"] is False
    assert report["coverage"]["unreviewed"] == ["big.py"]
    raised = cli("sweep", "--offline", "--no-state", "--format", "json", "--max-file-bytes", "3000000")
    assert key_findings(report_of(raised)) == [("big.py", 1)]


def test_the_agent_report_names_what_was_not_inspected(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    other, _ = _other_repository(tmp_path)
    repo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(other), "vendor/lib")
    result = cli("--offline", "--no-state", "--format", "agent", "--config",
                 str(settings(tmp_path, submodules="incomplete")))
    assert result.code == 3
    assert "- not inspected (counts against the gate): submodule vendor/lib is added at" in result.out


# 6. Objects as the repository holds them: a replace ref or a graft made locally shows git
# another commit's content, and a push does not carry it.

@pytest.mark.parametrize("how", ["replace", "graft"])
@pytest.mark.parametrize("mode", ["range", "worktree"])
def test_a_replaced_commit_does_not_hide_what_the_branch_holds(cli: Any, repo: GitRepo, how: str, mode: str) -> None:
    repo.branch("feature")
    repo.write("s.py", SECRET_LINE)
    commit = repo.commit("a key")
    main = repo.git("rev-parse", "main").strip()
    if how == "replace":  # main "is" a commit with the key's tree: nothing changed, says git
        fake = repo.git("commit-tree", f"{commit}^{{tree}}", "-m", "fake").strip()
        repo.git("replace", main, fake)
    else:  # the key's commit "has" a parent with the same tree
        twin = repo.git("commit-tree", f"{commit}^{{tree}}", "-m", "twin").strip()
        grafts = repo.root / ".git" / "info" / "grafts"
        grafts.parent.mkdir(exist_ok=True)
        grafts.write_text(f"{commit} {twin}\n{main}\n")
    args = ("--base", "main", "--head", "HEAD") if mode == "range" else ("--base", "main")
    result = cli("--offline", "--no-state", "--format", "json", *args)
    report = report_of(result)
    assert key_findings(report) == [("s.py", 1)], report["coverage"]
    assert result.code == 1


# 7. Bytes that a byte order mark or a run of control bytes dresses as something else.

def test_a_byte_order_mark_before_plain_text_does_not_make_it_wide(cli: Any, repo: GitRepo) -> None:
    """b'\\xff\\xfe' and one NUL: read as UTF-16 the key became CJK characters (was: PASS)."""
    (repo.root / "creds.env").write_bytes(b"\xff\xfeAWS_ACCESS_KEY_ID=" + KEY.encode() + b"\nx\0y\n")
    (repo.root / "deploy.sh").write_bytes(b"\xff\xfe=1\ncurl -k https://x | sh\necho ran\n# \0\n")
    report = report_of(cli("--offline", "--no-state", "--format", "json"))
    assert key_findings(report) == [("creds.env", 1)], report["coverage"]
    assert ("deploy.sh", "sec-tls-verify-01") in {(f["file"], f["rule_id"]) for f in report["findings"]}
    assert not not_inspected(report)


def test_a_script_is_text_whatever_bytes_follow_its_first_line(cli: Any, repo: GitRepo) -> None:
    """Mostly control bytes in git's probe made it binary, listed only; bash runs it all the same."""
    (repo.root / "deploy.sh").write_bytes(b"#!/bin/sh\n#" + b"\x01" * 100 + b"\0" + b"\x01" * 9000
                                          + b"\ncurl -k https://x | sh\n")
    report = report_of(cli("--offline", "--no-state", "--format", "json"))
    assert ("deploy.sh", "sec-tls-verify-01") in {(f["file"], f["rule_id"]) for f in report["findings"]}
    assert not not_inspected(report)
