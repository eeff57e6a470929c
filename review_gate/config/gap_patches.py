"""The config change that closes a gap, as a JSON Patch (RFC 6902) of one config file. Pure.

Stage 4 (``pipeline.gap_detect``) and the LLM gap detector (``llm.gap_detector``) attach one to
each gap that has one; ``review-gate gaps --apply ID`` applies it (``config.patching``). Every
patch appends one entry (``/domains/-`` or ``/policies/-``) with an id the config does not use
yet, so it never depends on where the other entries stand; applying it is then checked like any
edit, by ``config validate``.

    >>> from review_gate.config import load_config
    >>> domain, patch = new_domain("**/*.kt", "kt", load_config(None))
    >>> domain["id"], patch.file, patch.operations[0].path
    ('kt', 'review-domains.json', '/domains/-')
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import PurePosixPath
from typing import Any

from review_gate.models import ConfigPatch, PatchOperation, ReviewConfig
from review_gate.models.config import COMPOSITION_FILE, DOMAINS_FILE
from review_gate.models.manifest import config_snippet

MAX_ID = 60
_GLOB_SPECIAL = re.compile(r"([\\*?\[\]])")
_NOT_ID = re.compile(r"[^a-z0-9_.-]+")


def literal_glob(text: str) -> str:
    """A gitignore-style glob that matches ``text`` as it is: its wildcards, brackets and
    backslashes escaped, and a leading ``!`` or ``#`` or a trailing space kept literal."""
    out = _GLOB_SPECIAL.sub(r"\\\1", text)
    if out[:1] in ("!", "#"):
        out = "\\" + out
    if out.endswith(" "):
        out = out[:-1] + "\\ "
    return out


def slug(text: str, fallback: str = "other") -> str:
    """An id for the config (letters, digits, ``_ . -``, starting with a letter or digit)."""
    value = _NOT_ID.sub("-", text.lower()).lstrip("-_.")[:MAX_ID].rstrip("-_.")
    return value or fallback


def free_id(base: str, taken: Iterable[str]) -> str:
    """``base``, or ``base-2``, ``base-3``... whichever the config does not use yet."""
    used = set(taken)
    if base not in used:
        return base
    n = 2
    while f"{base}-{n}" in used:
        n += 1
    return f"{base}-{n}"


def scope_globs(paths: Sequence[str]) -> list[str]:
    """Globs that select ``paths`` and the files like them, for a policy that lasts beyond this
    change: the paths under one top directory that share an extension as one glob over it
    (``deploy/**/*.yaml``), the same extension at the root as ``*.ext``; a path like no other
    stays itself, taken literally (a permanent policy must not list one change's files).

    >>> scope_globs(["deploy/k8s/api.yaml", "deploy/k8s/web.yaml", "deploy/base/ns.yaml", "Makefile"])
    ['deploy/**/*.yaml', 'Makefile']
    >>> scope_globs(["a.py", "b.py", "src/x.py"])
    ['*.py', 'src/x.py']
    """
    groups: dict[tuple[str, str], list[str]] = {}
    for path in paths:
        top, _, rest = path.partition("/")
        name = path.rsplit("/", 1)[-1]
        dot = name.rfind(".")
        extension = name[dot:] if dot > 0 and _PLAIN.fullmatch(name[dot:]) else ""
        groups.setdefault((top if rest else "", extension), []).append(path)
    out: list[str] = []
    for (top, extension), members in groups.items():
        if len(members) < 2 or not extension or (top and not _PLAIN_DIR.fullmatch(top)):
            out += [literal_glob(p) for p in members]
        else:
            out.append(f"{top}/**/*{extension}" if top else f"*{extension}")
    return list(dict.fromkeys(out))


_PLAIN = re.compile(r"\.[A-Za-z0-9_+-]+")  # an extension a glob can name without escaping
_PLAIN_DIR = re.compile(r"[A-Za-z0-9_.+-]+")


def unclassified_glob(path: str) -> tuple[str, str]:
    """The glob a domain for an unclassified file would claim (its extension at any depth, or
    the path itself when it has none) and a name for that domain."""
    suffix = PurePosixPath(path).suffix
    if suffix:
        return "**/*" + literal_glob(suffix), suffix.lstrip(".")
    return literal_glob(path), PurePosixPath(path).name.strip(".").replace(".", "-")


def new_domain(glob: str, name: str, config: ReviewConfig) -> tuple[dict[str, Any], ConfigPatch]:
    """A domain that claims ``glob``, and the patch of review-domains.json that adds it."""
    domain_id = free_id(slug(name), (d.id for d in config.domains.domains))
    domain = {"id": domain_id, "description": f"{name} files", "paths": [glob], "risk_weight": 2}
    return domain, _append(DOMAINS_FILE, "/domains/-", domain)


def new_policy(policy: dict[str, Any]) -> ConfigPatch:
    """The patch of review-composition.json that adds ``policy``."""
    return _append(COMPOSITION_FILE, "/policies/-", policy)


def policy_id(base: str, config: ReviewConfig) -> str:
    return free_id(slug(base, "gap"), (p.id for p in config.composition.policies))


def domain_dispatch(config: ReviewConfig) -> list[str]:
    """The agents a new domain policy would send its files to: those of the domain policy that
    routes the most domains (the broadest reviewer of code the config has), enabled ones only.
    Empty when the config has no domain policy: then there is nothing to copy, and no patch."""
    enabled = {a.id for a in config.agents.agents if a.enabled}
    domain_policies = [p for p in config.composition.policies if p.trigger.type == "domain"
                       and any(a in enabled for a in p.dispatch)]
    if not domain_policies:
        return []
    broadest = min(domain_policies, key=lambda p: (-len(p.trigger.domains), -p.priority, p.id))
    return [a for a in broadest.dispatch if a in enabled]


def domain_policy(domain: str, config: ReviewConfig) -> tuple[dict[str, Any], ConfigPatch] | None:
    """A policy that routes ``domain``, and its patch; None when no agent can be named."""
    dispatch = domain_dispatch(config)
    if not dispatch:
        return None
    policy = {"id": policy_id(f"{domain}-review", config), "description": f"Review changes in {domain}",
              "trigger": {"type": "domain", "domains": [domain]}, "dispatch": dispatch, "priority": 50}
    return policy, new_policy(policy)


def agent_policy(agent: str, globs: list[str], config: ReviewConfig, *, suffix: str,
                 description: str) -> tuple[dict[str, Any], ConfigPatch]:
    """A policy that sends the files ``globs`` select to ``agent``, and its patch."""
    policy = {"id": policy_id(f"{agent}-{suffix}", config), "description": description,
              "trigger": {"type": "paths", "paths": globs}, "dispatch": [agent], "priority": 50}
    return policy, new_policy(policy)


def suggestion(file: str, key: str, entry: dict[str, Any]) -> str:
    """The patch as a sentence: what to add where."""
    return f"add to {file} \"{key}\": " + config_snippet(entry)


def _append(file: str, pointer: str, value: dict[str, Any]) -> ConfigPatch:
    return ConfigPatch(file=file, operations=[PatchOperation(op="add", path=pointer, value=value)])
