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
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError

from review_gate.errors import ConfigProblem
from review_gate.text.escape import sanitize

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


_SCHEMA_FIX = "see the published schema in schemas/ for this file"


class _Failed:
    """One failing schema check, and how to turn it into a problem of the file."""

    def __init__(self, file: str, error: ValidationError) -> None:
        self.file = file
        self.error = error
        self.path = list(error.absolute_path)
        self.where = pointer(self.path)
        self.value = error.instance
        self.schema: dict[str, Any] = error.schema if isinstance(error.schema, dict) else {}
        self.name = _name(self.path)

    def problem(self, message: str, fix: str, at: str | None = None) -> list[ConfigProblem]:
        return [ConfigProblem(self.file, self.where if at is None else at, message, fix)]


_Explain = Callable[[_Failed], "list[ConfigProblem] | None"]


def describe(file: str, error: ValidationError) -> list[ConfigProblem]:
    """One problem per thing to fix (an object with two unknown fields gives two): the first
    explanation the failing check (``required``, ``type``, ``pattern``...) has for it."""
    failed = _Failed(file, error)
    for explain in _EXPLAIN.get(str(error.validator), ()):
        found = explain(failed)
        if found is not None:
            return found
    return failed.problem(error.message, _SCHEMA_FIX)


def _required(f: _Failed) -> list[ConfigProblem] | None:
    if not isinstance(f.value, dict):
        return None
    missing = next((p for p in f.error.validator_value if p not in f.value and repr(p) in f.error.message), "?")
    wanted = _what(f.schema.get("properties", {}).get(missing, {}))
    return f.problem(f"missing required field {show(missing)}", f"add {show(missing)} ({wanted})")


def _unknown_fields(f: _Failed) -> list[ConfigProblem] | None:
    if not isinstance(f.value, dict):
        return None
    allowed = sorted(f.schema.get("properties", {}))
    secrets = [k for k in f.value if k not in allowed and _SECRET_FIELD.search(str(k))]
    if secrets:
        return [ConfigProblem(f.file, pointer([*f.path, extra]),
                              f"field {show(extra)} looks like a credential; API keys are never read "
                              "from config files, only from the environment",
                              "remove it from the file and put the variable's name in \"api_key_env\" "
                              '(e.g. "api_key_env": "OPENAI_API_KEY"); set the key in the environment')
                for extra in secrets]
    return [
        ConfigProblem(f.file, pointer([*f.path, extra]), f"unknown field {show(extra)}",
                      f"{suggest(extra, allowed) or 'remove it or fix its spelling; '}"
                      f"allowed fields: {', '.join(allowed)}")
        for extra in f.value if extra not in allowed
    ]


def _agent_kind(f: _Failed) -> list[ConfigProblem] | None:
    if not isinstance(f.value, dict) or "discriminator" not in f.schema:
        return None
    prop = f.schema["discriminator"].get("propertyName", "kind")
    kinds = sorted(f.schema["discriminator"].get("mapping", {}))
    if prop not in f.value:
        return f.problem(f"missing required field {show(prop)}", f"add {show(prop)}: one of {quoted(kinds)}")
    kind = f.value[prop]
    return f.problem(f"unknown agent kind {show(kind)}: this version has {quoted(kinds)}",
                     f"{suggest(kind, kinds)}use one of: {quoted(kinds)}", pointer([*f.path, prop]))


def _any_type(f: _Failed) -> list[ConfigProblem] | None:
    types = [branch["type"] for branch in f.schema.get("anyOf", []) if "type" in branch]
    if not types:
        return None
    return f.problem(f"expected {_expected(types)}, got {_type_of(f.value)}", f"use {_expected(types)}")


def _not_an_object(f: _Failed) -> list[ConfigProblem] | None:
    if f.path or f.error.validator_value != "object":
        return None
    keys = [k for k in f.schema.get("required", []) if k != "version"]
    body = ", ".join(f'"{k}": [...]' for k in keys)
    return f.problem(f"expected an object, got {_type_of(f.value)}",
                     f'make the whole file one object: {{"version": 1, {body}}}')


def _wrong_type(f: _Failed) -> list[ConfigProblem] | None:
    expected = f.error.validator_value
    hint = " (without quotes)" if _looks_like(f.value, expected) else ""
    return f.problem(f"expected {_expected(expected)}, got {_type_of(f.value)}", f"use {_expected(expected)}{hint}")


def _version(f: _Failed) -> list[ConfigProblem] | None:
    if f.path != ["version"]:
        return None
    supported = show(f.error.validator_value)
    return f.problem(f"version {show(f.value)} is not supported: this review-gate reads version {supported} files",
                     f'set "version": {supported}, or upgrade review-gate if the file was written for a newer one')


def _not_an_option(f: _Failed) -> list[ConfigProblem] | None:
    options = list(f.error.validator_value) if f.error.validator == "enum" else [f.error.validator_value]
    strings = [o for o in options if isinstance(o, str)]
    return f.problem(f"{show(f.value)} is not a valid {f.name}",
                     f"{suggest(f.value, strings)}use one of: {quoted(options)}")


def _out_of_range(f: _Failed) -> list[ConfigProblem] | None:
    allowed = _range(f.schema)
    return f.problem(f"{show(f.value)} is out of range: {f.name} must be {allowed}", f"use a value {allowed}")


def _empty(f: _Failed) -> list[ConfigProblem] | None:
    fix = "say in a sentence what this entry is for" if f.name == "description" else f"give {f.name} a value"
    return f.problem(f"{f.name} must not be empty", fix)


def _too_few(f: _Failed) -> list[ConfigProblem] | None:
    count = f.error.validator_value
    if count == 1:
        return f.problem(f"{f.name} must list at least one entry", "add an entry to the list")
    return f.problem(f"{f.name} must list at least {count} entries", "add entries to the list")


def _too_long(f: _Failed) -> list[ConfigProblem] | None:
    if not isinstance(f.value, str):
        return None
    return f.problem(f"{f.name} is {len(f.value)} characters long; the limit is {f.error.validator_value}",
                     "shorten it")


def _bad_id(f: _Failed) -> list[ConfigProblem] | None:
    if f.name not in ("id", "agent", "dispatch", "domains", "gap_detector"):
        return None
    return f.problem(f"{show(f.value)} is not a valid id", _ID_FIX)


def _bad_base_url(f: _Failed) -> list[ConfigProblem] | None:
    if f.name != "base_url" or not isinstance(f.value, str):
        return None
    return f.problem(base_url_problem(f.value),  # never the value: it may carry a password or a key
                     'give only the API root, e.g. "https://api.openai.com/v1"; put the key in the '
                     'environment variable that "api_key_env" names')


def _bad_state_path(f: _Failed) -> list[ConfigProblem] | None:
    if f.name != "state_path":
        return None
    return f.problem("state_path contains a NUL character, which no file name can hold", "remove it from the path")


def _no_match(f: _Failed) -> list[ConfigProblem] | None:
    return f.problem(f"{show(f.value)} does not match {f.error.validator_value}", _SCHEMA_FIX)


# The failing JSON Schema keyword -> its explanations, the most particular first.
_EXPLAIN: dict[str, tuple[_Explain, ...]] = {
    "required": (_required,),
    "additionalProperties": (_unknown_fields,),
    "oneOf": (_agent_kind,),
    "anyOf": (_any_type,),
    "type": (_not_an_object, _wrong_type),
    "const": (_version, _not_an_option),
    "enum": (_not_an_option,),
    **dict.fromkeys(("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"), (_out_of_range,)),
    "minLength": (_empty,),
    "minItems": (_too_few,),
    "maxLength": (_too_long,),
    "pattern": (_bad_id, _bad_base_url, _bad_state_path, _no_match),
}
