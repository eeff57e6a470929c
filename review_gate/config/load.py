"""Reading the five config files: locate, parse JSON, check shape against the schema, build models."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from review_gate.config import layers, snapshot
from review_gate.config.json_files import CONFIG_LIMIT, parse_json, read_json, read_regular
from review_gate.config.layers import Layer
from review_gate.config.locations import builtin_dir
from review_gate.config.messages import describe, pointer, shown_errors
from review_gate.config.validate import check_references, file_problems
from review_gate.errors import ConfigError, ConfigProblem, UsageError
from review_gate.models import ReviewConfig
from review_gate.models.config_values import ConfigFile

CONFIG_FILES = tuple(ReviewConfig.FILES)  # the five file names, in the order they load
SETTINGS = CONFIG_FILES[-1]
RULES = CONFIG_FILES[0]


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
    if directory is not None and (top := _overlay(directory, present, replaced)) is not None:
        return layered_load(directory, top, listed_by=listed_by, one_pass=one_pass, cache=replaced is None)
    sources: dict[str, str] = {}
    problems: list[ConfigProblem] = []
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
                files[name] = display, read_regular(path, display, CONFIG_LIMIT, ConfigError)
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
    datas: dict[str, Any] = {}
    for name in CONFIG_FILES:
        display = sources[name]
        if name in unreadable:
            problems.extend(unreadable[name])
            continue
        try:
            datas[name] = replaced[name] if replaced is not None and name in replaced else parse_json(
                files[name][1], display)
        except ConfigError as exc:
            problems.extend(exc.problems)
    return _built(datas, problems, sources, directory, held=held, listed_by=listed_by, one_pass=one_pass)


def _built(datas: Mapping[str, Any], problems: list[ConfigProblem], sources: dict[str, str], directory: Path | None,
           *, held: str | None, listed_by: str | None, one_pass: bool,
           placed: Callable[[str, ConfigProblem], ConfigProblem] = lambda _name, problem: problem) -> ReviewConfig:
    """The configuration the files' ``datas`` make, checked: every schema problem, then (all files
    well formed, or ``one_pass``) every cross-file one; kept under ``held`` when it passes.
    ``placed``: a problem moved to where its cause is written (a layer's file)."""
    builtin = builtin_dir("config")
    parsed: dict[str, ConfigFile] = {}
    raw: dict[str, Any] = {}
    for name, data in datas.items():
        display = sources[name]
        try:
            _characters(data, display)
            raw[name] = data  # what a one-pass check may salvage: read, and whole characters
            parsed[name] = parse_file(name, data, display)
        except ConfigError as exc:
            problems.extend(placed(name, p) for p in exc.problems)
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
        crossed = [_placed_anywhere(_renumbered(p, renumber), sources, placed) for p in check_references(config)
                   if not p.message.startswith(tuple(unsure))]
        left_out = [placed(RULES, p) for p in _left_out_patterns(raw.get(RULES), salvaged[RULES][1], sources[RULES])]
        raise ConfigError([*problems, *crossed, *left_out], listed_by=listed_by)
    if problems:
        raise ConfigError(problems, listed_by=listed_by)
    config = ReviewConfig.model_validate({
        **{kind.field: parsed[name] for name, kind in ReviewConfig.FILES.items()},
        "directory": str(directory) if directory is not None else None, "sources": sources,
    })
    problems = [_placed_anywhere(p, sources, placed) for p in check_references(config)]
    if problems:
        raise ConfigError(problems, listed_by=listed_by)
    if held is not None:
        snapshot.write(held, config)
    return config


def _placed_anywhere(problem: ConfigProblem, sources: dict[str, str],
                     placed: Callable[[str, ConfigProblem], ConfigProblem]) -> ConfigProblem:
    name = next((n for n, shown in sources.items() if shown == problem.file), None)
    return placed(name, problem) if name is not None else problem


def _overlay(directory: Path, present: set[str], replaced: Mapping[str, Any] | None) -> Layer | None:
    """The configuration in ``directory`` as a layer when its review-gate.json names ``extends``;
    None for a full copy (or a review-gate.json that cannot be read: the usual checks say why)."""
    if replaced is not None and SETTINGS in replaced:
        settings = replaced[SETTINGS]
    elif SETTINGS in present:
        try:
            settings = parse_json(read_regular(directory / SETTINGS, str(directory / SETTINGS), CONFIG_LIMIT,
                                                ConfigError), str(directory / SETTINGS))
        except ConfigError:
            return None
    else:
        return None
    if not layers.declared(settings):
        return None
    return layers.read_layer(directory, str(directory), _read, _parsed, present, replaced)


def layered_load(directory: Path, top: Layer, *, listed_by: str | None, one_pass: bool, cache: bool) -> ReviewConfig:
    """The configuration of the overlay ``top`` on the layers it extends (``config.layers``),
    checked as one configuration; each problem names the layer's file that causes it."""
    stack = layers.stack(top, _read, _parsed, _builtin_layer())
    files = {f"{index}\0{name}": (each.display(name), data)
             for index, each in enumerate(stack) for name, data in each.raw.items()}
    held = snapshot.key(directory, files) if cache else None
    if held is not None and not one_pass and (known := snapshot.read(held)) is not None:
        if problems := file_problems(known):
            raise ConfigError(problems, listed_by=listed_by)
        return known
    merged, origins, problems = layers.merge(stack)
    sources = {name: str(directory / name) for name in CONFIG_FILES}
    return _built(merged, problems, sources, directory, held=held, listed_by=listed_by, one_pass=one_pass,
                  placed=lambda name, problem: layers.placed(problem, name, sources[name], origins))


def origins(directory: Path | None) -> tuple[list[Layer], layers.Origins]:
    """The layers of the configuration in ``directory`` (base first: the built-in one, then the
    presets and the directory; a full copy is one layer that replaces the files it holds) and
    where each entry and setting of it came from."""
    stack = [_builtin_layer()]
    if directory is not None:
        present = _listing(directory)
        top = _overlay(directory, present, None)
        if top is not None:
            stack = layers.stack(top, _read, _parsed, _builtin_layer())
        else:
            stack.append(layers.read_layer(directory, str(directory), _read, _parsed, present))
    return stack, layers.merge(stack)[1]


def _read(path: Path, display: str) -> bytes:
    return read_regular(path, display, CONFIG_LIMIT, ConfigError)


def _parsed(raw: bytes, display: str) -> Any:
    data = parse_json(raw, display)
    _characters(data, display)
    return data


@cache
def _builtin_layer() -> Layer:
    folder = builtin_dir("config")
    shown = {name: f"{name} (built-in)" for name in CONFIG_FILES}
    raw = {name: _read(folder / name, shown[name]) for name in CONFIG_FILES}
    return Layer("built-in", None, False, {name: _parsed(raw[name], shown[name]) for name in CONFIG_FILES}, raw)


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


def _left_out_patterns(data: Any, kept: list[int] | None, display: str) -> list[ConfigProblem]:
    """The RE2 problems of the rules a one-pass check left out for a schema problem (a bad
    severity): said in the same pass, not after that problem is fixed."""
    if kept is None or not isinstance(data, dict) or not isinstance(data.get("rules"), list):
        return []
    from review_gate.config.validate import pattern_problem
    from review_gate.text.regex import PatternError, compile_pattern

    found = []
    for index, rule in enumerate(data["rules"]):
        if index in kept or not isinstance(rule, dict) or not isinstance(rule.get("pattern"), str):
            continue
        try:
            compile_pattern(rule["pattern"])
        except PatternError as exc:
            message, fix = pattern_problem(exc)
            found.append(ConfigProblem(display, f"/rules/{index}/pattern", f"{message} (rule {rule.get('id')!r})", fix))
    return found


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


# read_json and CONFIG_LIMIT are the readers' names since before json_files.py held them
__all__ = ["CONFIG_FILES", "CONFIG_LIMIT", "layered_load", "load_config", "locate_config_dir",
           "origins", "parse_file", "parse_json", "read_json"]
