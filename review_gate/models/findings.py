"""The one finding format every agent produces (DESIGN §2)."""

from __future__ import annotations

from typing import Annotated, Literal, get_args

from pydantic import AfterValidator, Field, model_validator

from review_gate.models.base import Frozen, UntrustedText
from review_gate.models.config_values import Severity

TEXT_LIMIT = 4000  # characters of an agent's message or recommendation kept: it may quote a whole minified line
PREEXISTING = "pre-existing"
"""How the reason of a finding that is not new starts (``waived``)."""
PATH_CLASS = "path class"
"""How the reason of a finding its rule skips in its path class starts (``waived``, kind ``path_class``)."""

WaivedKind = Literal["preexisting", "moved", "path_class", "context", "once_per_file", "baseline",
                     "shared_acceptance", "acceptance", "inline", "peer"]
"""Why a finding is left out of the count, by what pays for it (DESIGN §3, the judging step):

- ``preexisting``: the rule fires on the same line before the change, in the same file (the line
  stood there, or the change removes a line of the same text there, or edits it in place);
- ``moved``: a line of the same text that the change removes from the file this one was renamed
  or copied from pays for it;
- ``path_class``: the rule skips its path class (a test, a fixture, generated code...);
- ``context``: a context of the rule (review-rules.json ``contexts``) skips it, or its match is
  only a placeholder or a vendor's documented example key;
- ``once_per_file``: the rule counts once in a file (``once_per_file``), and its first finding
  there stands for this one;
- ``baseline``: an entry of the committed baseline; ``shared_acceptance``: an entry of the team's
  acceptances file; ``acceptance``: a person's acceptance or override in the run state;
- ``inline``: a ``review-gate: ignore[...]`` comment; ``peer``: a peer tool's suppression
  (``# noqa: S501``, ``# nosec B501``...).
"""
WAIVED_KINDS: tuple[WaivedKind, ...] = get_args(WaivedKind)
OLD_KINDS: frozenset[WaivedKind] = frozenset({"preexisting", "moved"})
"""The kinds that say a finding is old, not waived by anyone."""


_RECORDED = (("baselined", "baseline"), ("accepted for the team", "shared_acceptance"), ("accepted", "acceptance"),
             ("overridden", "acceptance"), (PREEXISTING, "preexisting"), ("waived", "inline"))


class Waiver(Frozen):
    """What leaves one finding out of the count: its kind and the reason reports show.

    A bare reason, as replay bundles and batches recorded before kinds were, is read as the kind
    its first words name (a person's acceptance when they name none):

    >>> Waiver.model_validate("baselined").kind
    'baseline'
    """

    kind: WaivedKind
    reason: UntrustedText

    @model_validator(mode="before")
    @classmethod
    def _recorded(cls, data: object) -> object:
        if not isinstance(data, str):
            return data
        kind = next((kind for label, kind in _RECORDED if data.startswith(label)), "acceptance")
        return {"kind": kind, "reason": data}


def _bounded(text: str) -> str:
    return text if len(text) <= TEXT_LIMIT else text[:TEXT_LIMIT - 1] + "…"


BoundedText = Annotated[UntrustedText, AfterValidator(_bounded)]
"""An agent's text, cut to TEXT_LIMIT characters: a report holds thousands of findings."""


class InlineWaiver(Frozen):
    """A comment of the change's files that speaks for a finding: ``review-gate: ignore[RULE] reason``
    on the flagged line or the line above, or a peer tool's suppression (``# noqa: S501``,
    ``# nosec B501``, ``// eslint-disable-line no-eval``, ``# zizmor: ignore[...]``, ``nosemgrep``)
    where the finding's rule names that code (docs/rules.md, "Inline waivers")."""

    line: int = Field(ge=1, description="The line the comment is on.")
    comment: UntrustedText = Field(description="The comment as written (clipped).")
    reason: UntrustedText = Field(description="Why, as the comment says (a peer's suppression: the comment itself).")
    added: bool = Field(description="True when the change adds the comment; false when the base version of the "
                                    "file has it already (only added ones count in the waived_inline metric).")
    ignored: UntrustedText | None = Field(
        default=None, description="Set when the comment waives nothing and the finding counts: why (review-gate.json's "
                                  "inline_waivers is report, or a loop session ignores a waiver added since it "
                                  "started).")

    def said(self, quote: str = "") -> str:
        """The reason and the comment, once when they are the same (a peer's suppression):
        ``pinned host (# noqa: S501)``, ``# noqa: S501``."""
        comment = f"{quote}{self.comment}{quote}"
        return comment if self.reason == self.comment else f"{self.reason} ({comment})"


class Finding(Frozen):
    fingerprint: str
    agent: str
    rule_id: str | None = None
    severity: Severity
    category: str
    file: str | None
    line: int | None = Field(default=None, ge=1)
    end_line: int | None = Field(default=None, ge=1)
    column: int | None = Field(default=None, ge=1, description="Where on the line the problem starts (1-based "
                                                              "characters), when the agent knows it.")
    message: str
    recommendation: str | None = None
    confidence: float | None = Field(default=None, ge=0, le=1)
    also_reported_by: list[str] = Field(
        default_factory=list, description="Other agents that reported the same problem."
    )
    waived: str | None = Field(
        default=None, description="Why this finding does not count: accepted by a person, baselined, or "
                                  "waived inline by a comment, or pre-existing (its rule fires on the same line before "
                                  "the change)."
    )
    waived_kind: WaivedKind | None = Field(
        default=None, description="What left it out of the count, set with waived by the one judging step: "
                                  "preexisting, moved, path_class, context, once_per_file, baseline, "
                                  "shared_acceptance, acceptance, inline or peer.")
    inline_waiver: InlineWaiver | None = Field(
        default=None, description="The inline waiver on its line or the line above, honoured or not.")

    @property
    def preexisting(self) -> bool:
        """Listed because its rule fired on the same line before the change: old, not waived by anyone
        (a report written before kinds were recorded says so by its reason's first words)."""
        if self.waived_kind is not None:
            return self.waived_kind in OLD_KINDS
        return (self.waived or "").startswith(PREEXISTING)

    def left_out(self, waiver: Waiver) -> Finding:
        """This finding, listed as waived by ``waiver`` (the one way a finding gets its kind and reason)."""
        return self.model_copy(update={"waived": waiver.reason, "waived_kind": waiver.kind})


class RawFinding(Frozen):
    """A finding as an agent emits it, before the engine gives it an agent and a fingerprint."""

    severity: Severity
    message: BoundedText
    rule_id: UntrustedText | None = None
    category: UntrustedText | None = None
    file: UntrustedText | None = None
    line: int | None = None
    end_line: int | None = None
    column: int | None = None
    recommendation: BoundedText | None = None
    confidence: float | None = Field(default=None, ge=0, le=1)
