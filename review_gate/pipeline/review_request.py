"""What a caller asks to review, checked before anything runs: the change named (``change``:
the arguments that name one must not clash), the arguments of how a review runs
(``run_options``), arguments of the wrong type (``typed``), a request made elsewhere (``given``)
and the agents a caller adds (``agent_requests``). Every entry point of the API that reviews
starts here; each check is ``arguments``' one by one.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from review_gate.change import git
from review_gate.errors import GitError, InputError, UsageError
from review_gate.models import AgentRequest
from review_gate.pipeline import arguments
from review_gate.pipeline.normalize import DiffRequest

MAX_REASON = 2000  # characters of an added agent's reason (it is logged in every report and the gap log)


def change(*, cwd: str | Path | None = None, base: str | None = None, head: str | None = None,
           staged: bool = False, diff: bytes | None = None, diff_file: str | Path | None = None,
           pushed: str | None = None, remote: str | None = None) -> DiffRequest:
    """What to review, checked: the arguments that name a change must not clash. ``pushed``: a
    ref being pushed to ``remote`` with no range known (everything the remote lacks)."""
    typed(texts={"pushed": pushed, "remote": remote}, flags={"staged": staged}, paths={"diff_file": diff_file})
    for name, value in (("base", base), ("head", head), ("pushed", pushed), ("remote", remote)):
        arguments.ref(name, value)
    if diff is not None and not isinstance(diff, (bytes, bytearray)):
        raise UsageError(f"diff {arguments.shown(diff)}: not bytes", fix="give diff as the bytes of a unified diff "
                                                                       "(text.encode())")
    root = git.repo_root(arguments.workdir(cwd))
    root_str = str(root) if root else None
    if diff is not None or diff_file is not None:
        clash = [name for name, value in (("base", base), ("head", head), ("staged", staged),
                                          ("diff and diff_file", diff is not None and diff_file is not None))
                 if value]
        if clash:
            raise UsageError(f"a diff cannot be reviewed with {', '.join(clash)} as well",
                             fix="review either a diff or a git range")
        if diff is not None:
            return DiffRequest(mode="stdin", stdin_data=diff, repo_root=root_str)
        path = Path(str(diff_file))
        if not path.is_file():
            raise InputError(f"{path}: {'not a file' if path.exists() else 'no such file'}",
                             fix="name a unified diff file")
        return DiffRequest(mode="file", path=str(path), repo_root=root_str)
    if root_str is None:
        raise GitError(f"{arguments.workdir(cwd)} is not inside a git repository",
                       fix="review a diff instead, or run in a repository")
    if pushed is not None:
        return DiffRequest(mode="push", repo_root=root_str, head=pushed, remote=remote)
    if staged:
        if base or head:
            raise UsageError("staged changes are compared with HEAD; give no base or head with them")
        return DiffRequest(mode="staged", repo_root=root_str)
    if head:
        return DiffRequest(mode="range", repo_root=root_str, base=base, head=head)
    return DiffRequest(mode="worktree", repo_root=root_str, base=base)


def typed(*, texts: dict[str, object] | None = None, flags: dict[str, object] | None = None,
          paths: dict[str, object] | None = None) -> None:
    """Arguments of the wrong type, refused by name before anything runs: a caller in Python can
    pass anything, and a TypeError from deep inside names nothing the caller wrote."""
    for name, value in (texts or {}).items():
        arguments.text(name, value)
    for name, value in (flags or {}).items():
        arguments.flag(name, value)
    for name, value in (paths or {}).items():
        arguments.pathlike(name, value)


def run_options(*, fail_on: str | None = None, filter_mode: str | None = None, concurrency: int | None = None,
                agent_timeout: float | None = None, outputs: Sequence[tuple[object, object]] = (),
                packing: str | None = None, shard: tuple[int, int] | None = None) -> None:
    """The arguments of how a review runs, checked before anything is read: a bad one is a
    UsageError naming it (what the CLI's own choices and checks refuse)."""
    arguments.choice("fail_on", fail_on, arguments.FAIL_ON)
    arguments.choice("filter_mode", filter_mode, arguments.FILTER_MODES)
    arguments.choice("packing", packing, arguments.PACKINGS)
    arguments.concurrency(concurrency)
    arguments.timeout(agent_timeout)
    arguments.shard(shard)
    arguments.formats(outputs)


def given(request: object) -> None:
    if request is not None and not isinstance(request, DiffRequest):
        raise UsageError(f"request {arguments.shown(request)}: not a change", fix="make it with api.change(...)")


def agent_requests(pairs: Sequence[tuple[str, str]]) -> list[AgentRequest]:
    """(``ID`` or ``ID:GLOB``, reason) pairs as AgentRequests; an agent id has no ``:``."""
    arguments.pairs("add_agents", pairs, '[("security-reviewer", "touches auth")]')
    requests = []
    for target, reason in pairs:
        arguments.text("added agent", target, optional=False)
        arguments.text(f"the reason for {target}", reason, optional=False)
        agent, colon, glob = target.partition(":")
        if not agent or (colon and not glob):
            raise UsageError(f"added agent {target!r}: give an agent id, or ID:GLOB with a glob after the colon",
                             fix="e.g. security-reviewer, or security-reviewer:'src/auth/**'")
        if not reason or not reason.strip():
            raise UsageError(f"added agent {agent!r} has no reason", fix="say why the change needs this agent")
        if len(reason) > MAX_REASON:
            raise UsageError(f"added agent {agent!r}: the reason has {len(reason):,} characters, more than "
                             f"{MAX_REASON:,}", fix="say why in a sentence or two")
        requests.append(AgentRequest(agent=agent, reason=reason.strip(), glob=glob if colon else None))
    return requests
