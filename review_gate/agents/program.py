"""What a command agent runs, and whose copy of it: the configuration's, never the change's.

A configuration from outside the working tree (``--config DIR``, the Action's
``config-from-base`` copy of the base branch's ``.review-gate/``) is trusted because the change
under review cannot edit it. A command agent that names a program or a script of the working
tree would undo that: the pull request rewrites ``.review-gate/lint.py`` to print nothing, and
the gate runs the rewrite, with the job's secrets in its environment. So with such a
configuration (``resolve``):

- an argv word that names a path under the repository's ``.review-gate/`` (``.review-gate/lint.py``
  with ``cwd: repo``, the form the docs use) is the configuration's own file: it resolves against
  the configuration directory (``DIR/lint.py``), never the working tree;
- the program (argv[0], or the script an interpreter runs) must not come from the working tree:
  a relative path with ``cwd: repo`` (``tools/lint.py``), an absolute path inside the repository,
  a ``..`` out of the configuration directory into it, a name PATH finds inside it, Python's
  ``-m``/``-c`` with the repository as the working directory (which puts it first on the module
  path) unless ``-P`` or ``-I`` keeps it off, or inline shell code that names ``.review-gate/``
  is refused (``Refused``; ``check`` turns every refusal into a config error before any agent runs).

``fingerprint`` is what a review pair's freshness adds for a command agent: the bytes of the
program and of the script it runs, and the environment variables that steer interpreters and
loaders, so editing the program (or running it with another PYTHONPATH) reviews again.

What a program does by itself is beyond this check: a linter that loads plugins or a config file
from the working tree, ``npx`` resolving ``node_modules``, a script that runs another program of
the repository. Run such tools with ``cwd: config`` or give them their plugins from the
configuration directory (docs/security.md).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from review_gate.change.input_files import regular_sha256
from review_gate.change.own_files import GATE_DIRECTORY, relative
from review_gate.errors import ConfigError, ConfigProblem
from review_gate.models import CommandAgent, ReviewConfig
from review_gate.text.interpreters import INTERPRETER

AGENTS_FILE = "review-agents.json"
# Interpreters whose first argument that is not an option is the script they run.
_INTERPRETER = INTERPRETER
_PYTHON = re.compile(r"(?:python|pypy)[0-9.]*")
_INLINE = {"-c", "-e", "-E", "--eval", "-p", "--print", "--command"}  # options whose value is code
_CLUSTER_INLINE = re.compile(r"-[A-Za-z]*[ceE]")
_VALUED = {"-W", "-X", "-o", "+o", "-r", "--require", "--import", "-I", "-M", "--check-hash-based-pycs"}
# The environment that decides which code an interpreter or the loader runs (freshness, not a refusal).
STEERING_ENV = ("PATH", "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONSAFEPATH", "NODE_OPTIONS", "NODE_PATH",
                "LD_PRELOAD", "LD_LIBRARY_PATH", "DYLD_INSERT_LIBRARIES", "PERL5LIB", "PERL5OPT", "RUBYLIB",
                "RUBYOPT", "BASH_ENV", "ENV")


class Refused(Exception):
    """An argv word that would run the change's copy of a program: where (the word's index) and why."""

    def __init__(self, index: int, message: str, fix: str) -> None:
        super().__init__(message)
        self.index = index
        self.message = message
        self.fix = fix


@dataclass(frozen=True)
class Program:
    """An agent's argv as it runs, and the files whose bytes decide what runs (program, script)."""

    argv: list[str]
    files: tuple[str, ...]


def outside(config_dir: str | None, root: str | Path | None) -> bool:
    """Whether the configuration comes from outside the working tree (the change cannot edit it)."""
    return root is not None and config_dir is not None and relative(config_dir, Path(root)) is None


def resolve(spec: CommandAgent, *, root: str | None, config_dir: str | None) -> Program:
    """``spec``'s argv as it runs (words naming ``.review-gate/`` rewritten to the configuration's
    copy when the configuration is from outside the working tree) and the files it runs.
    Refused when a configuration from outside would run a program of the working tree."""
    cwd = Path(root or ".") if spec.cwd == "repo" else Path(config_dir or ".")
    guarded = outside(config_dir, root)
    argv = [_own(word, index, spec, config_dir) if guarded else word for index, word in enumerate(spec.command)]
    program_at = 0
    if Path(argv[0]).name == "env":  # env VAR=value ... PROGRAM: both env and the program run
        program_at = 1
        while program_at < len(argv) - 1 and ("=" in argv[program_at] or argv[program_at].startswith("-")):
            program_at += 1
    files: list[str] = []
    for at in sorted({0, program_at}):
        found = _program_file(argv[at], cwd)
        if guarded and root is not None:
            _refuse_from_tree(at, argv[at], found, Path(root))
        if found is not None:
            files.append(found)
    program = argv[program_at]
    if _INTERPRETER.fullmatch(Path(program).name):
        script_at = _script(argv, program_at, spec, guarded, Path(program).name)
        if script_at is not None:
            script = argv[script_at]
            path = script if os.path.isabs(script) else os.path.join(cwd, script)
            if guarded and root is not None:
                _refuse_from_tree(script_at, script, path, Path(root), script=True)
            files.append(os.path.abspath(path))
    return Program(argv=argv, files=tuple(files))


def check(config: ReviewConfig, root: Path | None) -> None:
    """Every enabled command agent runs only what its configuration holds (``resolve``): a
    ConfigError naming each agent that would run the change's copy of a program, before any runs."""
    if not outside(config.directory, root):
        return
    problems = []
    for number, agent in enumerate(config.agents.agents):
        if not isinstance(agent, CommandAgent) or not agent.enabled:
            continue
        try:
            resolve(agent, root=str(root), config_dir=config.directory)
        except Refused as refused:
            problems.append(ConfigProblem(f"{Path(config.directory or '.') / AGENTS_FILE}",
                                          f"/agents/{number}/command/{refused.index}",
                                          f"agent {agent.id!r}: {refused.message}", refused.fix))
    if problems:
        raise ConfigError(problems)


def fingerprint(spec: CommandAgent, *, root: str | None, config_dir: str | None) -> str:
    """What a command agent runs, for its freshness key: the bytes of its program and script
    (hashed in pieces) and the environment that steers interpreters; "" parts for what is missing."""
    try:
        program = resolve(spec, root=root, config_dir=config_dir)
    except Refused as refused:
        return "refused:" + refused.message
    parts = [f"{path}\0{_file_sha(path)}" for path in program.files]
    parts += [f"{name}={os.environ.get(name, '')}" for name in STEERING_ENV]
    return hashlib.sha256("\n".join([*program.argv, "", *parts]).encode("utf-8", "surrogateescape")).hexdigest()


_SHAS: dict[tuple[int, int, int, int, int], str] = {}  # (dev, inode, size, mtime, ctime) -> SHA-256


def _file_sha(path: str) -> str:
    """The file's SHA-256, hashed once per version of it in this process (an interpreter of many
    megabytes is hashed once, not once per agent and run). ctime is in the key: it changes with
    every write and, unlike mtime, cannot be set back."""
    try:
        info = os.stat(path)
    except OSError:
        return ""
    key = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    if key not in _SHAS:
        if len(_SHAS) > 1000:
            _SHAS.clear()
        _SHAS[key] = regular_sha256(path) or ""
    return _SHAS[key]


def _own(word: str, index: int, spec: CommandAgent, config_dir: str | None) -> str:
    """``word`` (or the value of ``--opt=word``), when it names the repository's ``.review-gate/``
    relative to the repository root, as the path of the configuration's own copy."""
    if spec.cwd != "repo" or config_dir is None:
        return word
    option, equals, value = word.partition("=") if word.startswith("-") else ("", "", word)
    parts = [p for p in value.replace("\\", "/").split("/") if p not in ("", ".")]
    if value.startswith("/") or len(parts) < 2 or parts[0] != GATE_DIRECTORY or ".." in parts:
        return word
    own = os.path.join(config_dir, *parts[1:])
    if not os.path.lexists(own):
        raise Refused(index, f"names {value}, which the configuration in use ({config_dir}) does not hold: the "
                             "working tree's copy is the change's, and would run in its place",
                      f"put {'/'.join(parts[1:])} in {config_dir}, or name a program installed outside the "
                      "repository")
    return f"{option}{equals}{own}" if equals else own


def _program_file(program: str, cwd: Path) -> str | None:
    """The file argv[0] runs: a path as given (relative to the agent's directory), else PATH's."""
    if os.sep in program or (os.altsep and os.altsep in program):
        return os.path.abspath(program if os.path.isabs(program) else os.path.join(cwd, program))
    found = shutil.which(program, path=os.environ.get("PATH", os.defpath))
    if found is None:
        return None
    return os.path.abspath(found if os.path.isabs(found) else os.path.join(cwd, found))


def _refuse_from_tree(index: int, word: str, path: str | None, root: Path, *, script: bool = False) -> None:
    what = "script" if script else "program"
    fix = (f"keep the {what} in the configuration directory and name it there (.review-gate/NAME with cwd: repo, "
           "or NAME with cwd: config), or use one installed outside the repository")
    if path is None:
        return
    if relative(path, root) is not None:
        raise Refused(index, f"its {what} {word} is in the working tree, which the change under review can "
                             "rewrite; a configuration from outside the working tree runs only what it holds", fix)


def _script(argv: list[str], program_at: int, spec: CommandAgent, guarded: bool, name: str) -> int | None:
    """The index of the script an interpreter runs (its first argument that is no option);
    None for inline code or a module. Refused: Python's -m or -c in the repository (the
    working tree first on the module path), inline code that names ``.review-gate/``."""
    python = bool(_PYTHON.fullmatch(name))
    safe_path = False
    index = program_at + 1
    while index < len(argv):
        word = argv[index]
        if word == "--":
            return index + 1 if index + 1 < len(argv) else None
        if not word.startswith(("-", "+")) or word == "-":
            return index if word != "-" else None
        if python and not word.startswith("--"):
            letters = word[1:]
            for at, letter in enumerate(letters):
                if letter in "PI":  # -P: no unsafe path first on sys.path; -I: isolated (implies it)
                    safe_path = True
                elif letter in "cm":
                    if guarded and spec.cwd == "repo" and not safe_path:
                        how = "-m MODULE" if letter == "m" else "-c CODE"
                        raise Refused(index, f"python {how} runs with the repository as its working directory, "
                                             "which puts the working tree (the change) first on the module path",
                                      "add -P (Python 3.11+) or -I before it, or set cwd: config")
                    if letter == "c":
                        _inline(argv, index, letters[at + 1:], spec, guarded)
                    return None
                elif letter in "WX":
                    index += 0 if letters[at + 1:] else 1  # its value is the next word
                    break
            index += 1
            continue
        if word in _INLINE or _CLUSTER_INLINE.fullmatch(word):  # -c CODE, or bash -lc CODE, perl -ne CODE
            _inline(argv, index, "", spec, guarded)
            return None
        index += 2 if word in _VALUED else 1
    return None


def _inline(argv: list[str], index: int, attached: str, spec: CommandAgent, guarded: bool) -> None:
    code = attached or (argv[index + 1] if index + 1 < len(argv) else "")
    if guarded and spec.cwd == "repo" and GATE_DIRECTORY + "/" in code:
        raise Refused(index, f"its inline code names {GATE_DIRECTORY}/, which in the working tree is the change's "
                             "copy", f"name the script as an argv word of its own ({GATE_DIRECTORY}/NAME), "
                                     "which resolves against the configuration directory")


__all__ = ["STEERING_ENV", "Program", "Refused", "check", "fingerprint", "outside", "resolve"]
