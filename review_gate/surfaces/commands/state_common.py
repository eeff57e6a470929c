"""What the run-state commands (history, show, accept, accepted, gc) share: opening the store."""

from __future__ import annotations

import argparse
from pathlib import Path

from review_gate import api
from review_gate.state.location import state_file
from review_gate.state.store import Store, open_store
from review_gate.surfaces.commands.common import config_for, find_repo_root


def state_path(args: argparse.Namespace) -> Path:
    root = find_repo_root()
    return state_file(config_for(args, root), root)


def open_existing(args: argparse.Namespace) -> tuple[Path, Store | None]:
    """The store named by the config, or None when no run was ever recorded (nothing is created)."""
    path = state_path(args)
    return path, open_store(path, create=False)


def who() -> str:
    """``git config user.email``, else $USER, else 'unknown' (as ``accept`` records it)."""
    return api.person()
