"""Command line entry point: parse (``parser.py``), dispatch to a command, map errors to exit codes.

Heavy modules (pydantic, rich, anyio) are imported inside the commands, so ``--version`` and
``--help`` start fast.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import gc
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

from review_gate.surfaces.cli.parser import COMMANDS, STATE_COMMANDS, build_parser

if TYPE_CHECKING:  # the crash log's modules are imported when there is a crash to log
    from pathlib import Path
    from types import FrameType

EXIT_INTERRUPTED = 130  # 128 + SIGINT
EXIT_TERMINATED = 143  # 128 + SIGTERM


def _with_default_command(argv: list[str]) -> list[str]:
    if not argv or (argv[0] not in COMMANDS and argv[0] not in ("-h", "--help", "--version")):
        return ["run", *argv]
    return argv


def entry() -> int:
    """The console script ``review-gate``: started again isolated first when this interpreter would
    import from the working directory (``review_gate/_isolation.py``; the ``.pth`` installed beside
    the package has done so already, before ``sitecustomize``, where it is processed)."""
    from review_gate._isolation import restart_isolated

    restart_isolated(ours=True)
    return main()


def main(argv: Sequence[str] | None = None) -> int:
    _settle_process()
    args_list = _with_default_command(list(sys.argv[1:] if argv is None else argv))
    parser = build_parser(args_list[0] if args_list[0] in COMMANDS else None)  # --help, --version: all
    try:
        args = parser.parse_args(args_list)
    except SystemExit as exc:  # argparse: --help, --version (0) or a usage error (2)
        return int(exc.code or 0)
    from review_gate.errors import ReviewGateError
    from review_gate.surfaces import console

    terminated: list[int] = []
    try:
        _check_paths(args)
        with _sigterm_as_interrupt(terminated):
            return _dispatch(args)
    except ReviewGateError as exc:
        # Messages quote paths, refs and config values: escape them, keep our own line break.
        console.err(f"review-gate: error: {console.sanitize(exc.message)}"
                    + (f"\n  fix: {console.sanitize(exc.fix)}" if exc.fix else ""))
        return exc.exit_code
    except KeyboardInterrupt:
        console.err("review-gate: terminated" if terminated else "review-gate: interrupted")
        return EXIT_TERMINATED if terminated else EXIT_INTERRUPTED
    except Exception as exc:
        if _closed_pipe(exc):
            # The reader went away (`review-gate | head -1`). 141 is what a shell reports for a
            # process that SIGPIPE ends (as it ends git or grep): never 0, since the output was
            # cut short, and not 3, since nothing went wrong inside; no crash log, no more output.
            _quiet_standard_streams()
            return 141
        named = _path_argument(exc, args)
        if named is not None:  # the OS refused a path the user gave (no permission, a loop of links...)
            why = console.sanitize(str(getattr(exc, "strerror", exc)))
            console.err(f"review-gate: error: {console.sanitize(named[0])} {console.sanitize(named[1])}: {why}\n"
                        f"  fix: give {console.sanitize(named[0])} a path that can be used")
            return 2
        import traceback

        log = _crash_log(traceback.format_exc())
        where = f"details in {log}" if log else "its details could not be saved"
        with contextlib.suppress(OSError):  # stderr may be the thing that broke
            console.err(f"review-gate: internal error, nothing was decided (exit 3); {where}")
        return 3


def _settle_process() -> None:
    """What a review-gate process asks of the interpreter and of pydantic."""
    # A run builds its modules, classes and models once and keeps them all: at the collector's
    # default thresholds it walks them again and again while they load (40 ms of a 0.4 s Stop
    # hook). Reference counting frees nearly everything; the rare cycles are collected later.
    gc.set_threshold(100_000, 50, 100)
    # and the interpreter's exit walks them all again, though the process frees nothing after it
    # (35 ms): frozen, the exit's collections pass them by
    atexit.register(gc.freeze)
    # pydantic reads every installed package's entry points for its plugins when it builds its
    # first validator (12 ms a start); review-gate runs none. The user's own setting stands.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")


# The arguments that name a file or a directory, by their argparse dest, as a message names them.
PATH_ARGUMENTS = {"config": "--config", "diff": "--diff", "constitution": "--constitution", "bundle": "--bundle",
                  "baseline": "--baseline", "output": "--output", "dir": "--dir", "drafts": "--drafts",
                  "prompt": "--prompt", "file": "meta check FILE", "reports": "merge REPORT", "outputs": "--output"}
PATH_POSITIONALS = {("replay", "bundle"): "replay DIR", ("explain", "paths"): "explain PATH"}


def _given_paths(args: argparse.Namespace) -> list[tuple[str, str]]:
    """(how the argument is named, the path given) for every path argument of the command."""
    found = []
    for dest in {*PATH_ARGUMENTS, "paths"}:
        value = getattr(args, dest, None)
        name = PATH_POSITIONALS.get((args.command, dest)) or PATH_ARGUMENTS.get(dest)
        if value is None or name is None:
            continue
        if dest == "outputs":
            found += [(name, str(path)) for _, path in value if path is not None and path != "-"]
        elif isinstance(value, list):
            found += [(name, str(v)) for v in value]
        elif isinstance(value, str) and value != "-":
            found.append((name, value))
    return found


# Options whose empty value would otherwise read as not given: `--shard ""` from a CI matrix
# variable left unset reviewed everything in every job, `--base ""` the default branch.
VALUE_ARGUMENTS = {"base": "--base", "head": "--head", "since": "--since", "shard": "--shard"}


def _check_paths(args: argparse.Namespace) -> None:
    """Refuse a path the OS would refuse (too long, a NUL byte) and an empty value before
    anything reads them."""
    from review_gate.errors import UsageError
    from review_gate.pipeline.bounds import path_size

    for name, value in _given_paths(args):
        if not value:
            raise UsageError(f"{name} is empty", fix=f"give {name} a path, or leave it out")
        path_size(name, value)
    for dest, flag in VALUE_ARGUMENTS.items():
        if getattr(args, dest, None) == "":
            raise UsageError(f"{flag} is empty", fix=f"give {flag} a value, or leave it out")


def _path_argument(exc: BaseException, args: argparse.Namespace) -> tuple[str, str] | None:
    """(name, value) of the path argument an OSError is about, when it is about one."""
    if not isinstance(exc, OSError) or exc.filename is None:
        return None
    failed = os.fsdecode(exc.filename) if isinstance(exc.filename, (str, bytes, os.PathLike)) else ""
    for name, value in _given_paths(args):
        if failed == value or failed.startswith(value.rstrip("/") + "/") or os.path.abspath(failed) == \
                os.path.abspath(value):
            return name, value
    return None


def _closed_pipe(exc: BaseException) -> bool:
    """A BrokenPipeError, or a task group's exception group made of nothing else (an agent's
    progress line on a closed stderr is raised from inside dispatch's task group)."""
    if isinstance(exc, BrokenPipeError):
        return True
    inner: tuple[BaseException, ...] = getattr(exc, "exceptions", ())
    return bool(inner) and all(_closed_pipe(e) for e in inner)


def _quiet_standard_streams() -> None:
    """Point stdout and stderr at /dev/null, so that Python's flush at exit does not report the
    broken pipe again ("Exception ignored ... BrokenPipeError")."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError, AttributeError):  # a captured stream has no fd
                os.dup2(devnull, stream.fileno())
    finally:
        os.close(devnull)


def _crash_log(text: str) -> Path | None:
    """Write a traceback to a new file only this user can read: a unique name created with
    O_EXCL and O_NOFOLLOW in the user's cache directory (else a fresh temporary file), so that
    no file or link planted under a guessable /tmp name is written through."""
    import secrets
    import tempfile
    from datetime import datetime
    from pathlib import Path

    from review_gate.state.cache_dir import cache_dir

    name = f"crash-{datetime.now():%Y%m%d-%H%M%S}-{secrets.token_hex(4)}.log"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        directory = cache_dir()
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = directory / name
        fd = os.open(path, flags, 0o600)
    except OSError:
        try:
            fd, raw = tempfile.mkstemp(prefix="review-gate-crash-", suffix=".log")
        except OSError:
            return None
        path = Path(raw)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError:
        return None
    return path


@contextlib.contextmanager
def _sigterm_as_interrupt(received: list[int]) -> Iterator[None]:
    """SIGTERM (a CI cancel, ``timeout``, ``docker stop``) does what Ctrl-C does: the running
    agents are cancelled, their processes killed, the run marked failed; ``received`` notes it.

    Without this SIGTERM ended the process on the spot, leaving agents running and the run
    ``running``. The handler hands over to whatever handles SIGINT at that moment: asyncio's
    (cancel the main task, so every ``finally`` runs) inside the event loop, Python's
    KeyboardInterrupt outside it.
    """
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be set from the main thread
        return

    def on_sigterm(signum: int, frame: FrameType | None) -> None:
        received.append(signum)
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):
            handler(signal.SIGINT, frame)
        else:  # SIGINT ignored (a background job) or default: SIGTERM still interrupts
            raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


# Subcommand -> module in review_gate.surfaces.commands, imported only when that command runs.
HANDLERS = {
    "run": "run", "plan": "plan", "config": "config_cmd", "init": "init", "explain": "explain",
    "agents": "agents_cmd", "meta": "meta_cmd", "baseline": "baseline_cmd", "replay": "replay",
    "loop": "loop_cmd", "hook": "hook_cmd", "mcp": "mcp_cmd", "sweep": "sweep", "batch": "batch_cmd",
    "collect": "collect", "merge": "merge", "gaps": "gaps", "ack": "ack", "rule": "rule",
    **{name: name for name in STATE_COMMANDS},
}


def _dispatch(args: argparse.Namespace) -> int:
    from importlib import import_module

    module = import_module(f"review_gate.surfaces.commands.{HANDLERS[args.command]}")
    command: Callable[[argparse.Namespace], int] = getattr(module, f"{args.command}_command")
    return command(args)
