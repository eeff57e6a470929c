"""The identity of a configuration: a digest of every regular file under its directory (over the
built-in files it falls back to).

What a review pair's freshness and a loop session's pin compare. The parsed JSON is not enough:
a command agent's script, a module that script imports (``.review-gate/rglib.py``), instructions
and templates all decide what the gate answers, and a look-alike directory (the same JSON
beside a no-op ``lint.py``) must not pass for the real one. So every regular file counts, by
its bytes, wherever it sits below the directory; the built-in configuration (no directory) is
its shipped files.

Left out, because they are not configuration and change with every run: the run state's files
(``skip``: the state file and its companions, never opened beside their connection, see
``state.open_databases``), the loop's per-machine folders (``sessions/``, ``hil/``, ``review-logs/``),
the host runs' tasks and answers (``host/``) and any ``.git``.
Files are opened without blocking and read only when regular (a FIFO never blocks), hashed in
pieces; a directory reached twice through links is walked once. A directory of more than
MAX_FILES files is refused (ConfigError): a configuration is a handful of files, and hashing a
checkout's worth on every run would be a denial of service.

    >>> import tempfile, pathlib
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = (pathlib.Path(d) / "lint.py").write_text("print('{}')")
    ...     first = identity(d)
    ...     _ = (pathlib.Path(d) / "rglib.py").write_text("def bad(): return True")
    ...     first != identity(d)
    True
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from review_gate.change.input_files import MIB, regular_head, regular_sha256
from review_gate.config.locations import builtin_dir
from review_gate.errors import ConfigError, ConfigProblem
from review_gate.state import open_databases

MAX_FILES = 5000
MAX_COPY_BYTES = 64 * MIB  # one file of a configuration copied (``copy``); a larger one is left out
LOOP_FOLDERS = frozenset({"sessions", "hil", "review-logs"})  # review_gate.loop.files.FOLDERS: per machine
HOST_FOLDER = "host"  # review_gate.scale.host.tasks: a host run's tasks and answers, beside the run state
PER_MACHINE = LOOP_FOLDERS | {HOST_FOLDER}


def digests(directory: str | Path | None, *, skip: Iterable[Path] = ()) -> dict[str, str]:
    """Relative POSIX name -> SHA-256 of every regular file the configuration in ``directory``
    is made of: the built-in configuration's files, each replaced by the directory's own file of
    that name, and every other regular file under it, except ``skip`` and the loop's folders. A
    file absent from the directory falls back to the built-in one, so a directory that holds no
    configuration of its own (only the run state) is the built-in configuration, and so is None."""
    found = dict(_builtin())
    if directory is not None:
        own = _walk(Path(directory), frozenset(os.path.abspath(p) for p in skip))
        found.update(own)
        found.update(_presets(Path(directory), [name for name in own if name.endswith("review-gate.json")]))
    return found


def _presets(directory: Path, settings: list[str]) -> dict[str, str]:
    """The files of the installed packages' presets the configuration extends (``preset:NAME``,
    named by any of its ``settings`` files, a directory preset's included): they decide what the
    gate answers as the directory's own files do."""
    if not any(b'"preset:' in (regular_head(directory / name, MIB) or b"") for name in settings):
        return {}
    from review_gate.config.load import origins

    found: dict[str, str] = {}
    for layer in origins(directory)[0]:
        if layer.name.startswith("preset:") and layer.directory is not None:
            found.update({f"{layer.name}/{name}": sha for name, sha in _walk(layer.directory, frozenset()).items()})
    return found


def identity(directory: str | Path | None, *, skip: Iterable[Path] = (), per_agent: Iterable[str] = ()) -> str:
    """One SHA-256 over ``digests``: equal exactly when every file is. ``per_agent``: files left
    out because the caller keys each agent on its own part of them (a review pair's agent SHA
    holds its entry and its rules: editing one agent's rule leaves the others fresh)."""
    left_out = set(per_agent)
    found = {name: sha for name, sha in digests(directory, skip=skip).items() if name not in left_out}
    return hashlib.sha256(json.dumps(found, sort_keys=True).encode("utf-8", "surrogateescape")).hexdigest()


def copy(directory: str | Path, target: Path, *, skip: Iterable[Path] = ()) -> dict[str, str]:
    """Copy the files ``digests`` covers into ``target`` (an empty directory), each written
    only when its bytes are still the ones hashed; returns what was copied (name -> SHA-256).
    A file that changed in between is left out: the copy never holds what was not hashed."""
    found = _walk(Path(directory), frozenset(os.path.abspath(p) for p in skip))  # its own files only
    copied = {}
    for name, digest in found.items():
        data = regular_head(Path(directory) / name, MAX_COPY_BYTES + 1)
        if data is None or len(data) > MAX_COPY_BYTES or hashlib.sha256(data).hexdigest() != digest:
            continue
        path = target / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        copied[name] = digest
    return copied


@functools.cache
def _builtin() -> tuple[tuple[str, str], ...]:
    return tuple(sorted(_walk(builtin_dir("config"), frozenset()).items()))


def _walk(top: Path, skip: frozenset[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    seen: set[tuple[int, int]] = set()
    pending = [(top, "")]
    while pending:
        folder, prefix = pending.pop()
        try:
            info = os.stat(folder)
            if (info.st_dev, info.st_ino) in seen:
                continue  # a link back up, or to a folder walked already
            seen.add((info.st_dev, info.st_ino))
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue  # gone, or not readable: nothing the gate can read from it either
        for entry in entries:
            name = prefix + entry.name
            if (not prefix and entry.name in PER_MACHINE) or entry.name == ".git":
                continue  # the loop's and host runs' per-machine files; git's own database (a configuration at a
                # repository's root)
            try:
                mode = entry.stat().st_mode  # through a link: what the gate would read
            except OSError:
                continue  # a dangling link
            if stat.S_ISDIR(mode):
                pending.append((Path(entry.path), name + "/"))
            elif (stat.S_ISREG(mode) and os.path.abspath(entry.path) not in skip
                  and not open_databases.in_use(entry.path)):
                if len(found) >= MAX_FILES:
                    raise ConfigError([ConfigProblem(str(top), "/", f"the configuration directory holds more than "
                                                     f"{MAX_FILES:,} files",
                                                     "keep only the configuration there (its JSON files, "
                                                     "instructions, templates and scripts)")])
                digest = regular_sha256(entry.path)
                if digest is not None:
                    found[name] = digest
    return found


__all__ = ["LOOP_FOLDERS", "MAX_FILES", "copy", "digests", "identity"]
