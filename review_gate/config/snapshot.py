"""A configuration that passed every check, kept for the next process that reads the same files.

Checking the five files costs more than reading the change they judge on a small one: the
models' validators are built, every glob and pattern compiled, every cross-file reference
resolved (some 60 ms of CPU for the built-in configuration, a fifth of ``plan``). The outcome
depends only on the files' bytes and on the code that checks them, so a checked configuration
is kept under a digest of both (``key``) in the user's cache directory, beside the run state,
and read back instead of checked again. What the files do not say, the files they name (an llm
agent's instructions, the constitution), is looked at on every load (``validate.file_problems``).

A configuration with a problem is never kept: its errors are found and reported afresh. An
entry that cannot be read, or that this code did not write, is a miss; one that cannot be
written is no error (a read-only home works as before, only slower).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import pickle
import sys
import tempfile
from pathlib import Path

from review_gate.models import ReviewConfig
from review_gate.state.cache_dir import cache_dir
from review_gate.text import globs

KEPT = 16  # snapshots kept: a few configurations a user switches between, each about 200 KB
_PACKAGE = Path(__file__).resolve().parent.parent


def key(directory: Path | None, files: dict[str, tuple[str, bytes]]) -> str:
    """The digest of what a checked configuration depends on: the directory it names, each file's
    origin and bytes (``files``: name -> (display, bytes)), this code and the libraries it
    pickles with."""
    digest = hashlib.sha256(_code_identity())
    digest.update(repr(str(directory) if directory is not None else None).encode())
    for name in sorted(files):
        display, data = files[name]
        digest.update(f"\0{name}\0{display}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


# snapshots this process has read, by file and what its stat says: a hook's review loads the same
# configuration several times (the gate, the run, the waivers), each unpickled anew cost ~10 ms;
# a file replaced or damaged since (another inode, size or time) is read again
_READ: dict[str, tuple[tuple[int, int, int], ReviewConfig]] = {}


def read(snapshot: str) -> ReviewConfig | None:
    """The configuration kept under ``snapshot``; None when there is none or it is unusable."""
    path = _path(snapshot)
    seen = _READ.get(str(path))
    if seen is not None and seen[0] == _signature(path):  # None (gone) is never stored
        return seen[1]
    try:
        with open(path, "rb") as handle:
            loaded = pickle.load(handle)
    except Exception:  # none yet, or a truncated or foreign file: a miss, never a crash; it is replaced
        return None
    if not (isinstance(loaded, tuple) and len(loaded) == 2 and isinstance(loaded[0], ReviewConfig)
            and isinstance(loaded[1], dict)):
        return None
    config: ReviewConfig = loaded[0]
    globs.learn(loaded[1])
    with contextlib.suppress(OSError):
        os.utime(path)  # recently used: the last to be pruned
    if len(_READ) >= KEPT:  # a long-lived server whose files change: hold no more than the disk does
        _READ.clear()
    if (signature := _signature(path)) is not None:
        _READ[str(path)] = (signature, config)
    return config


def _signature(path: Path) -> tuple[int, int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_ino, info.st_size, info.st_mtime_ns)


def write(snapshot: str, config: ReviewConfig) -> None:
    """Keep ``config`` under ``snapshot`` (atomically: a reader sees the whole file or none)."""
    folder = _path(snapshot).parent
    try:
        if not folder.is_dir():
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            (folder / ".gitignore").write_text("# review-gate's checked configurations: per machine\n*\n",
                                               encoding="utf-8")
        # with its digest, and the translations of its globs its checks made: the next process does
        # not make them again
        config.digest()
        for agent in config.agents.agents:
            config.hashed(agent.id)
        data = pickle.dumps((config, globs.translations()), protocol=pickle.HIGHEST_PROTOCOL)
        fd, temporary = tempfile.mkstemp(dir=folder, prefix=".snapshot-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(temporary, _path(snapshot))
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
        _prune(folder)
    except (OSError, pickle.PicklingError):
        return


def _path(snapshot: str) -> Path:
    return cache_dir() / "config" / f"{snapshot}.pickle"


def _prune(folder: Path) -> None:
    entries = []
    with os.scandir(folder) as found:
        for entry in found:
            if entry.name.endswith(".pickle"):
                with contextlib.suppress(OSError):
                    entries.append((entry.stat().st_mtime_ns, entry.path))
    for _, path in sorted(entries, reverse=True)[KEPT:]:
        with contextlib.suppress(OSError):
            os.unlink(path)


@functools.cache
def _code_identity() -> bytes:
    """This package's files (path, size, time of change), the versions of Python and pydantic and
    pathspec's code (which translated the globs): a snapshot is read only by the code that wrote
    it, an edited checkout included. Once a process: the code it runs does not change under it (a
    server loads the configuration again and again)."""
    import importlib.util

    import pydantic
    import pydantic_core

    from review_gate import __version__

    parts = [__version__, sys.version, pydantic.VERSION, pydantic_core.__version__]
    found = importlib.util.find_spec("pathspec")  # found, not imported: a snapshot's run may not need it
    pathspec = list(found.submodule_search_locations or []) if found is not None else []
    for top in [str(_PACKAGE), *pathspec]:
        for folder, _, names in sorted(os.walk(top)):
            for name in sorted(names):
                if name.endswith(".py"):
                    info = os.stat(os.path.join(folder, name))
                    parts.append(f"{folder}/{name}:{info.st_size}:{info.st_mtime_ns}")
    return "\n".join(parts).encode()
