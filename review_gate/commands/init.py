"""``review-gate init``: copy the built-in configuration into .review-gate/, ready to edit: the
five files, and the loop's prompt templates (``loop/*.md``)."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from review_gate import console
from review_gate.commands.common import find_repo_root
from review_gate.config import CONFIG_FILES, builtin_dir
from review_gate.errors import ReviewGateError, UsageError
from review_gate.state.store import INIT_GITIGNORE, is_ours_gitignore


def init_command(args: argparse.Namespace) -> int:
    root = find_repo_root() or Path.cwd()
    if args.hooks is not None:
        if args.dir or args.force:
            raise UsageError("--hooks writes only the coding agent's settings; it takes no --dir or --force",
                             fix="run `review-gate init --hooks HOST` and `review-gate init` separately")
        return _hooks(root, args.hooks)
    default = root / ".review-gate"
    target = Path(args.dir) if args.dir else default
    if target.exists() and not target.is_dir():
        raise UsageError(f"{target} exists and is not a directory",
                         fix="move it away, or choose another place with --dir")
    source = builtin_dir("config")
    templates = [f"loop/{path.name}" for path in sorted((source / "loop").glob("*.md"))]
    names = [*CONFIG_FILES, *templates, ".gitignore"]
    existing = [n for n in names if (target / n).exists()]
    replaced = ""
    if existing == [".gitignore"] and is_ours_gitignore(target / ".gitignore"):
        existing = []  # only what the run-state store wrote: init may proceed, and says so
        replaced = " (replacing the .gitignore the run state had written)"
    if existing and not args.force:
        raise UsageError(f"{target} already has {', '.join(existing)}; nothing was written",
                         fix="edit those files, or pass --force to overwrite them with the defaults")
    try:
        (target / "loop").mkdir(parents=True, exist_ok=True)
        for name in [*CONFIG_FILES, *templates]:
            shutil.copyfile(source / name, target / name)
        (target / ".gitignore").write_text(INIT_GITIGNORE, encoding="utf-8")
    except OSError as exc:
        raise ReviewGateError(f"cannot write to {target}: {exc.strerror}",
                              fix="choose a writable directory with --dir") from exc
    check = "review-gate config validate"
    if target.resolve() != default.resolve():
        check += f" --config {target}"
    console.out(f"wrote {len(names)} files to {target}{replaced}; check them with `{check}`")
    return 0


def _hooks(root: Path, name: str) -> int:
    """``init --hooks HOST``: review-gate's entries merged into the host's project settings."""
    from review_gate.hooks import HOSTS
    from review_gate.hooks.settings import merge

    host = HOSTS[name]
    path = root / host.SETTINGS
    added = merge(path, host.entries(), f"review-gate hook {host.NAME}")
    if not added:
        console.out(f"{path} already runs `review-gate hook {host.NAME}`; nothing was changed")
        return 0
    console.out(f"added review-gate's {' and '.join(added)} hooks to {path} (timeout {host.TIMEOUT_S} s, "
                f"--budget {host.BUDGET_S}); commit it to share them, and see docs/agents.md")
    return 0
