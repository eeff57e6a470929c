"""What several commands share: where the repository is, which config, what to review."""

from __future__ import annotations

import argparse
import os
import sys
from datetime import date
from pathlib import Path

from review_gate.change import git
from review_gate.change.input_files import read_stream
from review_gate.config import load_config, locate_config_dir
from review_gate.errors import GitError, InputError, ReviewGateError, UsageError
from review_gate.models import ReviewConfig
from review_gate.pipeline import arguments
from review_gate.pipeline.normalize import DIFF_TOO_BIG_FIX, DiffRequest, diff_limit
from review_gate.text.escape import sanitize


def check_timeout(seconds: float | None) -> None:
    """--timeout: a finite number of seconds (float() also reads nan, inf and 1e999)."""
    arguments.timeout(seconds, "--timeout")


def check_concurrency(value: int | None) -> None:
    """--concurrency: as review-gate.json's concurrency, 1 to MAX_CONCURRENCY agents at once."""
    arguments.concurrency(value, "--concurrency")


def expiry(text: str) -> date:
    """--expires of ``accept`` and ``baseline``: the last day the waiver applies (inclusive), a
    YYYY-MM-DD date, today or later."""
    return arguments.last_day("--expires", text)


def find_repo_root() -> Path | None:
    return git.repo_root(Path.cwd())


def advisory(code: int) -> int:
    """``--exit-zero``'s exit code: 0 where the gate stops the change (1), as ruff's; every report
    still says what the gate decided (``REVIEW: FAIL``). An incomplete run (3) still exits 3."""
    return 0 if code == 1 else code


def config_for(args: argparse.Namespace, root: Path | None, *, one_pass: bool = False) -> ReviewConfig:
    directory = locate_config_dir(getattr(args, "config", None), root)
    if one_pass:  # config validate: schema and cross-file problems in one run
        return load_config(directory, one_pass=True)
    return load_config_dir(directory)


def load_config_dir(directory: Path | None) -> ReviewConfig:
    """The configuration in ``directory``; its error points to the command that lists every problem."""
    where = f" --config {directory}" if directory is not None else ""
    return load_config(directory, listed_by=f"review-gate config validate{where}")


def diff_request(args: argparse.Namespace, root: Path | None) -> DiffRequest:
    """Turn --diff/--base/--head/--staged into a DiffRequest, refusing combinations that clash."""
    if args.diff is not None:
        clash = [flag for flag, value in (("--base", args.base), ("--head", args.head),
                                          ("--staged", args.staged)) if value]
        if clash:
            raise UsageError(f"--diff cannot be combined with {', '.join(clash)}",
                             fix="review either a diff file or a git range")
        if args.diff == "-":
            data = read_stream(sys.stdin.buffer, limit=diff_limit(), name="the diff on standard input",
                               fix=DIFF_TOO_BIG_FIX)
            return DiffRequest(mode="stdin", stdin_data=data, repo_root=str(root) if root else None)
        if not Path(args.diff).exists() or Path(args.diff).is_dir():  # a pipe (--diff <(git diff)) is fine
            what = "a directory" if Path(args.diff).is_dir() else "no such file"
            raise InputError(f"--diff {sanitize(args.diff)}: {what}",
                             fix="pass the path of a unified diff file, or - for standard input")
        return DiffRequest(mode="file", path=args.diff, repo_root=str(root) if root else None)
    if root is None and git.bare_repository(Path.cwd()):
        raise GitError("a bare repository has no working tree to review",
                       fix="review a clone with a working tree, or pass a diff: git diff BASE HEAD | review-gate "
                           "--diff -")
    if root is None:
        raise GitError("not inside a git repository",
                       fix="run review-gate inside a git repository, or pass --diff FILE (- for stdin)")
    root_str = str(root)
    if getattr(args, "pre_push", False):
        return _pre_push(args, root_str)
    if args.staged:
        if args.head or args.base:
            raise UsageError("--staged compares the index with HEAD; it takes no --base or --head")
        return DiffRequest(mode="staged", repo_root=root_str)
    if args.head:
        return DiffRequest(mode="range", repo_root=root_str, base=args.base, head=args.head)
    return DiffRequest(mode="worktree", repo_root=root_str, base=args.base)


def _pre_push(args: argparse.Namespace, root: str | None) -> DiffRequest:
    """pre-commit's pre-push stage names the range in PRE_COMMIT_FROM_REF / PRE_COMMIT_TO_REF.

    When it names none (the push carries a root commit: the first push of a repository, or of
    an unrelated history), it still names the pushed ref in PRE_COMMIT_LOCAL_BRANCH and the
    remote in PRE_COMMIT_REMOTE_NAME: everything that ref holds and the remote lacks is
    reviewed, the whole tree when the remote has none of its history.
    """
    if args.base or args.head or args.staged:
        raise UsageError("--pre-push takes its range from pre-commit; it takes no --base, --head or --staged")
    head = os.environ.get("PRE_COMMIT_TO_REF")
    local = os.environ.get("PRE_COMMIT_LOCAL_BRANCH")
    if not head and local:
        return DiffRequest(mode="push", repo_root=root, head=local,
                           remote=os.environ.get("PRE_COMMIT_REMOTE_NAME") or None)
    if not head:
        raise UsageError("--pre-push needs PRE_COMMIT_TO_REF (and PRE_COMMIT_FROM_REF) in the environment",
                         fix="run it from pre-commit's pre-push stage, or use --base REF --head REF")
    base = os.environ.get("PRE_COMMIT_FROM_REF") or None
    if base is not None and not base.strip("0"):
        base = None
    return DiffRequest(mode="range", repo_root=root, base=base, head=head, behind_ok=True, branch_base=True)


def output_targets(args: argparse.Namespace) -> list[tuple[str, str | None]]:
    targets = [(str(f), o) for f, o in (args.outputs or [["text", None]])]
    to_stdout = [f for f, o in targets if o is None or o == "-"]
    if len(to_stdout) > 1:
        raise UsageError(f"formats {', '.join(to_stdout)} would all go to standard output",
                         fix="give all but one of them --output FILE")
    return targets


def write_output(path: str, text: str) -> tuple[Path, bytes]:
    """Write ``text`` to ``path`` as UTF-8; returns the file and the bytes written."""
    target = Path(path)
    data = text.encode("utf-8")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    except OSError as exc:
        raise ReviewGateError(f"cannot write --output {path}: {exc.strerror}",
                              fix="choose a writable path") from exc
    return target, data
