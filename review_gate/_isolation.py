"""Start review-gate so that no code of the repository it judges runs (docs/security.md).

Python imports from the working directory before any code of ours can act, in three ways:

- ``python -m review_gate`` puts the working directory first on the import path before it
  looks the module up: a ``review_gate/`` (or ``runpy.py``) of the repository runs instead of us;
- a ``PYTHONPATH`` entry that is empty, relative or inside the working directory (what
  ``export PYTHONPATH=$PYTHONPATH:/x`` gives when it was unset) does the same for the console
  script, and the interpreter imports ``sitecustomize`` (``usercustomize`` with a user base
  there) from it at start-up, before the console script's first line;
- nothing of the kind under ``-I``, or with ``-P`` (3.11+) and a clean ``PYTHONPATH``.

So the one remedy is to start again, isolated: ``restart_command`` says with what, or None
when this interpreter imports nothing from the working directory (the hooks ``init`` writes run
``python -I -m review_gate`` or the console script, which never restart in a clean
environment). The file runs twice over: from the entry points (``review_gate/__main__.py``, the
console script's ``surfaces.cli.main.entry``), and before them from
``review-gate-isolation.pth`` in site-packages, which the interpreter processes before
``sitecustomize``: read there by its path, ``site-packages/review_gate/_isolation.py`` (a module
imported by name could come from ``PYTHONPATH`` too; an editable install has the file there as
well), so it uses only ``os`` and ``sys``, which are loaded before any ``.pth``.
"""

from __future__ import annotations

import os
import sys

CONSOLE_SCRIPTS = ("review-gate", "review-gate.exe")
MODULE = "review_gate"


def _inside(entry: str, cwd: str) -> bool:
    """An import path entry that reads from the working directory: empty or relative (both are
    the working directory, or a place found from it), or the directory or one below it."""
    if not entry or not os.path.isabs(entry):
        return True
    if not cwd:
        return False  # the working directory is gone: only the relative entries read from it
    real = os.path.realpath(entry)
    return real == cwd or (cwd != os.sep and real.startswith(cwd + os.sep))


def module_run(orig_argv: list[str]) -> bool:
    """``python [options] -m review_gate ...``: the module named after ``-m``, among the options
    before the script, ``-c`` or ``-`` (``-X`` and ``-W`` take a value)."""
    words = iter(orig_argv[1:])
    for word in words:
        if word == "-m":
            return next(words, "") in (MODULE, MODULE + ".__main__")
        if word.startswith("-m"):
            return word[2:] in (MODULE, MODULE + ".__main__")
        if word in ("-X", "-W"):
            next(words, "")
        elif not word.startswith("-") or word == "-" or word.startswith("-c") or word == "--":
            return False
    return False


def restart_command(orig_argv: list[str], environ: dict[str, str], cwd: str, *, module: bool,
                    isolated: bool, ignores_environment: bool, safe_path: bool,
                    version: tuple[int, int]) -> tuple[list[str], dict[str, str]] | None:
    """The command line and environment that start this run again importing nothing from ``cwd``
    (its real path), or None when this one imports nothing from there already. Pure.

    >>> restart_command(["python", "-m", "review_gate", "--version"], {}, "/repo", module=True,
    ...                 isolated=False, ignores_environment=False, safe_path=False, version=(3, 11))
    (['-P', '-m', 'review_gate', '--version'], {})
    >>> restart_command(["python", "/venv/bin/review-gate"], {"PYTHONPATH": ":/opt/x"}, "/repo", module=False,
    ...                 isolated=False, ignores_environment=False, safe_path=False, version=(3, 11))
    (['-P', '/venv/bin/review-gate'], {'PYTHONPATH': '/opt/x'})
    """
    if isolated:
        return None
    env = dict(environ)
    unsafe = False
    if not ignores_environment:
        entries = environ.get("PYTHONPATH", "").split(os.pathsep) if "PYTHONPATH" in environ else []
        kept = [entry for entry in entries if not _inside(entry, cwd)]
        if len(kept) != len(entries):
            unsafe = True
            if kept:
                env["PYTHONPATH"] = os.pathsep.join(kept)
            else:
                del env["PYTHONPATH"]
        if "PYTHONUSERBASE" in environ and _inside(environ["PYTHONUSERBASE"], cwd):
            unsafe = True  # usercustomize and the user site's .pth files would come from there
            del env["PYTHONUSERBASE"]
    # -m: the working directory goes first on the path when the module is looked up, after this
    if module and not safe_path:
        unsafe = True
    if not unsafe:
        return None
    # -P: the working directory (-m) or the script's directory is never put on the path; 3.10 has
    # no -P, and -I there drops PYTHONPATH and the user site too
    flags = ["-P"] if version >= (3, 11) else ["-I"] if module else []
    return [*flags, *orig_argv[1:]], env


def restart_isolated(*, ours: bool | None = None) -> None:
    """Start this run again isolated when it would import from the working directory (one more
    interpreter start: what ``python -c pass`` takes); else return at once. ``ours``: this
    process is review-gate (the entry points know it; the ``.pth`` asks ``sys.argv``, which is
    the script's path or ``-m`` while site-packages are processed)."""
    if os.name == "nt":
        return  # no exec that keeps the process on Windows; the hooks init writes run -I there too
    orig_argv = list(getattr(sys, "orig_argv", ()))
    module = module_run(orig_argv)
    if ours is None:
        first = sys.argv[0] if sys.argv else ""
        ours = module if first == "-m" else os.path.basename(first) in CONSOLE_SCRIPTS
    if not ours or not orig_argv:
        return
    try:
        cwd = os.path.realpath(os.getcwd())
    except OSError:
        cwd = ""  # a directory that is gone: every relative entry is unsafe, nothing is inside ""
    found = restart_command(orig_argv, dict(os.environ), cwd, module=module, isolated=bool(sys.flags.isolated),
                            ignores_environment=bool(sys.flags.ignore_environment),
                            safe_path=bool(getattr(sys.flags, "safe_path", False)),
                            version=(sys.version_info[0], sys.version_info[1]))
    if found is not None:
        argv, env = found
        os.execve(sys.executable, [sys.executable, *argv], env)


if __name__ == "review_gate_isolation":  # run from review-gate-isolation.pth at start-up, before sitecustomize
    restart_isolated()
