"""Reading the five config files: locate, parse JSON, check shape against the schema, build models."""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from review_gate.config import snapshot
from review_gate.config.locations import builtin_dir
from review_gate.config.messages import describe, pointer, shown_errors
from review_gate.config.validate import check_references, file_problems
from review_gate.errors import ConfigError, ConfigProblem, ProblemsError, UsageError
from review_gate.models import ReviewConfig
from review_gate.models.config_values import ConfigFile

CONFIG_FILES = tuple(ReviewConfig.FILES)  # the five file names, in the order they load


def locate_config_dir(explicit: str | None, repo_root: Path | None) -> Path | None:
    """``--config DIR``, else ``$REVIEW_GATE_CONFIG``, else ``.review-gate/`` when it is a real
    directory (never a symbolic link), else None (built-in)."""
    for given, origin in ((explicit, "--config"), (os.environ.get("REVIEW_GATE_CONFIG"), "$REVIEW_GATE_CONFIG")):
        if given:
            path = Path(given)
            if path.exists() and not path.is_dir():
                raise UsageError(f"{origin} {given}: not a directory",
                                 fix="point to the directory that holds the review-*.json files")
            if not path.is_dir():
                raise UsageError(f"{origin} {given}: no such directory",
                                 fix=f"create it with `review-gate init --dir {given}`, "
                                     "or point to an existing one")
            return path
    gate = repo_root / ".review-gate" if repo_root is not None else None
    # A committed symbolic link named .review-gate is part of the change, not a configuration:
    # followed, it would make any directory of code the gate's configuration (own_files).
    if gate is not None and gate.is_dir() and not gate.is_symlink():
        return gate
    return None


class _NotJson(ValueError):
    def __init__(self, literal: str, why: str) -> None:
        super().__init__(why)
        self.literal = literal

    def line(self, text: str) -> int:
        """Where the literal first stands as a value (the JSON parser does not say)."""
        found = re.search(rf"(?<![\w.\"]){re.escape(self.literal)}(?![\w.])", text)
        return text.count("\n", 0, found.start()) + 1 if found else 0


def _reject_constant(name: str) -> Any:
    raise _NotJson(name, f"{name} is not a JSON number")


def _finite(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):  # 1e400 parses to inf, which no setting can mean
        raise _NotJson(literal, f"the number {literal[:40]} is too large to be a finite number")
    return value


def _integer(literal: str) -> int:
    if len(literal.lstrip("-")) > MAX_DIGITS:  # int() refuses 4,300 digits with a bare ValueError
        raise _NotJson(literal, f"the integer {literal[:20]}… has {len(literal)} digits")
    return int(literal)


CONFIG_LIMIT = 5 * 1024 * 1024  # bytes of one config file: far above any real one
FILE_LIMIT = 512 * 1024 * 1024  # bytes of a baseline or a bundle file, which review-gate writes itself
MAX_DIGITS = 100
_CANNOT_READ_FIX = "make it a readable file, or delete it to use the built-in one"


def read_json(path: Path, display: str, *, limit: int = FILE_LIMIT, error: type[ProblemsError] = ConfigError) -> Any:
    """Parse one JSON file; every way it can be unusable is an ``error`` naming it.

    Only a regular file of at most ``limit`` bytes is read: a FIFO would block for ever and
    ``/dev/zero`` would fill the memory. Opening does not block (O_NONBLOCK), so a FIFO swapped
    in after the check cannot hang the run either.
    """
    return parse_json(_read_regular(path, display, limit, error), display, error=error)


def parse_json(raw: bytes, display: str, *, error: type[ProblemsError] = ConfigError) -> Any:
    """``read_json`` of bytes already read."""
    try:
        text = raw.decode("utf-8-sig")  # tolerate the byte order mark some editors write
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise error([ConfigProblem(
            display, "/", f"not UTF-8 text: byte 0x{raw[exc.start]:02x} at line {line} column {column}",
            "save the file with UTF-8 encoding")]) from exc
    try:
        return json.loads(text, parse_constant=_reject_constant, parse_float=_finite, parse_int=_integer)
    except json.JSONDecodeError as exc:
        raise error([ConfigProblem(
            display, "/", f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}",
            "fix the JSON syntax there (a trailing comma, a missing comma or quote, or a "
            "comment are the usual causes)")]) from exc
    except _NotJson as exc:
        line = exc.line(text)
        raise error([ConfigProblem(
            display, "/", f"invalid JSON{f' at line {line}' if line else ''}: {exc}",
            "write a finite number of ordinary size instead")]) from exc
    except RecursionError as exc:
        raise error([ConfigProblem(
            display, "/", "JSON nested too deeply to read", "flatten the file: no setting nests that deep")]) from exc


def _read_regular(path: Path, display: str, limit: int, error: type[ProblemsError]) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise error([ConfigProblem(display, "/", f"cannot read: {exc.strerror}", _CANNOT_READ_FIX)]) from exc
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = "a directory" if stat.S_ISDIR(mode) else "a device, a FIFO or a socket"
        raise error([ConfigProblem(display, "/", f"cannot read: not a regular file ({kind})", _CANNOT_READ_FIX)])
    with os.fdopen(fd, "rb") as handle:
        try:
            raw = handle.read(limit + 1)
        except OSError as exc:
            raise error([ConfigProblem(display, "/", f"cannot read: {exc.strerror}", _CANNOT_READ_FIX)]) from exc
    if len(raw) > limit:
        raise error([ConfigProblem(display, "/", f"larger than {limit // (1024 * 1024)} MiB",
                                   "a file this size is not one review-gate wrote or reads; "
                                   "check that the path names the right file")])
    return raw


@cache
def _validator(name: str) -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(ReviewConfig.FILES[name].model.model_json_schema(by_alias=True))


def parse_file(name: str, data: Any, display: str) -> ConfigFile:
    """Build one file's model; when that fails, explain why with its JSON Schema.

    A valid file (the common case) never pays for building the schema and its validator. The
    model is validated strictly, so it accepts nothing its published schema rejects.
    """
    model = ReviewConfig.FILES[name].model
    try:
        return model.model_validate(data, strict=True)
    except ValidationError:
        pass
    validator = _validator(name)
    problems = [problem for leaf in shown_errors(validator.iter_errors(data))
                for problem in describe(display, leaf)]
    if problems:
        raise ConfigError(problems)
    try:
        return model.model_validate(data)
    except ValidationError as exc:  # the schema and the model agree; this is a safety net
        first = exc.errors()[0]
        raise ConfigError([ConfigProblem(display, pointer(first["loc"]), first["msg"],
                                         "see the published schema in schemas/ for this file")]) from exc


def load_config(directory: Path | None, *, listed_by: str | None = None,
                replaced: Mapping[str, Any] | None = None, one_pass: bool = False) -> ReviewConfig:
    """Load every file from ``directory`` (missing ones from the built-in config) and check them.

    Raises ConfigError listing every problem found, each with file, pointer and fix; its
    message names ``listed_by``, the command that lists them all, when there is more than one.
    ``replaced``: file name -> the JSON data to check in its place, as if ``directory`` held it
    (a change checked before it is written: ``config.patching``). ``one_pass`` (``config
    validate``): when files fail their schema, the cross-file checks still run, over the entries
    that passed it (a broken file's other entries, the built-in file for the settings), so one
    run lists both kinds of problem.
    """
    builtin = builtin_dir("config")
    present = _listing(directory)
    parsed: dict[str, ConfigFile] = {}
    sources: dict[str, str] = {}
    problems: list[ConfigProblem] = []
    raw: dict[str, Any] = {}
    files: dict[str, tuple[str, bytes]] = {}  # name -> (display, bytes) of the files read
    unreadable: dict[str, list[ConfigProblem]] = {}
    for name in CONFIG_FILES:
        # a broken symlink or a directory in the way is reported, not silently replaced
        if directory is not None and name in present:
            path, display = directory / name, str(directory / name)
        else:
            path, display = builtin / name, f"{name} (built-in)"
        if replaced is not None and name in replaced and directory is not None:
            display = str(directory / name)
        sources[name] = display
        if replaced is None or name not in replaced:
            try:
                files[name] = display, _read_regular(path, display, CONFIG_LIMIT, ConfigError)
            except ConfigError as exc:
                unreadable[name] = exc.problems
    # checked before, byte for byte, by this code: kept (config.snapshot); only what the files
    # name may have gone since
    held = snapshot.key(directory, files) if replaced is None and not unreadable else None
    # ``config validate`` (one pass) checks afresh, and keeps what passes for the runs after it
    if held is not None and not one_pass and (known := snapshot.read(held)) is not None:
        if problems := file_problems(known):
            raise ConfigError(problems, listed_by=listed_by)
        return known
    for name in CONFIG_FILES:
        display = sources[name]
        if name in unreadable:
            problems.extend(unreadable[name])
            continue
        try:
            data = replaced[name] if replaced is not None and name in replaced else parse_json(
                files[name][1], display)
            _characters(data, display)
            raw[name] = data  # what a one-pass check may salvage: read, and whole characters
            parsed[name] = parse_file(name, data, display)
        except ConfigError as exc:
            problems.extend(exc.problems)
        except RecursionError:  # read_json caught the deep ones; a validator must not crash on the rest
            problems.append(ConfigProblem(display, "/", "JSON nested too deeply to check",
                                          "flatten the file: no setting nests that deep"))
    if problems and one_pass:
        salvaged = {name: (parsed[name], None) if name in parsed else _salvaged(name, raw.get(name), builtin)
                    for name in CONFIG_FILES}
        config = ReviewConfig.model_validate({
            **{kind.field: salvaged[name][0] for name, kind in ReviewConfig.FILES.items()},
            "directory": str(directory) if directory is not None else None, "sources": sources})
        renumber = {sources[name]: (_ENTRIES[name], kept) for name, (_, kept) in salvaged.items() if kept is not None}
        # an entry left out for its schema problem (its id mistyped, say) may be the one others
        # name: "unknown agent" and the like are not said while an entry of that kind is left out
        unsure = {f"unknown {_KINDS[name]}" for name, (_, kept) in salvaged.items()
                  if name in _ENTRIES and name not in parsed}
        crossed = [_renumbered(p, renumber) for p in check_references(config)
                   if not p.message.startswith(tuple(unsure))]
        raise ConfigError([*problems, *crossed], listed_by=listed_by)
    if problems:
        raise ConfigError(problems, listed_by=listed_by)
    config = ReviewConfig.model_validate({
        **{kind.field: parsed[name] for name, kind in ReviewConfig.FILES.items()},
        "directory": str(directory) if directory is not None else None, "sources": sources,
    })
    problems = check_references(config)
    if problems:
        raise ConfigError(problems, listed_by=listed_by)
    if held is not None:
        snapshot.write(held, config)
    return config


_ENTRIES = {"review-rules.json": "rules", "review-domains.json": "domains", "review-agents.json": "agents",
            "review-composition.json": "policies"}
_KINDS = {"review-rules.json": "rule", "review-domains.json": "domain", "review-agents.json": "agent",
          "review-composition.json": "policy"}


def _salvaged(name: str, data: Any, builtin: Path) -> tuple[ConfigFile, list[int] | None]:
    """A file that failed its schema, as its entries that pass it, and the index each had in the
    file (the built-in file and None when it is not a list of entries at all): what the
    cross-file checks of ``config validate`` look at."""
    key = _ENTRIES.get(name)
    if key is not None and isinstance(data, dict) and isinstance(data.get(key), list):
        kept: list[int] = []
        for index, item in enumerate(data[key]):
            try:
                parse_file(name, {"version": 1, key: [item]}, name)
            except (ConfigError, RecursionError):
                continue
            kept.append(index)
        try:
            return parse_file(name, {"version": 1, key: [data[key][i] for i in kept]}, name), kept
        except ConfigError:
            pass
    return parse_file(name, read_json(builtin / name, f"{name} (built-in)", limit=CONFIG_LIMIT), name), None


def _renumbered(problem: ConfigProblem, renumber: dict[str, tuple[str, list[int]]]) -> ConfigProblem:
    """A cross-file problem found in a salvaged file, pointing at the entry's index in the file."""
    if problem.file not in renumber:
        return problem
    key, kept = renumber[problem.file]
    found = re.match(rf"^/{key}/(\d+)(/.*)?$", problem.pointer)
    if found is None or int(found.group(1)) >= len(kept):
        return problem
    where = f"/{key}/{kept[int(found.group(1))]}{found.group(2) or ''}"
    return ConfigProblem(problem.file, where, problem.message, problem.fix)


def _characters(data: Any, display: str) -> None:
    """Refuse a \\uD800-style escape that is half a surrogate pair: it is no character, and
    RE2, the terminal and every UTF-8 writer would fail on it later."""
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ConfigError([ConfigProblem(
            display, "/", f"invalid text: the escape \\u{ord(exc.object[exc.start]):04x} is half of a "
                          "surrogate pair, not a character",
            "write the character itself, or both halves of its pair")]) from exc


def _listing(directory: Path | None) -> set[str]:
    """The names in the config directory. A directory that cannot be listed is an error: taking
    every file from the built-in config instead would judge the change by the wrong rules."""
    if directory is None:
        return set()
    try:
        return set(os.listdir(directory))
    except OSError as exc:
        raise ConfigError([ConfigProblem(str(directory), "/", f"cannot read the config directory: {exc.strerror}",
                                         "make the directory readable (and searchable) by this user")]) from exc
