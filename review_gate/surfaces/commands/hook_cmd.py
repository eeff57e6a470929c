"""``review-gate hook claude-code|codex``: the gate as a coding agent's hook, in the host's contract.

It reads the host's payload on stdin and exits 0 with the decision as JSON on stdout (a host
ignores any other exit code but 2, so exit 1 would let the agent carry on): see
``review_gate.surfaces.hooks``. A payload it cannot read (empty, not JSON, not a JSON object, too large)
or a bad flag is a usage error: exit 2, the message on stderr, which a host treats as a block.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from review_gate.errors import UsageError
from review_gate.outputs.agent_size import MIN_CHARS
from review_gate.pipeline.bounds import MAX_TIMEOUT_S
from review_gate.surfaces.hooks import HOSTS, fast_path
from review_gate.surfaces.hooks.base import MAX_PAYLOAD, PROBE_EVENT, RESERVE_S, Payload, read_payload

if TYPE_CHECKING:
    from pathlib import Path

    from review_gate.surfaces.hooks.gate import Options

MIN_BUDGET_S = 2 * RESERVE_S


def hook_command(args: argparse.Namespace) -> int:
    if args.host == "check":
        return check_command(args.target)
    if args.target is not None:
        raise UsageError(f"hook {args.host} {args.target}: one host at a time",
                         fix=f"run `review-gate hook {args.host}` from the host's settings, or `review-gate hook check "
                             f"{args.target}`")
    if args.max_blocks < 0:
        raise UsageError(f"--max-blocks {args.max_blocks}: must be 0 or more",
                         fix="give how many stops in a row the hook may block, e.g. --max-blocks 3")
    if not MIN_BUDGET_S <= args.budget <= MAX_TIMEOUT_S:
        raise UsageError(f"--budget {args.budget:g}: must be between {MIN_BUDGET_S:g} and {MAX_TIMEOUT_S} seconds",
                         fix="give a little less than the hook's timeout in the host's settings, e.g. --budget 50 "
                             "for a timeout of 60")
    if args.max_chars < MIN_CHARS:
        raise UsageError(f"--max-chars {args.max_chars}: the agent report needs at least {MIN_CHARS} characters",
                         fix="give 1000 or more (default 8000)")
    host = HOSTS[args.host]
    payload = read_payload(sys.stdin.buffer.read(MAX_PAYLOAD + 1))
    if fast_path.allowed(payload, args.config):
        return 0  # a silent allow, in both hosts' contracts; the gate, the models and the shell reader never load
    from review_gate.surfaces.hooks.gate import Options, decide

    options = Options(max_blocks=args.max_blocks, budget_s=args.budget, base=args.base, config=args.config,
                      fail_on=args.fail_on, max_chars=args.max_chars)
    if payload.event == PROBE_EVENT:
        sys.stdout.write(json.dumps({PROBE_EVENT: judged_with(payload, options)}) + "\n")
        return 0
    answer = host.encode(decide(host.NAME, payload, options), payload.event)
    if answer:
        sys.stdout.write(answer)
        sys.stdout.flush()
    return 0


def judged_with(payload: Payload, options: Options) -> dict[str, str | list[str] | None]:
    """What ``hook check`` asks the hook: the configuration it would load, the ``fail_on`` that
    decides (its --fail-on, else the configuration's) and the configuration's own, and which
    reviewers it runs within its budget, with their keys and without (``hooks.budget``)."""
    from pathlib import Path

    from review_gate import api
    from review_gate.change import git

    cwd = Path(payload.cwd) if payload.cwd else Path.cwd()
    root = git.repo_root(cwd) if cwd.is_dir() else None
    config = api.load(options.config, root)
    from review_gate.surfaces.hooks.budget import reviewers

    return {"config": config.directory, "fail_on": options.fail_on or config.settings.gate.fail_on,
            "configured_fail_on": config.settings.gate.fail_on, "reviewers": reviewers(config, options.budget_s)}


def _committed(root: Path, path: str) -> bool:
    from review_gate.change import git
    from review_gate.errors import GitError

    try:
        return git.has_head(root) and git.run(["cat-file", "-e", f"HEAD:{path}"], root, check=False).returncode == 0
    except (GitError, OSError):
        return False


def check_command(target: str | None) -> int:
    """``hook check [HOST]``: each host's hooks run as the host would run them (``hooks.check``)."""
    from pathlib import Path

    from review_gate.surfaces import console
    from review_gate.surfaces.commands.common import find_repo_root
    from review_gate.surfaces.hooks.check import check
    from review_gate.text.escape import sanitize

    root = find_repo_root() or Path.cwd()
    # settings the last commit has and the working tree lost: a teammate's hooks silently gone
    lost = [n for n, h in HOSTS.items() if not (root / h.SETTINGS).exists() and _committed(root, h.SETTINGS)]
    names = [target] if target else [n for n, h in HOSTS.items() if (root / h.SETTINGS).exists()]
    if not target and lost:
        for name in lost:
            console.out(sanitize(f"{name}: {root / HOSTS[name].SETTINGS}"))
            console.out(sanitize(f"  PROBLEM: {HOSTS[name].SETTINGS} was deleted (the last commit has it): the hooks "
                                 f"of review-gate no longer run for {name}"))
            console.out(sanitize(f"    fix: restore it (git restore {HOSTS[name].SETTINGS}), or run `review-gate init "
                                 f"--hooks {name}`"))
        if not names:
            return 1
    if not names:
        raise UsageError(f"no coding agent's hook settings in {root} ({', '.join(h.SETTINGS for h in HOSTS.values())})",
                         fix="add them with `review-gate init --hooks claude-code` (or codex)")
    for name in names:
        host = HOSTS[name]
        files = [host.SETTINGS, *([".claude/settings.local.json"] if name == "claude-code" else [])]
        if not any((root / f).exists() for f in files):
            raise UsageError(f"{root / host.SETTINGS} does not exist: no hooks of review-gate run for {name}",
                             fix=f"add them with `review-gate init --hooks {name}`, then run `review-gate hook "
                                 f"check {name}` again")
    failed = bool(lost) and not target
    for name in names:
        found = check(HOSTS[name], root)
        console.out(sanitize(f"{name}: {found.settings}"))
        for command in found.commands:
            console.out(sanitize(f"  runs: {command}"))
        for line in found.reviewers:
            console.out(sanitize(f"  {line}"))
        for probe in found.probes:
            console.out(sanitize(f"  {probe.what}: {'ran' if probe.ran else 'did not run'} in {probe.seconds:.1f} s, "
                                 f"answer: {probe.answer}"))
        for problem, fix in found.problems:
            console.out(sanitize(f"  PROBLEM: {problem}"))
            console.out(sanitize(f"    fix: {fix}"))
        if found.ok:
            console.out("  ok: the hooks run and answer in the host's contract (block: the gate fails now and "
                        "would keep the agent working; allow: it passes now)")
        failed = failed or not found.ok
    return 1 if failed else 0
