"""Applying a gap's JSON Patch (RFC 6902, with the ``jsonpatch`` library) to a config directory.

``prepare`` computes the file as it would be, checks the whole configuration with it exactly as
``review-gate config validate`` does, and returns the old and new text (for the diff a person
confirms); ``write`` then replaces the file atomically. Nothing is written when the patch does
not apply or the result does not validate. The built-in configuration is never patched: it is
part of the installed package, and ``review-gate init`` makes an editable copy.

The new file keeps the layout of the old one where it can: the built-in files either indent
every level (json.dumps with indent 2) or write each entry of a list on one line, and the
result is written in whichever of the two reproduces the old file, so the diff shows the entry
added and nothing else.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from review_gate.config.layers import LISTS, declared
from review_gate.config.load import CONFIG_LIMIT, load_config, read_json
from review_gate.config.locations import builtin_dir
from review_gate.errors import ConfigError, ConfigProblem, ReviewGateError, UsageError
from review_gate.models import ConfigPatch, ReviewConfig
from review_gate.models.config import SETTINGS_FILE
from review_gate.text.escape import json_safe

_ONE_LINE_ENTRY = re.compile(r"^\s+\{.*\},?$", re.MULTILINE)


@dataclass(frozen=True)
class Patched:
    """A config file as a patch would leave it: not yet written."""

    path: Path
    source: str  # where the old text comes from: the file, or the built-in one it falls back to
    old: str
    new: str

    def diff(self) -> str:
        """The change as a unified diff, the old file against the new one."""
        return "".join(difflib.unified_diff(self.old.splitlines(keepends=True), self.new.splitlines(keepends=True),
                                            fromfile=self.source, tofile=str(self.path)))


def refuse_builtin(directory: Path | None) -> Path:
    """The config directory to patch. Refused: none (the built-in configuration is in use), the
    built-in directory itself, and a directory with none of the config files (a run-state
    folder): each file of the configuration in use would come from the built-in one."""
    fix = ("run `review-gate init` to write an editable copy into .review-gate/, then apply the patch again "
           "(or name a config directory with --config DIR)")
    if directory is None or directory.resolve() == builtin_dir("config").resolve():
        raise UsageError("the configuration in use is the built-in one, which is part of review-gate and is never "
                         "edited", fix=fix)
    if not any((directory / name).exists() for name in ReviewConfig.FILES):
        raise UsageError(f"{directory} has none of the configuration files: the configuration in use is the "
                         "built-in one, which is never edited", fix=fix)
    return directory


def prepare(directory: Path, patch: ConfigPatch) -> Patched:
    """The file ``patch`` changes, as it would be; ConfigError (nothing written) when the patch
    does not apply to it or the configuration with it would not validate."""
    import jsonpatch

    directory = refuse_builtin(directory)
    if patch.file not in ReviewConfig.FILES:
        raise UsageError(f"the patch names {patch.file!r}, which is not one of the configuration files",
                         fix=f"a patch may change {', '.join(ReviewConfig.FILES)}")
    path = directory / patch.file
    if path.is_symlink():
        raise UsageError(f"{path} is a symbolic link; review-gate does not write through one",
                         fix="edit the file it points to yourself, or replace the link with a copy")
    key = LISTS.get(patch.file)
    if _overlay(directory):  # the change goes into the overlay: its file, or a new one holding only it
        source = str(path) if path.exists() else f"{patch.file} (none yet: this configuration extends another)"
        old_data = read_json(path, source, limit=CONFIG_LIMIT) if path.exists() else {"version": 1}
        old = path.read_text(encoding="utf-8-sig") if path.exists() else ""
        if key is not None and isinstance(old_data, dict) and key not in old_data:
            old_data = {**old_data, key: []}  # the patch appends an entry: to a list of the overlay's own
    else:
        source = str(path) if path.exists() else f"{patch.file} (built-in)"
        read_from = path if path.exists() else builtin_dir("config") / patch.file
        old_data = read_json(read_from, source, limit=CONFIG_LIMIT)
        old = read_from.read_text(encoding="utf-8-sig")
    try:
        new_data = jsonpatch.apply_patch(old_data, patch.as_json())
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as exc:
        raise ConfigError([ConfigProblem(str(path), "/", f"the patch does not apply: {exc}",
                                         "the file changed since the gap was recorded; edit it by hand, "
                                         "following the gap's suggestion")]) from exc
    load_config(directory, replaced={patch.file: new_data})  # the checks of `config validate`
    return Patched(path=path, source=source, old=old, new=dump_like(new_data, old_data, old))


def _overlay(directory: Path) -> bool:
    """Whether the configuration in ``directory`` extends another (``config.layers``)."""
    settings = directory / SETTINGS_FILE
    try:
        return settings.exists() and declared(read_json(settings, str(settings), limit=CONFIG_LIMIT))
    except ConfigError:
        return False


def write(patched: Patched) -> None:
    """Replace the file at once (a temporary file renamed over it): a reader never sees half of it."""
    path = patched.path
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise ReviewGateError(f"cannot write to {path.parent}: {exc.strerror}",
                              fix="make the config directory writable") from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(patched.new)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise ReviewGateError(f"cannot write {path}: {exc.strerror}", fix="make the file writable") from exc


def dump_like(data: Any, old_data: Any, old_text: str) -> str:
    """``data`` as JSON text in the layout of ``old_text`` (the text of ``old_data``)."""
    for dump in (_indented, _entries_on_one_line):
        if dump(old_data) == old_text:
            return dump(data)
    return _entries_on_one_line(data) if _ONE_LINE_ENTRY.search(old_text) else _indented(data)


def _indented(data: Any) -> str:
    return json_safe(json.dumps(data, indent=2, ensure_ascii=False)) + "\n"


def _entries_on_one_line(data: Any) -> str:
    return json_safe(_compact(data, 0)) + "\n"


def _compact(value: Any, depth: int) -> str:
    """Objects spread over lines, a list of objects one object a line, everything else inline."""
    inner, outer = "  " * (depth + 1), "  " * depth
    if isinstance(value, dict) and value:
        items = [f"{inner}{json.dumps(k, ensure_ascii=False)}: {_compact(v, depth + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + f"\n{outer}}}"
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        items = [inner + json.dumps(v, ensure_ascii=False) for v in value]
        return "[\n" + ",\n".join(items) + f"\n{outer}]"
    return json.dumps(value, ensure_ascii=False)
