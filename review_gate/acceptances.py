"""What a person records about a finding a run reported: ``accept`` (it stops counting, here or,
``shared``, in the committed ``acceptances.json`` for everyone) and ``ack`` (seen: who, when and
why, and nothing else changes). Entry points of the API (``review_gate.api`` re-exports them);
``person`` says who is at the keyboard for the records a person makes.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from review_gate.change import git
from review_gate.errors import StateError, UsageError
from review_gate.models import ReviewConfig
from review_gate.pipeline import arguments, recorded_run, review_request

if TYPE_CHECKING:
    from review_gate.state.store import Store

__all__ = ["Accepted", "Acknowledged", "accept", "ack", "person"]


@dataclass(frozen=True)
class Accepted:
    """An acceptance recorded: the finding's whole fingerprint, the acceptance's id (what
    ``review-gate accepted --revoke ID`` takes) and the last day it applies (None: no end)."""

    fingerprint: str
    acceptance: int
    expires: date | None
    kind: Literal["accept", "override"] = "accept"
    """``override`` when no recorded run reported the fingerprint (``force``)."""
    shared: Path | None = None
    """The committed file it was written to (``shared``); None: the run state of this machine."""


def accept(id_or_fingerprint: str, reason: str, expires: date | str | None = None, cwd: str | Path | None = None,
           config: str | Path | None = None, *, force: bool = False, who: str | None = None,
           shared: bool = False) -> Accepted:
    """A person accepts a finding a recorded run reported: from then on it is reported as
    accepted and does not count. ``id_or_fingerprint``: the short id a report shows beside the
    finding, or its whole fingerprint; ``expires``: the last day it applies (a date or
    ``YYYY-MM-DD``, today or later); ``force``: take a whole fingerprint no recorded run reported;
    ``who``: who accepts it (default: git's user.email, else $USER); ``shared``: write it to the
    committed ``acceptances.json`` of the configuration (``.review-gate/``) instead of this
    machine's run state: it waives the finding for everyone once it is on the base branch."""
    from review_gate.state import acceptance
    from review_gate.state.location import state_file
    from review_gate.state.store import open_store

    arguments.text("id_or_fingerprint", id_or_fingerprint, optional=False)
    arguments.text("reason", reason, optional=False)
    arguments.flag("force", force)
    review_request.typed(texts={"who": who}, paths={"config": config})
    if expires is not None and not isinstance(expires, (date, str)):
        raise UsageError(f"expires {arguments.shown(expires)}: not a date", fix="give it as a date or YYYY-MM-DD")
    given = _finding_id(id_or_fingerprint)
    if not reason.strip():
        raise UsageError("the reason is empty", fix="say why the finding is accepted")
    day = _last_day(expires)
    root = git.repo_root(arguments.workdir(cwd))
    loaded = recorded_run.load(config, root)
    path = state_file(loaded, root)
    arguments.flag("shared", shared)
    if shared:
        return _accept_shared(given, reason.strip(), day, loaded, root, path, force=force, who=who or person())
    store = open_store(path, create=force)
    if store is None:
        raise StateError(f"no runs recorded yet ({path} does not exist), so {given} is unknown",
                         fix="accept a finding from a recorded run, or force its whole fingerprint "
                             "(`review-gate accept --force`)")
    with store:
        fingerprint, pair, seen = _reported(store, given, force)
        # A fingerprint no run reported is a person's decision over the review (seed 003's override).
        kind: Literal["accept", "override"] = "accept" if seen else "override"
        event = acceptance.record(store, kind, fingerprint, reason.strip(), who or person(),
                                  day.isoformat() if day else None, pair)
    return Accepted(fingerprint, event, day, kind)


@dataclass(frozen=True)
class Acknowledged:
    """An ack recorded: the finding's whole fingerprint and the event's id."""

    fingerprint: str
    event: int


def ack(id_or_fingerprint: str, reason: str, *, cwd: str | Path | None = None, config: str | Path | None = None,
        who: str | None = None) -> Acknowledged:
    """A person notes that they saw a finding a recorded run reported (seed 003's ``ack``): who,
    when and why are recorded beside the acceptances, and nothing else changes. The finding
    keeps counting, and freshness is untouched: the pair that reported it is reused or reviewed
    again exactly as without the ack. ``id_or_fingerprint``: the short id a report shows, or the
    whole fingerprint."""
    from review_gate.state import acceptance
    from review_gate.state.location import state_file
    from review_gate.state.store import open_store

    arguments.text("id_or_fingerprint", id_or_fingerprint, optional=False)
    arguments.text("reason", reason, optional=False)
    review_request.typed(texts={"who": who}, paths={"config": config})
    given = _finding_id(id_or_fingerprint)
    if not reason.strip():
        raise UsageError("the reason is empty", fix="say what you saw, or what will be done about it")
    root = git.repo_root(arguments.workdir(cwd))
    path = state_file(recorded_run.load(config, root), root)
    store = open_store(path, create=False)
    if store is None:
        raise StateError(f"no runs recorded yet ({path} does not exist), so {given} is unknown",
                         fix="acknowledge a finding a recorded run reported (`review-gate show last`)")
    with store:
        fingerprint, pair, _ = _reported(store, given, force=False, can_force=False)
        event = acceptance.ack(store, fingerprint, reason.strip(), who or person(), pair)
    return Acknowledged(fingerprint, event)


def _finding_id(given: str) -> str:
    """The short id or whole fingerprint of a finding a person names, as ids are stored."""
    from review_gate.state import acceptance
    from review_gate.text.escape import sanitize

    found = given.strip().lower()
    if not acceptance.SHORT_ID.match(found):
        raise UsageError(f"{sanitize(given.strip()) or 'the id'} is not a finding id",
                         fix="give the id a report shows beside the finding (6 or more hex digits), "
                             "or its whole fingerprint")
    return found


def _accept_shared(given: str, reason: str, day: date | None, loaded: ReviewConfig, root: Path | None, state: Path,
                   *, force: bool, who: str) -> Accepted:
    """``accept --shared``: the entry written to the committed acceptances file (the config
    directory in use, else ``.review-gate/``), described from the recorded run that reported it."""
    from review_gate.judging import shared_acceptances
    from review_gate.state import acceptance
    from review_gate.state.store import open_store

    targets = shared_acceptances.candidates(loaded.directory, root)
    if not targets:
        raise UsageError("no repository or config directory here to hold the shared acceptances",
                         fix="run it inside the repository, or name the configuration with --config DIR")
    store = open_store(state, create=False)
    described: dict[str, object] = {}
    if store is None:
        if not (force and acceptance.FINGERPRINT.match(given)):
            raise StateError(f"no runs recorded yet ({state} does not exist), so {given} is unknown",
                             fix="accept a finding from a recorded run, or force its whole fingerprint "
                                 "(`review-gate accept --shared --force`)")
        fingerprint = given
    else:
        with store:
            fingerprint, _, _ = _reported(store, given, force)
            described = acceptance.described(store, fingerprint)
    entry = shared_acceptances.SharedAcceptance(
        fingerprint=fingerprint, reason=reason, who=who, created=shared_acceptances.today(), expires=day,
        **{k: v for k, v in described.items() if isinstance(v, str)})
    shared_acceptances.add(targets[0], entry)
    return Accepted(fingerprint, 0, day, "accept", shared=targets[0])


def _last_day(value: date | str | None) -> date | None:
    """An acceptance's last day: a date or YYYY-MM-DD, today or later."""
    if isinstance(value, str):
        return arguments.last_day("expiry", value)
    if value is not None and value < date.today():
        raise UsageError(f"expiry {value.isoformat()}: that day has passed; the waiver would never apply",
                         fix="give the last day it should apply: today or later")
    return value


def _reported(store: Store, given: str, force: bool, *, can_force: bool = True) -> tuple[str, int | None, bool]:
    """The one reported fingerprint ``given`` is (or starts), its newest pair, and whether a run
    reported it; with ``force``, a whole fingerprint no run reported is taken as it is.
    ``can_force``: the command has ``--force`` to offer (accept does, ack does not)."""
    from review_gate.state import acceptance

    matches = acceptance.reported(store, given)
    if len(matches) == 1:
        return (*matches[0], True)
    if not matches:
        if force and acceptance.FINGERPRINT.match(given):
            return given, None, False
        fix = "copy the id from a report (`review-gate show last`)"  # ack has no --force: it notes, never waives
        raise StateError(f"no recorded run reported a finding {given}",
                         fix=fix + (", or force the whole fingerprint (`review-gate accept --force`)" if can_force
                                    else ""))
    listed = ", ".join(fp for fp, _ in matches[:5])
    raise StateError(f"{given} is the start of several findings' fingerprints: {listed}",
                     fix="give more of the fingerprint")


def person() -> str:
    """Who is at the keyboard, for the records a person makes: git's user.email, else $USER."""
    try:
        result = subprocess.run(["git", "config", "user.email"], capture_output=True, text=True, check=False)
        email = result.stdout.strip() if result.returncode == 0 else ""
    except OSError:
        email = ""
    return email or os.environ.get("USER") or os.environ.get("USERNAME") or "unknown"
