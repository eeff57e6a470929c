"""The review phase's verdict: read from the review file's ``@@@REVIEW_META`` block, and rewritten
when a person overrides it (seed 002's ``update_review``).

GO is PASS (the gate's decision passes ``--fail-on``); NO_GO is FAIL. The file is parsed when it
is approved, so a person's edit counts (seed 000); a missing or malformed block is a MetaError.

``update_review`` covers the seven cases of seed 002's table:

    >>> review = ("@@@REVIEW_META\\nverdict: FAIL\\nissues_total: 1\\nissues_critical: 0\\n"
    ...           "missing_inputs: 0\\n@@@\\nOne major finding.\\n")
    >>> print(update_review(review, verdict="PASS"), end="")
    @@@REVIEW_META
    verdict: PASS
    issues_total: 1
    issues_critical: 0
    missing_inputs: 0
    @@@
    One major finding.
    >>> print(update_review(review, "Accepted: a test fixture.", "PASS", overwrite=True).split("@@@\\n")[-1], end="")
    Accepted: a test fixture.
"""

from __future__ import annotations

import re
from typing import Literal

from review_gate.errors import UsageError
from review_gate.judging.review_meta import ReviewMeta, parse_meta
from review_gate.loop.model import Verdict

MetaVerdict = Literal["PASS", "FAIL"]
_VERDICT_LINE = re.compile(r"^([ \t]*verdict[ \t]*:[ \t]?)[^\r\n]*", re.MULTILINE)


def verdict_of(meta: ReviewMeta) -> Verdict:
    return "GO" if meta.verdict == "PASS" else "NO_GO"


def update_review(content: str, feedback: str | None = None, verdict: MetaVerdict | None = None,
                  overwrite: bool = False) -> str:
    """``content`` with its verdict set to ``verdict`` (None keeps it) and ``feedback`` added to
    the review (or, with ``overwrite``, the review replaced by it); the counts are kept."""
    if overwrite and not feedback:
        raise UsageError("replacing the review needs the text to replace it with", fix="give --feedback TEXT")
    meta = parse_meta(content)  # MetaError when there is no valid block to update
    head = content[:len(content) - len(meta.body)] if meta.body else content
    if not head.endswith("\n"):
        head += "\n"
    if verdict is not None:
        head = _VERDICT_LINE.sub(lambda m: m.group(1) + verdict, head, count=1)
    if overwrite:
        body = _ended(str(feedback))
    elif feedback:
        body = _ended(meta.body) + ("\n" if meta.body.strip() else "") + "## Feedback\n\n" + _ended(feedback)
    else:
        body = meta.body
    return head + body


def _ended(text: str) -> str:
    return text if text.endswith("\n") or not text else text + "\n"
