"""The warning a submodule that could not be reviewed gives, when review-gate.json says ``"submodules":
"warn"`` (the default). Pure.

The submodule's commits were not present (``review_gate.change.submodules``), so what the move brings
in was not reviewed: a reviewer must know, and the gate passes with a warning instead of failing
closed (``"incomplete"``) or staying silent (``"list"``). The warning says how to make them present.
"""

from __future__ import annotations

from review_gate.judging.fingerprint import fingerprint
from review_gate.models import Finding, PRFacts, SettingsFile

AGENT = "review-gate"  # the gate's own note, not an agent's finding
ADDED_FIX = ("review the submodule's commits in its own repository; set \"submodules\": \"incomplete\" in "
             "review-gate.json to fail closed instead")


def submodule_warnings(facts: PRFacts, settings: SettingsFile) -> list[Finding]:
    """One warning for each submodule entry left unread, under the ``warn`` policy."""
    if settings.submodules != "warn":
        return []
    return [Finding(fingerprint=fingerprint(AGENT, "submodule", f.path, f.unread.reason, 0), agent=AGENT,
                    severity="warning", category="coverage", file=f.path, line=None,
                    message=f.unread.reason, recommendation=f.unread.fix or ADDED_FIX, confidence=1.0)
            for f in facts.files if f.unread is not None and f.unread.kind == "submodule"]
