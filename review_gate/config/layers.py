"""Configuration layers: a project's configuration that holds only what it changes.

A configuration directory whose ``review-gate.json`` names ``"extends"`` is an overlay, as
ruff's ``extend``, ESLint's shareable configs and Renovate's presets are: each of its files
changes what the layers under it hold, and an upgrade of review-gate reaches every rule it does
not change. ``extends`` lists, base first:

- ``"builtin"``: the built-in configuration (what every configuration starts from anyway);
- a directory inside the configuration directory (``"presets/team"``): itself a layer, which
  may extend others. A path that leaves the directory (``..``, an absolute path) is refused:
  the configuration directory is what a trusted run reads from the base branch or ``--config``;
  a preset elsewhere in the repository would be the change's to edit;
- ``"preset:NAME"``: a preset an installed Python package publishes under the entry point group
  ``review_gate.presets`` (an organisation's shared configuration): the entry point names a
  package whose directory holds the files, or a function that returns that directory.

How a layer changes a file (pure: ``merge``): rules, domains, agents and policies are merged by
``id``, an entry with a known id changing only the fields it gives, one with a new id added
(whole); ``"disable": [ids]`` removes rules, domains and policies, and turns agents off (a rule
or a policy still names them). Every other key (the settings of review-gate.json, the rules'
``path_classes``) merges key by key, a list replaced whole. A directory with no ``extends`` is a
full copy, as before layers existed: each file it holds replaces the one under it whole.

Every way a layer can be wrong is a ConfigError naming the layer's file, the JSON pointer and the
fix, raised before anything is merged into a configuration: nothing is half applied.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from review_gate.errors import ConfigError, ConfigProblem
from review_gate.models import ReviewConfig
from review_gate.models.agent_config import CommandAgent, LlmAgent, PatternAgent
from review_gate.models.config import SETTINGS_FILE, Domain, Policy, Rule

EXTENDS = "extends"
DISABLE = "disable"
BUILTIN = "builtin"
PRESET = "preset:"
ENTRY_POINTS = "review_gate.presets"
COMMENT = "$comment"  # notes for people, as JSON Schema's: dropped before anything reads the file
MAX_LAYERS = 32
LISTS = {"review-rules.json": "rules", "review-domains.json": "domains", "review-agents.json": "agents",
         "review-composition.json": "policies"}
_KINDS = {"rules": "rule", "domains": "domain", "agents": "agent", "policies": "policy"}
_AGENT_KINDS: dict[str, type[Any]] = {"pattern": PatternAgent, "command": CommandAgent, "llm": LlmAgent}
_ENTRY_MODELS: dict[str, type[Any]] = {"rules": Rule, "domains": Domain, "policies": Policy}

Reader = Callable[[Path, str], bytes]
"""Reads one config file's bytes (path, how it is shown) or raises ConfigError."""
Parser = Callable[[bytes, str], Any]
"""Parses one config file's JSON (bytes, how it is shown) or raises ConfigError."""


@dataclass(frozen=True)
class Layer:
    """One configuration of a stack: its name as people see it, where its files are, whether it
    overlays (it names ``extends``) or replaces, and its files' data by name."""

    name: str
    directory: Path | None  # None: the built-in configuration
    overlay: bool
    data: Mapping[str, Any]
    raw: Mapping[str, bytes] = field(default_factory=dict)  # the files' bytes: what the checked copy is kept by

    def display(self, file: str) -> str:
        return f"{file} (built-in)" if self.directory is None else str(self.directory / file)


@dataclass(frozen=True)
class Touch:
    """What one layer did to an entry or a key: ``defined`` (a full file's entry), ``added``,
    ``changed`` (with the fields it gave) or ``disabled``."""

    layer: str
    file: str  # the layer's file, as shown
    pointer: str
    action: str
    fields: tuple[str, ...] = ()


@dataclass
class Origins:
    """Where each entry and key of the merged configuration came from: file name -> id (or
    ``/key`` for a key of the file) -> the layers' touches, base first."""

    touches: dict[str, dict[str, list[Touch]]] = field(default_factory=dict)
    order: dict[str, list[str]] = field(default_factory=dict)  # file -> ids in merged order

    def of(self, file: str, key: str) -> list[Touch]:
        return self.touches.get(file, {}).get(key, [])

    def note(self, file: str, key: str, touch: Touch) -> None:
        self.touches.setdefault(file, {}).setdefault(key, []).append(touch)


def declared(data: Any) -> bool:
    """Whether the review-gate.json ``data`` makes its directory an overlay."""
    return isinstance(data, dict) and EXTENDS in data


def stack(top: Layer, read: Reader, parse: Parser, builtin: Layer) -> list[Layer]:
    """The layers of the overlay ``top``, base first, the built-in configuration always at the
    bottom (every configuration falls back to it)."""
    assert top.directory is not None and top.overlay
    found: list[Layer] = [builtin]
    root = top.directory.resolve()
    _expand(top, root, read, parse, found, [str(root)])
    return found


def read_layer(directory: Path, name: str, read: Reader, parse: Parser, present: set[str] | None = None,
          replaced: Mapping[str, Any] | None = None) -> Layer:
    """The configuration files in ``directory`` as one layer (``replaced``: file name -> data to
    take in place of the file's, a change checked before it is written)."""
    data: dict[str, Any] = {}
    raw: dict[str, bytes] = {}
    for file in ReviewConfig.FILES:
        path = directory / file
        if replaced is not None and file in replaced:
            data[file] = replaced[file]
        elif (file in present) if present is not None else (path.exists() or path.is_symlink()):
            raw[file] = read(path, str(path))
            data[file] = parse(raw[file], str(path))
    return Layer(name, directory, declared(data.get(SETTINGS_FILE)), data, raw)


def _expand(top: Layer, root: Path, read: Reader, parse: Parser, found: list[Layer], path: list[str]) -> None:
    where = top.display(SETTINGS_FILE)
    names = top.data[SETTINGS_FILE][EXTENDS]
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        raise _error(where, f"/{EXTENDS}", "extends must be a list of names",
                     'write e.g. "extends": ["builtin"] (presets: "builtin", a directory inside this one, '
                     '"preset:NAME")')
    for index, name in enumerate(names):
        pointer = f"/{EXTENDS}/{index}"
        if name == BUILTIN:
            continue  # every stack starts from it
        below, below_root = _preset(name, top, root, where, pointer)
        key = str(below.resolve())
        if key in path:
            cycle = " -> ".join([*path, key])
            raise _error(where, pointer, f"extends {name!r} makes a cycle ({cycle})",
                         "remove one of the extends that lead back to a layer already extended")
        if len(found) >= MAX_LAYERS:
            raise _error(where, pointer, f"more than {MAX_LAYERS} layers", "extend fewer presets")
        child = read_layer(below, name, read, parse)
        if child.overlay:
            _expand(child, below_root, read, parse, found, [*path, key])
        else:
            found.append(child)
    found.append(top)


def _preset(name: str, top: Layer, root: Path, where: str, pointer: str) -> tuple[Path, Path]:
    """The directory preset ``name`` of layer ``top`` names, and the root its own presets must stay in."""
    if name.startswith(PRESET):
        found = preset_directory(name[len(PRESET):], where, pointer)
        return found, found.resolve()
    assert top.directory is not None
    if not name or os.path.isabs(name) or name.startswith("~"):
        raise _error(where, pointer, f"extends {name!r}: not a preset name or a relative directory",
                     '"builtin", "preset:NAME" (an installed package\'s), or a directory inside the configuration '
                     "directory")
    target = (top.directory / name).resolve()
    if target != root and root not in target.parents:
        raise _error(where, pointer, f"extends {name!r} leaves the configuration directory {root}",
                     "keep presets inside the configuration directory (what a trusted run reads with it), or "
                     'publish them in a package ("preset:NAME")')
    if not target.is_dir():
        raise _error(where, pointer, f"extends {name!r}: no such directory ({target})",
                     "create it, or fix the name")
    return target, root


def preset_directory(name: str, where: str, pointer: str) -> Path:
    """The directory an installed package publishes preset ``name`` in (entry point group
    ``review_gate.presets``)."""
    from importlib.metadata import entry_points

    found = [e for e in entry_points(group=ENTRY_POINTS) if e.name == name]
    if not found:
        known = sorted(e.name for e in entry_points(group=ENTRY_POINTS))
        raise _error(where, pointer, f"no installed package publishes the preset {name!r}{_close(name, known)}",
                     f"install the package that holds it (its entry point group is {ENTRY_POINTS}), or fix the name")
    try:
        target = found[0].load()
        if callable(target):
            target = target()
        path = Path(target.__file__).parent if hasattr(target, "__file__") else Path(target)
    except Exception as exc:  # a package's import is outside our control; it must not crash a run
        raise _error(where, pointer, f"the preset {name!r} ({found[0].value}) failed to load: "
                                     f"{type(exc).__name__}: {exc}",
                     "reinstall or fix the package that publishes it") from exc
    if not path.is_dir():
        raise _error(where, pointer, f"the preset {name!r} names {path}, not a directory",
                     "the entry point must name a package, or a function returning a directory")
    return path


def merge(layers: list[Layer]) -> tuple[dict[str, Any], Origins, list[ConfigProblem]]:
    """The five files' data as ``layers`` (base first) leave them, where each part came from, and
    every problem of the layers (an entry with a problem is left out, so the rest is still checked)."""
    merged: dict[str, Any] = {}
    origins = Origins()
    problems: list[ConfigProblem] = []
    added: dict[tuple[str, str], str] = {}  # (file, id) -> the layer that added it
    for layer in layers:
        for file, data in layer.data.items():
            if not isinstance(data, dict):
                merged[file] = data  # not an object: the schema check says so, naming this layer
                continue
            data = {k: v for k, v in data.items() if k != COMMENT and not (file == SETTINGS_FILE and k == EXTENDS)}
            if file not in merged or not layer.overlay or not isinstance(merged[file], dict):
                merged[file] = data
                _defined(file, data, layer, origins)
                continue
            merged[file] = _overlay(file, merged[file], data, layer, origins, added, problems)
    return merged, origins, problems


def _defined(file: str, data: dict[str, Any], layer: Layer, origins: Origins) -> None:
    where = layer.display(file)
    key = LISTS.get(file)
    for name in data:
        if name != key:
            origins.note(file, f"/{name}", Touch(layer.name, where, f"/{name}", "defined"))
    origins.order[file] = []
    entries = data.get(key) if key else None
    for index, entry in enumerate(entries if isinstance(entries, list) else []):
        if isinstance(entry, dict) and isinstance(entry.get("id"), str):
            origins.order[file].append(entry["id"])
            origins.touches.setdefault(file, {})[entry["id"]] = [
                Touch(layer.name, where, f"/{key}/{index}", "defined", tuple(entry))]


def _overlay(file: str, base: dict[str, Any], data: dict[str, Any], layer: Layer, origins: Origins,
             added: dict[tuple[str, str], str], problems: list[ConfigProblem]) -> dict[str, Any]:
    where = layer.display(file)
    key = LISTS.get(file)
    out = dict(base)
    for name, value in data.items():
        if name in (key, DISABLE):
            continue
        out[name] = _deep(out.get(name), value)
        origins.note(file, f"/{name}", Touch(layer.name, where, f"/{name}", "changed"))
    if key is None:
        if DISABLE in data:
            problems.append(ConfigProblem(where, f"/{DISABLE}", "disable names ids of rules, domains, agents or "
                                          "policies; review-gate.json holds none", "remove it"))
        return out
    entries = [dict(e) for e in base.get(key, []) if isinstance(e, dict)]
    index_of = {e.get("id"): i for i, e in enumerate(entries)}
    order = origins.order.setdefault(file, [str(e.get("id")) for e in entries])
    given = data.get(key, [])
    if not isinstance(given, list):
        problems.append(ConfigProblem(where, f"/{key}", f"{key} must be a list of entries, each with an id",
                                      f'write "{key}": [{{"id": "...", ...}}]'))
        given = []
    for index, entry in enumerate(given):
        pointer = f"/{key}/{index}"
        if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
            problems.append(ConfigProblem(where, pointer, f"an entry of {key} without an id",
                                          "give each entry the id of the one it changes, or a new id and every field"))
            continue
        ident = entry["id"]
        if ident in index_of:
            complete = _complete(key, entry)
            if complete and (file, ident) in added and added[(file, ident)] != layer.name:
                problems.append(ConfigProblem(where, pointer, f"{_KINDS[key]} {ident!r} is added by two layers "
                                              f"({added[(file, ident)]} and {layer.name})",
                                              "give it another id in one of them, or give only the fields you change"))
                continue
            entries[index_of[ident]] = {**entries[index_of[ident]], **entry}
            changed = tuple(k for k in entry if k != "id")
            origins.note(file, ident, Touch(layer.name, where, pointer, "changed", changed))
        elif _complete(key, entry):
            index_of[ident] = len(entries)
            entries.append(entry)
            order.append(ident)
            added[(file, ident)] = layer.name
            origins.note(file, ident, Touch(layer.name, where, pointer, "added", tuple(entry)))
        else:
            problems.append(ConfigProblem(where, f"{pointer}/id", f"unknown {_KINDS[key]} id {ident!r} in layer "
                                          f"{layer.name}{_close(ident, list(index_of))}",
                                          f"fix the id, or give every field to add a new {_KINDS[key]}"))
    disabled = data.get(DISABLE, [])
    if not isinstance(disabled, list) or not all(isinstance(d, str) for d in disabled):
        problems.append(ConfigProblem(where, f"/{DISABLE}", "disable must be a list of ids", '"disable": ["id", ...]'))
        disabled = []
    gone = set()
    for index, ident in enumerate(disabled):
        if ident not in index_of:
            problems.append(ConfigProblem(where, f"/{DISABLE}/{index}", f"cannot disable unknown {_KINDS[key]} "
                                          f"{ident!r}{_close(ident, list(index_of))}", "fix the id, or remove it"))
            continue
        origins.note(file, ident, Touch(layer.name, where, f"/{DISABLE}/{index}", "disabled"))
        if key == "agents":  # rules and policies still name it: turned off, as "enabled": false does
            entries[index_of[ident]] = {**entries[index_of[ident]], "enabled": False}
        else:
            gone.add(ident)
    out[key] = [e for e in entries if e.get("id") not in gone]
    origins.order[file] = [i for i in order if i not in gone]
    return out


def _deep(base: Any, value: Any) -> Any:
    """``value`` merged into ``base`` key by key where both are objects; otherwise ``value``."""
    if isinstance(base, dict) and isinstance(value, dict):
        return {**base, **{k: _deep(base.get(k), v) for k, v in value.items()}}
    return value


def _complete(key: str, entry: dict[str, Any]) -> bool:
    """Whether ``entry`` gives every field its model requires: a whole new entry, not a change."""
    if key == "agents":
        model = _AGENT_KINDS.get(entry.get("kind", ""))
        if model is None:
            return False
    else:
        model = _ENTRY_MODELS[key]
    return all(name in entry for name, info in model.model_fields.items() if info.is_required())


def _close(name: str, known: list[Any]) -> str:
    near = difflib.get_close_matches(name, [k for k in known if isinstance(k, str)], n=3, cutoff=0.6)
    return f" (did you mean {', '.join(repr(n) for n in near)}?)" if near else ""


def _error(file: str, pointer: str, message: str, fix: str) -> ConfigError:
    return ConfigError([ConfigProblem(file, pointer, message, fix)])


def placed(problem: ConfigProblem, file: str, merged_display: str, origins: Origins) -> ConfigProblem:
    """A problem found in the merged ``file`` (shown as ``merged_display``), pointing at the layer
    whose entry or key it is about: the last that gave the field, else the one that made the entry."""
    if problem.file != merged_display:
        return problem
    parts = problem.pointer.split("/")
    key = LISTS.get(file)
    touches: list[Touch] = []
    if key is not None and len(parts) >= 3 and parts[1] == key and parts[2].isdigit():
        ids = origins.order.get(file, [])
        if int(parts[2]) < len(ids):
            touches = origins.of(file, ids[int(parts[2])])
        rest = "/".join(parts[3:])
        field_name = parts[3] if len(parts) > 3 else None
        giving = [t for t in touches if t.action != "disabled" and (field_name is None or field_name in t.fields)]
        candidates = giving or [t for t in touches if t.action != "disabled"]
        if candidates:
            chosen = candidates[-1]
            return ConfigProblem(chosen.file, chosen.pointer + (f"/{rest}" if rest else ""), problem.message,
                                 problem.fix)
        return problem
    if len(parts) >= 2 and (touched := origins.of(file, f"/{parts[1]}")):
        last = touched[-1]
        return ConfigProblem(last.file, problem.pointer, problem.message, problem.fix)
    return problem


__all__ = ["BUILTIN", "COMMENT", "DISABLE", "ENTRY_POINTS", "EXTENDS", "LISTS", "PRESET", "Layer", "Origins", "Touch",
           "declared", "merge", "placed", "preset_directory", "read_layer", "stack"]
