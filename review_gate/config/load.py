"""Reading the five config files: locate, parse JSON, check shape against the schema, build models."""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from review_gate.config.locations import builtin_dir
from review_gate.config.messages import describe, pointer, shown_errors
from review_gate.config.validate import check_references
from review_gate.errors import ConfigError, ConfigProblem, UsageError
from review_gate.models import (
    AgentsFile,
    CompositionFile,
    DomainsFile,
    GateFile,
    ReviewConfig,
    RulesFile,
)

CONFIG_FILES: dict[str, type[BaseModel]] = {
    "review-rules.json": RulesFile,
    "review-domains.json": DomainsFile,
    "review-agents.json": AgentsFile,
    "review-composition.json": CompositionFile,
    "review-gate.json": GateFile,
}


def locate_config_dir(explicit: str | None, repo_root: Path | None) -> Path | None:
    """``--config DIR``, else ``$REVIEW_GATE_CONFIG``, else ``.review-gate/``, else None (built-in)."""
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
    if repo_root is not None and (repo_root / ".review-gate").is_dir():
        return repo_root / ".review-gate"
    return None


class _NotJson(ValueError):
    pass


def _reject_constant(name: str) -> Any:
    raise _NotJson(name)


def read_json(path: Path, display: str) -> Any:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError([ConfigProblem(display, "/", f"cannot read: {exc.strerror}",
                                         "make it a readable file, or delete it to use the "
                                         "built-in one")]) from exc
    try:
        text = raw.decode("utf-8-sig")  # tolerate the byte order mark some editors write
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise ConfigError([ConfigProblem(
            display, "/", f"not UTF-8 text: byte 0x{raw[exc.start]:02x} at line {line} column {column}",
            "save the file with UTF-8 encoding")]) from exc
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise ConfigError([ConfigProblem(
            display, "/", f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}",
            "fix the JSON syntax there (a trailing comma, a missing comma or quote, or a "
            "comment are the usual causes)")]) from exc
    except _NotJson as exc:
        raise ConfigError([ConfigProblem(
            display, "/", f"invalid JSON: {exc} is not a JSON number",
            "write a finite number instead")]) from exc


@cache
def _validator(name: str) -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(CONFIG_FILES[name].model_json_schema(by_alias=True))


def parse_file(name: str, data: Any, display: str) -> BaseModel:
    """Build one file's model; when that fails, explain why with its JSON Schema.

    A valid file (the common case) never pays for building the schema and its validator. The
    model is validated strictly, so it accepts nothing its published schema rejects.
    """
    model = CONFIG_FILES[name]
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


def load_config(directory: Path | None) -> ReviewConfig:
    """Load every file from ``directory`` (missing ones from the built-in config) and check them.

    Raises ConfigError listing every problem found, each with file, pointer and fix.
    """
    builtin = builtin_dir("config")
    parsed: dict[str, BaseModel] = {}
    sources: dict[str, str] = {}
    problems: list[ConfigProblem] = []
    for name in CONFIG_FILES:
        # a broken symlink or a directory in the way is reported, not silently replaced
        given = directory / name if directory is not None else None
        if given is not None and os.path.lexists(given):
            path, display = given, str(given)
        else:
            path, display = builtin / name, f"{name} (built-in)"
        sources[name] = display
        try:
            parsed[name] = parse_file(name, read_json(path, display), display)
        except ConfigError as exc:
            problems.extend(exc.problems)
    if problems:
        raise _config_error(problems, directory)
    config = ReviewConfig(
        rules=parsed["review-rules.json"],
        domains=parsed["review-domains.json"],
        agents=parsed["review-agents.json"],
        composition=parsed["review-composition.json"],
        settings=parsed["review-gate.json"],
        directory=str(directory) if directory is not None else None,
        sources=sources,
    )
    problems = check_references(config)
    if problems:
        raise _config_error(problems, directory)
    return config


def _config_error(problems: list[ConfigProblem], directory: Path | None) -> ConfigError:
    """The error commands other than ``config validate`` print: the first problem, its fix, and
    how to see the others."""
    error = ConfigError(problems)
    if len(problems) > 1:
        more = len(problems) - 1
        where = f" --config {directory}" if directory is not None else ""
        error.message = (f"{problems[0].describe()} (and {more} more problem{'s' if more > 1 else ''}; "
                         f"list them all with `review-gate config validate{where}`)")
    return error
