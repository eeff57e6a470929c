"""Acceptances a team shares: ``.review-gate/acceptances.json``, committed like the baseline.

``review-gate accept ID --reason TEXT --shared`` adds an entry here instead of the run state of
this machine. The file counts exactly as the baseline does: read from the trusted side (the
base commit's version, for a file inside the repository), so an acceptance committed on a
branch waives nothing in that branch's own review; it waives every run, CI and teammates
included, once it is on the base branch. A change that edits the file is a gap
(``baseline_changed``), never trusted for that change.

Entries are sorted and written the same way every time, so the file diffs cleanly. A file that
is not shaped as it should be is exit 2 naming the file and the entry (its JSON pointer).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, ValidationError

from review_gate.config.load import read_json
from review_gate.config.messages import pointer
from review_gate.errors import BaselineError, ConfigProblem, ReviewGateError
from review_gate.judging import baseline
from review_gate.models.base import Frozen
from review_gate.models.findings import Waiver

FILE_NAME = "acceptances.json"
LABEL = "accepted for the team"
_FIX = "fix the entry by hand, or remove it and accept the finding again with `review-gate accept ID --shared`"

Fingerprint = Annotated[str, Field(pattern=r"^[0-9a-f]{32}$")]


class SharedAcceptance(Frozen):
    fingerprint: Fingerprint
    reason: str = Field(min_length=1, description="Why it is accepted; shown in every report.")
    who: str = Field(min_length=1)
    created: date
    expires: date | None = Field(default=None, description="The last day it applies.")
    rule_id: str | None = None
    file: str | None = None
    message: str | None = Field(default=None, description="The finding's message when it was accepted.")

    def active(self, today: date) -> bool:
        return self.expires is None or today <= self.expires


class SharedAcceptances(Frozen):
    version: Literal[1] = 1
    acceptances: list[SharedAcceptance] = Field(default_factory=list)

    def waivers(self, today: date | None = None) -> dict[str, Waiver]:
        """Fingerprint -> the reason reports show, for every entry still in force."""
        day = today or date.today()
        return {a.fingerprint: Waiver(kind="shared_acceptance", reason=f"{LABEL} by {a.who}: {a.reason}")
                for a in self.acceptances if a.active(day)}


def parse(data: object, display: str) -> SharedAcceptances:
    try:
        return SharedAcceptances.model_validate(data)
    except ValidationError as exc:
        problems = [ConfigProblem(display, pointer(e["loc"]), e["msg"], _FIX) for e in exc.errors()]
        raise BaselineError(problems) from exc


def load(path: Path) -> SharedAcceptances:
    return parse(read_json(path, str(path), error=BaselineError), str(path))


def candidates(config_dir: str | None, root: Path | None) -> list[Path]:
    """Where the file is looked for: the config directory in use, else ``.review-gate/``."""
    found = [Path(config_dir) / FILE_NAME] if config_dir is not None else []
    if root is not None:
        found.append(root / ".review-gate" / FILE_NAME)
    return found


def read_trusted(paths: list[Path], base: str | None, in_repo: Callable[[Path], str | None],
                 show: Callable[[str, str], bytes | None]) -> SharedAcceptances | None:
    """The first file found among ``paths``, read where the change cannot have touched it (as
    ``baseline.read_trusted`` reads the baseline)."""
    return baseline.trusted(paths, base, in_repo, show, parse)


def add(path: Path, entry: SharedAcceptance) -> SharedAcceptances:
    """``entry`` added to the file at ``path`` (made when absent; an entry of the same fingerprint
    replaced), written sorted; a malformed file is refused, never overwritten."""
    current = load(path) if path.exists() else SharedAcceptances()
    kept = [a for a in current.acceptances if a.fingerprint != entry.fingerprint]
    updated = SharedAcceptances(acceptances=sorted([*kept, entry], key=lambda a: (a.file or "", a.fingerprint)))
    data = updated.model_dump(mode="json", exclude_none=True)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8", newline="\n")
    except OSError as exc:
        raise ReviewGateError(f"cannot write {path}: {exc.strerror}",
                              fix="make the directory writable, or run from the repository's root") from exc
    return updated


def today() -> date:
    return datetime.now(timezone.utc).date()
