"""The one exception hierarchy of review-gate.

    ReviewGateError            anything the user can fix; the CLI prints it and exits 2
    ├── UsageError             bad flags or flag combinations
    ├── ProblemsError          problems in a JSON file we read, each with file, pointer and fix
    │   ├── ConfigError        a config file is unreadable, invalid or inconsistent
    │   ├── BaselineError      the baseline file is unreadable or not a baseline
    │   └── BundleError        a file of a replay bundle is unreadable or not what the bundle holds
    ├── InputError             the diff, the git range or a review file cannot be read
    │   ├── DiffError          malformed or truncated unified diff
    │   ├── GitError           not a repository, unknown ref, git failed
    │   ├── MetaError          a @@@REVIEW_META block is missing or malformed (review_gate.judging.review_meta)
    │   ├── StateError         the run-state database is not ours, unreadable or unwritable
    │   └── AnswerError        a host's answer to a review task is refused (review_gate.scale.host)
    ├── IncompleteError        a required agent left part of the change unreviewed, so nothing
    │                          that needs the whole review was done (exit 3, as the gate's incomplete)
    └── StepFailed             a loop command's step failed once the session was under way (the run
                               state could not be written): exit 3, as the loop's errors

    AgentFault                 an agent could not produce usable output (never reaches the CLI:
    ├── TransientAgentFault    dispatch records it; transient ones are retried)
    └── AgentSkipped           the agent could not run at all (recorded as skipped)

Example:
    >>> error = ConfigError([ConfigProblem("review-rules.json", "/rules/3/pattern", "not valid RE2",
    ...                                    "fix the regular expression")])
    >>> print(error)
    review-rules.json: /rules/3/pattern: not valid RE2
      fix: fix the regular expression
    >>> error.exit_code
    2
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from review_gate.models.report import ToolCall
    from review_gate.models.usage import Usage


class ReviewGateError(Exception):
    """A problem the user can fix. ``fix`` says how, in one line."""

    exit_code = 2

    def __init__(self, message: str, *, fix: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix

    def __str__(self) -> str:
        return self.message if self.fix is None else f"{self.message}\n  fix: {self.fix}"


class UsageError(ReviewGateError):
    pass


class ProblemsError(ReviewGateError):
    """One or more problems, each naming file, JSON pointer and fix; the message is the first
    one, how many more there are, and (``listed_by``) the command that lists them all."""

    def __init__(self, problems: list[ConfigProblem], *, listed_by: str | None = None) -> None:
        self.problems = problems
        first = problems[0]
        more = len(problems) - 1
        if more and listed_by:
            tail = f" (and {more} more problem{'s' if more > 1 else ''}; list them all with `{listed_by}`)"
        else:
            tail = f" (and {more} more problems)" if more else ""
        super().__init__(first.describe() + tail, fix=first.fix)


class ConfigError(ProblemsError):
    """Configuration problems: a config file is unreadable, invalid or inconsistent."""


class BaselineError(ProblemsError):
    """The baseline file is unreadable or does not have a baseline's shape."""


class BundleError(ProblemsError):
    """A file of a replay bundle is unreadable or not what the bundle should hold."""


class ConfigProblem:
    __slots__ = ("file", "fix", "message", "pointer")

    def __init__(self, file: str, pointer: str, message: str, fix: str) -> None:
        self.file = file
        self.pointer = pointer or "/"
        self.message = message
        self.fix = fix

    def describe(self) -> str:
        return f"{self.file}: {self.pointer}: {self.message}"

    def __repr__(self) -> str:
        return f"ConfigProblem({self.describe()!r})"


class InputError(ReviewGateError):
    pass


class DiffError(InputError):
    pass


class GitError(InputError):
    pass


class MetaError(InputError):
    """The @@@REVIEW_META block is missing or malformed; the message names the problem and where."""

    FIX = ("start the text with the block: @@@REVIEW_META, then the lines verdict: PASS or FAIL, "
           "issues_total: N, issues_critical: N, missing_inputs: N, then @@@")

    def __init__(self, message: str) -> None:
        super().__init__(message, fix=self.FIX)


class StateError(InputError):
    """The state file (``state_path``) is not review-gate's SQLite database or cannot be used."""


class AnswerError(InputError):
    """A host's answer to a review task is refused (it does not validate, names a file outside
    the task, or its run is unknown or finished): the task stays unanswered."""


class IncompleteError(ReviewGateError):
    """A required agent did not review the whole change, so what needs the whole review (a
    baseline) was not done. Exit 3, as for an incomplete gate."""

    exit_code = 3


class StepFailed(ReviewGateError):
    """A loop session stopped in the middle of a step for a reason that is not the user's
    command (its run state could not be written); it stands at its last committed step. Exit 3,
    as docs/loop.md says for a session stopped by an error."""

    exit_code = 3


class AgentFault(Exception):
    """An agent ran but produced no usable output; recorded as status ``failed``.

    ``spent`` carries the tokens (and their cost) the agent's requests used before it gave up:
    they were billed, so its result reports them; ``tool_calls`` the calls its model made to
    repository tools, which its result lists too; ``attempts`` the times the request that
    failed was sent, when the kind retries its requests itself (0: it does not).
    """

    def __init__(self, message: str, *, spent: Usage | None = None, tool_calls: list[ToolCall] | None = None,
                 attempts: int = 0) -> None:
        super().__init__(message)
        self.spent = spent
        self.tool_calls = list(tool_calls or [])
        self.attempts = attempts


class AgentSkipped(AgentFault):
    """The agent did not run: nothing was sent (no request of an llm agent got its turn at
    the endpoint before its deadline). Dispatch records it as ``skipped``."""


class TransientAgentFault(AgentFault):
    """A fault worth retrying (timeout of one attempt, 429, 5xx, EX_TEMPFAIL).

    ``retry_after`` carries the server's requested delay in seconds, when it gave one;
    ``status`` the HTTP status of the answer, when there was one.
    """

    def __init__(self, message: str, *, retry_after: float | None = None, spent: Usage | None = None,
                 status: int | None = None) -> None:
        super().__init__(message, spent=spent)
        self.retry_after = retry_after
        self.status = status
