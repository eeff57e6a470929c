from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent


def builtin_dir(name: str) -> Path:
    """The shipped ``config`` or ``schemas`` directory.

    In a wheel they live inside the package; in a source checkout (editable install) they are
    the top-level folders of the repository.
    """
    for candidate in (_PACKAGE / "_builtin" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"review-gate is installed without its built-in {name}/ folder")


def find_config_file(relative: str, config_dir: str | None) -> Path | None:
    """A file a config names (an llm agent's instructions): relative to the config directory,
    else to the built-in one; None when neither has it."""
    for base in ([Path(config_dir)] if config_dir else []) + [builtin_dir("config")]:
        candidate = base / relative
        if candidate.is_file():
            return candidate
    return None
