"""Turning JSON Schema errors into problems: file, JSON pointer, what is wrong, and the fix.

Each problem reads as two lines::

    review-rules.json: /rules/3/severity: 'high' is not a valid severity
      fix: use one of: 'critical', 'major', 'warning', 'info'

Values from the file go through ``show``, so control characters in a hostile config are
escaped rather than sent to the terminal.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

from review_gate.errors import ConfigProblem
from review_gate.escape import sanitize

_JSON_TYPES = {
    "string": "a string", "integer": "an integer", "number": "a number", "boolean": "true or false",
    "array": "a list", "object": "an object", "null": "null",
}
_ID_FIX = ("use letters, digits, '.', '_' and '-', starting with a letter or a digit "
           "(at most 100 characters)")


def pointer(path: Iterable[Any]) -> str:
    """RFC 6901 JSON pointer, for display (control characters in keys escaped); the whole
    document is ``/``."""
    parts = [sanitize(str(p)).replace("~", "~0").replace("/", "~1") for p in path]
    return "/" + "/".join(parts) if parts else "/"


def show(value: Any, limit: int = 60) -> str:
    """A value from the file, shortened, with control characters escaped: strings quoted as the
    rest of review-gate quotes them (``'python'``), anything else as JSON (``true``, ``[1]``)."""
    text = repr(value) if isinstance(value, str) else json.dumps(value, ensure_ascii=True, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def quoted(options: Iterable[Any]) -> str:
    return ", ".join(show(o) for o in options)


def suggest(value: Any, options: Sequence[str]) -> str:
    """``did you mean "x"? `` when ``value`` is a near miss of one of ``options``, else ``""``."""
    if not isinstance(value, str):
        return ""
    close = difflib.get_close_matches(value, list(options), n=1, cutoff=0.6)
    if not close:
        close = [o for o in options if o.lower() == value.lower()]
    return f"did you mean {show(close[0])}? " if close else ""


def path_key(error: ValidationError) -> tuple[tuple[int, int | str], ...]:
    """Sort key putting errors in document order (``/rules/2`` before ``/rules/10``)."""
    return tuple((0, p) if isinstance(p, int) else (1, str(p)) for p in error.absolute_path)


def shown_errors(errors: Iterable[ValidationError]) -> list[ValidationError]:
    """The leaf errors to report, in document order, one cause per value.

    A value of the wrong type also fails its enum or const (``"version": "1"``); only the type
    error is shown, since fixing it is what the user has to do.
    """
    leaves = sorted((leaf for error in errors for leaf in leaf_errors(error)), key=path_key)
    mistyped = {tuple(e.absolute_path) for e in leaves if e.validator in ("type", "anyOf")}
    return [e for e in leaves
            if not (e.validator in ("enum", "const") and tuple(e.absolute_path) in mistyped)]


def _branches(error: ValidationError) -> dict[Any, list[ValidationError]]:
    branches: dict[Any, list[ValidationError]] = {}
    for sub in error.context or ():
        branches.setdefault(sub.relative_schema_path[0], []).append(sub)
    return branches


def leaf_errors(error: ValidationError) -> Iterator[ValidationError]:
    """The errors worth showing under a oneOf/anyOf.

    oneOf over agent kinds: the errors of the branch the instance's ``kind`` selects (none
    selected: the oneOf itself, reported as an unknown or missing kind). anyOf such as
    ``number | null``: the errors of the one branch whose type matched (none: the anyOf itself,
    reported as a type mismatch).
    """
    if error.validator == "oneOf" and isinstance(error.instance, dict) and error.context:
        prop = error.schema.get("discriminator", {}).get("propertyName")
        if prop is not None and prop in error.instance:
            for subs in _branches(error).values():
                if not any(s.validator == "const" and list(s.relative_path) == [prop] for s in subs):
                    for sub in subs:
                        yield from leaf_errors(sub)
                    return
    elif error.validator == "anyOf" and error.context:
        matching = [subs for subs in _branches(error).values()
                    if not any(s.validator == "type" and not s.relative_path for s in subs)]
        if len(matching) == 1:
            for sub in matching[0]:
                yield from leaf_errors(sub)
            return
    yield error


def _type_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f"the string {show(value)}"
    if isinstance(value, int):
        return f"the integer {value}"
    if isinstance(value, float):
        return f"the number {show(value)}"
    if isinstance(value, list):
        return "a list"
    return "an object"


def _expected(types: Any) -> str:
    names = [types] if isinstance(types, str) else list(types)
    return " or ".join(_JSON_TYPES.get(t, t) for t in names)


def _looks_like(value: Any, types: Any) -> bool:
    """A quoted number or boolean where a number or boolean belongs."""
    names = [types] if isinstance(types, str) else list(types)
    if not isinstance(value, str):
        return False
    if "boolean" in names and value.strip().lower() in ("true", "false"):
        return True
    if {"integer", "number"} & set(names):
        try:
            float(value)
        except ValueError:
            return False
        return True
    return False


def _range(schema: dict[str, Any]) -> str:
    low = (f"at least {schema['minimum']}" if "minimum" in schema
           else f"more than {schema['exclusiveMinimum']}" if "exclusiveMinimum" in schema else "")
    high = (f"at most {schema['maximum']}" if "maximum" in schema
            else f"less than {schema['exclusiveMaximum']}" if "exclusiveMaximum" in schema else "")
    if "minimum" in schema and "maximum" in schema:
        return f"from {schema['minimum']} to {schema['maximum']}"
    return " and ".join(p for p in (low, high) if p)


def _what(schema: dict[str, Any]) -> str:
    """A short description of what a property schema accepts, for 'add "x": ...' fixes."""
    if "enum" in schema:
        return "one of " + quoted(schema["enum"])
    if "const" in schema:
        return show(schema["const"])
    if schema.get("type") == "array" and "type" in schema.get("items", {}):
        return f"a list of {_expected(schema['items']['type']).removeprefix('a ').removeprefix('an ')}s"
    if "type" in schema:
        return _expected(schema["type"])
    if "$ref" in schema:
        return "an object"
    return "a value"


def _name(path: Sequence[Any]) -> str:
    """The field a value belongs to: the last key, skipping list indexes."""
    for part in reversed(path):
        if isinstance(part, str):
            return part
    return "value"


_SECRET_FIELD = re.compile(r"(^|_)(api_?key|key|token|secret|password)s?$", re.IGNORECASE)


def base_url_problem(url: str) -> str:
    """What is wrong with a base_url, without repeating any of it."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return "base_url is not a valid URL"
    if parts.scheme not in ("http", "https"):
        return "base_url must start with http:// or https://"
    if "@" in parts.netloc:
        return "base_url holds a user name or password (user:password@host); it is not shown here"
    if parts.query:
        return "base_url has a query string, where a key may be; it is not shown here"
    if parts.fragment or "#" in url:
        return "base_url has a fragment (#...); it is not shown here"
    return "base_url must be an http(s) URL with a host and an optional path, and no spaces"


def describe(file: str, error: ValidationError) -> list[ConfigProblem]:
    """One problem per thing to fix (an object with two unknown fields gives two)."""
    path = list(error.absolute_path)
    where = pointer(path)
    v = error.validator
    value = error.instance
    schema: dict[str, Any] = error.schema if isinstance(error.schema, dict) else {}

    def problem(message: str, fix: str, at: str = where) -> list[ConfigProblem]:
        return [ConfigProblem(file, at, message, fix)]

    if v == "required" and isinstance(value, dict):
        missing = next((p for p in error.validator_value
                        if p not in value and repr(p) in error.message), "?")
        wanted = _what(schema.get("properties", {}).get(missing, {}))
        return problem(f"missing required field {show(missing)}", f"add {show(missing)} ({wanted})")

    if v == "additionalProperties" and isinstance(value, dict):
        allowed = sorted(schema.get("properties", {}))
        secrets = [k for k in value if k not in allowed and _SECRET_FIELD.search(str(k))]
        if secrets:
            return [ConfigProblem(file, pointer([*path, extra]),
                                  f"field {show(extra)} looks like a credential; API keys are never read "
                                  "from config files, only from the environment",
                                  "remove it from the file and put the variable's name in \"api_key_env\" "
                                  '(e.g. "api_key_env": "OPENAI_API_KEY"); set the key in the environment')
                    for extra in secrets]
        return [
            ConfigProblem(file, pointer([*path, extra]), f"unknown field {show(extra)}",
                          f"{suggest(extra, allowed) or 'remove it or fix its spelling; '}"
                          f"allowed fields: {', '.join(allowed)}")
            for extra in value if extra not in allowed
        ]

    if v == "oneOf" and isinstance(value, dict) and "discriminator" in schema:
        prop = schema["discriminator"].get("propertyName", "kind")
        kinds = sorted(schema["discriminator"].get("mapping", {}))
        if prop not in value:
            return problem(f"missing required field {show(prop)}", f"add {show(prop)}: one of {quoted(kinds)}")
        kind = value[prop]
        at = pointer([*path, prop])
        return problem(f"unknown agent kind {show(kind)}: this version has {quoted(kinds)}",
                       f"{suggest(kind, kinds)}use one of: {quoted(kinds)}", at)

    if v == "anyOf":
        types = [branch["type"] for branch in schema.get("anyOf", []) if "type" in branch]
        if types:
            return problem(f"expected {_expected(types)}, got {_type_of(value)}",
                           f"use {_expected(types)}")

    if v == "type" and not path and error.validator_value == "object":
        keys = [k for k in schema.get("required", []) if k != "version"]
        body = ", ".join(f'"{k}": [...]' for k in keys)
        return problem(f"expected an object, got {_type_of(value)}",
                       f'make the whole file one object: {{"version": 1, {body}}}')

    if v == "type":
        hint = " (without quotes)" if _looks_like(value, error.validator_value) else ""
        return problem(f"expected {_expected(error.validator_value)}, got {_type_of(value)}",
                       f"use {_expected(error.validator_value)}{hint}")

    if v == "const" and path == ["version"]:
        return problem(f"version {show(value)} is not supported: this review-gate reads version "
                       f"{show(error.validator_value)} files",
                       f"set \"version\": {show(error.validator_value)}, or upgrade review-gate "
                       "if the file was written for a newer one")

    if v in ("enum", "const"):
        options = list(error.validator_value) if v == "enum" else [error.validator_value]
        strings = [o for o in options if isinstance(o, str)]
        return problem(f"{show(value)} is not a valid {_name(path)}",
                       f"{suggest(value, strings)}use one of: {quoted(options)}")

    if v in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        allowed_range = _range(schema)
        return problem(f"{show(value)} is out of range: {_name(path)} must be {allowed_range}",
                       f"use a value {allowed_range}")

    if v == "minLength":
        fix = ("say in a sentence what this entry is for" if _name(path) == "description"
               else f"give {_name(path)} a value")
        return problem(f"{_name(path)} must not be empty", fix)

    if v == "minItems":
        count = error.validator_value
        if count == 1:
            return problem(f"{_name(path)} must list at least one entry", "add an entry to the list")
        return problem(f"{_name(path)} must list at least {count} entries", "add entries to the list")

    if v == "maxLength" and isinstance(value, str):
        return problem(f"{_name(path)} is {len(value)} characters long; the limit is {error.validator_value}",
                       "shorten it")

    if v == "pattern" and _name(path) in ("id", "agent", "dispatch", "domains", "gap_detector"):
        return problem(f"{show(value)} is not a valid id", _ID_FIX)

    if v == "pattern" and _name(path) == "base_url" and isinstance(value, str):
        return problem(base_url_problem(value),  # never the value: it may carry a password or a key
                       'give only the API root, e.g. "https://api.openai.com/v1"; put the key in the '
                       'environment variable that "api_key_env" names')

    if v == "pattern" and _name(path) == "state_path":
        return problem("state_path contains a NUL character, which no file name can hold",
                       "remove it from the path")

    if v == "pattern":
        return problem(f"{show(value)} does not match {error.validator_value}",
                       "see the published schema in schemas/ for this file")

    return problem(error.message, "see the published schema in schemas/ for this file")
