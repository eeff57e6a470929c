"""Reading the five config files: locate, parse JSON, check shape against the schema, build models."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from review_gate.config.locations import builtin_dir
from review_gate.config.messages import describe, leaf_errors
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
            if not path.is_dir():
                raise UsageError(f"{origin} {given}: no such directory",
                                 fix="create it with `review-gate init`, or point to an existing one")
            return path
    if repo_root is not None and (repo_root / ".review-gate").is_dir():
        return repo_root / ".review-gate"
    return None


def read_json(path: Path, display: str) -> Any:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError([ConfigProblem(display, "/", f"cannot read: {exc.strerror}",
                                         "check the file's permissions")]) from exc
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError([ConfigProblem(display, "/", "not UTF-8 text",
                                         "save the file as UTF-8")]) from exc
    except json.JSONDecodeError as exc:
        raise ConfigError([ConfigProblem(
            display, "/", f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}",
            "fix the JSON syntax (a trailing comma or a missing quote is the usual cause)")]) from exc


def parse_file(name: str, data: Any, display: str) -> BaseModel:
    """Check one file's shape with its JSON Schema, then build its model."""
    from jsonschema import Draft202012Validator

    model = CONFIG_FILES[name]
    validator = Draft202012Validator(model.model_json_schema(by_alias=True))
    problems = [describe(display, leaf)
                for error in validator.iter_errors(data)
                for leaf in leaf_errors(error)]
    if problems:
        problems.sort(key=lambda p: p.pointer)
        raise ConfigError(problems)
    try:
        return model.model_validate(data)
    except ValidationError as exc:  # the schema and the model agree; this is a safety net
        first = exc.errors()[0]
        raise ConfigError([ConfigProblem(display, "/" + "/".join(str(p) for p in first["loc"]),
                                         first["msg"], "see the schema in schemas/")]) from exc


def load_config(directory: Path | None) -> ReviewConfig:
    """Load every file from ``directory`` (missing ones from the built-in config) and check them.

    Raises ConfigError listing every problem found, each with file, pointer and fix.
    """
    builtin = builtin_dir("config")
    parsed: dict[str, BaseModel] = {}
    sources: dict[str, str] = {}
    problems: list[ConfigProblem] = []
    for name in CONFIG_FILES:
        path = directory / name if directory is not None and (directory / name).is_file() else builtin / name
        display = str(path) if path.parent != builtin else f"{name} (built-in)"
        sources[name] = display
        try:
            parsed[name] = parse_file(name, read_json(path, display), display)
        except ConfigError as exc:
            problems.extend(exc.problems)
    if problems:
        raise ConfigError(problems)
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
        raise ConfigError(problems)
    return config
