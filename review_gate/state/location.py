"""Where the run state's file lives (``state_path`` of review-gate.json), checked, and kept out of
git: the .gitignore the store writes beside it, the repository's ``info/exclude``, and the files
of the run state a review must never see.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from review_gate.errors import StateError
from review_gate.models import ReviewConfig
from review_gate.state.cache_dir import cache_dir

SIDE_FILES = ("-wal", "-shm", "-journal")


# The run state's .gitignore, in its two forms. The store writes one into a directory it
# creates, so the database never shows up as an untracked file to review; that one also
# ignores itself: running the gate must not leave an untracked folder in the working tree.
# `review-gate init` writes the committable one (the same lines for the default name) in its place.
_IGNORED = "{name}\n{name}-*\n"
GITIGNORE = "# review-gate run state: per machine, never committed\n" + _IGNORED + ".gitignore\n"
INIT_GITIGNORE = "# run state is per machine; never commit it\n" + _IGNORED.format(name="state.db")


def is_store_gitignore(path: Path, name: str = "state.db") -> bool:
    """True for a .gitignore the store wrote and nobody changed."""
    return _text(path) == GITIGNORE.format(name=name)


def is_ours_gitignore(path: Path) -> bool:
    """True for a .gitignore the store or ``review-gate init`` wrote, unchanged."""
    return _text(path) in (GITIGNORE.format(name="state.db"), INIT_GITIGNORE)


def _text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def state_location(config: ReviewConfig, root: Path | None) -> Path:
    """Where ``state_path`` of review-gate.json puts the file: absolute as given, else relative to
    the repository root. Outside a repository there is no project to keep state beside, so a
    relative state_path is taken from the user's cache directory (``$XDG_CACHE_HOME/review-gate``,
    a leading ``.review-gate/`` dropped): a diff reviewed in any directory leaves nothing behind.
    Nothing is checked: ``state_file`` does that."""
    path = Path(config.settings.state_path).expanduser()
    if path.is_absolute():
        return path
    if root is None:
        parts = path.parts[1:] if path.parts[:1] == (".review-gate",) else path.parts
        return cache_dir().joinpath(*parts) if parts else cache_dir() / "state.db"
    return root / path


def state_link(config: ReviewConfig, root: Path | None) -> Path | None:
    """The first folder of a relative ``state_path`` inside the repository that is a symbolic link.

    A committed link (``.review-gate`` -> ``src``) would make the gate write its database, and
    the .gitignore beside it, wherever the link leads: the run uses no state instead, and the
    other commands refuse."""
    relative = Path(config.settings.state_path).expanduser()
    if root is None or relative.is_absolute():
        return None
    folder = root
    for part in relative.parts[:-1]:
        folder = folder / part
        if folder.is_symlink():
            return folder
    return None


def state_file(config: ReviewConfig, root: Path | None) -> Path:
    """``state_location``, checked: inside a repository, no symbolic link on the way and no
    ``..`` out of it (a committed link must not make the gate write elsewhere)."""
    full = state_location(config, root)
    if root is None or Path(config.settings.state_path).expanduser().is_absolute():
        return full
    link = state_link(config, root)
    if link is not None and not _within(link.resolve(), root):
        raise StateError(f"state path {full}: a symbolic link leads it out of the repository "
                         f"(to {link.resolve()})",
                         fix="remove the link, or set an absolute state_path in review-gate.json")
    if link is not None:
        raise StateError(f"state path {full}: {link.relative_to(root).as_posix()} is a symbolic link, and "
                         "review-gate does not follow links inside the repository to its own files",
                         fix="make it a real directory, or set an absolute state_path in review-gate.json")
    if not _within(full.parent.resolve(), root):
        raise StateError(f"state path {full}: it leads out of the repository (to {full.parent.resolve()})",
                         fix="set a state_path inside the repository, or an absolute one, in review-gate.json")
    return full


def _within(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root.resolve())
    except ValueError:
        return False
    return True


def companions(path: Path) -> list[Path]:
    """The state file, its side files, and the .gitignore the store wrote beside it (as long as
    nobody changed it): the files of the run state a review must never see."""
    out = [path, *(path.with_name(path.name + s) for s in SIDE_FILES)]
    if is_store_gitignore(path.parent / ".gitignore", path.name):
        out.append(path.parent / ".gitignore")
    return out


def keep_out_of_git(path: Path) -> None:
    """Make sure git never lists the state file at ``path`` as an untracked file, when it lies in
    a repository whose working tree is reviewed (a hand-made ``.review-gate/`` has no
    .gitignore: the run took its own database for a change of the state, and ``git add -A``
    committed it).

    A directory with no .gitignore gets the store's, which ignores the state and itself (so it
    is no untracked file either). One with a .gitignore of ours is done. One with the user's
    own .gitignore is left as it is (a tracked file the review would see change): the state's
    names, anchored, go into the repository's ``info/exclude`` instead, which git reads for
    every worktree and which is never committed. Each step is only a convenience: a failure is
    ignored, and the run still uses no state the change brings (``own_files``)."""
    directory = path.parent
    git_dir = _git_dir(directory)
    if git_dir is None:
        return
    ignore = directory / ".gitignore"
    with contextlib.suppress(OSError, ValueError):
        if not ignore.exists() and not ignore.is_symlink():
            ignore.write_text(GITIGNORE.format(name=path.name), encoding="utf-8")
            return
        if _text(ignore) in (GITIGNORE.format(name=path.name), INIT_GITIGNORE.replace("state.db", path.name)):
            return
        worktree = _worktree_of(directory)
        if worktree is None:
            return
        where = "/" + (directory.resolve().relative_to(worktree.resolve()) / path.name).as_posix()
        _exclude(git_dir / "info" / "exclude", [where, where + "-*"])


def _worktree_of(directory: Path) -> Path | None:
    """The top of the git working tree ``directory`` is in: the nearest folder holding ``.git``."""
    for folder in (directory, *directory.parents):
        if (folder / ".git").exists():
            return folder
    return None


def _git_dir(directory: Path) -> Path | None:
    """The repository's common git directory (where ``info/exclude`` lives) for a working tree
    that holds ``directory``: ``.git`` itself, or for a linked worktree or a submodule what its
    ``.git`` file names, and that directory's ``commondir``. None outside a repository."""
    worktree = _worktree_of(directory)
    if worktree is None:
        return None
    dot_git = worktree / ".git"
    if dot_git.is_dir():
        return dot_git
    text = _text(dot_git) or ""
    if not text.startswith("gitdir:"):
        return None
    found = (worktree / text[len("gitdir:"):].strip()).resolve()
    common = _text(found / "commondir")
    return (found / common.strip()).resolve() if common else found


def _exclude(exclude: Path, lines: list[str]) -> None:
    present = (_text(exclude) or "").splitlines()
    missing = [line for line in lines if line not in present]
    if not missing:
        return
    exclude.parent.mkdir(parents=True, exist_ok=True)
    with exclude.open("a", encoding="utf-8") as handle:
        start = "\n" if present and not (_text(exclude) or "").endswith("\n") else ""
        handle.write(start + "# review-gate run state: per machine, never committed\n" + "\n".join(missing) + "\n")
