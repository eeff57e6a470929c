"""A diff larger than review-gate can hold in memory is refused before it is read, with exit 2
naming its size and how to review it in parts; never read whole and left to the kernel's
out-of-memory killer (a 50 MB diff once took 1.3 GB)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from review_gate.change import git
from review_gate.errors import InputError
from review_gate.pipeline.normalize import MAX_DIFF_BYTES, MIN_DIFF_BYTES, diff_limit, limit_for
from tests.conftest import GitRepo


def test_a_500_mb_diff_file_is_refused_by_its_size(cli: Any, tmp_path: Path) -> None:
    big = tmp_path / "huge.diff"
    with big.open("wb") as handle:  # sparse: 500 MB long, nothing on the disk, instant to make
        handle.write(b"--- a/x.py\n+++ b/x.py\n@@ -0,0 +1 @@\n+x = 1\n")
        handle.truncate(500 * 1000 * 1000)
    result = cli("--diff", str(big), "--no-state")
    assert result.code == 2, result.err
    assert f"the diff {big} is 477 MiB: over the" in result.err
    assert "sweep" in result.err and "--base/--head" in result.err and "fix:" in result.err
    assert "Traceback" not in result.err and len(result.err.strip().splitlines()) <= 3


def test_the_limit_follows_the_memory_there_is() -> None:
    assert limit_for(600 * 1024 * 1024) == 100 * 1024 * 1024  # a sixth: about 5 bytes resident a byte of diff
    assert limit_for(10 ** 12) == limit_for(None) == MAX_DIFF_BYTES
    assert limit_for(1) == MIN_DIFF_BYTES
    assert MIN_DIFF_BYTES <= diff_limit() <= MAX_DIFF_BYTES


def test_a_range_over_the_limit_stops_git_and_is_refused(repo: GitRepo) -> None:
    repo.write("big.py", "".join(f"value_{i} = {i}\n" for i in range(20_000)))
    head = repo.commit("big")
    base = repo.git("rev-parse", "HEAD~1").strip()

    class TooBig(InputError):
        pass

    read: list[int] = []
    with pytest.raises(TooBig):
        for part in git.diff_range_chunks(repo.root, base, head, limit=64 * 1024,
                                          too_big=lambda size: TooBig(f"{size} bytes")):
            read.append(len(part))
    assert sum(read) <= 64 * 1024
    whole = subprocess.run(["git", "diff", base, head], cwd=repo.root, capture_output=True, check=True).stdout
    assert len(whole) > 64 * 1024


def test_a_range_under_the_limit_is_read_whole(repo: GitRepo) -> None:
    repo.write("small.py", "x = 1\n")
    head = repo.commit("small")
    base = repo.git("rev-parse", "HEAD~1").strip()
    data = b"".join(git.diff_range_chunks(repo.root, base, head, limit=1 << 20, too_big=InputError))
    assert data == git.diff_range(repo.root, base, head)


def test_a_failing_git_diff_is_a_git_error(repo: GitRepo) -> None:
    with pytest.raises(InputError, match="git diff failed"):
        list(git.diff_range_chunks(repo.root, "0" * 40, "1" * 40, limit=1 << 20, too_big=InputError))
