"""Stage 1 on its own: sections of one file in a patch series become one file."""

from __future__ import annotations

import anyio
import pytest

from review_gate.change.diff_parser import parse_diff
from review_gate.errors import InputError
from review_gate.pipeline.normalize import DiffRequest, merge_sections, normalize
from tests.conftest import make_diff

RENAME = (b"diff --git a/old.py b/new.py\nsimilarity index 90%\nrename from old.py\nrename to new.py\n"
          b"--- a/old.py\n+++ b/new.py\n@@ -1,0 +2,1 @@\n+second = 2\n")


def test_sections_of_one_file_are_merged_keeping_every_hunk() -> None:
    first = make_diff("app.py", ["a = 1"])
    second = make_diff("app.py", ["b = 2"], start=2, new_file=False)
    [merged] = merge_sections(parse_diff((first + second).encode()))
    assert merged.path == "app.py" and merged.status == "added" and merged.old_path is None
    assert [ln.text for h in merged.hunks for ln in h.lines if ln.added] == ["a = 1", "b = 2"]
    assert merged.added == 2 and merged.patch.count("diff --git") == 2


def test_a_rename_continues_the_file_it_renames() -> None:
    first = make_diff("old.py", ["first = 1"], new_file=False).encode()
    [merged] = merge_sections(parse_diff(first + RENAME))
    assert (merged.path, merged.old_path, merged.status) == ("new.py", "old.py", "renamed")
    assert [ln.text for h in merged.hunks for ln in h.lines if ln.added] == ["first = 1", "second = 2"]


def test_distinct_files_stay_apart() -> None:
    files = merge_sections(parse_diff((make_diff("a.py", ["x"]) + make_diff("b.py", ["y"])).encode()))
    assert [f.path for f in files] == ["a.py", "b.py"]


def test_normalize_refuses_a_series_that_changes_one_file_twice() -> None:
    data = (make_diff("app.py", ["a = 1"]) + make_diff("app.py", ["b = 2"], start=2, new_file=False)).encode()
    with pytest.raises(InputError, match=r"changes app\.py in more than one section"):
        anyio.run(normalize, DiffRequest(mode="stdin", stdin_data=data))
    data = (make_diff("app.py", ["a = 1"]) + make_diff("cli.py", ["b = 2"])).encode()
    facts = anyio.run(normalize, DiffRequest(mode="stdin", stdin_data=data))
    assert [f.path for f in facts.files] == ["app.py", "cli.py"]
