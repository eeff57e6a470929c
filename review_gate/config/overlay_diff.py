"""How one configuration differs from another, written as the overlay that makes the one from the
other (``review-gate config diff``): a team's full copy of the built-in configuration turned into
the few lines it changes. Pure.

Entries are compared by id on their values with every default filled in (a copy that leaves out
a field the built-in file writes, at its default, changes nothing): a changed entry gives the
fields it changes, an entry only the copy has is given whole, one it lacks is disabled.
Settings are compared key by key, a list as a whole.

    >>> from review_gate.config import load_config
    >>> overlay(load_config(None), load_config(None))
    {}
"""

from __future__ import annotations

from typing import Any

from review_gate.config.layers import DISABLE, EXTENDS, LISTS
from review_gate.models import ReviewConfig
from review_gate.models.config import SETTINGS_FILE


def overlay(base: ReviewConfig, config: ReviewConfig) -> dict[str, dict[str, Any]]:
    """File name -> the overlay data that turns ``base`` into ``config``; files that do not
    differ are left out (all of them: the two are the same configuration)."""
    out: dict[str, dict[str, Any]] = {}
    for name in ReviewConfig.FILES:
        old, new = _dumped(base, name), _dumped(config, name)
        bare = _dumped(config, name, exclude_defaults=True)
        key = LISTS.get(name)
        changes: dict[str, Any] = {}
        for field in sorted(set(old) | set(new)):
            if field in (key, "version") or old.get(field) == new.get(field):
                continue
            changes[field] = _changed(old.get(field), new.get(field))
        if key is not None:
            entries, disabled = _entries(old.get(key, []), new.get(key, []), bare.get(key, []))
            if entries:
                changes[key] = entries
            if disabled:
                changes[DISABLE] = disabled
        if changes:
            out[name] = {"version": 1, **({EXTENDS: ["builtin"]} if name == SETTINGS_FILE else {}), **changes}
    if out and SETTINGS_FILE not in out:
        out[SETTINGS_FILE] = {"version": 1, EXTENDS: ["builtin"]}  # what makes the directory an overlay
    return out


def _dumped(config: ReviewConfig, name: str, *, exclude_defaults: bool = False) -> dict[str, Any]:
    data: dict[str, Any] = config.file(name).model_dump(mode="json", by_alias=True, exclude_defaults=exclude_defaults)
    return data


def _changed(old: Any, new: Any) -> Any:
    """What an overlay gives to turn ``old`` into ``new``: objects key by key, anything else whole."""
    if isinstance(old, dict) and isinstance(new, dict):
        return {k: _changed(old.get(k), v) for k, v in new.items() if old.get(k) != v}
    return new


def _entries(old: list[dict[str, Any]], new: list[dict[str, Any]],
             bare: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """The entries an overlay gives (a new one whole, without its defaults: ``bare``) and the ids
    it disables."""
    before = {e["id"]: e for e in old}
    after = {e["id"]: e for e in new}
    whole = {e["id"]: e for e in bare}
    given: list[dict[str, Any]] = []
    for ident, entry in after.items():
        if ident not in before:
            given.append(whole[ident])
        elif entry != before[ident]:
            given.append({"id": ident, **{k: v for k, v in entry.items() if before[ident].get(k) != v}})
    return given, [ident for ident in before if ident not in after]


__all__ = ["overlay"]
