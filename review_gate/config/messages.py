"""Turning JSON Schema errors into one line each: file, JSON pointer, message, fix."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from jsonschema.exceptions import ValidationError

from review_gate.errors import ConfigProblem


def pointer(path: Any) -> str:
    parts = [str(p).replace("~", "~0").replace("/", "~1") for p in path]
    return "/" + "/".join(parts) if parts else "/"


def leaf_errors(error: ValidationError) -> Iterator[ValidationError]:
    """Descend into a oneOf over agent kinds, into the branch of the instance's ``kind``."""
    if error.validator == "oneOf" and error.context and isinstance(error.instance, dict):
        branches: dict[Any, list[ValidationError]] = {}
        for sub in error.context:
            branches.setdefault(sub.relative_schema_path[0], []).append(sub)
        for subs in branches.values():
            if not any(s.validator == "const" and list(s.relative_path) == ["kind"] for s in subs):
                for sub in subs:
                    yield from leaf_errors(sub)
                return
    yield error


def describe(file: str, error: ValidationError) -> ConfigProblem:
    where = pointer(error.absolute_path)
    v = error.validator
    if v == "required":
        missing = str(error.message).split("'")[1] if "'" in error.message else "?"
        return ConfigProblem(file, where, f"missing required field '{missing}'",
                             f"add \"{missing}\" to this object")
    if v == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        return ConfigProblem(file, where, error.message,
                             f"remove it or fix its spelling; allowed fields: {', '.join(allowed)}")
    if v in ("enum", "const"):
        options = error.validator_value if v == "enum" else [error.validator_value]
        return ConfigProblem(file, where, f"{error.instance!r} is not allowed",
                             "use one of: " + ", ".join(repr(o) for o in options))
    if v == "oneOf" and isinstance(error.instance, dict) and "kind" in error.instance:
        kinds = sorted(error.schema.get("discriminator", {}).get("mapping", {}))
        return ConfigProblem(file, where, f"unknown agent kind {error.instance['kind']!r}",
                             "use one of: " + ", ".join(kinds))
    if v == "type":
        return ConfigProblem(file, where, error.message, f"use a value of type {error.validator_value}")
    if v in ("minLength", "minItems"):
        return ConfigProblem(file, where, "must not be empty", "give it a value")
    if v in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        return ConfigProblem(file, where, error.message, "use a value inside the allowed range")
    if v == "pattern":
        return ConfigProblem(file, where, error.message,
                             f"use letters, digits, '.', '_' or '-' (regex {error.validator_value})")
    return ConfigProblem(file, where, error.message, "see the schema in schemas/ for this file")
