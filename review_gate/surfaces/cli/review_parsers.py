"""The parsers of the commands that review a change or the files as they are: run, plan, explain,
rule, baseline, replay, sweep, batch and merge.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from review_gate.outputs import FORMATS
from review_gate.surfaces.cli.options import (
    DECISIONS,
    FILTER_MODES,
    AddAgentAction,
    FormatAction,
    input_options,
    review_flags,
    seconds,
    shard_option,
    verbose_option,
)

if TYPE_CHECKING:
    Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]


def add_run(sub: Subparsers) -> None:
    run = sub.add_parser("run", help="review the change and decide the gate (the default command)")
    input_options(run, tuple(FORMATS))
    run.add_argument("--fail-on", choices=DECISIONS, help="least severe decision that exits 1 (default: needs_fixes)")
    run.add_argument("--exit-zero", action="store_true",
                     help="advisory run: report everything and exit 0 (still 2 on errors, 3 when incomplete)")
    run.add_argument("--filter-mode", choices=FILTER_MODES,
                     help="which findings count: on added lines (default), in hunks, in changed files, all")
    run.add_argument("--concurrency", type=int, metavar="N", help="agents running at once")
    run.add_argument("--timeout", type=seconds, metavar="S", help="deadline of every agent, retries included")
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
    run.add_argument("--add-agent", dest="add_agents", action=AddAgentAction, metavar="ID[:GLOB]",
                     help="dispatch this registry agent too, over the changed files (those GLOB selects), and log "
                          "it as a gap; repeatable, each followed by its --gap-reason")
    run.add_argument("--gap-reason", dest="add_agents", action=AddAgentAction, metavar="TEXT",
                     help="why the change needs the --add-agent before it (required with each one)")
    run.add_argument("--llm", choices=("provider", "host"), default="provider",
                     help="who answers the llm reviewers: their providers (default), or host: the coding agent's "
                          "host, whose sub-agents answer review tasks written into the run's directory (no key "
                          "needed; a self-review, said so in every format); finish it with `review-gate collect RUN`")
    run.add_argument("--ci", action="store_true",
                     help="this is CI (as the CI variable says): a host review counts as skipped unless "
                          "host_reviews in review-gate.json is everywhere")
    shard_option(run)
    verbose_option(run)


def add_plan(sub: Subparsers) -> None:
    plan = sub.add_parser("plan", help="stages 1-4 only: classification, manifest and gaps; no agent runs")
    input_options(plan, ("text", "json"))
    plan.add_argument("--offline", action="store_true", help="skip the LLM gap detector (no network)")


def add_explain(sub: Subparsers) -> None:
    explain = sub.add_parser("explain", help="show the domains, policies and agents a path triggers "
                                             "(or, given a rule id, the rule: as `review-gate rule ID`)")
    explain.add_argument("paths", nargs="+", metavar="PATH|RULE_ID")
    explain.add_argument("--config", metavar="DIR")


def add_rule(sub: Subparsers) -> None:
    rule = sub.add_parser(
        "rule", help="what a rule checks, why, how to fix it, an example and a near miss, what routes it",
        description="Describe one rule of the configuration in use: name, severity, agent, description, "
                    "detection, recommendation, paths, pattern, an example it flags and a near miss, the policies "
                    "and domains that route it. Exit 2 for an unknown id, with the closest ids. Without ID: "
                    "every rule, one a line (id, severity, category, agent, name).")
    rule.add_argument("rule", metavar="ID", nargs="?", help="the rule id a report shows (or the start of one); "
                                                            "without it, every rule is listed")
    rule.add_argument("--format", "-f", choices=("text", "json"), default="text")
    rule.add_argument("--config", metavar="DIR",
                      help="config directory (default: $REVIEW_GATE_CONFIG, .review-gate/, built-in)")


def add_baseline(sub: Subparsers) -> None:
    baseline = sub.add_parser("baseline", help="record the findings of the change as accepted debt "
                                               "(.review-gate/baseline.json, to commit)")
    input_options(baseline, ())
    baseline.add_argument("--expires", metavar="YYYY-MM-DD", help="the last day the entries apply")
    baseline.add_argument("--output", "-o", metavar="FILE",
                          help="where to write (default: .review-gate/baseline.json at the repository root)")
    baseline.add_argument("--filter-mode", choices=FILTER_MODES, help="which findings to record (as for run)")
    baseline.add_argument("--offline", action="store_true", help="run only agents that need no network")


def add_replay(sub: Subparsers) -> None:
    replay = sub.add_parser("replay", help="decide again from a run's --bundle DIR, calling no agent")
    replay.add_argument("bundle", metavar="DIR", help="a directory written by `run --bundle DIR`")
    replay.add_argument("--config", metavar="DIR", help="judge with this config instead of the bundle's config/")
    replay.add_argument("--format", "-f", dest="outputs", action=FormatAction, choices=tuple(FORMATS),
                        help=f"output format, repeatable: {', '.join(FORMATS)}")
    replay.add_argument("--output", "-o", dest="outputs", action=FormatAction, metavar="FILE",
                        help="write the format before it to FILE instead of standard output")
    replay.add_argument("--fail-on", choices=DECISIONS, help="least severe decision that exits 1")
    replay.add_argument("--filter-mode", choices=FILTER_MODES, help="which findings count (as for run)")
    verbose_option(replay)


def add_sweep(sub: Subparsers) -> None:
    sweep = sub.add_parser(
        "sweep", help="review files as they are (each file added whole), not a diff",
        description="Review the repository's files as they are: every file git lists (tracked, or untracked "
                    "and not ignored) within the PATHSPECs, as if added whole, with the same policies, agents, "
                    "gate and reports as a diff. A second sweep of an unchanged tree calls no agent.")
    sweep.add_argument("paths", nargs="*", metavar="PATHSPEC", help="git pathspecs (default: the whole tree)")
    sweep.add_argument("--since", metavar="REF", help="only the files changed since REF")
    review_flags(sweep)
    sweep.add_argument("--exit-zero", action="store_true", help="advisory run: exit 0 unless an error or incomplete")
    sweep.add_argument("--offline", action="store_true", help="run only agents that need no network")
    sweep.add_argument("--no-state", action="store_true",
                       help="no run state: no cache, no acceptances, nothing recorded")
    shard_option(sweep)


def add_batch(sub: Subparsers) -> None:
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
    input_options(submit, ())
    review_flags(submit, outputs=False)
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
    collect.add_argument("--format", "-f", dest="outputs", action=FormatAction, choices=tuple(FORMATS),
                         help=f"output format, repeatable: {', '.join(FORMATS)}")
    collect.add_argument("--output", "-o", dest="outputs", action=FormatAction, metavar="FILE",
                         help="write the format before it to FILE instead of standard output")
    collect.add_argument("--wait", type=seconds, metavar="SECONDS",
                         help="while a batch runs, check again every --poll seconds, for at most SECONDS")
    collect.add_argument("--poll", type=seconds, metavar="SECONDS", default=30.0,
                         help="seconds between checks with --wait (default 30)")
    collect.add_argument("--bundle", metavar="DIR", help="write the replay bundle to DIR (default: submit's --bundle)")
    verbose_option(collect)


def add_collect(sub: Subparsers) -> None:
    collect = sub.add_parser(
        "collect", help="hand back the host's answers to a `--llm host` run's review tasks, and decide the gate",
        description="With --answer TASK FILE (repeatable): check each answer of the host's sub-agents against its "
                    "task (its answer_schema, the files it shows) and keep it; once every task is answered, decide "
                    "the gate. Without --answer: decide the gate now from the answers kept (also those written "
                    "to a task's answer_file); a task with no answer is a reviewer that did not run. An answer "
                    "that does not validate, names a file outside its task, or comes for an unknown or finished "
                    "run is refused (exit 2) and the task stays unanswered. Exit codes as run once decided.")
    collect.add_argument("run", nargs="?", metavar="RUN",
                         help="a run id, a unique prefix or suffix of one, or last (default: the newest run "
                              "waiting for its host)")
    collect.add_argument("--answer", nargs=2, action="append", metavar=("TASK", "FILE"), default=[],
                         help="the answer to TASK: FILE holds the sub-agent's JSON object (- for standard input)")
    collect.add_argument("--list", action="store_true", help="list the run's tasks and whether each is answered")
    collect.add_argument("--config", metavar="DIR", help="config directory (its review-gate.json names the "
                                                         "state_path)")
    collect.add_argument("--format", "-f", dest="outputs", action=FormatAction, choices=tuple(FORMATS),
                         help=f"output format, repeatable: {', '.join(FORMATS)}")
    collect.add_argument("--output", "-o", dest="outputs", action=FormatAction, metavar="FILE",
                         help="write the format before it to FILE instead of standard output")
    verbose_option(collect)


def add_merge(sub: Subparsers) -> None:
    merge = sub.add_parser(
        "merge", help="combine the JSON reports of a run's shards (--shard K/N) into one report and decision",
        description="Combine the JSON reports of the N shards of one run into one report and one gate decision "
                    "(exit codes as run). Reports of another change or configuration, a shard missing or given "
                    "twice: exit 2.")
    merge.add_argument("reports", nargs="+", metavar="REPORT", help="the shards' JSON reports (--format json)")
    merge.add_argument("--config", metavar="DIR", help="the config directory the shards ran with")
    merge.add_argument("--format", "-f", dest="outputs", action=FormatAction, choices=tuple(FORMATS),
                       help=f"output format, repeatable: {', '.join(FORMATS)}")
    merge.add_argument("--output", "-o", dest="outputs", action=FormatAction, metavar="FILE",
                       help="write the format before it to FILE instead of standard output")
    merge.add_argument("--fail-on", choices=DECISIONS, help="least severe decision that exits 1")
    verbose_option(merge)
