"""``review-gate init``: copy the built-in configuration into .review-gate/, ready to edit."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from review_gate import console
from review_gate.commands.common import find_repo_root
from review_gate.config import CONFIG_FILES, builtin_dir
from review_gate.errors import UsageError

GITIGNORE = "# run state is per machine; never commit it\nstate.db\nstate.db-*\n"


def init_command(args: argparse.Namespace) -> int:
    root = find_repo_root() or Path.cwd()
    target = Path(args.dir) if args.dir else root / ".review-gate"
    names = [*CONFIG_FILES, ".gitignore"]
    existing = [n for n in names if (target / n).exists()]
    if existing and not args.force:
        raise UsageError(f"{target} already has {', '.join(existing)}",
                         fix="edit those files, or pass --force to overwrite them with the defaults")
    target.mkdir(parents=True, exist_ok=True)
    source = builtin_dir("config")
    for name in CONFIG_FILES:
        shutil.copyfile(source / name, target / name)
    (target / ".gitignore").write_text(GITIGNORE, encoding="utf-8")
    console.out(f"wrote {len(names)} files to {target}; check them with `review-gate config validate`")
    return 0
