"""Merging review-gate's hook entries into a host's JSON settings file, keeping what is there.

A settings file holds a person's other hooks, permissions and preferences: every key is kept
in its order, an event's existing matcher groups are kept and ours is appended, and an event
that already runs ``review-gate hook HOST`` is left as it is (running ``init --hooks`` twice
changes nothing; run from another installation, it updates the program path). A file that is
not a JSON object, or whose ``hooks`` is not shaped as the hosts document it, is refused:
guessing would lose someone's settings.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from review_gate.errors import UsageError
from review_gate.text.escape import sanitize


def merge(path: Path, entries: dict[str, list[dict[str, Any]]], marker: re.Pattern[str]) -> tuple[list[str], list[str]]:
    """Add ``entries`` (event -> matcher groups) to the settings file ``path`` (created if
    absent). An event whose hooks already run a command ``marker`` finds (review-gate's hook, by
    whatever path) keeps its place: its command is brought up to ours when it differs (another
    program path). The events added, and those whose command was updated."""
    settings = _read(path)
    hooks = settings.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise _refuse(path, '"hooks" is not a JSON object')
    added, updated = [], []
    for event, groups in entries.items():
        present = hooks.setdefault(event, [])
        if not isinstance(present, list):
            raise _refuse(path, f'"hooks"."{event}" is not a list of matcher groups')
        ours = [hook for hook in _hooks(present) if marker.search(str(hook.get("command")))]
        if not ours:
            present.extend(groups)
            added.append(event)
            continue
        wanted = groups[0]["hooks"][0]["command"]
        for hook in ours:
            if hook.get("command") != wanted:
                hook["command"] = wanted
                updated.append(event)
    if added or updated:
        _write(path, json.dumps(settings, indent=2, ensure_ascii=False) + "\n")
    return added, sorted(set(updated))


def _hooks(groups: list[Any]) -> list[dict[str, Any]]:
    return [hook for group in groups if isinstance(group, dict)
            for hook in group.get("hooks") or [] if isinstance(hook, dict)]


def _read(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise _refuse(path, f"it cannot be read ({exc})") from exc
    if not text.strip():
        return {}
    try:
        settings = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _refuse(path, f"it is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from exc
    if not isinstance(settings, dict):
        raise _refuse(path, "it is not a JSON object")
    return settings


def _refuse(path: Path, why: str) -> UsageError:
    return UsageError(f"{sanitize(str(path))}: {why}; nothing was changed",
                      fix="fix the file (or move it away), then run `review-gate init --hooks` again; "
                          "docs/agents.md has the entries to add by hand")


def _write(path: Path, text: str) -> None:
    """Replace the file in one step (a temporary file renamed over it), keeping its mode."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.chmod(temporary, mode)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise UsageError(f"cannot write {sanitize(str(path))}: {exc.strerror}",
                         fix="make the directory writable, or add the entries by hand (docs/agents.md)") from exc
