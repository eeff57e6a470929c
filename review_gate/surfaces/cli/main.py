"""Command line entry point: parse, dispatch to a command, map errors to exit codes.

Heavy modules (pydantic, rich, anyio) are imported inside the commands, so ``--version`` and
``--help`` start fast.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import signal
import sys
import tempfile
import threading
import traceback
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from review_gate import __version__
from review_gate.outputs import FORMATS

if TYPE_CHECKING:
    Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]

COMMANDS = ("run", "plan", "config", "init", "explain", "agents", "meta", "baseline", "replay",
            "history", "show", "accept", "accepted", "gc", "gaps", "debt", "loop", "hook", "mcp", "sweep", "batch",
            "merge", "ack", "rule")
STATE_COMMANDS = ("history", "show", "accept", "accepted", "gc", "debt")
DECISIONS = ("pass_with_warnings", "needs_fixes", "fail", "never")
FILTER_MODES = ("added", "diff_context", "file", "nofilter")
HOOK_HOSTS = ("claude-code", "codex")  # review_gate.surfaces.hooks.HOSTS, named here so that --help imports nothing
EXIT_INTERRUPTED = 130  # 128 + SIGINT
EXIT_TERMINATED = 143  # 128 + SIGTERM


class _FormatAction(argparse.Action):
    """``--format F [--output FILE]``, repeatable: each --output belongs to the --format before it."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        outputs: list[list[str | None]] = getattr(namespace, "outputs", None) or []
        if option_string in ("--format", "-f"):
            outputs.append([str(values), None])
        else:
            if not outputs:
                outputs.append(["text", None])
            if outputs[-1][1] is not None:
                parser.error(f"--output {values}: the format before it already has an output; "
                             "give each --format its own --output")
            outputs[-1][1] = str(values)
        namespace.outputs = outputs


class _AddAgentAction(argparse.Action):
    """``--add-agent ID[:GLOB] --gap-reason TEXT``, repeatable: each --gap-reason belongs to the
    --add-agent before it; a pair left without its reason is refused by the run command."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        added: list[list[str | None]] = getattr(namespace, "add_agents", None) or []
        if option_string == "--add-agent":
            added.append([str(values), None])
        elif not added or added[-1][1] is not None:
            parser.error(f"--gap-reason {values}: give it right after the --add-agent ID it explains")
        else:
            added[-1][1] = str(values)
        namespace.add_agents = added


def _input_options(parser: argparse.ArgumentParser, formats: Sequence[str]) -> None:
    group = parser.add_argument_group("what to review")
    group.add_argument("--base", metavar="REF",
                       help="compare against the merge-base with REF (default: the default branch)")
    group.add_argument("--head", metavar="REF", help="review the commits up to REF instead of the working tree")
    group.add_argument("--staged", action="store_true", help="review the staged changes against HEAD")
    group.add_argument("--diff", metavar="FILE", help="review a unified diff file (- for standard input)")
    group.add_argument("--pre-push", action="store_true",
                       help="review the range being pushed (PRE_COMMIT_FROM_REF..PRE_COMMIT_TO_REF, set by pre-commit)")
    parser.add_argument("--config", metavar="DIR",
                        help="config directory (default: $REVIEW_GATE_CONFIG, .review-gate/, built-in)")
    if not formats:
        return
    parser.add_argument("--format", "-f", dest="outputs", action=_FormatAction, choices=formats,
                        help=f"output format, repeatable: {', '.join(formats)}")
    parser.add_argument("--output", "-o", dest="outputs", action=_FormatAction, metavar="FILE",
                        help="write the format before it to FILE instead of standard output")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="review-gate",
        description="Review a diff with the agents your policies choose, and gate on severity.",
        epilog="exit codes: 0 pass / pass_with_warnings, 1 fail / needs_fixes, 2 usage, config or "
               "input error, 3 incomplete (a required reviewer produced nothing usable), 4 the loop is "
               "waiting for a person")
    parser.add_argument("--version", action="version", version=f"review-gate {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for add in (_run_command, _plan_command, _config_commands, _explain_command, _agents_commands,
                _baseline_command, _replay_command, _state_commands, _ack_command, _gaps_command, _meta_commands,
                _loop_commands, _hook_command, _mcp_command, _sweep_command, _batch_commands, _merge_command,
                _rule_command):
        add(sub)
    return parser


def _run_command(sub: Subparsers) -> None:
    run = sub.add_parser("run", help="review the change and decide the gate (the default command)")
    _input_options(run, tuple(FORMATS))
    run.add_argument("--fail-on", choices=DECISIONS, help="least severe decision that exits 1 (default: needs_fixes)")
    run.add_argument("--exit-zero", action="store_true",
                     help="advisory run: report everything and exit 0 (still 2 on errors, 3 when incomplete)")
    run.add_argument("--filter-mode", choices=FILTER_MODES,
                     help="which findings count: on added lines (default), in hunks, in changed files, all")
    run.add_argument("--concurrency", type=int, metavar="N", help="agents running at once")
    run.add_argument("--timeout", type=float, metavar="S", help="deadline of every agent, retries included")
    run.add_argument("--offline", action="store_true", help="run only agents that need no network")
    run.add_argument("--packing", choices=("per_agent", "agent_packed"),
                     help="llm agents of one provider, model and endpoint: each in its own requests, or "
                          "packed into shared requests (default: packing in review-gate.json)")
    run.add_argument("--constitution", metavar="FILE",
                     help="Markdown file whose Standards section LLM agents get (overrides review-gate.json)")
    run.add_argument("--intent", metavar="FILE",
                     help="what the change is for (a task and its acceptance criteria, a pull request's title and "
                          "description; - for standard input, at most 64 KB): LLM agents get it as data and judge "
                          "the change against it")
    run.add_argument("--no-state", action="store_true",
                     help="no run state: no cache, no acceptances, nothing recorded (state_path untouched)")
    run.add_argument("--no-cache", action="store_true", help="review every file again (the run is still recorded)")
    run.add_argument("--bundle", metavar="DIR",
                     help="write a replay bundle (facts, config, every agent's answer, report) to DIR")
    run.add_argument("--baseline", metavar="FILE",
                     help="baseline to apply (default: baseline.json in the config directory or .review-gate/)")
    run.add_argument("--no-baseline", action="store_true", help="apply no baseline: every finding counts")
    run.add_argument("--max-chars", type=int, metavar="N",
                     help="the agent format's size limit in characters (default 8000); the least severe "
                          "findings are left out first, and counted")
    run.add_argument("--add-agent", dest="add_agents", action=_AddAgentAction, metavar="ID[:GLOB]",
                     help="dispatch this registry agent too, over the changed files (those GLOB selects), and log "
                          "it as a gap; repeatable, each followed by its --gap-reason")
    run.add_argument("--gap-reason", dest="add_agents", action=_AddAgentAction, metavar="TEXT",
                     help="why the change needs the --add-agent before it (required with each one)")
    _shard_option(run)
    _verbose_option(run)


def _plan_command(sub: Subparsers) -> None:
    plan = sub.add_parser("plan", help="stages 1-4 only: classification, manifest and gaps; no agent runs")
    _input_options(plan, ("text", "json"))
    plan.add_argument("--offline", action="store_true", help="skip the LLM gap detector (no network)")


def _config_commands(sub: Subparsers) -> None:
    """config validate | show, and init."""
    config = sub.add_parser("config", help="check or show the configuration")
    config_sub = config.add_subparsers(dest="config_command", metavar="ACTION", required=True)
    for name, text in (("validate", "check every file and every cross-file reference"),
                       ("show", "print the effective configuration as JSON")):
        p = config_sub.add_parser(name, help=text)
        p.add_argument("--config", metavar="DIR")

    init = sub.add_parser("init", help="write the built-in configuration into .review-gate/ to edit")
    init.add_argument("--force", action="store_true", help="overwrite existing files")
    init.add_argument("--dir", metavar="DIR", help="where to write (default: .review-gate/ at the repository root)")
    init.add_argument("--hooks", choices=HOOK_HOSTS, metavar="HOST",
                      help="instead, add review-gate's hooks to the project's settings of a coding agent "
                           f"({', '.join(HOOK_HOSTS)}), keeping what is there")


def _explain_command(sub: Subparsers) -> None:
    explain = sub.add_parser("explain", help="show the domains, policies and agents a path triggers "
                                             "(or, given a rule id, the rule: as `review-gate rule ID`)")
    explain.add_argument("paths", nargs="+", metavar="PATH|RULE_ID")
    explain.add_argument("--config", metavar="DIR")


def _rule_command(sub: Subparsers) -> None:
    rule = sub.add_parser(
        "rule", help="what a rule checks, why, how to fix it, an example and a near miss, what routes it",
        description="Describe one rule of the configuration in use: name, severity, agent, description, "
                    "detection, recommendation, paths, pattern, an example it flags and a near miss, the policies "
                    "and domains that route it. Exit 2 for an unknown id, with the closest ids.")
    rule.add_argument("rule", metavar="ID", help="the rule id a report shows (or the start of one)")
    rule.add_argument("--format", "-f", choices=("text", "json"), default="text")
    rule.add_argument("--config", metavar="DIR",
                      help="config directory (default: $REVIEW_GATE_CONFIG, .review-gate/, built-in)")


def _agents_commands(sub: Subparsers) -> None:
    agents = sub.add_parser("agents", help="the agent registry")
    agents_sub = agents.add_subparsers(dest="agents_command", metavar="ACTION", required=True)
    listing = agents_sub.add_parser("list", help="every agent, its kind, state and the policies that dispatch it")
    listing.add_argument("--config", metavar="DIR")
    listing.add_argument("--format", choices=("text", "json"), default="text")
    check = agents_sub.add_parser(
        "check", help="send one tiny request to an llm agent's endpoint: latency, model, structured output",
        description="Send one tiny request to an llm agent's endpoint and print the latency, the model the "
                    "server reports and whether structured output works. Exit 0 when it works, 1 when the "
                    "request fails, 2 on a usage error (unknown agent, not an llm agent, key not set).")
    check.add_argument("agent", metavar="ID")
    check.add_argument("--config", metavar="DIR")
    check.add_argument("--timeout", type=float, default=60, metavar="SECONDS", help="give up after this long")


def _baseline_command(sub: Subparsers) -> None:
    baseline = sub.add_parser("baseline", help="record the findings of the change as accepted debt "
                                               "(.review-gate/baseline.json, to commit)")
    _input_options(baseline, ())
    baseline.add_argument("--expires", metavar="YYYY-MM-DD", help="the last day the entries apply")
    baseline.add_argument("--output", "-o", metavar="FILE",
                          help="where to write (default: .review-gate/baseline.json at the repository root)")
    baseline.add_argument("--filter-mode", choices=FILTER_MODES, help="which findings to record (as for run)")
    baseline.add_argument("--offline", action="store_true", help="run only agents that need no network")


def _replay_command(sub: Subparsers) -> None:
    replay = sub.add_parser("replay", help="decide again from a run's --bundle DIR, calling no agent")
    replay.add_argument("bundle", metavar="DIR", help="a directory written by `run --bundle DIR`")
    replay.add_argument("--config", metavar="DIR", help="judge with this config instead of the bundle's config/")
    replay.add_argument("--format", "-f", dest="outputs", action=_FormatAction, choices=tuple(FORMATS),
                        help=f"output format, repeatable: {', '.join(FORMATS)}")
    replay.add_argument("--output", "-o", dest="outputs", action=_FormatAction, metavar="FILE",
                        help="write the format before it to FILE instead of standard output")
    replay.add_argument("--fail-on", choices=DECISIONS, help="least severe decision that exits 1")
    replay.add_argument("--filter-mode", choices=FILTER_MODES, help="which findings count (as for run)")
    _verbose_option(replay)


def _meta_commands(sub: Subparsers) -> None:
    meta = sub.add_parser("meta", help="the @@@REVIEW_META review format (--format meta, output: review_meta)")
    meta_sub = meta.add_subparsers(dest="meta_command", metavar="ACTION", required=True)
    meta_check = meta_sub.add_parser(
        "check", help="check a review's @@@REVIEW_META block and print its summary line",
        description="Check the @@@REVIEW_META block that opens a review and print its summary line. "
                    "Exit 0 when the block is valid, whatever its verdict; 2 when it is missing or malformed.")
    meta_check.add_argument("file", metavar="FILE", help="the review (- for standard input)")


def _loop_commands(sub: Subparsers) -> None:
    """loop start | status | approve | reject | retry | cancel | log: the coder/reviewer loop."""
    loop = sub.add_parser(
        "loop", help="the coder/reviewer loop: a session per task, driven to GO or handed to a person",
        description="Drive a task through plan, generate, review and revise until the gate says GO, with "
                    "approvals between the steps. Each command is its own process; the session lives in the "
                    "run state. See docs/loop.md.",
        epilog="exit codes: 0 complete (GO) or cancelled; 2 refused, nothing changed (usage, config, a missing "
               "or malformed @@@REVIEW_META block); 3 stopped with an error; 4 waiting for a person (an "
               "approval, a response to write, or the hand-off after max_iterations NO_GO verdicts)")
    actions = loop.add_subparsers(dest="loop_command", metavar="ACTION", required=True)
    start = actions.add_parser("start", help="start a session for TASK and run it as far as it goes alone "
                                             "(or resume an interrupted one)")
    start.add_argument("task", metavar="TASK", help="the task id: letters, digits, '.', '_', '-'")
    start.add_argument("--from", dest="start_phase", choices=("plan", "generate", "review"),
                       help="the first phase (default: plan with --prompt, else review: the changes already "
                            "in the working tree)")
    start.add_argument("--prompt", metavar="FILE", help="the task, in a text file (- for standard input)")
    start.add_argument("--coder", metavar="AGENT", help="the command agent that writes the plan and the code")
    start.add_argument("--max-iterations", type=int, metavar="N", help="NO_GO verdicts before the hand-off")
    start.add_argument("--mode", choices=("interactive", "automated"),
                       help="automated: no person in the loop (a manual approver or ai is refused)")
    start.add_argument("--approver", action="append", metavar="PHASE[.STAGE]=skip|manual|AGENT",
                       help="who approves a phase's prompt and response (repeatable)")
    start.add_argument("--base", metavar="REF", help="review against the merge-base with REF (pinned at start)")
    start.add_argument("--restart", action="store_true",
                       help="start a complete or cancelled session of TASK again (its files are kept aside)")
    start.add_argument("--fail-on", choices=DECISIONS, help="least severe decision that is NO_GO "
                                                            "(default: the gate's fail_on)")
    status = actions.add_parser("status", help="where sessions stand: phase, stage, iteration, what is awaited, "
                                               "drift after GO, hand-offs waiting")
    status.add_argument("task", metavar="TASK", nargs="?")
    status.add_argument("--format", choices=("text", "json"), default="text")
    approve = actions.add_parser("approve", help="accept what is pending (the file as it is now) and go on")
    approve.add_argument("task", metavar="TASK")
    verdict = approve.add_mutually_exclusive_group()
    verdict.add_argument("--complete", action="store_true", help="at review.response: GO, whatever the review says")
    verdict.add_argument("--revise", action="store_true", help="at review.response: NO_GO, one more revise round")
    approve.add_argument("--replace", action="store_true",
                         help="at review.response: replace the review with --feedback TEXT")
    approve.add_argument("--feedback", metavar="TEXT", help="what the next step should know")
    for name, text in (("reject", "reject what is pending and stop (then retry, approve or cancel)"),
                       ("retry", "make what is pending again, with this feedback")):
        action = actions.add_parser(name, help=text)
        action.add_argument("task", metavar="TASK")
        action.add_argument("--feedback", required=True, metavar="TEXT")
    cancel = actions.add_parser("cancel", help="end the session")
    cancel.add_argument("task", metavar="TASK")
    log = actions.add_parser("log", help="a session's transitions and decisions")
    log.add_argument("task", metavar="TASK")
    log.add_argument("--format", choices=("text", "json"), default="text")
    for parser in (start, status, approve, *(actions.choices[n] for n in ("reject", "retry")), cancel, log):
        parser.add_argument("--config", metavar="DIR",
                            help="config directory (default: $REVIEW_GATE_CONFIG, .review-gate/, built-in)")


def _state_commands(sub: Subparsers) -> None:
    """history, show, accept, accepted, gc, debt: the run state (state_path of review-gate.json)."""
    config_help = "config directory (its review-gate.json names the state_path)"
    history = sub.add_parser("history", help="the recorded runs, newest first")
    history.add_argument("--limit", type=int, metavar="N", default=20, help="show the newest N runs (default 20)")
    show = sub.add_parser("show", help="a recorded run's report, in any output format")
    show.add_argument("run", metavar="RUN", help="a run id, a unique prefix or suffix of one, or last")
    show.add_argument("--format", "-f", choices=tuple(FORMATS), default="text")
    show.add_argument("--output", "-o", metavar="FILE", help="write to FILE instead of standard output")
    _verbose_option(show)
    accept = sub.add_parser("accept", help="accept a finding by fingerprint: it no longer counts")
    accept.add_argument("fingerprint", metavar="FINGERPRINT")
    accept.add_argument("--reason", required=True, metavar="TEXT", help="why it is accepted (shown in reports)")
    accept.add_argument("--expires", metavar="YYYY-MM-DD", help="the last day the acceptance applies")
    accept.add_argument("--force", action="store_true", help="accept a fingerprint no recorded run reported")
    accept.add_argument("--shared", action="store_true",
                        help="write it to .review-gate/acceptances.json, to commit: it counts for everyone (CI "
                             "included) once on the base branch; without it, only on this machine")
    accepted = sub.add_parser("accepted", help="the active acceptances; --revoke ID ends one")
    accepted.add_argument("--revoke", type=int, metavar="ID", help="revoke the acceptance with this id")
    accepted.add_argument("--all", action="store_true", help="list revoked and expired ones too")
    gc = sub.add_parser("gc", help="drop old runs and their review pairs from the run state")
    gc.add_argument("--days", type=int, metavar="N",
                    help="drop runs older than N days (default 30; above 36500, none by age)")
    gc.add_argument("--keep", type=int, metavar="N", help="drop all but the newest N runs")
    gc.add_argument("--obsolete", action="store_true",
                    help="drop only review pairs a newer pair of the same file and agent supersedes (and runs "
                         "left with none)")
    debt = sub.add_parser(
        "debt", help="deferred debt: findings a passing gate let through, as a list or as issue drafts",
        description="List the deferred debt: the warnings (and worse) of runs whose gate passed, one item per "
                    "finding across runs, until a later run shows it gone. --format markdown or json writes an "
                    "issue draft per item; `debt link ID URL` records the issue opened for one, so that it is "
                    "never opened twice. See docs/debt.md.")
    debt.add_argument("--all", action="store_true", help="list resolved and waived items too")
    debt.add_argument("--unlinked", action="store_true", help="only items no issue was opened for")
    debt.add_argument("--limit", type=int, metavar="N", help="at most N items: the most severe, then the oldest")
    debt.add_argument("--format", "-f", choices=("text", "json", "markdown"), default="text",
                      help="text: a table; json, markdown: an issue draft (title and body) per item")
    debt.add_argument("--output", "-o", metavar="FILE", help="write the json or markdown to FILE")
    debt.add_argument("--drafts", metavar="DIR",
                      help="write each item's issue draft to DIR/ID.title and DIR/ID.md and print the ids")
    _link_command(debt, "debt_command", "item", "a debt item",
                  "the item's number (or its fingerprint, or 6+ of its first digits)", config_help)
    for parser in (history, show, accept, accepted, gc, debt):
        parser.add_argument("--config", metavar="DIR", help=config_help)


def _ack_command(sub: Subparsers) -> None:
    ack = sub.add_parser(
        "ack", help="note that you saw a finding; it still counts (alone: list the acks)",
        description="Record that a person saw a finding a recorded run reported (seed 003's ack), with why: it "
                    "waives nothing (the finding still counts) and changes no freshness (its review pair is "
                    "reused or reviewed again as before). Without an ID, list the acks recorded.")
    ack.add_argument("finding", nargs="?", metavar="ID", help="the finding's id as a report shows it, or its "
                                                               "whole fingerprint")
    ack.add_argument("--reason", metavar="TEXT", help="what you saw, or what will be done about it")
    ack.add_argument("--config", metavar="DIR", help="config directory (its review-gate.json names the state_path)")


def _gaps_command(sub: Subparsers) -> None:
    gaps = sub.add_parser(
        "gaps", help="what the configuration keeps missing: the recorded runs' gaps, grouped and counted; "
                     "--apply ID applies one's patch",
        description="List the gaps the recorded runs reported (unclassified files, unrouted domains, agents "
                    "added by the gap detector or --add-agent...), grouped by kind and subject, with how many runs "
                    "reported each. --apply ID shows a gap's patch of the config directory as a diff, checks the "
                    "configuration with it as `config validate` does, and writes it once confirmed (--yes, or y at "
                    "a terminal). Exit 0 listed or applied; 1 declined at the prompt; 2 refused, nothing written.")
    gaps.add_argument("--format", "-f", choices=("text", "json", "markdown"),
                      help="text (default), json, or markdown: one issue draft per gap")
    gaps.add_argument("--output", "-o", metavar="FILE", help="write to FILE instead of standard output")
    gaps.add_argument("--all", action="store_true", help="list gaps whose patch was applied too")
    gaps.add_argument("--apply", metavar="ID", help="apply the patch of this gap to the config directory")
    gaps.add_argument("--yes", "-y", action="store_true", help="with --apply: apply without asking")
    gaps.add_argument("--unlinked", action="store_true", help="only gaps no issue was opened for")
    gaps.add_argument("--limit", type=int, metavar="N", help="at most N gaps, the most recurring first")
    gaps.add_argument("--drafts", metavar="DIR",
                      help="write an issue draft (DIR/ID.title, DIR/ID.md) for each open gap a configuration change "
                           "closes, and print the ids")
    config_help = ("config directory to patch, whose review-gate.json names the state_path "
                   "(default: $REVIEW_GATE_CONFIG, .review-gate/)")
    gaps.add_argument("--config", metavar="DIR", help=config_help)
    _link_command(gaps, "gaps_command", "gap", "a gap", "the gap's id (4 or more of its hex digits)", config_help)


def _link_command(parent: argparse.ArgumentParser, dest: str, name: str, what: str, id_help: str,
                  config_help: str) -> None:
    """``PARENT link ID URL [--replace]``: the issue opened for ``what``, so that it is opened once."""
    link = parent.add_subparsers(dest=dest, metavar="ACTION").add_parser(
        "link", help=f"record the issue opened for {what}: it is never opened again")
    link.add_argument(name, metavar="ID", help=id_help)
    link.add_argument("url", metavar="URL", help="the issue's URL")
    link.add_argument("--replace", action="store_true", help=f"replace the issue {what} is linked to already")
    # SUPPRESS: the subcommand's default must not wipe a --config given before `link`
    link.add_argument("--config", metavar="DIR", default=argparse.SUPPRESS, help=config_help)


def _hook_command(sub: Subparsers) -> None:
    hook = sub.add_parser(
        "hook", help="a coding agent's hook: review, then answer in the host's own contract",
        description="Read a coding agent's hook payload (JSON on standard input) and answer in the host's "
                    "contract: a stop is blocked while the gate fails (at most --max-blocks times in a row), a "
                    "git commit, git push or gh pr create is denied. Always exit 0 with the answer as JSON on "
                    "standard output; 2 only when the payload is not JSON. `review-gate hook check [HOST]` runs the "
                    "hooks of the project's settings as the host would, with sample payloads, and says whether the "
                    "gate runs and blocks: exit 0 when it does, 1 when a hook would not run or could never block, 2 "
                    "when there are no hook settings (or none for the HOST named).")
    hook.add_argument("host", choices=(*HOOK_HOSTS, "check"),
                      help="the coding agent that runs the hook; or check: prove the hooks in the project's "
                           "settings run and block (review-gate hook check [HOST])")
    hook.add_argument("target", nargs="?", choices=HOOK_HOSTS, metavar="HOST",
                      help="with check: the host whose settings to check (default: every host with settings here)")
    hook.add_argument("--max-blocks", type=int, default=3, metavar="N",
                      help="stops blocked in a row before the agent is let stop with a hand-off (default 3)")
    hook.add_argument("--budget", type=float, default=50, metavar="S",
                      help="seconds the whole review may take, below the host's hook timeout (default 50); "
                           "LLM reviewers run only when their deadline fits")
    hook.add_argument("--base", metavar="REF", help="compare against the merge-base with REF (default: the default "
                                                    "branch)")
    hook.add_argument("--config", metavar="DIR",
                      help="config directory (default: $REVIEW_GATE_CONFIG, .review-gate/, built-in)")
    hook.add_argument("--fail-on", choices=DECISIONS, help="least severe decision that blocks (default: needs_fixes)")
    hook.add_argument("--max-chars", type=int, default=8000, metavar="N",
                      help="size limit of the report the agent is given, in characters (default 8000)")


def _mcp_command(sub: Subparsers) -> None:
    mcp = sub.add_parser("mcp", help="serve the Model Context Protocol over stdio (tools: review, plan, explain, "
                                    "accept, loop_status)",
                         description="Serve review-gate's tools over the Model Context Protocol on standard input "
                                     "and output, for an MCP client such as a coding agent. Needs the mcp extra: "
                                     "pip install '.[mcp]' in a clone of review-gate (review-gate[mcp] once it is "
                                     "published on PyPI). The configuration, the repository and "
                                     "fail_on are fixed when it starts; the accept tool refuses unless started "
                                     "with --allow-accept: the client is usually the agent whose findings they are.")
    mcp.add_argument("--config", metavar="DIR",
                     help="the config directory every call uses (default: $REVIEW_GATE_CONFIG, the repository's "
                          ".review-gate/, else the built-in configuration, as found when the server starts)")
    mcp.add_argument("--allow-accept", action="store_true",
                     help="let the client record acceptances of findings (only for a client a person drives: "
                          "an agent must not waive its own findings)")
    mcp.add_argument("--allow-other-config", action="store_true",
                     help="let a call name another config directory (it decides which programs run: only for a "
                          "client a person drives)")
    mcp.add_argument("--allow-other-repo", action="store_true",
                     help="let a call review another repository (cwd) than the one the server started in")
    mcp.add_argument("--allow-weaker-fail-on", action="store_true",
                     help="let a call ask for a weaker fail_on than the configuration's")
    mcp.add_argument("--allow-offline", action="store_true",
                     help="let a review call skip the llm reviewers that can run (offline: true)")


def _verbose_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--verbose", "-v", action="store_true",
                        help="text format: the long layout (findings under severity headings, each with its agent "
                             "and fix, the agents' table, every waived finding and gap)")


def _shard_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--shard", metavar="K/N",
                        help="review the K-th of N balanced shares of the files (a CI matrix job); "
                             "`review-gate merge` combines the N JSON reports")


def _review_flags(parser: argparse.ArgumentParser, *, outputs: bool = True) -> None:
    """The flags of how a review runs, shared by sweep and batch submit."""
    if outputs:
        parser.add_argument("--config", metavar="DIR",
                            help="config directory (default: $REVIEW_GATE_CONFIG, .review-gate/, built-in)")
        parser.add_argument("--format", "-f", dest="outputs", action=_FormatAction, choices=tuple(FORMATS),
                            help=f"output format, repeatable: {', '.join(FORMATS)}")
        parser.add_argument("--output", "-o", dest="outputs", action=_FormatAction, metavar="FILE",
                            help="write the format before it to FILE instead of standard output")
    parser.add_argument("--fail-on", choices=DECISIONS,
                        help="least severe decision that exits 1 (default: needs_fixes)")
    parser.add_argument("--filter-mode", choices=FILTER_MODES, help="which findings count (as for run)")
    parser.add_argument("--concurrency", type=int, metavar="N", help="agents running at once")
    parser.add_argument("--timeout", type=float, metavar="S", help="deadline of every agent, retries included")
    parser.add_argument("--packing", choices=("per_agent", "agent_packed"),
                        help="llm agents of one endpoint: each in its own requests, or packed (as for run)")
    parser.add_argument("--constitution", metavar="FILE", help="Markdown file whose Standards section LLM agents get")
    parser.add_argument("--no-cache", action="store_true", help="review every file again (the run is still recorded)")
    parser.add_argument("--bundle", metavar="DIR", help="write a replay bundle to DIR")
    parser.add_argument("--baseline", metavar="FILE", help="baseline to apply (as for run)")
    parser.add_argument("--no-baseline", action="store_true", help="apply no baseline: every finding counts")
    parser.add_argument("--max-file-bytes", type=int, metavar="N",
                        help="a swept file larger than this is not read, and a gap says so (default 2000000)")
    if outputs:
        _verbose_option(parser)


def _sweep_command(sub: Subparsers) -> None:
    sweep = sub.add_parser(
        "sweep", help="review files as they are (each file added whole), not a diff",
        description="Review the repository's files as they are: every file git lists (tracked, or untracked "
                    "and not ignored) within the PATHSPECs, as if added whole, with the same policies, agents, "
                    "gate and reports as a diff. A second sweep of an unchanged tree calls no agent.")
    sweep.add_argument("paths", nargs="*", metavar="PATHSPEC", help="git pathspecs (default: the whole tree)")
    sweep.add_argument("--since", metavar="REF", help="only the files changed since REF")
    _review_flags(sweep)
    sweep.add_argument("--exit-zero", action="store_true", help="advisory run: exit 0 unless an error or incomplete")
    sweep.add_argument("--offline", action="store_true", help="run only agents that need no network")
    sweep.add_argument("--no-state", action="store_true",
                       help="no run state: no cache, no acceptances, nothing recorded")
    _shard_option(sweep)


def _batch_commands(sub: Subparsers) -> None:
    batch = sub.add_parser("batch", help="provider batch execution: submit, status, collect")
    batch_sub = batch.add_subparsers(dest="batch_command", metavar="ACTION", required=True)
    submit = batch_sub.add_parser(
        "submit", help="plan the run, run the local agents, send the llm requests to the providers' batch APIs",
        description="Plan a change (or, with --sweep, the files as they are), record the run and its pending "
                    "pairs, run the agents that need no provider now, and send every llm request to its "
                    "provider's batch API (OpenAI Batch API, Anthropic Message Batches): half the price, "
                    "answered within 24 hours. Exit 0 once submitted.")
    submit.add_argument("paths", nargs="*", metavar="PATHSPEC", help="with --sweep: git pathspecs")
    submit.add_argument("--sweep", action="store_true", help="submit a sweep (files as they are) instead of a diff")
    submit.add_argument("--since", metavar="REF", help="with --sweep: only the files changed since REF")
    _input_options(submit, ())
    _review_flags(submit, outputs=False)
    submit.add_argument("--format", "-f", choices=("text", "json"), default="text", dest="summary_format",
                        help="how to print what was submitted")
    status = batch_sub.add_parser("status", help="a batch run's batches as the providers see them")
    collect = batch_sub.add_parser(
        "collect", help="download an ended batch run's results (once) and decide the gate",
        description="Download the results of an ended batch run once, complete or mark missing exactly its "
                    "requested pairs, and write the report and decision as run does (exit codes as run). "
                    "Collecting it again does nothing and says so. Exit 3 while a batch still runs.")
    for parser in (status, collect):
        parser.add_argument("run", nargs="?", metavar="RUN",
                            help="a run id, a unique prefix or suffix of one, or last (default: the newest "
                                 "run waiting for its batches)")
        parser.add_argument("--config", metavar="DIR", help="config directory (its review-gate.json names the "
                                                            "state_path)")
    status.add_argument("--format", "-f", choices=("text", "json"), default="text", dest="summary_format")
    collect.add_argument("--format", "-f", dest="outputs", action=_FormatAction, choices=tuple(FORMATS),
                         help=f"output format, repeatable: {', '.join(FORMATS)}")
    collect.add_argument("--output", "-o", dest="outputs", action=_FormatAction, metavar="FILE",
                         help="write the format before it to FILE instead of standard output")
    collect.add_argument("--wait", type=float, metavar="SECONDS",
                         help="while a batch runs, check again every --poll seconds, for at most SECONDS")
    collect.add_argument("--poll", type=float, metavar="SECONDS", default=30.0,
                         help="seconds between checks with --wait (default 30)")
    collect.add_argument("--bundle", metavar="DIR", help="write the replay bundle to DIR (default: submit's --bundle)")
    _verbose_option(collect)


def _merge_command(sub: Subparsers) -> None:
    merge = sub.add_parser(
        "merge", help="combine the JSON reports of a run's shards (--shard K/N) into one report and decision",
        description="Combine the JSON reports of the N shards of one run into one report and one gate decision "
                    "(exit codes as run). Reports of another change or configuration, a shard missing or given "
                    "twice: exit 2.")
    merge.add_argument("reports", nargs="+", metavar="REPORT", help="the shards' JSON reports (--format json)")
    merge.add_argument("--config", metavar="DIR", help="the config directory the shards ran with")
    merge.add_argument("--format", "-f", dest="outputs", action=_FormatAction, choices=tuple(FORMATS),
                       help=f"output format, repeatable: {', '.join(FORMATS)}")
    merge.add_argument("--output", "-o", dest="outputs", action=_FormatAction, metavar="FILE",
                       help="write the format before it to FILE instead of standard output")
    merge.add_argument("--fail-on", choices=DECISIONS, help="least severe decision that exits 1")
    _verbose_option(merge)


def _with_default_command(argv: list[str]) -> list[str]:
    if not argv or (argv[0] not in COMMANDS and argv[0] not in ("-h", "--help", "--version")):
        return ["run", *argv]
    return argv


def main(argv: Sequence[str] | None = None) -> int:
    args_list = _with_default_command(list(sys.argv[1:] if argv is None else argv))
    parser = build_parser()
    try:
        args = parser.parse_args(args_list)
    except SystemExit as exc:  # argparse: --help, --version (0) or a usage error (2)
        return int(exc.code or 0)
    from review_gate.errors import ReviewGateError
    from review_gate.surfaces import console

    terminated: list[int] = []
    try:
        _check_paths(args)
        with _sigterm_as_interrupt(terminated):
            return _dispatch(args)
    except ReviewGateError as exc:
        # Messages quote paths, refs and config values: escape them, keep our own line break.
        console.err(f"review-gate: error: {console.sanitize(exc.message)}"
                    + (f"\n  fix: {console.sanitize(exc.fix)}" if exc.fix else ""))
        return exc.exit_code
    except KeyboardInterrupt:
        console.err("review-gate: terminated" if terminated else "review-gate: interrupted")
        return EXIT_TERMINATED if terminated else EXIT_INTERRUPTED
    except Exception as exc:
        if _closed_pipe(exc):
            # The reader went away (`review-gate | head -1`). 141 is what a shell reports for a
            # process that SIGPIPE ends (as it ends git or grep): never 0, since the output was
            # cut short, and not 3, since nothing went wrong inside; no crash log, no more output.
            _quiet_standard_streams()
            return 141
        named = _path_argument(exc, args)
        if named is not None:  # the OS refused a path the user gave (no permission, a loop of links...)
            why = console.sanitize(str(getattr(exc, "strerror", exc)))
            console.err(f"review-gate: error: {console.sanitize(named[0])} {console.sanitize(named[1])}: {why}\n"
                        f"  fix: give {console.sanitize(named[0])} a path that can be used")
            return 2
        log = _crash_log(traceback.format_exc())
        where = f"details in {log}" if log else "its details could not be saved"
        with contextlib.suppress(OSError):  # stderr may be the thing that broke
            console.err(f"review-gate: internal error, nothing was decided (exit 3); {where}")
        return 3


# The arguments that name a file or a directory, by their argparse dest, as a message names them.
PATH_ARGUMENTS = {"config": "--config", "diff": "--diff", "constitution": "--constitution", "bundle": "--bundle",
                  "baseline": "--baseline", "output": "--output", "dir": "--dir", "drafts": "--drafts",
                  "prompt": "--prompt", "file": "meta check FILE", "reports": "merge REPORT", "outputs": "--output"}
PATH_POSITIONALS = {("replay", "bundle"): "replay DIR", ("explain", "paths"): "explain PATH"}


def _given_paths(args: argparse.Namespace) -> list[tuple[str, str]]:
    """(how the argument is named, the path given) for every path argument of the command."""
    found = []
    for dest in {*PATH_ARGUMENTS, "paths"}:
        value = getattr(args, dest, None)
        name = PATH_POSITIONALS.get((args.command, dest)) or PATH_ARGUMENTS.get(dest)
        if value is None or name is None:
            continue
        if dest == "outputs":
            found += [(name, str(path)) for _, path in value if path is not None and path != "-"]
        elif isinstance(value, list):
            found += [(name, str(v)) for v in value]
        elif isinstance(value, str) and value != "-":
            found.append((name, value))
    return found


def _check_paths(args: argparse.Namespace) -> None:
    """Refuse a path the OS would refuse (too long, a NUL byte) before anything reads it."""
    from review_gate.pipeline.arguments import path_size

    for name, value in _given_paths(args):
        path_size(name, value)


def _path_argument(exc: BaseException, args: argparse.Namespace) -> tuple[str, str] | None:
    """(name, value) of the path argument an OSError is about, when it is about one."""
    if not isinstance(exc, OSError) or exc.filename is None:
        return None
    failed = os.fsdecode(exc.filename) if isinstance(exc.filename, (str, bytes, os.PathLike)) else ""
    for name, value in _given_paths(args):
        if failed == value or failed.startswith(value.rstrip("/") + "/") or os.path.abspath(failed) == \
                os.path.abspath(value):
            return name, value
    return None


def _closed_pipe(exc: BaseException) -> bool:
    """A BrokenPipeError, or a task group's exception group made of nothing else (an agent's
    progress line on a closed stderr is raised from inside dispatch's task group)."""
    if isinstance(exc, BrokenPipeError):
        return True
    inner: tuple[BaseException, ...] = getattr(exc, "exceptions", ())
    return bool(inner) and all(_closed_pipe(e) for e in inner)


def _quiet_standard_streams() -> None:
    """Point stdout and stderr at /dev/null, so that Python's flush at exit does not report the
    broken pipe again ("Exception ignored ... BrokenPipeError")."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError, AttributeError):  # a captured stream has no fd
                os.dup2(devnull, stream.fileno())
    finally:
        os.close(devnull)


def _crash_log(text: str) -> Path | None:
    """Write a traceback to a new file only this user can read: a unique name created with
    O_EXCL and O_NOFOLLOW in the user's cache directory (else a fresh temporary file), so that
    no file or link planted under a guessable /tmp name is written through."""
    from review_gate.state.cache_dir import cache_dir

    name = f"crash-{datetime.now():%Y%m%d-%H%M%S}-{secrets.token_hex(4)}.log"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        directory = cache_dir()
        directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = directory / name
        fd = os.open(path, flags, 0o600)
    except OSError:
        try:
            fd, raw = tempfile.mkstemp(prefix="review-gate-crash-", suffix=".log")
        except OSError:
            return None
        path = Path(raw)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError:
        return None
    return path


@contextlib.contextmanager
def _sigterm_as_interrupt(received: list[int]) -> Iterator[None]:
    """SIGTERM (a CI cancel, ``timeout``, ``docker stop``) does what Ctrl-C does: the running
    agents are cancelled, their processes killed, the run marked failed; ``received`` notes it.

    Without this SIGTERM ended the process on the spot, leaving agents running and the run
    ``running``. The handler hands over to whatever handles SIGINT at that moment: asyncio's
    (cancel the main task, so every ``finally`` runs) inside the event loop, Python's
    KeyboardInterrupt outside it.
    """
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers can only be set from the main thread
        return

    def on_sigterm(signum: int, frame: FrameType | None) -> None:
        received.append(signum)
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):
            handler(signal.SIGINT, frame)
        else:  # SIGINT ignored (a background job) or default: SIGTERM still interrupts
            raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


# Subcommand -> module in review_gate.surfaces.commands, imported only when that command runs.
HANDLERS = {
    "run": "run", "plan": "plan", "config": "config_cmd", "init": "init", "explain": "explain",
    "agents": "agents_cmd", "meta": "meta_cmd", "baseline": "baseline_cmd", "replay": "replay",
    "loop": "loop_cmd", "hook": "hook_cmd", "mcp": "mcp_cmd", "sweep": "sweep", "batch": "batch_cmd",
    "merge": "merge", "gaps": "gaps", "ack": "ack", "rule": "rule",
    **{name: name for name in STATE_COMMANDS},
}


def _dispatch(args: argparse.Namespace) -> int:
    from importlib import import_module

    module = import_module(f"review_gate.surfaces.commands.{HANDLERS[args.command]}")
    command: Callable[[argparse.Namespace], int] = getattr(module, f"{args.command}_command")
    return command(args)
