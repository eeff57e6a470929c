"""What the review phase tells its llm reviewers the change is for (``run --intent``, the loop's
way): the review prompt as it was approved, which holds the task and its acceptance criteria,
the earlier reviews that said NO_GO (their findings, and what a person or an approver said of
them), the feedback given for this review and the Standards. A person's edit of that prompt
counts, as for every approved file. Should the file be gone, the task and the history are put
together here.

    >>> print(review_intent(None, "Keep a 5 s timeout.", [{"iteration": 1, "decision": "NO_GO",
    ...                                                      "feedback": "- major app.py:3: TLS off"}]))
    ## The task
    <BLANKLINE>
    Keep a 5 s timeout.
    <BLANKLINE>
    ## Earlier reviews that said NO_GO
    <BLANKLINE>
    ### Iteration 1: NO_GO
    <BLANKLINE>
    - major app.py:3: TLS off
"""

from __future__ import annotations

from typing import Any

from review_gate.loop.prompts import history_section, section


def review_intent(prompt: str | None, task: str, decisions: list[dict[str, Any]]) -> str | None:
    """``prompt``: the review prompt file's text; ``task``: the session's task; ``decisions``:
    the session's decision records so far. None when there is nothing to say."""
    if prompt and prompt.strip():
        return prompt
    text = "\n\n".join(p for p in (section("The task", task), history_section(decisions)) if p)
    return text or None
