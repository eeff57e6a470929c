"""A path argument the OS refuses (a name over 255 bytes, a path over 4096, a NUL byte) is the
user's error: exit 2 with one line naming the argument and a fix, never an internal error with a
crash log. The same holds for the API (and so the MCP server) and for a ref of megabytes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from review_gate import api
from review_gate.errors import UsageError
from tests.conftest import GitRepo

LONG_NAME = "a" * 300
LONG_PATH = "/".join(["d" * 200] * 25)  # every name short enough, the whole over 4096 bytes

CASES = [
    (("--config", LONG_NAME), "--config"),
    (("explain", LONG_NAME), "explain PATH"),
    (("--constitution", LONG_NAME), "--constitution"),
    (("--bundle", LONG_NAME), "--bundle"),
    (("--diff", LONG_NAME), "--diff"),
    (("--baseline", LONG_NAME), "--baseline"),
    (("--config", LONG_PATH), "--config"),
    (("replay", LONG_NAME), "replay DIR"),
    (("merge", LONG_NAME), "merge REPORT"),
    (("meta", "check", LONG_NAME), "meta check FILE"),
    (("loop", "start", "t", "--prompt", LONG_NAME), "--prompt"),
]


@pytest.mark.parametrize(("args", "named"), CASES, ids=[c[1] for c in CASES])
def test_a_path_the_os_refuses_is_exit_2_naming_the_argument(cli: Any, repo: GitRepo, args: tuple[str, ...],
                                                            named: str) -> None:
    result = cli(*args)
    assert result.code == 2, result.err
    assert result.err.startswith(f"review-gate: error: {named} "), result.err
    assert "fix: give" in result.err and "internal error" not in result.err
    assert len(result.err.strip().splitlines()) == 2


def test_the_api_names_the_argument_too(repo: GitRepo) -> None:
    for kwargs, named in (({"config": LONG_NAME}, "config"), ({"constitution": LONG_NAME}, "constitution"),
                          ({"bundle_dir": LONG_PATH}, "bundle_dir"), ({"base": "r" * 3_000_000}, "base"),
                          ({"config": "cfg\0dir"}, "config")):
        with pytest.raises(UsageError) as caught:
            api.review(state=False, **kwargs)
        assert caught.value.message.startswith(f"{named} "), caught.value.message
    with pytest.raises(UsageError, match="explain path"):
        api.explain([LONG_NAME])
    with pytest.raises(UsageError, match="more than 1,000 at once"):
        api.explain(["app.py"] * 200_000)


def test_a_path_of_ordinary_length_still_works(cli: Any, repo: GitRepo, tmp_path: Path) -> None:
    deep = tmp_path / ("n" * 255)
    deep.mkdir()
    assert cli("--config", str(deep), "--no-state").code == 0  # an empty directory: the built-in configuration
