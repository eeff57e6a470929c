"""The unified diff parser: git and plain diffs, renames, binaries, bad input."""

from __future__ import annotations

import pytest

from review_gate.change.diff_parser import parse_diff
from review_gate.errors import DiffError

GIT_DIFF = b"""diff --git a/app/x.py b/app/x.py
index 83db48f0000000000000000000000000000000000..bf269f4000000000000000000000000000000000 100644
--- a/app/x.py
+++ b/app/x.py
@@ -1,3 +1,4 @@ def f():
 a
-b
+c
+d

\\ No newline at end of file
@@ -10,2 +11,2 @@
 k
-l
+m
diff --git a/img.png b/img.png
new file mode 100644
index 0000000..1234567
Binary files /dev/null and b/img.png differ
diff --git a/old.txt b/new.txt
similarity index 100%
rename from old.txt
rename to new.txt
diff --git a/gone.py b/gone.py
deleted file mode 100644
--- a/gone.py
+++ /dev/null
@@ -1,2 +0,0 @@
-x
-y
diff --git a/run.sh b/run.sh
old mode 100644
new mode 100755
"""


def by_path(data: bytes) -> dict[str, object]:
    return {f.path: f for f in parse_diff(data)}


def test_git_diff_statuses_counts_and_line_numbers() -> None:
    files = by_path(GIT_DIFF)
    x = files["app/x.py"]
    assert (x.status, x.old_path, x.added, x.removed) == ("modified", "app/x.py", 3, 2)
    assert x.content_sha == "bf269f4000000000000000000000000000000000"
    added = [(ln.number, ln.text) for h in x.hunks for ln in h.lines if ln.added]
    assert added == [(2, "c"), (3, "d"), (12, "m")]
    assert [h.new_start for h in x.hunks] == [1, 11]
    png = files["img.png"]
    assert (png.status, png.binary, png.added, png.removed, png.old_path) == ("binary", True, 0, 0, None)
    renamed = files["new.txt"]
    assert (renamed.status, renamed.old_path) == ("renamed", "old.txt")
    gone = files["gone.py"]
    assert (gone.status, gone.removed, gone.old_path) == ("deleted", 2, "gone.py")
    mode = files["run.sh"]
    assert (mode.status, mode.old_mode, mode.new_mode) == ("modified", "100644", "100755")


def test_each_file_keeps_its_own_section_verbatim() -> None:
    files = by_path(GIT_DIFF)
    assert files["gone.py"].patch.startswith("diff --git a/gone.py b/gone.py\n")
    assert files["gone.py"].patch.endswith("-y\n")
    assert "rename from old.txt" in files["new.txt"].patch


def test_plain_diff_u_without_git_headers() -> None:
    data = b"--- old/main.c\t2024-01-01\n+++ new/main.c\t2024-01-02\n@@ -1 +1,2 @@\n int x;\n+int y;\n"
    [change] = parse_diff(data)
    assert change.path == "new/main.c"
    assert change.old_path == "old/main.c"
    assert change.added == 1


def test_preamble_of_format_patch_is_skipped() -> None:
    data = (b"From 123 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] x\n\n---\n a.py | 1 +\n\n"
            b"diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1 +1,2 @@\n x\n+y\n-- \n2.39\n")
    [change] = parse_diff(data)
    assert (change.path, change.added) == ("a.py", 1)


def test_quoted_paths_with_spaces_and_utf8() -> None:
    data = (b'diff --git "a/my file\\303\\251.txt" "b/my file\\303\\251.txt"\nnew file mode 100644\n'
            b'--- /dev/null\n+++ "b/my file\\303\\251.txt"\n@@ -0,0 +1 @@\n+hello\n')
    [change] = parse_diff(data)
    assert change.path == "my fileé.txt"
    assert change.status == "added"


def test_non_utf8_lines_are_decoded_lossily_and_flagged() -> None:
    data = b"--- a/l.txt\n+++ b/l.txt\n@@ -0,0 +1,2 @@\n+caf\xe9\n+ok\n"
    [change] = parse_diff(data)
    assert change.non_utf8
    assert [ln.text for h in change.hunks for ln in h.lines] == ["caf\ufffd", "ok"]
    assert "\udce9" in change.patch  # the verbatim section keeps the original byte


def test_crlf_diffs_and_blank_context_lines() -> None:
    data = b"--- a/w.txt\r\n+++ b/w.txt\r\n@@ -1,3 +1,3 @@\r\n a\r\n\r\n-b\r\n+c\r\n"
    [change] = parse_diff(data)
    assert [(ln.number, ln.text, ln.added) for h in change.hunks for ln in h.lines] == [
        (1, "a", False), (2, "", False), (3, "c", True)]


def test_empty_input_is_an_empty_change() -> None:
    assert parse_diff(b"") == []
    assert parse_diff(b"\n\n") == []


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b"--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n", "truncated"),
        (b"--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n?garbage\n", "truncated or malformed"),
        (b"--- a/x\n+++ b/x\n@@ nonsense @@\n+a\n", "malformed hunk header"),
        (b"just some text\nthat is not a diff\n", "not a unified diff"),
        (b"@@ -1 +1 @@\n+a\n", "before any file header"),
    ],
)
def test_bad_diffs_are_errors_that_name_the_place(data: bytes, words: str) -> None:
    with pytest.raises(DiffError) as caught:
        parse_diff(data)
    assert words in str(caught.value)
    assert caught.value.fix
