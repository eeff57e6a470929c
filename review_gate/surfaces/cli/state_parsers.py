"""The parsers of the commands over the run state: history, show, accept, accepted, gc, debt, ack,
gaps, and the coder/reviewer loop's.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from review_gate.outputs import FORMATS
from review_gate.surfaces.cli.options import DECISIONS, link_command, verbose_option

if TYPE_CHECKING:
    Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]


def add_state(sub: Subparsers) -> None:
    """history, show, accept, accepted, gc, debt: the run state (state_path of review-gate.json)."""
    config_help = "config directory (its review-gate.json names the state_path)"
    history = sub.add_parser("history", help="the recorded runs, newest first")
    history.add_argument("--limit", type=int, metavar="N", default=20, help="show the newest N runs (default 20)")
    show = sub.add_parser("show", help="a recorded run's report, in any output format")
    show.add_argument("run", metavar="RUN", help="a run id, a unique prefix or suffix of one, or last")
    show.add_argument("--format", "-f", choices=tuple(FORMATS), default="text")
    show.add_argument("--output", "-o", metavar="FILE", help="write to FILE instead of standard output")
    verbose_option(show)
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
    link_command(debt, "debt_command", "item", "a debt item",
                  "the item's number (or its fingerprint, or 6+ of its first digits)", config_help)
    for parser in (history, show, accept, accepted, gc, debt):
        parser.add_argument("--config", metavar="DIR", help=config_help)


def add_ack(sub: Subparsers) -> None:
    ack = sub.add_parser(
        "ack", help="note that you saw a finding; it still counts (alone: list the acks)",
        description="Record that a person saw a finding a recorded run reported (seed 003's ack), with why: it "
                    "waives nothing (the finding still counts) and changes no freshness (its review pair is "
                    "reused or reviewed again as before). Without an ID, list the acks recorded.")
    ack.add_argument("finding", nargs="?", metavar="ID", help="the finding's id as a report shows it, or its "
                                                               "whole fingerprint")
    ack.add_argument("--reason", metavar="TEXT", help="what you saw, or what will be done about it")
    ack.add_argument("--config", metavar="DIR", help="config directory (its review-gate.json names the state_path)")


def add_gaps(sub: Subparsers) -> None:
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
    link_command(gaps, "gaps_command", "gap", "a gap", "the gap's id (4 or more of its hex digits)", config_help)


def add_loop(sub: Subparsers) -> None:
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
